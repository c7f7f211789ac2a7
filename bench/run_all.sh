#!/usr/bin/env bash
# Generates, verifies and benchmarks kernel files with `tad run`, one session per file, going on past
# failures, then prints bench/report.py's summary of them (also saved as OUT_DIR/report.md).
# Usage: bench/run_all.sh [BUILD_DIR] [OUT_DIR] [FILES...]
#   BUILD_DIR: where the tad program is (default build); OUT_DIR (default bench/out) gets, per file,
#   NAME/ (the session), NAME.log (tad's output) and NAME.exit (its exit status); an empty argument
#   means the default. FILES default to examples/*.py and dataset/*.py. $TAD_RUN_OPTS is added to
#   every `tad run` (e.g. "--dtypes float16 --reps 200"). $TAD_COMMAND replaces `run` (`bench`: GPU
#   verification and timing only, skipping the CPU tier); $TAD_FILE_TIMEOUT (seconds) bounds each file;
#   $TAD_REQUIRED_ONLY=1 leaves out the SWEEP entries marked "required": False.
# Exits 1 when any `tad run` failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Paths given are relative to the caller's directory, the defaults to the repository.
absolute() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
build=$(absolute "${1:-$root/build}")
out=$(absolute "${2:-$root/bench/out}")
shift $(($# < 2 ? $# : 2))
files=()
for f in "$@"; do files+=("$(absolute "$f")"); done
((${#files[@]})) || files=("$root"/examples/*.py "$root"/dataset/*.py)
read -ra opts <<< "${TAD_RUN_OPTS:-}"

mkdir -p "$out"
status=0
names=()
declare -A taken
for i in "${!files[@]}"; do
  f=${files[$i]}
  name=$(basename "$f" .py)
  # Files of one name in different directories get their directory's name in front.
  [[ -n ${taken[$name]:-} ]] && name="$(basename "$(dirname "$f")")-$name"
  taken[$name]=1
  names+=("$name")
  rm -rf "${out:?}/$name"
  start=$SECONDS
  dims=()
  if [[ ${TAD_REQUIRED_ONLY:-0} == 1 ]]; then
    # SWEEP is read from the source, not imported: it is literals and arithmetic on them.
    dims=(--dims "$(python3 - "$f" <<'PY'
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
node = next(s.value for s in tree.body
            if isinstance(s, ast.Assign) and any(getattr(t, "id", "") == "SWEEP" for t in s.targets))
sweep = eval(compile(ast.Expression(node), sys.argv[1], "eval"), {"__builtins__": {}})
print(json.dumps([d for d in sweep if d.get("required", True)]))
PY
)")
  fi
  timeout "${TAD_FILE_TIMEOUT:-0}" "$build/tad" "${TAD_COMMAND:-run}" "$f" --work-dir "$out/$name" "${opts[@]}" \
    "${dims[@]}" > "$out/$name.log" 2>&1
  code=$?
  echo "$code" > "$out/$name.exit"
  ((code == 0)) || status=1
  echo "[$((i + 1))/${#files[@]}] $name: exit $code ($((SECONDS - start)) s)" >&2
done
python3 "$root/bench/report.py" "$out" "${names[@]}" | tee "$out/report.md" || status=1
exit $status
