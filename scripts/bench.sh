#!/usr/bin/env bash
# bench.sh: build, then run every benchmark. Each prints its figure next to
# a floor measured in the same run, and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
B=${BUILD_DIR:-build}

echo "== doorbell hypercall round trip vs bare PIO exit (guest-timed)"
"$B/vmm/vpmu" run "$B/guests/bench_doorbell.elf" | grep '^bench'

for b in "$B"/bench/*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b"
done
