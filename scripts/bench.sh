#!/usr/bin/env bash
# bench.sh: build, then run every benchmark. Each prints its figure next to
# a floor measured in the same run, and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
B=${BUILD_DIR:-build}

echo "== doorbell hypercall round trip vs bare PIO exit (guest-timed)"
"$B/vmm/vpmu" run "$B/guests/bench_doorbell.elf" | grep '^bench'

# "floor3" of bench_pfm is the NOP doorbell hypercall through vpmu's
# dispatch (not a bare exit): the bare KVM_RUN floor is bare_kvm below.
echo "== perfmon2 calls by hypercall vs floor3 (NOP doorbell through vpmu); fast read (guest-timed)"
"$B/vmm/vpmu" run "$B/guests/bench_pfm.elf" | grep -E '^bench_pfm: (best|median)'

for b in "$B"/bench/*; do
	[ -x "$b" ] || continue
	case "$(basename "$b")" in
	bare_kvm | bench_sample_cost | bench_ctl_cost | bench_drain_cost | bench_scale) continue ;; # below
	esac
	echo "== $(basename "$b")"
	"$b"
done

# Guest slowdown while 8 hv counters count, while 2 sets of 8 are
# multiplexed every 1 ms, and while hv_guest_cycles is sampled at 1 kHz,
# against the same ring-3 workload unmonitored (guest-timed, one run).
echo "== guest slowdown: counting, multiplexing at 1 ms, sampling at 1 kHz"
"$B/vmm/vpmu" run "$B/guests/bench_slowdown.elf" | grep '^bench_slowdown'

# The cost of one sample at 1, 10 and 50 kHz against the floor
# (bare_kvm: a bare KVM_RUN loop of the same guest work, kicked by a timer
# signal at the same rate) and the peer (host perf record -F of the same
# loop as a native process); samples/s achieved vs requested; resident set
# per idle VM and per vCPU against bare_kvm's. Needs /dev/kvm (exit 77:
# skipped).
echo "== cost of one sample: vpmu vs bare KVM_RUN floor vs host perf; RSS"
"$B/bench/bench_sample_cost" 1000 10000 50000 || [ $? = 77 ]

# Control-plane cost of `vpmu stat -I 100` on 1, 2, 4, 8 vCPUs
# (fake VMs: the VMM's control server with threads as vCPUs; no KVM).
echo "== control plane: vpmu stat -I 100, CPU of the control thread and the client"
"$B/bench/bench_ctl_cost"
# CPU per sample of smpl_drain, JSON vs packed (fake VMs, no KVM).
echo "== control plane: vpmu record, CPU per sample of smpl_drain in JSON vs packed"
"$B/bench/bench_drain_cost"
# Operator CPU per VM per interval of stat -I 100, top, record -F 1000 and
# serve (a collection round, a scrape) with 1, 8, 32 and 128 fake VMs of
# 1-8 vCPUs, as ratios to the 1-VM figure; wall time of `vpmu list`.
echo "== fleet scale: operator CPU per VM with 1, 8, 32, 128 VMs (fake VMs)"
"$B/bench/bench_scale"

# Snapshot and restore time and file size, 64 MiB and 1 GiB.
echo "== snapshot / restore of idle 64 MiB and 1 GiB guests (sparse)"
scripts/bench_snapshot.sh "$B"

# The Linux guest: boot from the root file system vs the initramfs test
# init, virtio-blk sequential read vs host dd, in-guest perf record
# -F 1000 vs the same workload unmonitored. Needs /dev/kvm and
# scripts/build-linux.sh's images (exit 77: skipped).
echo "== Linux guest: boot, virtio-blk read, perf record in the guest"
scripts/bench_linux.sh "$B" || [ $? = 77 ]
