#!/usr/bin/env bash
set -u
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" 2>&1
A=build/ab
timeout 90 python3 $A/check_variants.py > "$OUT/check.txt" 2>&1
gb() { timeout 100 python3 bench/graph_bench.py "$@" >> "$OUT/ab.jsonl" 2>> "$OUT/ab.err"; }
kt() { timeout 60 python3 bench/kernel_times.py "$@" >> "$OUT/kt.jsonl" 2>> "$OUT/kt.err"; }
LN='{"M": 4096, "N": 4096}'
for n in 1024 4096; do
  gb tests/pipeline/data/transpose/flash_attention_tutorial.py attention "{\"B\": 4, \"H\": 16, \"N\": $n, \"D\": 64, \"causal\": false}" float16 def=$A/fa_def.py rc=$A/fa_rc.py rcT=$A/fa_rcT.py
done
gb examples/layernorm.py layernorm "$LN" float16 gen=$A/ln_gen.py p132=$A/ln_p132.py cast1=$A/ln_cast1.py both=$A/ln_both.py
gb dataset/rmsnorm.py rmsnorm "$LN" float16 gen=$A/rms_gen.py p132=$A/rms_p132.py
echo timed >> "$OUT/ab.err"
export LD_LIBRARY_PATH=$PWD/build/gpu-carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TAD_PYTHON=python3
for f in dataset/group_norm.py dataset/kl_div.py; do
  timeout 110 build/gpu-carry/tad verify "$f" --work-dir "/tmp/vw-$(basename "$f" .py)" 2>&1 | grep -v "^\[trace\]" \
    > "$OUT/verify-$(basename "$f" .py).txt"
  echo "verify $f exit ${PIPESTATUS[0]}" >> "$OUT/ab.err"
done
timeout 50 build/gpu-carry/test_gpu > "$OUT/test_gpu.txt" 2>&1; echo "test_gpu exit $?" >> "$OUT/ab.err"
kt tests/pipeline/data/transpose/flash_attention_tutorial.py attention '{"B": 4, "H": 16, "N": 4096, "D": 64, "causal": false}' float16 rc=$A/fa_rc.py rcT=$A/fa_rcT.py
echo done >> "$OUT/ab.err"
