#!/usr/bin/env bash
# One GPU call (run bench/prepared/session20_prep.sh first, here): `a` verifies the recurrences
# whose states the backward reads back (tad verify over each file's SWEEP, float32 and float16),
# times the linear recurrence's backward before and after (graph_bench: CUDA-graph replay, L2
# flushed, median, beside eager) and attention's default module (dK/dV atomic adds) against
# TAD_TRANSPOSE_RECOMPUTE=1 (the FA2 dK/dV kernel) for three forms of the kernel; `b` runs the suite
# (bench/run_suite.sh: hand-written reference, eager, torch.compile, a copy). Results under $OUT.
set -u
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" 2>&1
m=build/ab/m
ab() {  # file stub stem dims
  timeout 240 python3 bench/graph_bench.py "$1" "$2" "$4" float16 def="$m/$3_def.py" rc="$m/$3_rc.py" \
    >> "$OUT/ab.jsonl" 2>> "$OUT/ab.err"
}
if [ "${1:-a}" = a ]; then
  export LD_LIBRARY_PATH=$PWD/build/gpu-carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TAD_PYTHON=python3
  for f in dataset/linear_recurrence.py tests/pipeline/data/states/rnn_tanh.py \
           tests/pipeline/data/states/advancing_pointers.py tests/pipeline/data/states/taped_pointers.py; do
    timeout 150 build/gpu-carry/tad verify "$f" --work-dir "/tmp/vw-$(basename "$f" .py)" \
      > "$OUT/verify-$(basename "$f" .py).txt" 2>&1
    echo "verify $f exit $?" >> "$OUT/ab.err"
  done
  old=()
  [ -f "$m/lr_old.py" ] && old=("old=$m/lr_old.py")
  for dt in float32 float16; do
    timeout 200 python3 bench/graph_bench.py dataset/linear_recurrence.py linear_recurrence \
      '{"B": 8, "T": 2048, "C": 1024}' "$dt" "${old[@]}" "new=$m/lr_new.py" >> "$OUT/lr.jsonl" 2>> "$OUT/ab.err"
  done
  for n in 1024 4096; do
    for c in false true; do
      d="{\"B\": 4, \"H\": 16, \"N\": $n, \"D\": 64, \"causal\": $c}"
      ab dataset/flash_attention.py flash_attention fa "$d"
      ab tests/pipeline/data/transpose/flash_attention_tutorial.py attention tut "$d"
      ab tests/pipeline/data/transpose/flash_attention_descriptors.py attention desc "$d"
    done
  done
else
  MODULES=build/ab/suite SUITE_CASE_TIMEOUT=200 timeout 330 bash bench/run_suite.sh "$OUT/suite" \
    bench/prepared/session20_cases.txt > "$OUT/suite.out" 2>&1
fi
echo done >> "$OUT/ab.err"
