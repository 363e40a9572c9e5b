#!/bin/bash
# SPDX-License-Identifier: MIT
# test_serve_clients.sh BUILD_DIR: `vpmu serve` read by real clients on
# loopback, without KVM: two fake VMs (fake_vms: real control servers,
# threads as vCPUs) make an exactly known number of hypercalls; a real
# Prometheus scrapes vpmu serve and its HTTP API must return the series of
# both VMs with those exact counts; `go tool pprof -top` must name the
# guests' hot function first, for /debug/pprof/profile and for
# `vpmu report --pprof`; a VM started later is attached and detached; bad
# requests get clear errors and the daemon
# keeps serving; a second profile at once waits its turn; SIGTERM stops it.
# Exit 77 (skipped) without prometheus or go.
set -u
B=$(cd "$1" && pwd)
VPMU=$B/vmm/vpmu
FAKE=$B/tests/serve/fake_vms
command -v prometheus >/dev/null || { echo "SKIP: no prometheus"; exit 77; }
command -v go >/dev/null || { echo "SKIP: no go (golang-go)"; exit 77; }

T=$(mktemp -d /tmp/vpmu-serve-test.XXXXXX)
export VPMU_RUNTIME_DIR=$T/run HOME=$T PPROF_TMPDIR=$T GOCACHE=$T/gocache
# shellcheck source=serve_lib.sh
. "$(dirname "$0")/serve_lib.sh"
FAIL_LOGS="fake serve prom"

N=400 # hypercalls per vCPU
"$FAKE" "$T/go" $N alpha:2 beta:1 2>"$T/fake.log" &
PIDS+=($!)
wait_for 10 grep -q ready "$T/fake.log" || fail "fake VMs did not start"

new_token
"$VPMU" serve --listen 127.0.0.1:0 --interval 0.5 --auth-token-file "$TOKEN_FILE" \
	2>"$T/serve.log" &
SERVE=$!
PIDS+=($SERVE)
wait_for 10 grep -q 'listening' "$T/serve.log" || fail "serve did not listen"
PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/serve.log")
U=http://127.0.0.1:$PORT
two_vms() { [ "$(curl -s "$U/debug/vpmu/vms" | grep -o '"uuid"' | wc -l)" = 2 ]; }
wait_for 15 two_vms || fail "serve did not attach both VMs"
echo "ok: /debug/vpmu/vms lists both VMs"

touch "$T/go"
wait_for 20 grep -q 'hypercalls done' "$T/fake.log" || fail "hypercalls not made"

# --- Prometheus scrapes vpmu serve.
start_prometheus "$PORT" "$TOKEN_FILE"
Q='sum by (vm) (vpmu_events_total{event="hv_hypercalls"})'
wait_for 60 by_vm_is "$Q" alpha=$((2 * N)) beta=$N ||
	fail "Prometheus query: $(cat "$T/q.json")"
echo "ok: Prometheus: $Q = alpha $((2 * N)), beta $N"
Q='sum by (vm) (vpmu_vcpu_pmis_total)'
wait_for 30 by_vm_is "$Q" alpha=$((2 * N / 4)) beta=$((N / 4)) ||
	fail "Prometheus PMI query: $(cat "$T/q.json")"
echo "ok: Prometheus: $Q = alpha $((2 * N / 4)), beta $((N / 4))"
command curl -s "http://127.0.0.1:$PP/api/v1/query" \
	--data-urlencode 'query=count(vpmu_vm_start_time_seconds)' | grep -q '"2"' ||
	fail "start_time series of both VMs"
echo "ok: Prometheus has vpmu_vm_start_time_seconds of both VMs"

# --- The exposition passes promtool's lint (one unit per family, base
# units, counters named _total), and every query of the Grafana dashboard
# shipped in configs/ names only metrics vpmu serve exports.
curl -s "$U/metrics" >"$T/metrics.txt" || fail "GET /metrics"
promtool check metrics <"$T/metrics.txt" >"$T/promtool.txt" 2>&1 ||
	fail "promtool check metrics: $(cat "$T/promtool.txt")"
