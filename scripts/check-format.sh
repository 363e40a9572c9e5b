#!/usr/bin/env bash
# check-format.sh: fail if any tracked C source differs from clang-format,
# or if a test uses Criterion's gt(), which 2.4.1 lets pass on equal values.
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(git ls-files '*.c' '*.h' 2>/dev/null || true)
[ -n "$files" ] || exit 0
bad=0
for f in $files; do
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "check-format: $f is not clang-formatted (run clang-format -i $f)"
		bad=1
	fi
done
# Criterion 2.4.1: cr_assert(gt(int, 3, 3)) passes. Write lt(T, b, a).
if git grep -nE '(^|[^A-Za-z0-9_])gt\([a-z0-9_]+,' -- 'tests/*.c' 'tests/*.h'; then
	echo "check-format: Criterion 2.4.1's gt() passes when both sides are equal; write lt(TYPE, b, a) for a > b"
	bad=1
fi
exit $bad
