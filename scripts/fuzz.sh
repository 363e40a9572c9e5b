#!/usr/bin/env bash
# fuzz.sh: build the libFuzzer targets of tests/fuzz (clang, ASan + UBSan,
# in ${BUILD_DIR:-build-fuzz}) and run each for SECONDS (default 60),
# then print one table: executions, coverage (libFuzzer's cov/ft),
# corpus size and result per target. New inputs are kept in
# BUILD_DIR/fuzz-corpus/TARGET (the seeds stay in tests/fuzz/corpus/);
# a crashing input is saved as BUILD_DIR/fuzz-crashes/TARGET-crash-*.
# Exit 1 if any target crashed, leaked, timed out or ran out of memory.
# A line per target as it ends says so at once (a long run, the nightly
# `scripts/fuzz.sh 3600`, takes hours); Ctrl-C or SIGTERM stops the
# running targets (libFuzzer prints their statistics) and still prints
# the table.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   FUZZ_RUNS=N        a target also ends after N executions (libFuzzer's
#                      -runs; SECONDS is then its cap); the table says
#                      which targets the cap stopped short of N
#   FUZZ_JOBS=N        targets run N at a time (default: 2, at most nproc)
#   FUZZ_BUILD_JOBS=N  parallel compile jobs of the build (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SECONDS_EACH=${1:-60}
shift || true
case $SECONDS_EACH in
'' | *[!0-9]*)
	echo "fuzz.sh: SECONDS must be a number, not '$SECONDS_EACH'" >&2
	exit 2
	;;
esac
BUILD_DIR=${BUILD_DIR:-build-fuzz}
RUNS=${FUZZ_RUNS:-}
case $RUNS in
*[!0-9]*)
	echo "fuzz.sh: FUZZ_RUNS must be a number, not '$RUNS'" >&2
	exit 2
	;;
esac
RUNS_ARG=()
if [ -n "$RUNS" ]; then
	RUNS_ARG=(-runs="$RUNS")
fi
JOBS=${FUZZ_JOBS:-2}
BUILD_JOBS=${FUZZ_BUILD_JOBS:-$(nproc)}
if [ "$JOBS" -gt "$(nproc)" ]; then
	JOBS=$(nproc)
fi

echo "fuzz: building the fuzz targets in $BUILD_DIR (clang)"
CC=clang cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DVPMU_WERROR=ON -DVPMU_FUZZ=ON >/dev/null
if ! cmake --build "$BUILD_DIR" -j"$BUILD_JOBS" --target fuzzers \
	>"$BUILD_DIR/fuzz-build.log" 2>&1; then
	grep -E 'error|warning' "$BUILD_DIR/fuzz-build.log" | head -20
	echo "fuzz.sh: build failed ($BUILD_DIR/fuzz-build.log)" >&2
	exit 1
fi

ALL=$(cd tests/fuzz/corpus && ls)
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
	read -r -a TARGETS <<<"$(echo $ALL)"
fi
for t in "${TARGETS[@]}"; do
	if [ ! -x "$BUILD_DIR/fuzz/$t" ]; then
		echo "fuzz.sh: no target '$t' (targets: $(echo $ALL))" >&2
		exit 2
	fi
done

LOGS=$BUILD_DIR/fuzz-logs
mkdir -p "$LOGS" "$BUILD_DIR/fuzz-crashes"

# A libFuzzer statistic of TARGET's log (stat::NAME), "?" if none.
stat() {
	local v
	v=$(sed -n "s/^stat::$2: *//p" "$LOGS/$1.log" | tail -1)
	echo "${v:-?}"
}

