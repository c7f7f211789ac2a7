#!/usr/bin/env bash
# Verifies every dataset kernel tad can differentiate on the GPU (float32 and float16, the file's
# SWEEP) and prints one line per kernel. Usage: bench/verify_dataset_gpu.sh [BUILD_DIR] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench/out-dataset}
mkdir -p "$out"
for f in dataset/*.py; do
  name=$(basename "$f" .py)
  "$build/tad" verify "$f" --work-dir "$out/$name" --json -q > "$out/$name.json" 2> "$out/$name.err"
  echo "$name exit=$? $(tail -1 "$out/$name.err" | cut -c1-200)"
done
