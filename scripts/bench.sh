#!/usr/bin/env bash
# bench.sh: build, then run every benchmark. Each prints its figure next to
# a floor measured in the same run, and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
B=${BUILD_DIR:-build}

echo "== doorbell hypercall round trip vs bare PIO exit (guest-timed)"
"$B/vmm/vpmu" run "$B/guests/bench_doorbell.elf" | grep '^bench'

echo "== perfmon2 calls by hypercall vs the exit floor; fast read (guest-timed)"
"$B/vmm/vpmu" run "$B/guests/bench_pfm.elf" | grep -E '^bench_pfm: (best|median)'

for b in "$B"/bench/*; do
	[ -x "$b" ] || continue
	echo "== $(basename "$b")"
	"$b"
done

# Issue 5: guest slowdown while 8 hv counters count, while 2 sets of 8 are
# multiplexed every 1 ms, and while hv_guest_cycles is sampled at 1 kHz,
# against the same ring-3 workload unmonitored (guest-timed, one run).
echo "== guest slowdown: counting, multiplexing at 1 ms, sampling at 1 kHz"
"$B/vmm/vpmu" run "$B/guests/bench_slowdown.elf" | grep '^bench_slowdown'

# Issue 19: snapshot and restore time and file size, 64 MiB and 1 GiB.
echo "== snapshot / restore of idle 64 MiB and 1 GiB guests (sparse)"
scripts/bench_snapshot.sh "$B"
