#!/usr/bin/env bash
# check-format.sh: fail if any tracked C source differs from clang-format.
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
exit $bad