echo "ok: promtool check metrics"
python3 - "$(dirname "$0")/../../configs/grafana/vpmu.json" "$T/metrics.txt" <<'EOP' ||
import json, re, sys
dash = json.load(open(sys.argv[1]))
# Sample names, and families with no sample yet (no VM counts cycles
# without a known TSC rate: the fake VMs have none).
have = set()
for l in open(sys.argv[2]):
    m = re.match(r"(# TYPE )?([a-zA-Z_:][a-zA-Z0-9_:]*)", l)
    if m:
        have.add(m.group(2))
queries = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
queries += [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
bad = []
for q in queries:
    names = set(re.findall(r"\bvpmu_[a-z0-9_]+", q))
    if not names or names - have:
        bad.append("%s: %s" % (q, sorted(names - have) or "no vpmu metric"))
print("\n".join(bad) or "%d queries" % len(queries))
sys.exit(1 if bad else 0)
EOP
	fail "dashboard queries name metrics vpmu serve does not export"
echo "ok: every query of configs/grafana/vpmu.json names exported metrics"

# --- The local operator beside the daemon: several host contexts per vCPU.
"$VPMU" stat -a -e hv_hypercalls,hv_pio -- 1 >"$T/stat.out" 2>"$T/stat.log" ||
	fail "vpmu stat beside vpmu serve: $(cat "$T/stat.out" "$T/stat.log")"
grep -q alpha "$T/stat.out" "$T/stat.log" && grep -q beta "$T/stat.out" "$T/stat.log" ||
	fail "vpmu stat beside vpmu serve counted both VMs: $(cat "$T/stat.out" "$T/stat.log")"
grep -qi busy "$T/stat.out" "$T/stat.log" && fail "vpmu stat got busy: $(cat "$T/stat.log")"
echo "ok: vpmu stat -a beside vpmu serve counts both VMs"

# --- go tool pprof reads /debug/pprof/profile.
top_function() { # FILE: the first function of go tool pprof -top
	go tool pprof -top -sample_index=hv_run_ns "$1" 2>"$T/pprof.err" |
		awk '/flat%/ { getline; print $NF; exit }'
}
curl -s -o "$T/p.pb.gz" "$U/debug/pprof/profile?seconds=2" || fail "profile"
F=$(top_function "$T/p.pb.gz")
[ "$F" = fake_guest_hot ] || fail "pprof -top first function '$F' ($(cat "$T/pprof.err"))"
echo "ok: go tool pprof -top of /debug/pprof/profile: $F first"
# Call chains and source lines, as `vpmu record -g` and `report` have them.
go tool pprof -traces -sample_index=hv_run_ns "$T/p.pb.gz" 2>/dev/null >"$T/traces.txt"
python3 - "$T/traces.txt" <<'EOP' || fail "pprof -traces: $(head -30 "$T/traces.txt")"
import sys
stacks = [b.split("\n") for b in open(sys.argv[1]).read().split("-----------+")[1:]]
frames = [[l.split()[-1] for l in b[1:] if l.strip() and ":" not in l] for b in stacks]
want = ["fake_guest_hot", "fake_guest_mid", "fake_guest_outer"]
sys.exit(0 if any(f == want for f in frames) else 1)
EOP
go tool pprof -traces "$T/p.pb.gz" 2>/dev/null | grep -q 'vcpu:  0' || fail "no vcpu 0 label"
# Each sample type once: the sampled hv_run_ns is not also a counted one.
go tool pprof -raw "$T/p.pb.gz" 2>/dev/null | awk '/^Samples:/ { getline; print; exit }' >"$T/types.txt"
[ "$(tr -s ' ' '\n' <"$T/types.txt" | grep -c '^hv_run_ns/')" = 1 ] ||
	fail "hv_run_ns not once among the sample types: $(cat "$T/types.txt")"
echo "ok: sample types $(cat "$T/types.txt")"
L=$(go tool pprof -top -lines -sample_index=hv_run_ns "$T/p.pb.gz" 2>/dev/null |
	awk '/flat%/ { getline; print $(NF-1), $NF; exit }')
HL=$(grep -n 'fake_guest_hot(void)$' "$(dirname "$0")/fake_vms.c" | tail -1 | cut -d: -f1)
case "$L" in
"fake_guest_hot "*fake_vms.c:$((HL + 2))) ;;
*) fail "pprof -top -lines first '$L' (fake_guest_hot at fake_vms.c:$((HL + 2)))" ;;
esac
echo "ok: go tool pprof -traces: fake_guest_hot <- fake_guest_mid <- fake_guest_outer; -lines: $L"
curl -s -o "$T/b.pb.gz" "$U/debug/pprof/profile?seconds=1&vm=beta" || fail "vm=beta"
go tool pprof -raw "$T/b.pb.gz" 2>/dev/null | grep -q 'vm:\[beta\]' || fail "vm=beta profile has no beta samples"
go tool pprof -raw "$T/b.pb.gz" 2>/dev/null | grep -q 'vm:\[alpha\]' && fail "vm=beta profile has alpha samples"
echo "ok: ?vm=beta profiles beta only"

