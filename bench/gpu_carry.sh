#!/usr/bin/env bash
# Assembles what bench/gpu_session.sh needs on the GPU machine: bench/aot_carry.sh's directory
# (tad, libtad, the worker scripts, libcjson, the AOT example programs) plus the GPU GoogleTests.
#   bench/gpu_carry.sh [BUILD_DIR] [DEST]      defaults: build, build/gpu-carry
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
dest=${2:-$root/build/gpu-carry}
bash "$root/bench/aot_carry.sh" "$build" "$dest"
cmake --build "$build" -j2 --target test_gpu >/dev/null
cp "$build/tests/test_gpu" "$dest/"
strip --strip-debug "$dest/test_gpu"
du -sh "$dest"
