#!/bin/bash
# SPDX-License-Identifier: MIT
# test_serve_kvm.sh BUILD_DIR: `vpmu serve` with real guests under KVM
# (label kvm; skips, status 77, where /dev/kvm cannot be opened or
# prometheus / go are missing). vpmu serve runs first and attaches the VMs
# as they start (inotify); two op_calls guests (tests/kvm/guests) make
# exactly 500 x (vCPU + 1) hypercalls per vCPU once a byte on their console
# input says go (sent after serve attached them), so a real
# Prometheus must return opA 1500 and opB 500; an op_hot guest is
# profiled through /debug/pprof/profile?vm=opH and `go tool pprof -top`
# must name hot_loop first.
set -u
B=$(cd "$1" && pwd)
VPMU=$B/vmm/vpmu
G=$B/guests
command -v prometheus >/dev/null || { echo "SKIP: no prometheus"; exit 77; }
command -v go >/dev/null || { echo "SKIP: no go (golang-go)"; exit 77; }
# A character device we may open read-write (never create the path).
if ! [ -c /dev/kvm ] || ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	echo "SKIP: /dev/kvm cannot be opened"
	exit 77
fi

T=$(mktemp -d /tmp/vpmu-serve-kvm.XXXXXX)
export VPMU_RUNTIME_DIR=$T/run HOME=$T PPROF_TMPDIR=$T GOCACHE=$T/gocache
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	for f in "$T"/*.log; do echo "--- $f"; tail -15 "$f"; done
	exit 1
}
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

"$VPMU" serve --listen 127.0.0.1:0 --interval 0.5 2>"$T/serve.log" &
PIDS+=($!)
wait_for 10 grep -q listening "$T/serve.log" || fail "serve did not listen"
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
wait_for 20 attached || fail "serve did not attach both VMs"
printf g >&7
printf g >&8
done_all() {
	[ "$(grep -c 'op_calls: done' "$T/opA.log")" = 2 ] &&
		grep -q 'op_calls: done' "$T/opB.log"
}
wait_for 60 done_all || fail "op_calls did not finish"

PP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: vpmu\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
	"$PORT" >"$T/prometheus.yml"
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address=127.0.0.1:$PP >"$T/prom.log" 2>&1 &
PIDS+=($!)
Q='sum by (vm) (vpmu_events_total{event="hv_hypercalls"})'
query() {
	curl -s "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$Q" >"$T/q.json" 2>/dev/null
	python3 - "$T/q.json" 2>/dev/null <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
got = {s["metric"]["vm"]: s["value"][1] for s in r["data"]["result"]}
sys.exit(0 if got == {"opA": "1500", "opB": "500"} else 1)
EOP
}
wait_for 60 query || fail "Prometheus: $(cat "$T/q.json")"
echo "ok: Prometheus: $Q = opA 1500, opB 500"

"$VPMU" run "$G/op_hot.elf" --name opH --vcpus 1 >"$T/opH.log" 2>&1 &
PIDS+=($!)
wait_for 20 grep -q "attached VM 'opH'" "$T/serve.log" || fail "opH not attached"
curl -s -o "$T/p.pb.gz" "$U/debug/pprof/profile?seconds=2&vm=opH" || fail profile
F=$(go tool pprof -top -sample_index=hv_run_ns "$T/p.pb.gz" 2>/dev/null |
	awk '/flat%/ { getline; print $NF; exit }')
[ "$F" = hot_loop ] || fail "pprof -top first function '$F'"
echo "ok: go tool pprof -top of opH: hot_loop first"
echo PASS
