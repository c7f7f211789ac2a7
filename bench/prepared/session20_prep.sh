#!/usr/bin/env bash
# Prepares the GPU call of bench/prepared/session20.sh on the CPU machine: the modules it times
# (generated here, tad generate needs no GPU) under build/ab, and the carry for `tad verify`
# (bench/gpu_carry.sh). Then, on the device: carry ["build/ab", "build/gpu-carry"], command
# `bash bench/prepared/session20.sh a` (checks and A/B timings) or `... b` (the suite).
#   bench/prepared/session20_prep.sh [BUILD_DIR] [BASE_TAD]
# BASE_TAD: a tad binary built at the commit before the stored states (b5d809f), for the
# linear recurrence's old module; without it that A/B is skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
base=${2:-}
cd "$root"
export PATH=/usr/bin:$PATH TAD_PYTHON=${TAD_PYTHON:-/usr/bin/python3}
m=build/ab/m
mkdir -p "$m" build/ab/suite
tad="$build/tad"
pair() {  # file stem: the default module and TAD_TRANSPOSE_RECOMPUTE=1's
  "$tad" generate "$1" -o "$m/$2_def.py" -q
  TAD_TRANSPOSE_RECOMPUTE=1 "$tad" generate "$1" -o "$m/$2_rc.py" -q
}
pair dataset/flash_attention.py fa
pair tests/pipeline/data/transpose/flash_attention_tutorial.py tut
pair tests/pipeline/data/transpose/flash_attention_descriptors.py desc
"$tad" generate dataset/linear_recurrence.py -o "$m/lr_new.py" -q
rm -f "$m/lr_old.py"
[ -n "$base" ] && "$base" generate dataset/linear_recurrence.py -o "$m/lr_old.py" -q
while read -r file _; do
  [[ -z $file || $file == \#* ]] && continue
  "$tad" generate "$file" -o "build/ab/suite/$(basename "$file")" -q
done < bench/prepared/session20_cases.txt
bash bench/gpu_carry.sh "$build" build/gpu-carry
