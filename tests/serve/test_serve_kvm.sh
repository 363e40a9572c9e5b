#!/bin/bash
# SPDX-License-Identifier: MIT
# test_serve_kvm.sh BUILD_DIR: `vpmu serve` with real guests under KVM
# (label kvm; skips, status 77, where /dev/kvm cannot be opened or
# prometheus / go are missing; fails without /dev/kvm under
# VPMU_REQUIRE_KVM=1, as kvm_require() does). vpmu serve runs first and
# attaches the VMs as they start (inotify); two op_calls guests
# (tests/kvm/guests) make
# exactly 500 x (vCPU + 1) hypercalls per vCPU once a byte on their console
# input says go (sent after serve attached them), so a real
# Prometheus must return opA 1500 and opB 500, and every vCPU has its PMI
# series; `vpmu stat` counts the same VM beside the daemon (several
# operator contexts per vCPU); an op_chain guest is profiled through
# /debug/pprof/profile?vm=opC: `go tool pprof -top` must name hot first,
# -traces its callers (outer, user_main), -lines op_chain.c's hot line.
# Under scripts/nested-kvm (no network set up in L1), bring loopback up
# first: run.sh 'ip link set lo up; ctest -R serve_kvm --output-on-failure'.
set -u
B=$(cd "$1" && pwd)
VPMU=$B/vmm/vpmu
G=$B/guests
command -v prometheus >/dev/null || { echo "SKIP: no prometheus"; exit 77; }
command -v go >/dev/null || { echo "SKIP: no go (golang-go)"; exit 77; }
# shellcheck source=../require_kvm.sh
. "$(dirname "$0")/../require_kvm.sh"

T=$(mktemp -d /tmp/vpmu-serve-kvm.XXXXXX)
export VPMU_RUNTIME_DIR=$T/run HOME=$T PPROF_TMPDIR=$T GOCACHE=$T/gocache
# shellcheck source=serve_lib.sh
. "$(dirname "$0")/serve_lib.sh"
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.log; do echo "--- $f"; tail -15 "$f"; done
	exit 1
}

"$VPMU" serve --listen 127.0.0.1:0 --interval 0.5 --no-auth 2>"$T/serve.log" &
PIDS+=($!)
wait_for 60 grep -q listening "$T/serve.log" || fail "serve did not listen"
PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/serve.log")
U=http://127.0.0.1:$PORT

# Their console inputs: FIFOs this script holds open until it says go.
mkfifo "$T/goA" "$T/goB"
"$VPMU" run "$G/op_calls.elf" --name opA --vcpus 2 <"$T/goA" >"$T/opA.log" 2>&1 &
PIDS+=($!)
exec 7>"$T/goA"
"$VPMU" run "$G/op_calls.elf" --name opB --vcpus 1 <"$T/goB" >"$T/opB.log" 2>&1 &
PIDS+=($!)
exec 8>"$T/goB"
attached() { [ "$(grep -c 'attached VM' "$T/serve.log")" -ge 2 ]; }
wait_for 60 attached || fail "serve did not attach both VMs"
printf g >&7
printf g >&8
# The local operator beside the daemon, on the same vCPUs.
"$VPMU" stat -m opA -e hv_exits -- 1 >"$T/stat.log" 2>&1 ||
	fail "vpmu stat beside vpmu serve: $(cat "$T/stat.log")"
grep -qi busy "$T/stat.log" && fail "vpmu stat got busy: $(cat "$T/stat.log")"
echo "ok: vpmu stat -m opA beside vpmu serve"
done_all() {
	[ "$(grep -c 'op_calls: done' "$T/opA.log")" = 2 ] &&
		grep -q 'op_calls: done' "$T/opB.log"
}
wait_for 240 done_all || fail "op_calls did not finish"

start_prometheus "$PORT"
Q='sum by (vm) (vpmu_events_total{event="hv_hypercalls"})'
wait_for 180 by_vm_is "$Q" opA=1500 opB=500 || fail "Prometheus: $(cat "$T/q.json")"
echo "ok: Prometheus: $Q = opA 1500, opB 500"
by_vm_is 'count by (vm) (vpmu_vcpu_pmis_total)' opA=2 opB=1 ||
	fail "PMI series: $(cat "$T/q.json")"
echo "ok: Prometheus: vpmu_vcpu_pmis_total for every vCPU of opA and opB"
# The op_calls guests spin from now on: stop them (one CPU under the rig).
kill ${PIDS[1]} ${PIDS[2]} 2>/dev/null

"$VPMU" run "$G/op_chain.elf" --name opC --vcpus 1 >"$T/opC.log" 2>&1 &
PIDS+=($!)
wait_for 30 grep -q "attached VM 'opC'" "$T/serve.log" || fail "opC not attached"
wait_for 30 grep -q "op_chain: ready" "$T/opC.log" || fail "op_chain not ready"
curl -s -o "$T/p.pb.gz" "$U/debug/pprof/profile?seconds=3&vm=opC" || fail profile
F=$(go tool pprof -top -sample_index=hv_run_ns "$T/p.pb.gz" 2>/dev/null |
	awk '/flat%/ { getline; print $NF; exit }')
[ "$F" = hot ] || fail "pprof -top first function '$F'"
go tool pprof -traces -sample_index=hv_run_ns "$T/p.pb.gz" 2>/dev/null >"$T/traces.txt"
python3 - "$T/traces.txt" <<'EOP' || fail "pprof -traces: $(head -40 "$T/traces.txt")"
import sys
stacks = [b.split("\n") for b in open(sys.argv[1]).read().split("-----------+")[1:]]
frames = [[l.split()[-1] for l in b[1:] if l.strip() and ":" not in l] for b in stacks]
# hot() is a frameless leaf (GCC 12 ignores -mno-omit-leaf-frame-pointer
# there): its caller middle comes only from the VMM's [rsp] rule for such
# leaves, so it is not required; outer and user_main are.
sys.exit(0 if any(f[:1] == ["hot"] and "outer" in f and "user_main" in f
                  for f in frames) else 1)
EOP
# Source lines: the callers' call sites are exact (outer calls middle on
# the line of "return middle(cycles) + 1;"); hot's samples land on a line
# of op_chain.c (hot's) or of the rdtsc() it inlines (guest/kernel/x86.h,
# then named rdtsc, inlined into hot), depending on where the host's timer
# finds the vCPU; hot's own lines are never x86.h's.
SRC=$(dirname "$0")/../kvm/guests/op_chain.c
OL=$(grep -n 'return middle(cycles) + 1;' "$SRC" | cut -d: -f1)
go tool pprof -top -lines -sample_index=hv_run_ns "$T/p.pb.gz" 2>/dev/null >"$T/lines.txt"
grep -q " hot .*/x86.h:" "$T/lines.txt" &&
	fail "pprof -lines: hot at x86.h: $(head -15 "$T/lines.txt")"
grep -q " outer .*/op_chain.c:$OL\$" "$T/lines.txt" ||
	fail "pprof -lines: no outer at op_chain.c:$OL: $(head -15 "$T/lines.txt")"
L=$(awk '/flat%/ { getline; print $(NF-1), $NF; exit }' "$T/lines.txt")
case "$L" in
"hot "*/op_chain.c:[0-9]* | "rdtsc "*/x86.h:[0-9]*) ;;
*) fail "pprof -lines: first '$L'" ;;
esac
echo "ok: go tool pprof of opC: hot first; -traces hot <- outer <- user_main; -lines outer at op_chain.c:$OL, hot at ${L#hot }"
echo PASS
