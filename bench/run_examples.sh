#!/usr/bin/env bash
# Generates, verifies and benchmarks every example with the tad CLI, then prints one table of the
# measurements (bench/report.py). Usage: bench/run_examples.sh [BUILD_DIR] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench/out}
mkdir -p "$out"
status=0
for f in examples/gelu.py examples/softmax.py examples/layernorm.py; do
  name=$(basename "$f" .py)
  rm -rf "$out/$name"
  "$build/tad" run "$f" --work-dir "$out/$name" 2>&1 | tee "$out/$name.log" || status=1
done
python3 bench/report.py "$out" | tee "$out/table.md"
exit $status
