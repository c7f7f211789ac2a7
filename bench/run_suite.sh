#!/usr/bin/env bash
# Runs the bench suite (bench/suite.py) on the device machine: generates each case's backward with
# tad, then times it beside the hand-written reference, eager, torch.compile and a copy.
# Usage: TAD=/path/to/tad bench/run_suite.sh [OUT_DIR] [CASES_FILE]
#   OUT_DIR (default $OUT, else bench/out/suite) gets modules/STEM.py (the generated modules),
#   generate-STEM.log, results.jsonl, table.md, ratio.png and suite.log.
#   CASES_FILE (default bench/suite_cases.txt): lines "FILE STUB DTYPE DIMS_JSON"; FILE is relative
#   to the repository; '#' starts a comment.
#   Modules made elsewhere (tad generate needs no GPU): MODULES=DIR takes DIR/STEM.py instead of
#   running TAD; SUITE_GENERATE_ONLY=1 stops after generating (on the CPU machine, with
#   TAD_PYTHON=/usr/bin/python3 for its torch). Without TAD or MODULES, no generated column.
#   Each case runs in its own process (a kernel that faults cannot take the others with it),
#   bounded by $SUITE_CASE_TIMEOUT seconds (default 240). $PYTHON: the interpreter (python3).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
out=$(absolute "${1:-${OUT:-$root/bench/out/suite}}")
cases=$(absolute "${2:-$root/bench/suite_cases.txt}")
python=${PYTHON:-python3}
mkdir -p "$out/modules"
rm -f "$out/results.jsonl" "$out/suite.log"
export PYTHONUNBUFFERED=1
status=0
declare -A generated
while read -r file stub dtype dims; do
  [[ -z $file || $file == \#* ]] && continue
  stem=$(basename "$file" .py)
  module=-
  if [[ -n ${MODULES:-} ]]; then
    module=$(absolute "$MODULES/$stem.py")
  elif [[ -n ${TAD:-} ]]; then
    module="$out/modules/$stem.py"
    if [[ -z ${generated[$stem]:-} ]]; then
      generated[$stem]=1
      start=$SECONDS
      if ! "$TAD" generate "$root/$file" -o "$module" -q < /dev/null > "$out/generate-$stem.log" 2>&1; then
        echo "tad generate $file failed (see $out/generate-$stem.log)" >&2
        rm -f "$module"
        status=1
      fi
      echo "generated $stem ($((SECONDS - start)) s)" >&2
    fi
  fi
  [[ ${SUITE_GENERATE_ONLY:-0} == 1 ]] && continue
  start=$SECONDS
  before=$(cat "$out/results.jsonl" 2>/dev/null | wc -l)
  timeout "${SUITE_CASE_TIMEOUT:-240}" "$python" "$root/bench/suite.py" --no-report --out "$out" \
    --case "$root/$file" "$stub" "$dims" "$dtype" "$module" < /dev/null >> "$out/suite.log" 2>&1
  code=$?
  if ((code != 0)); then
    echo "case $stem $dims: exit $code (see $out/suite.log)" >&2
    status=1
    # A process that died or timed out (124) wrote no record: the table still gets its row.
    if (($(cat "$out/results.jsonl" 2>/dev/null | wc -l) == before)); then
      printf '{"kernel": "%s", "file": "%s", "dims": %s, "dtype": "%s", "flops": null, "bytes": null, "variants": {}, "error": "suite.py exit %s"}\n' \
        "$stem" "$file" "$dims" "$dtype" "$code" >> "$out/results.jsonl"
    fi
  fi
  echo "timed $stem $dims ($((SECONDS - start)) s)" >&2
done < "$cases"
[[ ${SUITE_GENERATE_ONLY:-0} == 1 ]] && exit $status
"$python" "$root/bench/suite.py" --report-only --out "$out" || status=1
exit $status
