#!/usr/bin/env bash
# Runs the whole test suite in build/ and prints why tests were skipped (ctest hides the output
# of skipped tests, and a GPU test without a GPU must say "[SKIP] no GPU" visibly).
set -uo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build --output-on-failure -j"$(nproc)"
status=$?
grep -ho '\[SKIP\][^"]*' build/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c | sed 's/^ */  /'
exit $status
