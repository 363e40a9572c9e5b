#!/usr/bin/env bash
# fuzz.sh: build the libFuzzer targets of tests/fuzz (clang, ASan + UBSan,
# in ${BUILD_DIR:-build-fuzz}) and run each for SECONDS (default 60),
# then print one table: executions, coverage (libFuzzer's cov/ft),
# corpus size and result per target. New inputs are kept in
# BUILD_DIR/fuzz-corpus/TARGET (the seeds stay in tests/fuzz/corpus/);
# a crashing input is saved as BUILD_DIR/fuzz-crashes/TARGET-crash-*.
# Exit 1 if any target crashed, leaked, timed out or ran out of memory.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   FUZZ_JOBS=N   targets run N at a time (default: 2, at most nproc)
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
JOBS=${FUZZ_JOBS:-2}
if [ "$JOBS" -gt "$(nproc)" ]; then
	JOBS=$(nproc)
fi

echo "fuzz: building the fuzz targets in $BUILD_DIR (clang)"
CC=clang cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DVPMU_WERROR=ON -DVPMU_FUZZ=ON >/dev/null
if ! cmake --build "$BUILD_DIR" -j"$(nproc)" --target fuzzers \
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

run_one() {
	local t=$1 work=$BUILD_DIR/fuzz-corpus/$1
	mkdir -p "$work"
	"$BUILD_DIR/fuzz/$t" -max_total_time="$SECONDS_EACH" -timeout=10 \
		-rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
		-artifact_prefix="$BUILD_DIR/fuzz-crashes/$t-" \
		"$work" "$ROOT/tests/fuzz/corpus/$t" >"$LOGS/$t.log" 2>&1
	echo $? >"$LOGS/$t.rc"
}

nr=${#TARGETS[@]}
echo "fuzz: $nr targets, ${SECONDS_EACH} s each, $JOBS at a time" \
	"(about $(((nr + JOBS - 1) / JOBS * SECONDS_EACH)) s)"
running=0
for t in "${TARGETS[@]}"; do
	if [ "$running" -ge "$JOBS" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	rm -f "$LOGS/$t.rc"
	echo "fuzz: $t: running for $SECONDS_EACH s"
	run_one "$t" &
	running=$((running + 1))
done
wait || true

status=0
printf '\n%-12s %6s %12s %9s %6s %7s %7s  %s\n' target seconds executions \
	exec/s cov ft corpus result
for t in "${TARGETS[@]}"; do
	log=$LOGS/$t.log
	rc=$(cat "$LOGS/$t.rc" 2>/dev/null || echo 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	result=ok
	if [ "$rc" != 0 ]; then
		result="FAILED (exit $rc, log $log)"
		status=1
	fi
	printf '%-12s %6s %12s %9s %6s %7s %7s  %s\n' "$t" "$SECONDS_EACH" \
		"${execs:-?}" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" \
		"$result"
done
if [ "$status" != 0 ]; then
	for t in "${TARGETS[@]}"; do
		if [ "$(cat "$LOGS/$t.rc" 2>/dev/null || echo 1)" != 0 ]; then
			echo "--- $t: end of $LOGS/$t.log"
			tail -40 "$LOGS/$t.log"
		fi
	done
fi
exit $status
