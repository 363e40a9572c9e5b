#!/bin/bash
# SPDX-License-Identifier: MIT
# bench_scrape.sh BUILD_DIR [NR_VMS [VCPUS [SCRAPES]]]: what a Prometheus
# scrape of `vpmu serve` costs, without KVM (fake_vms: real control
# servers, threads as vCPUs). The daemon's CPU time (the sum of its
# threads' /proc/PID/task/TID/schedstat, in ns) is read around SCRAPES requests of
# /metrics on one keep-alive connection (Accept: OpenMetrics, as
# Prometheus asks) and around as many requests of an unknown path (404,
# the floor: the HTTP cost of any request), each minus what the daemon
# spends collecting (measured alone over 10 s first, at a 1 s interval).
# Prints CPU per scrape, per 404, their ratio, and the collection round.
set -u
B=$(cd "$1" && pwd)
NR=${2:-4}
VC=${3:-2}
K=${4:-5000}
T=$(mktemp -d /tmp/vpmu-bench-scrape.XXXXXX)
export VPMU_RUNTIME_DIR=$T/run
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
specs=()
for i in $(seq 1 "$NR"); do specs+=("vm$i:$VC"); done
"$B/tests/serve/fake_vms" "$T/go" 0 "${specs[@]}" 2>"$T/fake.log" &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$T/fake.log" && break; sleep 0.2; done
"$B/vmm/vpmu" serve --listen 127.0.0.1:0 --interval 1 --no-auth 2>"$T/serve.log" &
SERVE=$!
PIDS+=($SERVE)
for _ in $(seq 100); do
	[ "$(grep -c 'attached VM' "$T/serve.log")" -ge "$NR" ] && break
	sleep 0.2
done
PORT=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$T/serve.log")
sleep 2
python3 - "$SERVE" "$PORT" "$K" "$NR" "$VC" <<'EOP'
import http.client, os, sys, time
pid, port, k, nr, vc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def cpu():  # CPU seconds of the daemon's live threads (ns precision)
    t = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            t += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
        except OSError:
            pass  # a thread that just ended
    return t / 1e9
t0, c0 = time.monotonic(), cpu()
time.sleep(10)
idle = (cpu() - c0) / (time.monotonic() - t0)  # collection, CPU s per s
def run(path):
    c = http.client.HTTPConnection("127.0.0.1", port)
    h = {"Accept": "application/openmetrics-text; version=1.0.0"}
    c.request("GET", path, headers=h)  # its connection thread is up
    size = len(c.getresponse().read())
    t0, c0 = time.monotonic(), cpu()
    for _ in range(k):
        c.request("GET", path, headers=h)
        r = c.getresponse()
        size = len(r.read())
    w, used = time.monotonic() - t0, cpu() - c0
    c.close()
    return max(used - idle * w, 0) / k, w / k, size
m, mw, size = run("/metrics")
f, fw, _ = run("/nope")
print(f"{nr} VMs x {vc} vCPUs, {size} bytes of OpenMetrics, {k} scrapes:")
print(f"  /metrics: {m * 1e6:.0f} us CPU per scrape ({mw * 1e6:.0f} us wall)")
print(f"  404 floor: {f * 1e6:.0f} us CPU per request ({fw * 1e6:.0f} us wall)")
print(f"  ratio /metrics / floor: {m / f if f else float('inf'):.2f}")
print(f"  collection: {idle * 1e3:.2f} ms CPU per 1 s round")
EOP
