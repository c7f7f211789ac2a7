#!/usr/bin/env bash
# Builds and tests tad-sys against an installed libtad found only through pkg-config (no
# TAD_LIB_DIR): `cmake --install` into a temporary prefix, PKG_CONFIG_PATH at its tad.pc. The test
# binaries must carry the prefix's library directory as their rpath.
#   bindings/rust/check_pkg_config.sh BUILD_DIR      (CARGO, RUSTC: the toolchain; default cargo)
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cargo=${CARGO:-cargo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(cd "$(ls -d "$tmp"/prefix/lib*/ | head -1)" && pwd -P)
unset TAD_LIB_DIR
export PKG_CONFIG_PATH="$libdir/pkgconfig" CARGO_TARGET_DIR="$tmp/target" TAD_INCLUDE_DIR="$tmp/prefix/include"
"$cargo" test --offline --manifest-path "$here/Cargo.toml" -p tad-sys
found=0
for t in "$tmp"/target/debug/deps/header-*; do
  [ -x "$t" ] || continue
  found=1
  readelf -d "$t" | grep -E "R(UN)?PATH" | grep -qF "$libdir" ||
    { echo "$t: no rpath to $libdir" >&2; readelf -d "$t" | grep -E "R(UN)?PATH" >&2; exit 1; }
done
[ $found = 1 ] || { echo "no test binary built" >&2; exit 1; }
echo "tad-sys found libtad through pkg-config at $libdir"
