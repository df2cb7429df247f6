# Sourced by the scripts that build release binaries. Release builds link the Swift runtime and Foundation
# statically: most of the daemon's resident memory was the shared libraries' pages, and a static binary maps only
# the code it uses (idle RSS about 36 → 28 MiB, with a hundred sensors about 46 → 40 MiB; docs/performance.md).
# Every release build passes the same flags, so they share one build tree instead of rebuilding each other's.
RELEASE_BUILD_FLAGS=(-c release --static-swift-stdlib)
