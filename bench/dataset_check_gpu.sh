#!/usr/bin/env bash
# GPU verification of every dataset entry's generated backward (float32 and float16 over each file's
# SWEEP, as `tad verify`), recorded into the entries' sidecars: `tad dataset check --record`
# (docs/retrieval.md). With BENCH=1 the entries that pass are also timed (`--bench`: the sidecars'
# "timings"); ONLY=a,b limits the run to those entries (to split it across calls).
#   OUT=/path bench/dataset_check_gpu.sh [BUILD_DIR]
# Writes under $OUT (default bench/out/dataset-check): dataset_check.txt (one line per entry, then
# the exit status), meta/ (the updated sidecars: copy them over dataset/meta/), check/ (each entry's
# verify and bench reports). The dataset's index is not needed: no FAISS on the GPU machine.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${OUT:-bench/out/dataset-check}
mkdir -p "$out"
args=(dataset check --dataset dataset --cache "$out/cache" --work-dir "$out/work" --record -q)
[ "${BENCH:-0}" = 1 ] && args+=(--bench)
[ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
"$build/tad" "${args[@]}" > "$out/dataset_check.txt" 2>&1
status=$?
echo "exit $status" >> "$out/dataset_check.txt"
rm -rf "$out/meta" "$out/check"
cp -r dataset/meta "$out/meta"
[ -d "$out/cache/check" ] && cp -r "$out/cache/check" "$out/check"
rm -rf "$out/cache/sessions" "$out/work"
tail -3 "$out/dataset_check.txt"
exit $status
