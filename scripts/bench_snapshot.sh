#!/usr/bin/env bash
# bench_snapshot.sh: snapshot and restore of an idle spinning
# guest of 64 MiB and 1 GiB: pause time, file size (sparse: zero pages are
# not stored), restore time, against the floor of streaming the guest's
# memory size of zeroes once (dd /dev/zero -> /dev/null, same run): the
# snapshot reads every page to skip the zero ones. Needs /dev/kvm.
# Usage: scripts/bench_snapshot.sh [BUILD]
set -euo pipefail
B=${1:-${BUILD_DIR:-build}}
V="$B/vmm/vpmu"
D=$(mktemp -d /tmp/vpmu-snapbench-XXXXXX)
chmod 700 "$D"
export VPMU_RUNTIME_DIR="$D"
trap 'rm -rf "$D"' EXIT

ms() { date +%s%N | awk '{printf "%.1f", $1 / 1e6}'; }

wait_for() { # FILE TEXT
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench_snapshot: timed out waiting for '$2' in $1" >&2
	return 1
}

for mem in 64M 1G; do
	"$V" run "$B/guests/spin.elf" --mem "$mem" --name "sb-$mem" \
		>"$D/con-$mem" 2>"$D/err-$mem" &
	pid=$!
	wait_for "$D/con-$mem" "all vcpus spinning"
	"$V" snapshot "sb-$mem" "$D/snap-$mem" --stop >"$D/snap-$mem.out"
	wait "$pid" || true
	size=$(stat -c %s "$D/snap-$mem")
	case $mem in *G) mb=$((${mem%G} * 1024)) ;; *) mb=${mem%M} ;; esac
	t0=$(ms)
	dd if=/dev/zero of=/dev/null bs=1M count="$mb" 2>/dev/null
	t1=$(ms)
	floor=$(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}')
	VPMU_LOG=info "$V" run --restore "$D/snap-$mem" --name "sr-$mem" \
		>"$D/rcon-$mem" 2>"$D/rerr-$mem" &
	pid=$!
	wait_for "$D/rerr-$mem" "restored"
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
	pause=$(sed -n 's/.*paused \([0-9.]*\) ms.*/\1/p' "$D/snap-$mem.out")
	restore=$(sed -n 's/.*restored .* in \([0-9.]*\) ms.*/\1/p' \
		"$D/rerr-$mem")
	echo "bench_snapshot: $mem guest: file $size bytes," \
		"snapshot (paused) $pause ms, restore $restore ms;" \
		"floor: $mem of zeroes streamed $floor ms;" \
		"ratios $(echo "$pause $restore $floor" |
			awk '{f = $3 > 0.1 ? $3 : 0.1;
			      printf "%.1f / %.1f", $1 / f, $2 / f}')"
done
exit 0
