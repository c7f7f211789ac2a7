#!/usr/bin/env bash
# One GPU call's checks, in parallel within a time budget (the device machine's time is scarce):
# first, alone on the GPU, the timing commands of BENCH_CMDS and the GPU tests that compare times
# (OptimizeGpu); then, JOBS at a time, the GPU verification of every dataset entry (`tad dataset
# check --record`, sidecars updated), of every example and of the test-data files named in
# EXTRA_FILES (`tad verify`), each over its SWEEP's required entries in float32 and float16, beside
# the other GPU GoogleTests and the commands of EXTRA_CMDS.
#   bench/gpu_session.sh CARRY OUT [JOBS]
# CARRY: tad, libtad.so*, libcjson.so.1, python/ and test_gpu, built elsewhere (bench/gpu_carry.sh).
# OUT gets verify.txt (one line per file: name, exit status, the summary, each failing case's
# message), bench.txt, the logs, and meta/ (the dataset's sidecars after the run); OUT.tgz holds
# it all in one file, as the device tool brings back only a few. Jobs not started by DEADLINE
# seconds (default 420) are listed as not run; each job gets JOB_TIMEOUT seconds (default 300),
# each test_gpu run TEST_TIMEOUT (300). FIRST: dataset names verified before the others. ALONE:
# dataset names verified one at a time before the parallel jobs start (default
# decode_attention_split and chunked_linear_attention: their largest required entries' float64
# references take up to 77 GB, and beside 11 other jobs they ran out of memory). ONLY: when set,
# the dataset names verified (examples and EXTRA_FILES still are).
# TIMED_TESTS: the GPU tests that compare times, run alone first (default 'OptimizeGpu.*'); set
# empty, they are not run (the other GPU tests still run beside the verification).
# BENCH_CMDS / EXTRA_CMDS: newline-separated shell commands.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
carry=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
jobs=${3:-12}
deadline=${DEADLINE:-420}
job_timeout=${JOB_TIMEOUT:-300}
start=$(date +%s)  # epoch seconds: the jobs' shells have counters of their own
export LD_LIBRARY_PATH="$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TAD_PYTHON=${TAD_PYTHON:-python3}
cd "$root"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt" 2>&1

# The SWEEP entries a file requires, as a --dims list (SWEEP is read, not imported).
required() {
  python3 - "$1" <<'PY'
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
value = next(s.value for s in tree.body
             if isinstance(s, ast.Assign) and any(getattr(t, "id", "") == "SWEEP" for t in s.targets))
try:  # literals, or expressions of literals (a list sum); else the whole SWEEP ("")
    sweep = eval(compile(ast.Expression(value), "SWEEP", "eval"), {"__builtins__": {}})
    print(json.dumps([d for d in sweep if d.get("required", True)]))
except Exception:
    print("")
PY
}

while IFS= read -r cmd; do
  [ -n "$cmd" ] && { echo "\$ $cmd"; timeout 150 bash -c "$cmd" 2>&1; echo "exit $?"; } >> "$out/bench.txt"
done <<< "${BENCH_CMDS:-}"
mkdir -p "$out/logs"
# The GPU tests that compare timings run alone too; the others beside the verification jobs.
timed_default='OptimizeGpu.*'
timed=${TIMED_TESTS-$timed_default}
: > "$out/verify.txt"
if [ -n "$timed" ]; then
  timeout "${TEST_TIMEOUT:-300}" "$carry/test_gpu" --gtest_filter="$timed" > "$out/logs/test_gpu_timed.log" 2>&1
  echo "test_gpu($timed) exit=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/logs/test_gpu_timed.log" | tr '\n' ' ')" \
    > "$out/verify.txt"
fi

one() {  # kind file: one verification, its line in verify.txt
  local kind=$1 f=$2 name log dims status
  name=$(basename "$f" .py)
  log=$out/logs/$kind-$name.log
  if (($(date +%s) - start > deadline)); then
    echo "$kind/$name not-run (past the deadline)" >> "$out/verify.txt"
    return
  fi
  dims=$(required "$f")
  local args=()
  [ -n "$dims" ] && args=(--dims "$dims")
  if [ "$kind" = dataset ]; then
    timeout "$job_timeout" "$carry/tad" dataset check --only "$name" --record "${args[@]}" --dataset dataset \
      --cache "$out/work/$name" --work-dir "$out/work/$name-s" > "$log" 2>&1
  else
    timeout "$job_timeout" "$carry/tad" verify "$f" "${args[@]}" --work-dir "$out/work/$kind-$name" > "$log" 2>&1
  fi
  status=$?
  # The summary, then each failing case's message (the lines under the table).
  echo "$kind/$name exit=$status $(grep -E '^\[(PASS|FAIL|SKIP)\]|: \[FAIL\]|passed [0-9]' "$log" | tr '\n' ' ' |
    cut -c1-300) $(grep -E '^  ' "$log" | cut -c1-400 | tr '\n' ' ')" >> "$out/verify.txt"
}
export -f one required
export out carry start deadline job_timeout
mkdir -p "$out/work"
alone=${ALONE-decode_attention_split chunked_linear_attention}
listed() { [[ " $2 " == *" $1 "* ]]; }  # name list
wanted() { [ -z "${ONLY:-}" ] || listed "$1" "$ONLY"; }
for n in $alone; do wanted "$n" && one dataset "dataset/$n.py"; done
{
  for n in ${FIRST:-}; do wanted "$n" && ! listed "$n" "$alone" && echo "dataset dataset/$n.py"; done
  for f in dataset/*.py; do
    n=$(basename "$f" .py)
    wanted "$n" && ! listed "$n" "$alone ${FIRST:-}" && echo "dataset $f"
  done
  for f in examples/*.py ${EXTRA_FILES:-}; do echo "file $f"; done
} > "$out/jobs.txt"
(
  timeout "${TEST_TIMEOUT:-300}" "$carry/test_gpu" --gtest_filter="-$timed_default" > "$out/logs/test_gpu.log" 2>&1
  echo "test_gpu(-$timed_default) exit=$? $(grep -E '^\[  (PASSED|FAILED)' "$out/logs/test_gpu.log" | tr '\n' ' ')" >> "$out/verify.txt"
) &
while IFS= read -r cmd; do
  [ -n "$cmd" ] && (timeout 300 bash -c "$cmd" > "$out/logs/extra-$RANDOM.log" 2>&1; echo "extra exit=$? $cmd" >> "$out/verify.txt") &
done <<< "${EXTRA_CMDS:-}"
xargs -P "$jobs" -L 1 bash -c 'one "$0" "$1"' < "$out/jobs.txt"
wait
rm -rf "$out/meta" && cp -r dataset/meta "$out/meta"
rm -rf "$out/work"
sort "$out/verify.txt" -o "$out/verify.txt"
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
echo "wall $(($(date +%s) - start)) s; $(grep -c 'exit=0' "$out/verify.txt") of $(wc -l < "$out/verify.txt") exit 0"