# --- VMs come and go: attached and detached as their entries appear and go.
nr_vms() { [ "$(curl -s "$U/debug/vpmu/vms" | grep -o '"uuid"' | wc -l)" = "$1" ]; }
"$FAKE" "$T/go" 0 gamma:1 2>"$T/fake2.log" &
G=$!
wait_for 10 nr_vms 3 || fail "gamma not attached"
kill -TERM $G
wait $G
wait_for 10 nr_vms 2 || fail "gamma not detached"
grep -q "detached VM 'gamma'" "$T/serve.log" || fail "no detach message"
echo "ok: a VM started later is attached, and detached when it stops"

# --- vpmu record beside a running /debug/pprof/profile (both sample).
curl -s -o "$T/pr.pb.gz" "$U/debug/pprof/profile?seconds=3" &
CURL=$!
sleep 0.5
"$VPMU" record -a -e hv_run_ns -F 200 -o "$T/side.rec" -- 1 2>"$T/side.log" ||
	fail "vpmu record beside a profile: $(cat "$T/side.log")"
wait $CURL
F=$(top_function "$T/pr.pb.gz")
[ "$F" = fake_guest_hot ] || fail "profile beside vpmu record: first function '$F'"
"$VPMU" report "$T/side.rec" 2>&1 | grep -q fake_guest_hot || fail "report of the record beside a profile"
echo "ok: vpmu record and /debug/pprof/profile sample the same vCPUs at once"

# --- Errors: clear statuses, and the daemon keeps serving.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
curl -s -o /dev/null "$U/debug/pprof/profile?seconds=3" &
sleep 0.5
[ "$(code "$U/debug/pprof/profile?seconds=1")" = 200 ] || fail "second profile at once not queued"
wait $!
[ "$(code "$U/debug/pprof/profile?seconds=0")" = 400 ] || fail "seconds=0"
[ "$(code "$U/debug/pprof/profile?seconds=x")" = 400 ] || fail "seconds=x"
[ "$(code "$U/debug/pprof/profile?secs=1")" = 400 ] || fail "unknown parameter"
[ "$(code "$U/debug/pprof/profile?seconds=1&vm=nosuch")" = 404 ] || fail "vm=nosuch"
[ "$(code "$U/nope")" = 404 ] || fail "404"
[ "$(code -X POST -d x=1 "$U/metrics")" = 405 ] || fail "POST"
BIG=$(head -c 40000 /dev/zero | tr '\0' a)
C=$(code -H "X-Big: $BIG" "$U/metrics")
[ "$C" -ge 400 ] || fail "oversize header answered $C"
# A stalled client: connects, sends half a request, never finishes.
exec 3<>/dev/tcp/127.0.0.1/$PORT
printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&3
[ "$(code "$U/metrics")" = 200 ] || fail "serving beside a stalled client"
exec 3>&-
echo "ok: a second profile queued, 400, 404, 405, oversize ($C); served beside a stalled client"

