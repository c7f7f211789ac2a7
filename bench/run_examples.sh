#!/usr/bin/env bash
# Generates, verifies and benchmarks the examples, then prints bench/report.py's summary: run_all.sh
# on examples/*.py. Usage: bench/run_examples.sh [BUILD_DIR] [OUT_DIR]
root=$(cd "$(dirname "$0")/.." && pwd)
exec "$root/bench/run_all.sh" "${1:-}" "${2:-}" "$root"/examples/{gelu,softmax,layernorm}.py
