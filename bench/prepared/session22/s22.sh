#!/usr/bin/env bash
# Session 22's GPU call: variants of generated modules (hand-edited, build/ab/mk_variants.py) timed
# beside the generated ones, kernel breakdowns, torch.compile's code, then pending verifications.
set -u
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" 2>&1
A=build/ab
timeout 120 python3 $A/check_variants.py > "$OUT/check.txt" 2>&1
gb() { timeout 150 python3 bench/graph_bench.py "$@" >> "$OUT/ab.jsonl" 2>> "$OUT/ab.err"; }
kt() { timeout 150 python3 bench/kernel_times.py "$@" >> "$OUT/kt.jsonl" 2>> "$OUT/kt.err"; }
LN='{"M": 4096, "N": 4096}'
KL='{"M": 4096, "V": 32000, "log_target": false}'
GN='{"N": 16, "C": 512, "HW": 4096, "G": 32}'
for dt in float16 float32; do
  gb examples/layernorm.py layernorm "$LN" $dt gen=$A/ln_gen.py tail=$A/ln_tail.py
  gb dataset/rmsnorm.py rmsnorm "$LN" $dt gen=$A/rms_gen.py tail=$A/rms_tail.py
  gb examples/softmax.py softmax "$LN" $dt gen=$A/sm_gen.py y=$A/sm_y.py
  gb dataset/group_norm.py group_norm "$GN" $dt gen=$A/gn_gen.py rev=$A/gn_rev.py pass=$A/gn_pass.py
  gb dataset/kl_div.py kl_div "$KL" $dt off=$A/kl_off.py on=$A/kl_on.py
done
echo timed >> "$OUT/ab.err"
kt examples/layernorm.py layernorm "$LN" float16 gen=$A/ln_gen.py tail=$A/ln_tail.py
kt dataset/rmsnorm.py rmsnorm "$LN" float16 gen=$A/rms_gen.py
kt examples/softmax.py softmax "$LN" float16 gen=$A/sm_gen.py y=$A/sm_y.py
kt dataset/group_norm.py group_norm "$GN" float16 gen=$A/gn_gen.py rev=$A/gn_rev.py
mkdir -p "$OUT/compile"
for c in "examples/softmax.py|$LN" "dataset/group_norm.py|$GN" "examples/layernorm.py|$LN"; do
  f=${c%%|*}; d=${c#*|}
  TORCH_LOGS=output_code timeout 120 python3 $A/dump_compile.py "$f" "$d" > "$OUT/compile/$(basename $f .py).txt" 2>&1
done
echo dumped >> "$OUT/ab.err"
export LD_LIBRARY_PATH=$PWD/build/gpu-carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TAD_PYTHON=python3
for f in dataset/persistent_matmul.py dataset/linear_recurrence.py; do
  timeout ${VERIFY_S:-170} build/gpu-carry/tad verify "$f" --work-dir "/tmp/vw-$(basename "$f" .py)" \
    > "$OUT/verify-$(basename "$f" .py).txt" 2>&1
  echo "verify $f exit $?" >> "$OUT/ab.err"
done
echo done >> "$OUT/ab.err"
