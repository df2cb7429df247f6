#!/usr/bin/env bash
# Installs systole on this machine: builds release binaries, installs them with the systemd unit, the D-Bus
# policy, the sysusers entry, an example configuration and shell completions, then reloads systemd and D-Bus.
# Run as root (or it uses sudo). It does not start the service: 'systemctl enable --now systoled' does.
#
# usage: scripts/install.sh [--prefix /usr/local]
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=/usr/local
if [ "${1:-}" = "--prefix" ]; then PREFIX=$2; fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

scripts/install-deps.sh
source scripts/lib/release-build.sh
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systoled
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systole
BIN=$(swift build "${RELEASE_BUILD_FLAGS[@]}" --show-bin-path)

$SUDO install -d "$PREFIX/bin"
$SUDO install -m 0755 "$BIN/systoled" "$BIN/systole" "$PREFIX/bin/"
# The unit is edited in a folder only we can write (not a guessable name in /tmp, which another user could create
# first and so choose what root copies into /etc/systemd/system).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s#/usr/local/bin/systoled#$PREFIX/bin/systoled#" systemd/systoled.service > "$work/systoled.service"
$SUDO install -m 0644 "$work/systoled.service" /etc/systemd/system/systoled.service
$SUDO install -m 0644 systemd/org.systole.Daemon.conf /usr/share/dbus-1/system.d/org.systole.Daemon.conf
$SUDO install -m 0644 systemd/systole.sysusers.conf /usr/lib/sysusers.d/systole.conf
$SUDO install -d /etc/systole
new_config=0
if [ ! -e /etc/systole/systoled.toml ]; then
  $SUDO install -m 0644 systemd/systoled.toml.example /etc/systole/systoled.toml
  new_config=1
fi
$SUDO install -d /usr/share/bash-completion/completions /usr/share/zsh/vendor-completions
"$BIN/systole" --generate-completion-script bash | $SUDO tee /usr/share/bash-completion/completions/systole > /dev/null
"$BIN/systole" --generate-completion-script zsh | $SUDO tee /usr/share/zsh/vendor-completions/_systole > /dev/null

if [ -d /run/systemd/system ]; then
  $SUDO systemd-sysusers
  # Readable by systoled and group systole only: an [http] token in it lets whoever has it see heart rate
  # (systoled refuses a token in a file every user can read).
  if [ "$new_config" = 1 ]; then
    $SUDO chgrp systole /etc/systole/systoled.toml && $SUDO chmod 0640 /etc/systole/systoled.toml
  fi
  $SUDO systemctl daemon-reload
  $SUDO systemctl reload dbus 2>/dev/null || true
  echo "Installed. Start it with: sudo systemctl enable --now systoled"
  echo "Let a user control it:    sudo usermod -aG systole USER (then log in again)"
else
  echo "Installed, but systemd is not running here: start $PREFIX/bin/systoled yourself."
fi
