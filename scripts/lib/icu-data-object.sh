#!/usr/bin/env bash
# Builds DIR/icudata.o: the Swift toolchain's ICU data, trimmed by scripts/lib/icu-trim.py, as an object that
# replaces the whole data in a binary linked with --static-swift-stdlib. Prints the linker flags that do it.
#
# Foundation's static library keeps ICU's data in one archive member (icu_packaged_data.cpp.o) defining one symbol,
# icudtNN_dat, which ICU's loader refers to. A second definition would clash with it, so the object defines
# __wrap_icudtNN_dat and the link says --wrap=icudtNN_dat: the loader's reference goes to ours, and the member with
# the full data is never pulled in.
#
# usage: scripts/lib/icu-data-object.sh DIR  (prints e.g. "-Xlinker --wrap=icudt76_dat -Xlinker DIR/icudata.o")
set -euo pipefail
dir=${1:?usage: icu-data-object.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
archive=$toolchain/lib/swift_static/linux/lib_FoundationICU.a
[ -r "$archive" ] || { echo "icu-data-object: no $archive (the toolchain's static Foundation)" >&2; exit 1; }
mkdir -p "$dir"
(cd "$dir" && ar x "$archive" icu_packaged_data.cpp.o)
symbol=$(nm "$dir/icu_packaged_data.cpp.o" | awk '$2 == "R" && $3 ~ /^icudt[0-9]+_dat$/ { print $3 }')
[ -n "$symbol" ] || { echo "icu-data-object: no icudtNN_dat in $archive's icu_packaged_data.cpp.o" >&2; exit 1; }
objcopy -O binary --only-section=.rodata "$dir/icu_packaged_data.cpp.o" "$dir/full.dat"
python3 "$here/icu-trim.py" "$dir/full.dat" "$dir/trimmed.dat" >&2
cat > "$dir/icudata.S" <<EOF
  .section .rodata
  .globl __wrap_$symbol
  .type __wrap_$symbol, @object
  .balign 16
__wrap_$symbol:
  .incbin "$dir/trimmed.dat"
  .size __wrap_$symbol, . - __wrap_$symbol
  .section .note.GNU-stack,"",@progbits
EOF
"$toolchain/bin/clang" -c "$dir/icudata.S" -o "$dir/icudata.o"
rm -f "$dir/icu_packaged_data.cpp.o" "$dir/full.dat"
echo "-Xlinker --wrap=$symbol -Xlinker $dir/icudata.o"
