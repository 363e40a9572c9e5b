#!/usr/bin/env bash
# bench_linux.sh: the Linux guest's figures, each against its floor in the
# same run, on whatever this host is (hardware KVM, or PVM where guest
# ring 0 is emulated and the guest kernel's share of each figure is large).
#   boot:  boot to init's first command and power off, the block-device
#          root file system (rootfs.ext4: busybox, perf, pvpmu.ko) against
#          the initramfs test init, same kernel, same memory;
#   disk:  sequential read of a 64 MiB disk in the guest (dd from
#          /dev/vdb, O_DIRECT and through the guest's page cache) against
#          dd of the same image file on the host (both from the host's
#          page cache);
#   perf:  a fixed workload (pvpmu-hot ROUNDS, its own clock) under
#          `perf record -F 1000` with 1 event and with 10 (more than the
#          model's counters: multiplexed), against the same workload
#          unmonitored in the same guest;
#   tasks: what naming guest processes for host profiles costs the guest
#          (pvpmu.ko's sched_switch probe writes the next thread into the
#          shared page): a pipe between two processes (yes | head: a
#          context switch every few KiB) with the module loaded, against
#          the same after rmmod, in one guest; per context switch from
#          /proc/stat's ctxt. A host sample costs the VMM nothing more:
#          it read the shared page's ids before.
# Needs /dev/kvm and scripts/build-linux.sh's images (exit 77: skipped).
# Usage: scripts/bench_linux.sh [BUILD]
set -euo pipefail
B=${1:-${BUILD_DIR:-build}}
V="$B/vmm/vpmu"
L="$B/linux"
ROUNDS=${BENCH_HOT_ROUNDS:-200}
[ -r /dev/kvm ] && [ -r "$L/rootfs.ext4" ] && [ -r "$L/vmlinux" ] || {
	echo "bench_linux: skipped: needs /dev/kvm and $L/{vmlinux,rootfs.ext4}"
	exit 77
}
D=$(mktemp -d "${TMPDIR:-/var/tmp}/vpmu-linuxbench-XXXXXX")
trap 'rm -rf "$D"' EXIT
LINE="console=ttyS0 panic=-1 reboot=k"