# --- SIGTERM: clean shutdown.
kill -TERM $SERVE
wait_for 10 bash -c "! kill -0 $SERVE 2>/dev/null" || fail "serve ignored SIGTERM"
wait $SERVE
[ $? = 0 ] || fail "serve exit status after SIGTERM"
grep -q 'vpmu serve: stopped' "$T/serve.log" || fail "no clean stop"
echo "ok: SIGTERM stops vpmu serve with status 0"

# --- vpmu report --pprof (serve is gone: its contexts too).
"$VPMU" record -g -a -e hv_run_ns,hv_exits -F 200 -o "$T/r.rec" -- 2 2>"$T/rec.log" ||
	fail "record: $(cat "$T/rec.log")"
"$VPMU" report --pprof "$T/r.pb.gz" "$T/r.rec" 2>"$T/rep.log" ||
	fail "report --pprof: $(cat "$T/rep.log")"
F=$(top_function "$T/r.pb.gz")
[ "$F" = fake_guest_hot ] || fail "report --pprof: first function '$F'"
go tool pprof -traces "$T/r.pb.gz" 2>/dev/null | grep -A2 fake_guest_hot |
	grep -q fake_guest_outer || fail "report --pprof: no chains"
echo "ok: go tool pprof -top of vpmu report --pprof: $F first, with chains"

# --- TLS: refused in clear text off loopback; HTTPS with client certs.
"$VPMU" serve --listen 0.0.0.0:0 2>"$T/clear.log" && fail "clear text on 0.0.0.0"
[ "$(wc -l <"$T/clear.log")" = 1 ] && grep -q -- '--tls-cert' "$T/clear.log" ||
	fail "one line saying how: $(cat "$T/clear.log")"
echo "ok: 0.0.0.0 without TLS refused: $(cat "$T/clear.log")"
# A FIFO named as a certificate is refused at once, not waited on.
mkfifo "$T/cert.fifo"
timeout 10 "$VPMU" serve --listen 127.0.0.1:0 --tls-cert "$T/cert.fifo" \
	--tls-key "$T/cert.fifo" --no-auth 2>"$T/fifo.log"
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q 'cert.fifo: not a regular file' "$T/fifo.log" ||
	fail "a FIFO as --tls-cert (status $rc): $(cat "$T/fifo.log")"
echo "ok: a FIFO as --tls-cert refused: $(cat "$T/fifo.log")"
cd "$T" || fail cd
ossl() { openssl "$@" >/dev/null 2>&1 || fail "openssl $*"; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=test-ca
printf 'subjectAltName=IP:127.0.0.1\n' >san.ext
ossl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1
ossl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile san.ext
ossl req -newkey rsa:2048 -nodes -keyout cli.key -out cli.csr -subj /CN=scraper
ossl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem -days 2
ossl req -x509 -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.pem -days 2 -subj /CN=rogue
"$VPMU" serve --listen 127.0.0.1:0 --tls-cert srv.pem --tls-key srv.key \
	--tls-client-ca ca.pem 2>"$T/tls.log" &
TLS=$!
PIDS+=($TLS)
wait_for 10 grep -q listening "$T/tls.log" || fail "TLS serve did not listen: $(cat "$T/tls.log")"
TP=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/tls.log")
TU=https://127.0.0.1:$TP/metrics
wait_for 10 bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert ca.pem --cert cli.pem --key cli.key $TU)\" = 200 ]" ||
	fail "HTTPS with a client certificate of the CA"
C1=$(curl -s -o /dev/null -w '%{http_code}' --cacert ca.pem "$TU")
C2=$(curl -s -o /dev/null -w '%{http_code}' --cacert ca.pem --cert rogue.pem --key rogue.key "$TU")
C3=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$TP/metrics")
[ "$C1" != 200 ] && [ "$C2" != 200 ] && [ "$C3" != 200 ] ||
	fail "refused without a CA-signed client certificate: $C1 $C2 $C3"
echo "ok: HTTPS 200 with a CA-signed client certificate; none $C1, rogue $C2, plain HTTP $C3"
kill -TERM $TLS
wait $TLS || fail "TLS serve exit status"
echo PASS