run_one() {
	local t=$1 work=$BUILD_DIR/fuzz-corpus/$1 rc=0 t0=$SECONDS
	mkdir -p "$work"
	"$BUILD_DIR/fuzz/$t" -max_total_time="$SECONDS_EACH" "${RUNS_ARG[@]}" \
		-timeout=10 \
		-rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
		-artifact_prefix="$BUILD_DIR/fuzz-crashes/$t-" \
		"$work" "$ROOT/tests/fuzz/corpus/$t" >"$LOGS/$t.log" 2>&1 || rc=$?
	echo $rc >"$LOGS/$t.rc"
	echo $((SECONDS - t0)) >"$LOGS/$t.secs"
	echo "fuzz: $t: ended (exit $rc), $(stat "$t" number_of_executed_units)" \
		"executions, $(stat "$t" average_exec_per_sec)/s"
}

# Ctrl-C, SIGTERM: SIGINT to each running fuzzer (a child of a run_one
# subshell), which then prints its statistics and exits; the table follows.
stopping=0
# shellcheck disable=SC2317 # called by the trap
stop() {
	local p
	stopping=1
	echo "fuzz: stopping the running targets" >&2
	for p in $(jobs -p); do
		pkill -INT -P "$p" 2>/dev/null || true
	done
}
trap stop INT TERM

nr=${#TARGETS[@]}
if [ -n "$RUNS" ]; then
	echo "fuzz: $nr targets, $RUNS executions each or at most" \
		"${SECONDS_EACH} s, $JOBS at a time" \
		"(at most $(((nr + JOBS - 1) / JOBS * SECONDS_EACH)) s)"
else
	echo "fuzz: $nr targets, ${SECONDS_EACH} s each, $JOBS at a time" \
		"(about $(((nr + JOBS - 1) / JOBS * SECONDS_EACH)) s)"
fi
running=0
for t in "${TARGETS[@]}"; do
	rm -f "$LOGS/$t.rc" "$LOGS/$t.log" "$LOGS/$t.secs"
done
for t in "${TARGETS[@]}"; do
	while [ "$running" -ge "$JOBS" ] && [ "$stopping" = 0 ]; do
		wait -n || true
		running=$(jobs -pr | wc -l)
	done
	if [ "$stopping" != 0 ]; then
		break
	fi
	echo "fuzz: $t: running for $SECONDS_EACH s"
	run_one "$t" &
	running=$((running + 1))
done
# wait returns early when a signal arrives: wait again until all ended.
while [ -n "$(jobs -pr)" ]; do
	wait || true
done

status=0
failed=()
printf '\n%-18s %6s %12s %9s %6s %7s %7s  %s\n' target seconds executions \
	exec/s cov ft corpus result
for t in "${TARGETS[@]}"; do
	log=$LOGS/$t.log
	if [ ! -e "$log" ]; then
		printf '%-18s %6s %12s %9s %6s %7s %7s  %s\n' "$t" - - - - - - \
			"not run (stopped before)"
		status=1
		continue
	fi
	rc=$(cat "$LOGS/$t.rc" 2>/dev/null || echo 1)
	execs=$(stat "$t" number_of_executed_units)
	eps=$(stat "$t" average_exec_per_sec)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	secs=$(cat "$LOGS/$t.secs" 2>/dev/null || echo "$SECONDS_EACH")
	result=ok
	if [ -n "$RUNS" ] && [ "$rc" = 0 ] && [ "${execs:-0}" -lt "$RUNS" ] 2>/dev/null; then
		result="ok (stopped by the ${SECONDS_EACH} s cap, below $RUNS)"
	fi
	if [ "$rc" = 72 ] && [ "$stopping" != 0 ]; then
		result="stopped" # libFuzzer's exit status when interrupted
		status=1
	elif [ "$rc" != 0 ]; then
		result="FAILED (exit $rc, log $log)"
		failed+=("$t")
		status=1
	fi
	printf '%-18s %6s %12s %9s %6s %7s %7s  %s\n' "$t" "$secs" \
		"$execs" "$eps" "${cov:-?}" "${ft:-?}" "${corp:-?}" \
		"$result"
done
for t in "${failed[@]}"; do
	echo "--- $t: end of $LOGS/$t.log"
	tail -40 "$LOGS/$t.log"
done
exit $status
