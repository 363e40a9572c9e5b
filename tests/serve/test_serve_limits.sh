#!/bin/bash
# SPDX-License-Identifier: MIT
# test_serve_limits.sh BUILD_DIR: `vpmu serve` under hostile HTTP clients and
# names on loopback (fake VMs, no KVM): clients from other loopback
# addresses that trickle a request head one byte a second (slowloris) never
# starve a scraper, and each trickling connection is cut before its head
# is done; a VM whose image file name is not UTF-8 leaves /metrics valid
# for promtool and /debug/vpmu/vms valid UTF-8 JSON; only requests with
# the bearer token are served (not another uid's, not without a token); a profile whose client
# hangs up ends at once, and two profiles asked at once are both served;
# four VMMs that never answer do not stop the collection of a live VM.
# Exit 77 (skipped) without promtool.
set -u
command -v promtool >/dev/null || { echo "SKIP: no promtool"; exit 77; }
B=$(cd "$1" && pwd)
VPMU=$B/vmm/vpmu
FAKE=$B/tests/serve/fake_vms
T=$(mktemp -d /tmp/vpmu-serve-limits.XXXXXX)
export VPMU_RUNTIME_DIR=$T/run HOME=$T
# shellcheck source=serve_lib.sh
. "$(dirname "$0")/serve_lib.sh"

# --- Authentication: refused without, or with a token file others read.
timeout 5 "$VPMU" serve --listen 127.0.0.1:0 2>"$T/noauth.log" && fail "served without authentication"
[ "$(wc -l <"$T/noauth.log")" = 1 ] && grep -q -- '--auth-token-file' "$T/noauth.log" ||
	fail "one line saying how: $(cat "$T/noauth.log")"
new_token
chmod 644 "$TOKEN_FILE"
timeout 5 "$VPMU" serve --listen 127.0.0.1:0 --auth-token-file "$TOKEN_FILE" 2>"$T/mode.log" &&
	fail "served with a token file others can read"
grep -q 'chmod 600' "$T/mode.log" || fail "token file mode: $(cat "$T/mode.log")"
chmod 600 "$TOKEN_FILE"
echo "ok: refused without authentication ($(cat "$T/noauth.log")) and with a 0644 token file"

"$VPMU" serve --listen 127.0.0.1:0 --interval 0.5 --auth-token-file "$TOKEN_FILE" \
	2>"$T/serve.log" &
SERVE=$!
PIDS+=("$SERVE")
wait_for 10 grep -q 'listening' "$T/serve.log" || fail "serve did not listen"
PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/serve.log")

# 64 trickling connections (32 from each of two addresses: every slot the
# daemon had) for 12 s, beside a scraper asking for /metrics every 0.3 s.
python3 - "$PORT" "$TOKEN_FILE" <<'EOP' || fail "slowloris"
import http.client, socket, sys, threading, time
port = int(sys.argv[1])
auth = {"Authorization": "Bearer " + open(sys.argv[2]).read().strip()}
head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: " + b"a" * 64
TRICKLE_S = 12

def trickle(src, out):
    try:
        s = socket.socket()
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
    except OSError:
        out.append("refused")
        return
    s.settimeout(0.2)
    end = time.monotonic() + TRICKLE_S
    i = 0
    while time.monotonic() < end:
        try:
            s.send(head[i % len(head):i % len(head) + 1])
            i += 1
            if s.recv(1) == b"":
                out.append("cut")
                return
        except socket.timeout:
            pass
        except OSError:
            out.append("cut")
            return
        time.sleep(0.8)
    out.append("held")

res = []
ts = [threading.Thread(target=trickle, args=(src, res))
      for src in ("127.0.0.2", "127.0.0.3") for _ in range(32)]
for t in ts:
    t.start()
time.sleep(1)
codes = []
while any(t.is_alive() for t in ts):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5,
                                       source_address=("127.0.0.1", 0))
        c.request("GET", "/metrics", headers=auth)
        codes.append(c.getresponse().status)
        c.close()
    except OSError as e:
        codes.append(type(e).__name__)
    time.sleep(0.3)
for t in ts:
    t.join()
ok = codes.count(200)
print(f"scraper: {ok} of {len(codes)} scrapes answered 200 "
      f"(others: {[c for c in codes if c != 200][:5]})")
print("trickling connections: " +
      ", ".join(f"{res.count(k)} {k}" for k in ("cut", "refused", "held")))
# Every scrape is served, and no trickling head outlives the deadline.
sys.exit(0 if codes and ok == len(codes) and "held" not in res else 1)
EOP
echo "ok: a scraper is served beside 64 trickling clients, which are cut"

# --- Only requests with the token are served, whoever sends them.
U=http://127.0.0.1:$PORT
code() { command curl -s -o /dev/null -w '%{http_code}' "$@"; }
C1=$(code "$U/metrics")
C2=$(code -H "Authorization: Bearer not-the-token-at-all" "$U/metrics")
C3=$(code -H "Authorization: Bearer $(cat "$TOKEN_FILE")" "$U/metrics")
C4=$(code "$U/debug/pprof/profile?seconds=1")
[ "$C1 $C2 $C3 $C4" = "401 401 200 401" ] || fail "token: none $C1, wrong $C2, right $C3, profile $C4"
echo "ok: no token $C1, wrong token $C2, the token $C3, a profile without $C4"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	C5=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
		curl -s -o /dev/null -w '%{http_code}' "$U/debug/vpmu/vms")
	setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$TOKEN_FILE" 2>/dev/null &&
		fail "nobody reads the token file"
	[ "$C5" = 401 ] || fail "another uid: $C5"
	echo "ok: another uid (nobody) cannot read the token and gets $C5"
