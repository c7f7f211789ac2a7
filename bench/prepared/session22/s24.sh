#!/usr/bin/env bash
set -u
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt" 2>&1
A=build/ab
gb() { timeout 60 python3 bench/graph_bench.py "$@" >> "$OUT/ab.jsonl" 2>> "$OUT/ab.err"; }
for n in 2048 4096; do
  gb examples/layernorm.py layernorm "{\"M\": 4096, \"N\": $n}" float16 old=$A/ln_gen.py new=$A/ln_new.py
  gb dataset/rmsnorm.py rmsnorm "{\"M\": 4096, \"N\": $n}" float16 old=$A/rms_gen.py new=$A/rms_new.py
done
echo timed >> "$OUT/ab.err"
export LD_LIBRARY_PATH=$PWD/build/gpu-carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TAD_PYTHON=python3
timeout 80 build/gpu-carry/tad verify examples/layernorm.py --work-dir /tmp/vw-ln 2>&1 | grep -v "^\[trace\]" > "$OUT/verify-layernorm.txt"; echo "verify layernorm exit ${PIPESTATUS[0]}" >> "$OUT/ab.err"
timeout 170 build/gpu-carry/test_gpu > "$OUT/test_gpu.txt" 2>&1; echo "test_gpu exit $?" >> "$OUT/ab.err"
echo done >> "$OUT/ab.err"
