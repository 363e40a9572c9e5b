# SPDX-License-Identifier: MIT
# serve_lib.sh: what the tests of `vpmu serve` with real clients share
# (test_serve_*.sh), sourced once they made their directory T: the
# clean-up of what they started (PIDS), failing with their logs, polling,
# a real Prometheus scraping vpmu serve, and its answers per VM.
# shellcheck shell=bash

PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# fail MESSAGE: say it, show the tail of each log $T/NAME.log named in
# FAIL_LOGS (default "fake serve") and exit 1.
fail() {
	echo "FAIL: $*"
	for f in ${FAIL_LOGS:-fake serve}; do
		[ -f "$T/$f.log" ] && { echo "--- $f.log"; tail -20 "$T/$f.log"; }
	done
	exit 1
}

# wait_for SECONDS COMMAND...: poll every 0.2 s.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# new_token: a bearer token in $T/token (mode 0600) for --auth-token-file,
# and curl sending it (TOKEN_FILE).
new_token() {
	TOKEN_FILE=$T/token
	(umask 077 && python3 -c 'import secrets; print(secrets.token_hex(24))' >"$TOKEN_FILE")
	curl() { command curl -H "Authorization: Bearer $(cat "$TOKEN_FILE")" "$@"; }
}

# start_prometheus PORT [TOKEN_FILE]: a Prometheus scraping vpmu serve on
# 127.0.0.1:PORT every second (with the bearer token of TOKEN_FILE); its
# own port in PP, its log in $T/prom.log.
start_prometheus() {
	local auth=""
	PP=$(free_port)
	[ $# -gt 1 ] && auth="    authorization: {credentials_file: '$2'}"
	cat >"$T/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: vpmu
$auth
    static_configs:
      - targets: ['127.0.0.1:$1']
EOC
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address=127.0.0.1:"$PP" >"$T/prom.log" 2>&1 &
	PIDS+=($!)
}

# by_vm_is QUERY VM=VALUE...: Prometheus answers QUERY with exactly these
# values by label vm (its answer left in $T/q.json).
by_vm_is() {
	local q=$1
	shift
	command curl -s "http://127.0.0.1:$PP/api/v1/query" --data-urlencode "query=$q" >"$T/q.json" 2>/dev/null
	python3 - "$T/q.json" "$@" 2>/dev/null <<'EOP'
import json, sys
r = json.load(open(sys.argv[1]))
got = {s["metric"]["vm"]: s["value"][1] for s in r["data"]["result"]}
sys.exit(0 if got == dict(a.split("=", 1) for a in sys.argv[2:]) else 1)
EOP
}
