# Sourced by the scripts that build release binaries. Release builds link the Swift runtime and Foundation
# statically: most of the daemon's resident memory was the shared libraries' pages, and a static binary maps only
# the code it uses (measured: idle RSS 36.5 → 30.5 MiB, with a hundred sensors 45.1 → 39.7 MiB; docs/performance.md).
# Every release build passes the same flags, so they share one build tree instead of rebuilding each other's.
RELEASE_BUILD_FLAGS=(-c release --static-swift-stdlib)

# build_flags CONFIG: sets BUILD_FLAGS to build CONFIG (debug or release) with the flags above.
build_flags() {
  if [ "$1" = release ]; then BUILD_FLAGS=("${RELEASE_BUILD_FLAGS[@]}"); else BUILD_FLAGS=(-c debug); fi
}
