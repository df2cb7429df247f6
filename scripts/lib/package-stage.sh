#!/usr/bin/env bash
# Builds what the Debian package installs and lays it out under STAGE as it will be on the machine (debian/rules
# calls it; scripts/package.sh is how to build the package).
#   usr/bin/systole        one binary for both commands (the Swift runtime and Foundation linked in, ICU's data
#                          trimmed to the locales systole's users read)
#   usr/sbin/systoled      a link to it: called by that name, it is the daemon
#   etc/systole/systoled.toml                 the example configuration, a conffile
#   usr/share/{bash-completion,zsh,fish}/…    completions, from systole itself
#   usr/share/man/man1/systole.1, man8/systoled.8   from the commands' own help
#
# usage: scripts/lib/package-stage.sh STAGE
# With SYSTOLE_PACKAGE_BUILD=debug (scripts/package.sh --test-build) it takes the debug build instead.
set -euo pipefail
cd "$(dirname "$0")/../.."
stage=${1:?usage: package-stage.sh STAGE}
source scripts/lib/release-build.sh

# The release build the other scripts make (one build tree for all), linked with ICU's data trimmed to the locales
# systole's users read (scripts/lib/icu-data-object.sh: 34 of the binary's 90 MB were ICU's data). -Osize was
# measured and left out: it made the .deb 1.7 % smaller (docs/operations.md, "The Debian package").
build_flags "${SYSTOLE_PACKAGE_BUILD:-release}"
link=()
if [ "${SYSTOLE_PACKAGE_BUILD:-release}" = release ]; then
  read -r -a link < <(scripts/lib/icu-data-object.sh "$PWD/.build/icu-data")
fi
swift build "${BUILD_FLAGS[@]}" "${link[@]}" --product systole
bin=$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)

rm -rf "$stage"
install -d "$stage/usr/bin" "$stage/usr/sbin" "$stage/etc/systole" "$stage/usr/share/man/man1" \
  "$stage/usr/share/man/man8" "$stage/usr/share/bash-completion/completions" \
  "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/fish/vendor_completions.d"
install -m 0755 "$bin/systole" "$stage/usr/bin/systole"
ln -s ../bin/systole "$stage/usr/sbin/systoled"
install -m 0644 systemd/systoled.toml.example "$stage/etc/systole/systoled.toml"

systole=$stage/usr/bin/systole
# bash-completion sources the file: no #! line (lintian: bash-completion-with-hashbang).
"$systole" --generate-completion-script bash | sed '1{/^#!/d}' > "$stage/usr/share/bash-completion/completions/systole"
"$systole" --generate-completion-script zsh > "$stage/usr/share/zsh/vendor-completions/_systole"
"$systole" --generate-completion-script fish > "$stage/usr/share/fish/vendor_completions.d/systole.fish"

version=$(dpkg-parsechangelog -S Version 2> /dev/null || sed -n '1s/.*(\(.*\)).*/\1/p' debian/changelog)
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
"$systole" --experimental-dump-help \
  | python3 scripts/lib/manpage.py --section 1 --date "$date" --version "$version" > "$stage/usr/share/man/man1/systole.1"
"$stage/usr/sbin/systoled" --experimental-dump-help \
  | python3 scripts/lib/manpage.py --section 8 --date "$date" --version "$version" > "$stage/usr/share/man/man8/systoled.8"
