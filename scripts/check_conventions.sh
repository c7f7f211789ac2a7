#!/usr/bin/env bash
# The checkable conventions (docs/ARCHITECTURE.md): every C and C++ file is formatted as
# .clang-format says, and no function in src/ exceeds .clang-tidy's cognitive-complexity threshold.
#   scripts/check_conventions.sh [BUILD_DIR]   (default build/: it needs compile_commands.json)
# Exits 0 when both hold, 1 listing what does not; 77 (a skip for ctest) with a [SKIP] line when
# the tools are missing.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
for tool in clang-format clang-tidy; do
  if ! command -v "$tool" >/dev/null; then
    echo "[SKIP] conventions: $tool is not installed (apt-get install $tool)"
    exit 77
  fi
done
status=0

# Sources, not the inputs of golden tests (tests/frontend/corpus holds Python; golden dirs hold outputs).
mapfile -t files < <(find include src tests bindings \( -name '*.cpp' -o -name '*.h' -o -name '*.c' -o -name '*.cc' \) \
  -not -path '*/golden/*' -not -path '*/corpus/*' | sort)
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  printf 'not formatted (clang-format -i FILE): %s\n' "${unformatted[@]}"
  status=1
fi

if [ ! -f "$build/compile_commands.json" ]; then
  echo "conventions: $build/compile_commands.json is missing (configure with cmake first)"
  exit 1
fi
mapfile -t sources < <(find "$PWD/src" -name '*.cpp' | sort)
if ! out=$(clang-tidy -p "$build" --quiet "${sources[@]}" 2>/dev/null); then status=1; fi
if grep -q "warning:\|error:" <<<"$out"; then
  grep "warning:\|error:" <<<"$out"
  status=1
fi
[ $status -eq 0 ] && echo "conventions: ${#files[@]} files formatted, ${#sources[@]} sources under the complexity threshold"
exit $status
