#!/usr/bin/env bash
# The GPU proof of exported backwards (docs/aot.md): exports the LayerNorm and softmax backwards
# with `tad export`, writes inputs and the Python module's gradients per case (bench/aot_proof.py),
# runs the C program (examples/aot/backward.c) and, when present, the Rust one
# (examples/aot/rust/backward.rs) on every case, and reports whether they reproduce the gradients
# bit for bit and their launch overhead per call against the Python launcher's.
#   bench/aot_gpu.sh [BUILD_DIR]
# BUILD_DIR (default build/): a build with tad, libtad, python/ and tad_aot_backward (built here by
# gcc from examples/aot/backward.c when missing). The Rust program is $TAD_AOT_RUST, else
# BUILD_DIR/aot_backward; without it only C runs (said in the report). Results go to $OUT (default
# bench/out/aot): aot.md (the table), c.jsonl, rust.jsonl, <example>/python.jsonl, the exports
# and the logs. Exits 0 when every program reproduced every gradient.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${OUT:-$root/bench/out/aot}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${TAD_PYTHON:-python3}
export TAD_PYTHON=$py
export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0

c_prog=$build/tad_aot_backward
if [ ! -x "$c_prog" ]; then
  c_prog=$out/tad_aot_backward
  gcc -O2 -std=gnu99 -Wall -I"$root/include" "$root/examples/aot/backward.c" -L"$build" -ltad -ldl -lm \
    -Wl,-rpath,"$build" -o "$c_prog" || { echo "aot_gpu: cannot build examples/aot/backward.c" >&2; exit 2; }
fi
rust_prog=${TAD_AOT_RUST:-$build/aot_backward}
[ -x "$rust_prog" ] || { echo "aot_gpu: no Rust program at $rust_prog: C only" >&2; rust_prog=; }
rm -f "$out/c.jsonl" "$out/rust.jsonl"

declare -A dims=(
  [layernorm]='[{"M": 4, "N": 48}, {"M": 37, "N": 1000}, {"M": 4096, "N": 1024}, {"M": 4096, "N": 4096}]'
  [softmax]='[{"M": 3, "N": 37}, {"M": 64, "N": 1000}, {"M": 4096, "N": 1024}, {"M": 1024, "N": 8192}]'
)
for ex in layernorm softmax; do
  d=$out/$ex
  rm -rf "$d"
  mkdir -p "$d"
  echo "aot_gpu: exporting $ex" >&2
  if ! "$build/tad" export "$root/examples/$ex.py" -o "$d/kernels" --work-dir "$d/session" --dims "${dims[$ex]}" \
      --dtypes float32,float16 --json > "$d/export.json" 2> "$d/export.log"; then
    echo "aot_gpu: tad export of $ex failed (see $d/export.log)" >&2
    status=1
    continue
  fi
  echo "aot_gpu: references and the Python launcher's timings for $ex" >&2
  if ! "$py" "$root/bench/aot_proof.py" "$build" "$d/session" "$root/examples/$ex.py" "$d/cases" "${dims[$ex]}" \
      float32,float16 > "$d/python.jsonl" 2> "$d/python.log"; then
    echo "aot_gpu: aot_proof.py failed for $ex (see $d/python.log)" >&2
    status=1
    continue
  fi
  for c in "$d"/cases/*/; do
    "$c_prog" "$d/kernels" "${c%/}" >> "$out/c.jsonl" 2>> "$out/c.log" || status=1
    if [ -n "$rust_prog" ]; then "$rust_prog" "$d/kernels" "${c%/}" >> "$out/rust.jsonl" 2>> "$out/rust.log" || status=1; fi
  done
done
"$py" "$root/bench/aot_proof.py" report "$out" | tee "$out/aot.md"
exit $status