ms() { date +%s%N | awk '{printf "%.0f", $1 / 1e6}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# A VM's wall time in ms: vpmu run ARGS..., console in $D/out.
timed_run() {
	local t0 t1
	t0=$(ms)
	"$V" run "$@" >"$D/out" 2>&1 || {
		echo "bench_linux: the VM failed: $*" >&2
		tail -20 "$D/out" >&2
		return 1
	}
	t1=$(ms)
	echo $((t1 - t0))
}

echo "== Linux boot to init's first command and power-off, same kernel"
initrd=$(timed_run --kernel "$L/vmlinux" --initrd "$L/initrd.cpio" \
	--mem 256M --append "$LINE vpmutest=boot")
disk=$(timed_run --kernel "$L/vmlinux" --disk "$L/rootfs.ext4,ro" \
	--mem 256M --append "$LINE -- true")
printf 'bench_linux: boot: initramfs test init %d ms, rootfs.ext4 %d ms: %sx\n' \
	"$initrd" "$disk" "$(ratio "$disk" "$initrd")"

echo "== virtio-blk: 64 MiB sequential read in the guest vs dd on the host"
img="$D/disk64.img"
dd if=/dev/urandom of="$img" bs=1M count=64 status=none
t0=$(ms)
dd if="$img" of=/dev/null bs=1M status=none
t1=$(ms)
host=$((t1 - t0 > 0 ? t1 - t0 : 1))
# busybox time prints "real\tMm S.SSs" (the guest's own clock, without
# the boot). O_DIRECT skips the guest's page cache copy.
timed_run --kernel "$L/vmlinux" --disk "$L/rootfs.ext4,ro" --disk "$img,ro" \
	--mem 256M --append "$LINE -- sh -c \"echo direct;
	time dd if=/dev/vdb of=/dev/null bs=1M iflag=direct 2>&1; echo buffered;
	time dd if=/dev/vdb of=/dev/null bs=1M 2>&1\"" >/dev/null
mapfile -t secs < <(awk '$1 == "real" { m = $2; sub(/m$/, "", m); s = $3;
	sub(/s$/, "", s); print m * 60 + s }' "$D/out")
[ "${#secs[@]}" = 2 ] || { echo "bench_linux: no guest dd figures" >&2; tail -20 "$D/out" >&2; exit 1; }
direct=$(awk -v s="${secs[0]}" 'BEGIN { printf "%d", s * 1000 }')
buffered=$(awk -v s="${secs[1]}" 'BEGIN { printf "%d", s * 1000 }')
printf 'bench_linux: disk: guest dd 64 MiB O_DIRECT %d ms (%s MB/s), buffered %d ms (%s MB/s); host dd %d ms (%s MB/s): %sx and %sx\n' \
	"$direct" "$(ratio 67108.864 "$direct")" "$buffered" \
	"$(ratio 67108.864 "$buffered")" "$host" "$(ratio 67108.864 "$host")" \
	"$(ratio "$direct" "$host")" "$(ratio "$buffered" "$host")"

echo "== perf record -F 1000 in the guest: pvpmu-hot $ROUNDS, 1 and 10 events"
ten=cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles,cycles
timed_run --kernel "$L/vmlinux" --disk "$L/rootfs.ext4,ro" --mem 256M \
	--pmu intel-v2 --append "$LINE -- sh -c \"pvpmu-hot $ROUNDS;
	perf record -F 1000 -m 8 --no-buildid -o /tmp/1.data -- pvpmu-hot $ROUNDS;
	perf record -F 1000 -m 8 --no-buildid -o /tmp/10.data -e $ten -- pvpmu-hot $ROUNDS\"" >/dev/null
mapfile -t us < <(awk '/^pvpmu-hot: [0-9]+ rounds in/ { print $5 }' "$D/out")
[ "${#us[@]}" = 3 ] || { echo "bench_linux: expected 3 pvpmu-hot figures" >&2; tail -30 "$D/out" >&2; exit 1; }
printf 'bench_linux: perf record: unmonitored %d us; 1 event %d us: %sx; 10 events (multiplexed) %d us: %sx\n' \
	"${us[0]}" "${us[1]}" "$(ratio "${us[1]}" "${us[0]}")" "${us[2]}" \
	"$(ratio "${us[2]}" "${us[0]}")"
echo "bench_linux: KVM's published in-guest perf record -F 1000 overhead (SPECint2017, Sapphire Rapids): emulated vPMU 33.6 % (6 events) / 79.3 % (10), mediated 4.2 % / 7.3 %"

echo "== process records for host profiles: a pipe's context switches with and without pvpmu.ko"
PIPE_BYTES=${BENCH_PIPE_BYTES:-20000000}
# The guest's script, on a scratch disk (/mnt): no quoting through the
# kernel command line.
mkdir -p "$D/w"
cat >"$D/w/pipe.sh" <<-SCRIPT
	pipe() {
		c0=\$(awk '/^ctxt/ { print \$2 }' /proc/stat)
		time sh -c 'yes | head -c $PIPE_BYTES >/dev/null' 2>&1
		awk -v c0=\$c0 '/^ctxt/ { print "switches", \$2 - c0 }' /proc/stat
	}
	pipe
	rmmod pvpmu
	pipe
SCRIPT
timed_run --kernel "$L/vmlinux" --disk "$L/rootfs.ext4,ro" --disk "$D/w" \
	--mem 256M --append "$LINE -- sh /mnt/pipe.sh" >/dev/null
mapfile -t secs < <(awk '$1 == "real" { m = $2; sub(/m$/, "", m); s = $3;
	sub(/s$/, "", s); print m * 60 + s }' "$D/out")
mapfile -t sw < <(awk '$1 == "switches" { print $2 + 0 }' "$D/out")
[ "${#secs[@]}" = 2 ] && [ "${#sw[@]}" = 2 ] || { echo "bench_linux: no pipe figures" >&2; tail -20 "$D/out" >&2; exit 1; }
with=$(awk -v s="${secs[0]}" 'BEGIN { printf "%d", s * 1000 }')
without=$(awk -v s="${secs[1]}" 'BEGIN { printf "%d", s * 1000 }')
# Per context switch: the two passes need not switch equally often.
per_with=$(awk -v t="$with" -v n="${sw[0]}" 'BEGIN { printf "%.0f", t * 1000 / (n > 0 ? n : 1) }')
per_without=$(awk -v t="$without" -v n="${sw[1]}" 'BEGIN { printf "%.0f", t * 1000 / (n > 0 ? n : 1) }')
printf 'bench_linux: tasks: pipe of %d bytes with pvpmu.ko %d ms / %d switches = %d us per switch; after rmmod %d ms / %d switches = %d us per switch: %sx\n' \
	"$PIPE_BYTES" "$with" "${sw[0]}" "$per_with" "$without" "${sw[1]}" \
	"$per_without" "$(ratio "$per_with" "$per_without")"
