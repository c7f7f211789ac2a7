#!/usr/bin/env bash
# Verifies every dataset kernel tad can differentiate on the GPU (float32 and float16, the file's
# SWEEP) and prints one line per kernel. Usage: bench/verify_dataset_gpu.sh [BUILD_DIR] [OUT_DIR]
# [NAME...]: with names (dataset/NAME.py), only those files.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench/out-dataset}
shift $(( $# < 2 ? $# : 2 ))
mkdir -p "$out"
if [ $# -gt 0 ]; then
  files=()
  for name in "$@"; do files+=("dataset/$name.py"); done
else
  files=(dataset/*.py)
fi
for f in "${files[@]}"; do
  name=$(basename "$f" .py)
  "$build/tad" verify "$f" --work-dir "$out/$name" --json -q > "$out/$name.json" 2> "$out/$name.err"
  echo "$name exit=$? $(tail -1 "$out/$name.err" | cut -c1-200)"
done