else
	echo "note: not root: the request as another uid is left out"
fi

# --- A VM whose image is named in Latin-1 (and a stray byte).
BAD=$T/$(printf 'fake-caf\xe9-\xff')
cp "$FAKE" "$BAD" || fail "copy fake_vms"
"$BAD" "$T/go" 0 latin:1 2>"$T/fake.log" &
PIDS+=($!)
wait_for 10 grep -q ready "$T/fake.log" || fail "fake VM did not start"
one_vm() { curl -s "$U/metrics" | grep -q '^vpmu_vm_info{vm="latin"'; }
wait_for 15 one_vm || fail "serve did not attach the VM"
curl -s "$U/metrics" >"$T/m.txt"
grep -a '^vpmu_vm_info' "$T/m.txt"
# Lint remarks aside, promtool must parse the page (invalid UTF-8: error).
if ! promtool check metrics <"$T/m.txt" >"$T/promtool.log" 2>&1 &&
	grep -q 'error while linting' "$T/promtool.log"; then
	fail "promtool check metrics: $(cat "$T/promtool.log")"
fi
curl -s "$U/debug/vpmu/vms" | python3 -c '
import json, sys
vms = json.loads(sys.stdin.buffer.read().decode("utf-8", "strict"))
sys.exit(0 if "\ufffd" in vms[0]["image"] else 1)' ||
	fail "/debug/vpmu/vms is not UTF-8 JSON with U+FFFD"
echo "ok: a non-UTF-8 image name: promtool accepts /metrics, JSON is UTF-8"

# --- Profiles: one whose client hangs up ends at once; two at once queue.
# (curl itself in the background, not the function: its pid is killed)
command curl -s -o /dev/null -H "Authorization: Bearer $(cat "$TOKEN_FILE")" \
	"$U/debug/pprof/profile?seconds=60" &
C=$!
profiling() { curl -s "$U/debug/vpmu/vms" | grep -Eq '"profiling": ?true'; }
wait_for 10 profiling || fail "the profile did not start"
kill $C
wait $C
wait_for 10 grep -q 'ended early: its client went away' "$T/serve.log" ||
	fail "a profile whose client hung up went on"
for i in 1 2; do
	curl -s -o "$T/p$i.pb.gz" -w '%{http_code}' \
		"$U/debug/pprof/profile?seconds=1" >"$T/code$i" &
done
wait_for 20 bash -c "[ -s '$T/code1' ] && [ -s '$T/code2' ]"
[ "$(cat "$T/code1") $(cat "$T/code2")" = "200 200" ] ||
	fail "two profiles at once: $(cat "$T/code1") $(cat "$T/code2")"
echo "ok: a profile ends with its client; two at once both get 200"

# --- Four registry entries whose VMMs accept and never answer, beside the
# live VM: collection goes on every interval (0.5 s) while they are tried.
python3 - "$VPMU_RUNTIME_DIR" "$T" <<'EOP' 2>"$T/mute.log" &
import json, os, socket, sys, threading, time, uuid
run, tmp = sys.argv[1], sys.argv[2]
held = []
def hold(s):
    while True:
        held.append(s.accept()[0])  # accepted, never answered
for i in range(4):
    u = str(uuid.uuid4())
    path = f"{tmp}/mute{i}.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(16)
    threading.Thread(target=hold, args=(s,), daemon=True).start()
    e = {"v": 1, "uuid": u, "name": f"mute{i}", "pid": os.getpid(),
         "nr_vcpus": 1, "pmu": "none", "image": "/nonexistent",
         "tsc_khz": 0, "started": int(time.time()), "socket": path}
    with open(f"{run}/{u}.json.tmp", "w") as f:
        json.dump(e, f)
    os.rename(f"{run}/{u}.json.tmp", f"{run}/{u}.json")
print("mute VMs ready", file=sys.stderr, flush=True)
time.sleep(120)
EOP
PIDS+=($!)
wait_for 10 grep -q 'mute VMs ready' "$T/mute.log" || fail "mute VMs: $(cat "$T/mute.log")"
# Each scrape a second apart must show a newer collection than the last.
collect_s() { curl -s "$U/metrics" | grep '^vpmu_serve_collect_duration_seconds'; }
prev=$(collect_s)
for i in 1 2 3 4 5 6 7 8; do
	sleep 1
	cur=$(collect_s)
	[ "$cur" != "$prev" ] || fail "no collection in 1 s beside mute VMMs (scrape $i)"
	prev=$cur
done
curl -s "$U/metrics" | grep -q '^vpmu_vm_info{vm="latin"' || fail "the live VM is gone"
echo "serve: $(grep -c "VM 'mute" "$T/serve.log") lines about the mute VMs"
echo "ok: collected every interval beside 4 VMMs that never answer"

kill -TERM $SERVE
wait $SERVE || fail "serve exit status after SIGTERM"
echo PASS
