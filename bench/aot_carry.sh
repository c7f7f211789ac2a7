#!/usr/bin/env bash
# Assembles what bench/aot_gpu.sh needs on a GPU machine that has no cJSON and no cargo (docs/aot.md):
# libtad, the tad program, the worker scripts, the C program (tad_aot_backward), the Rust program
# (examples/aot/rust, built here with cargo when it is installed) and libcjson, stripped, in one
# directory whose binaries find each other through $ORIGIN.
#   bench/aot_carry.sh [BUILD_DIR] [DEST]      defaults: build, build/aot-carry
# Then, on the GPU machine: bash bench/aot_gpu.sh DEST
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
dest=${2:-$root/build/aot-carry}
cmake --build "$build" -j2 --target tad tad_cli tad_aot_backward >/dev/null
rm -rf "$dest"
mkdir -p "$dest"
cp -a "$build"/libtad.so* "$build/tad" "$build/tad_aot_backward" "$dest/"
cp -a "$build/python" "$dest/python"
for lib in $(ldd "$build/libtad.so" | awk '/libcjson/ {print $3}'); do cp -L "$lib" "$dest/"; done
if command -v cargo >/dev/null; then
  TAD_LIB_DIR=$build CARGO_TARGET_DIR=$build/rust-aot cargo build --offline --release -q \
    --manifest-path "$root/examples/aot/rust/Cargo.toml"
  cp "$build/rust-aot/release/aot_backward" "$dest/"
else
  echo "aot_carry: no cargo: the Rust program is left out (aot_gpu.sh runs C only)" >&2
fi
strip --strip-debug "$dest"/libtad.so.*.* "$dest/tad" "$dest/tad_aot_backward" 2>/dev/null || true
du -sh "$dest"
