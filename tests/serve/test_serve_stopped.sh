#!/bin/bash
# SPDX-License-Identifier: MIT
# test_serve_stopped.sh BUILD_DIR: VMs that attach normally and then stop
# answering (their VMM stopped with SIGSTOP) never hold the collection of a
# live VM, during a profile or not: each scrape an interval apart shows the
# live VM's counter moved, a profile ends on time with the live VM's
# samples, and the stopped VMs are not reported fresh (stale, or
# detached). Fake VMs, no KVM.
set -u
B=$(cd "$1" && pwd)
VPMU=$B/vmm/vpmu
FAKE=$B/tests/serve/fake_vms
T=$(mktemp -d /tmp/vpmu-serve-stopped.XXXXXX)
export VPMU_RUNTIME_DIR=$T/run HOME=$T
# shellcheck source=serve_lib.sh
. "$(dirname "$0")/serve_lib.sh"
STOPPED=""
# A stopped process is let go before serve_lib's cleanup kills it.
resume() {
	[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
	cleanup
}
trap resume EXIT
FAIL_LOGS="live stopped serve"

new_token
"$VPMU" serve --listen 127.0.0.1:0 --interval 0.5 --auth-token-file "$TOKEN_FILE" \
	2>"$T/serve.log" &
PIDS+=($!)
wait_for 10 grep -q 'listening' "$T/serve.log" || fail "serve did not listen"
U=http://127.0.0.1:$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/serve.log")

# The live VM, and two VMs in another process, to be stopped.
"$FAKE" "$T/go" 0 live:1 2>"$T/live.log" &
PIDS+=($!)
"$FAKE" "$T/go" 0 stopa:1 stopb:1 2>"$T/stopped.log" &
PIDS+=($!)
STOP_PID=$!
attached() {
	curl -s "$U/metrics" >"$T/m.txt"
	for vm in live stopa stopb; do
		grep -q "^vpmu_vm_info{vm=\"$vm\"" "$T/m.txt" || return 1
	done
}
wait_for 20 attached || fail "serve did not attach the three VMs"

# The live VM's run time, and the stopped VMs' samples, in scrape (file $1).
live_ns() { grep '^vpmu_events_seconds_total{vm="live".*event="hv_run_ns"' "$1"; }
fresh() { grep -E '^vpmu_vcpu_stale\{vm="stop[ab]".*\} 0$' "$1"; }

# A profile of the three VMs; two stop answering 1 s into it. It talks
# only to VMs that just answered: the live VM's metrics keep moving and
# the profile ends on time with its samples, where a request-reply step
# per silent VM used to wait a client timeout (5 s) each.
curl -s -o "$T/p.pb.gz" -w '%{http_code} %{time_total}' \
	"$U/debug/pprof/profile?seconds=4" >"$T/p.code" &
CURL=$!
sleep 1
kill -STOP "$STOP_PID"
STOPPED=$STOP_PID
prev=$(curl -s "$U/metrics" | tee "$T/pm0.txt" | grep '^vpmu_events_seconds_total{vm="live".*event="hv_run_ns"')
for i in 1 2 3 4; do
	sleep 1
	curl -s -m 10 "$U/metrics" >"$T/pm$i.txt"
	cur=$(live_ns "$T/pm$i.txt")
	echo "during the profile, scrape $i: $cur"
	[ -n "$cur" ] && [ "$cur" != "$prev" ] ||
		fail "the live VM's counter did not move in 1 s during a profile beside 2 stopped VMs (scrape $i)"
	prev=$cur
done
wait "$CURL"
read -r code took <"$T/p.code"
echo "profile of 4 s: HTTP $code after $took s"
[ "$code" = 200 ] || fail "the profile beside 2 stopped VMs: HTTP $code"
awk -v t="$took" 'BEGIN { exit !(t < 4 + 5) }' ||
	fail "the profile of 4 s took $took s: a step waited a client timeout"
go tool pprof -raw "$T/p.pb.gz" 2>/dev/null | grep -q 'vm:\[live\]' ||
	fail "the profile has no samples of the live VM"
echo "ok: a profile beside 2 VMs that stopped answering in it: on time, the live VM sampled and collected"
echo "ok: three VMs attached; stopa and stopb stopped (pid $STOP_PID)"
prev=$(curl -s "$U/metrics" | tee "$T/m0.txt" | grep '^vpmu_events_seconds_total{vm="live".*event="hv_run_ns"')
[ -n "$prev" ] || fail "no hv_run_ns of the live VM: $(head -40 "$T/m0.txt")"
for i in 1 2 3 4 5 6; do
	sleep 1
	curl -s "$U/metrics" >"$T/m$i.txt"
	cur=$(live_ns "$T/m$i.txt")
	echo "scrape $i: $cur; $(grep '^vpmu_serve_collect_duration_seconds' "$T/m$i.txt")"
	[ -n "$cur" ] && [ "$cur" != "$prev" ] ||
		fail "the live VM's counter did not move in 1 s beside 2 stopped VMs (scrape $i)"
	# The first scrape may predate the first missed deadline.
	[ "$i" -gt 1 ] && fresh "$T/m$i.txt" && fail "a stopped VM reported fresh (scrape $i)"
	prev=$cur
done
echo "serve: $(grep -E -c "VM 'stop[ab]'" "$T/serve.log") lines about the stopped VMs:"
grep -E "VM 'stop[ab]'" "$T/serve.log"
echo "ok: the live VM collected every interval beside 2 stopped VMs"
kill -CONT "$STOP_PID"
STOPPED=""

# A VM silent for a moment around a profile's end: its sampling session
# cannot be closed then; once it answers it counts as before (and a
# counter that stood still would show it).
"$FAKE" "$T/go" 0 nap:1 2>"$T/nap.log" &
PIDS+=($!)
NAP=$!
nap_ns() { curl -s "$U/metrics" | grep '^vpmu_events_seconds_total{vm="nap".*event="hv_run_ns"'; }
nap_attached() { curl -s "$U/metrics" | grep -q '^vpmu_vm_info{vm="nap"'; }
wait_for 20 nap_attached || fail "nap not attached"
curl -s -o "$T/n.pb.gz" -w '%{http_code}' "$U/debug/pprof/profile?seconds=2" >"$T/n.code" &
CURL=$!
sleep 1.7
kill -STOP "$NAP"
STOPPED=$NAP
sleep 0.7
kill -CONT "$NAP"
STOPPED=""
wait "$CURL"
[ "$(cat "$T/n.code")" = 200 ] || fail "the profile around nap's pause: HTTP $(cat "$T/n.code")"
go tool pprof -raw "$T/n.pb.gz" 2>/dev/null | grep -q 'vm:\[nap\]' || fail "no samples of nap"
prev=$(nap_ns)
for i in 1 2; do
	sleep 1
	cur=$(nap_ns)
	[ -n "$cur" ] && [ "$cur" != "$prev" ] || fail "nap's counter did not move after its pause ($i)"
	prev=$cur
done
if grep -q "VM 'nap' answers again" "$T/serve.log"; then
	echo "ok: nap, silent when the profile ended, counts again"
else
	echo "ok: nap answered when the profile ended (the pause fell elsewhere); it counts"
fi

# Silent when a profile starts, back 1 s later: it joins the profile then.
kill -STOP "$NAP"
STOPPED=$NAP
curl -s -o "$T/j.pb.gz" -w '%{http_code}' "$U/debug/pprof/profile?seconds=3" >"$T/j.code" &
CURL=$!
sleep 1
kill -CONT "$NAP"
STOPPED=""
wait "$CURL"
[ "$(cat "$T/j.code")" = 200 ] || fail "the profile nap joined late: HTTP $(cat "$T/j.code")"
go tool pprof -raw "$T/j.pb.gz" 2>/dev/null | grep -q 'vm:\[nap\]' ||
	fail "nap, silent when the profile started, has no samples in it"
if grep -q "VM 'nap' does not answer: it joins" "$T/serve.log"; then
	echo "ok: nap, silent when the profile started, joined it"
else
	echo "ok: nap answered when the profile started (its pause ended first); it is in it"
fi
echo PASS
