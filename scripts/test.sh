#!/usr/bin/env bash
# test.sh: set everything up (packages, build, the Linux test kernel) and
# run every test: formatting, the Criterion unit tests (label unit), the
# guest tests (labels kvm and linux: real guests under KVM), then the same
# under ASan + UBSan (build-asan, halting on the first report), then every
# fuzz target of tests/fuzz for 10^6 executions or at most 300 s
# (build-fuzz, clang + libFuzzer). Ends with one table: per suite and label, where it ran and
# its passed / failed / skipped counts per Criterion test.
#
# The guest labels always run, for real: directly where /dev/kvm can be
# opened, else inside the nested rig (scripts/nested-kvm/run.sh: an L1
# Linux with KVM under QEMU TCG) on the subset listed in
# tests/rig-subset.txt. A guest test never skips for want of KVM
# (VPMU_REQUIRE_KVM=1 turns that skip into a failure), and a machine where
# neither way works fails with one message.
#
# Usage: scripts/test.sh [ctest args...]   e.g. scripts/test.sh -L unit
#   (ctest arguments apply to every ctest run; a label they exclude is
#   reported as not selected)
#   VPMU_GUESTS=auto|direct|rig  where the guest labels run (default auto:
#                   direct with a usable /dev/kvm, else the rig; rig forces
#                   the rig, direct fails without /dev/kvm)
#   FUZZ_RUNS=N     executions per fuzz target (default 1000000)
#   FUZZ_SECONDS=N  at most so many seconds per fuzz target (default 300;
#                   0 skips fuzzing)
#   SANITIZE=0      skip the sanitizer suite
#   RIG_*           passed on to scripts/nested-kvm/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-300}
export FUZZ_RUNS=${FUZZ_RUNS:-1000000}
SANITIZE=${SANITIZE:-1}
GUESTS=${VPMU_GUESTS:-auto}
REPORT=$PWD/$BUILD_DIR/test-results
T0=$(date +%s)

step() {
	echo "=== test.sh [$(($(date +%s) - T0)) s]: $*"
}

die() {
	echo "test.sh: $*" >&2
	exit 1
}

case $GUESTS in
auto | direct | rig) ;;
*) die "VPMU_GUESTS=$GUESTS: expected auto, direct or rig" ;;
esac

# Can this process open /dev/kvm read-write (what kvm_require() does)?
kvm_usable() {
	[ -c /dev/kvm ] && { : <>/dev/kvm; } 2>/dev/null
}

# What kind of KVM /dev/kvm is: the "where" column of the table.
host_kind() {
	if [ -d /sys/module/kvm_pvm ]; then
		echo "PVM host (kvm_pvm: guest ring 0 emulated)"
	elif [ -d /sys/module/kvm_intel ]; then
		echo "hardware KVM (VT-x)"
	elif [ -d /sys/module/kvm_amd ]; then
		echo "hardware KVM (SVM)"
	else
		echo "KVM (kind unknown)"
	fi
}

# The ctest tests of label $2 in build dir $1 that the user's ctest
# arguments select.
selected() {
	local dir=$1 label=$2
	shift 2
	(cd "$dir" && ctest -N -L "^$label\$" "$@") |
		sed -n 's/^Total Tests: //p'
}

# new_run NAME SUITE "LABELS" WHERE: a result directory for one ctest run.
new_run() {
	local d=$REPORT/$1
	mkdir -p "$d/json"
	{
		echo "suite=$2"
		echo "labels=$3"
		echo "where=$4"
	} >"$d/meta"
	echo "$d"
}

# not_run DIR REASON REQUIRED: the run did not happen; REQUIRED=1 fails
# the whole run.
not_run() {
	{
		echo "state=notrun"
		echo "reason=$2"
		echo "required=$3"
	} >>"$1/meta"
}

# run_ctest DIR BUILD [ENV=VAL...] -- CTEST_ARGS...: run ctest in BUILD
# here, keep its results in DIR. Returns ctest's status.
run_ctest() {
	local d=$1 build=$2 envs=() start rc=0
	shift 2
	while [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	shift
	labels_of "$build" >"$d/labels.tsv"
	rm -f "$build"/test-reports/*.json
	start=$(date +%s)
	(cd "$build" && env ${CTEST_ENV[@]+"${CTEST_ENV[@]}"} \
		${envs[@]+"${envs[@]}"} ctest --output-on-failure \
		--output-junit "$d/junit.xml" "$@") || rc=$?
	collect "$d" "$build" "$start"
	return $rc
}

# ctest test name, TAB, label, for every test of build dir $1.
labels_of() {
	(cd "$1" && ctest --show-only=json-v1) |
		jq -r '.tests[] | [.name, ((.properties // [])[] |
			select(.name == "LABELS") | .value[0])] | @tsv'
}

collect() {
	local d=$1 build=$2 start=$3
	mv "$build"/test-reports/*.json "$d/json/" 2>/dev/null || true
	{
		echo "state=ran"
		echo "seconds=$(($(date +%s) - start))"
	} >>"$d/meta"
}

# A line every minute while a long step runs (the rig shows ctest's line
# only when a whole test executable ends).
heartbeat() {
	local t=0
	while sleep 60; do
		t=$((t + 60))
		echo "=== test.sh [$(($(date +%s) - T0)) s]: $1: running for $t s"
	done
}

# The guest labels in the nested rig: tests/rig-subset.txt names the ctest
# tests and, as Criterion patterns, the tests inside them. One retry when
# the rig itself failed (exit 125: L1 crashed or never reported), with
# single-threaded TCG, as run.sh advises.
run_rig() {
	local d=$1 build=$2
	shift 2
	local tests pattern cmd rc=0 start try
	tests=$(awk '!/^#/ && NF { print $1 }' tests/rig-subset.txt | sort -u |
		paste -sd'|')
	pattern=$(awk '!/^#/ && NF { print $2 }' tests/rig-subset.txt |
		paste -sd'|')
	labels_of "$build" >"$d/labels.tsv"
	cmd="ip link set lo up 2>/dev/null; cd $(printf %q "$PWD/$build") &&"
	cmd+=" VPMU_REQUIRE_KVM=1 CRITERION_TEST_PATTERN=$(printf %q "@($pattern)")"
	cmd+=" ctest --output-on-failure -j1 -L '^(kvm|linux)\$'"
	cmd+=" -R $(printf %q "^($tests)\$")"
	cmd+=" --output-junit $(printf %q "$d/junit.xml")"
	[ $# = 0 ] || cmd+="$(printf ' %q' "$@")"
	start=$(date +%s)
	for try in 1 2; do
		rm -f "$build"/test-reports/*.json "$d/junit.xml"
		step "nested rig, try $try: $(echo "$tests" | tr '|' ' ')"
		heartbeat "nested rig, try $try" &
		HEARTBEAT=$!
		rc=0
		if [ "$try" = 1 ]; then
			scripts/nested-kvm/run.sh "$cmd" || rc=$?
		else
			RIG_TCG_THREAD=single scripts/nested-kvm/run.sh "$cmd" || rc=$?
		fi
		kill "$HEARTBEAT" 2>/dev/null || true
		wait "$HEARTBEAT" 2>/dev/null || true
		HEARTBEAT=
		[ "$rc" = 125 ] || break
		echo "test.sh: the nested rig failed (exit 125, see above)"
	done
	if [ "$rc" = 125 ]; then
		not_run "$d" "the nested rig failed twice (exit 125)" 1
		return 1
	fi
	collect "$d" "$build" "$start"
	return $rc
}

# A Criterion pattern: every test of the suites that
# tests/asan-linux-subset.txt does not name, and its lines.
asan_linux_pattern() {
	local lines suites
	lines=$(awk '!/^#/ && NF { print $1 }' tests/asan-linux-subset.txt)
	suites=$(echo "$lines" | cut -d/ -f1 | sort -u | paste -sd'|')
	echo "@(!($suites)/*|$(echo "$lines" | paste -sd'|'))"
}

# The guest labels of build dir $1 (suite $2): where they can run.
# $3 = 1: the rig may run them (the normal suite); 0: leave them out
# there (the ASan suite, to bound the rig's time).
guests() {
	local build=$1 suite=$2 rig_ok=$3
	shift 3
	local d n_kvm n_linux labels="" mode l order=$([ "$suite" = normal ] && echo 2 || echo 4)
	n_kvm=$(selected "$build" kvm "$@")
	n_linux=$(selected "$build" linux "$@")
	[ "$n_kvm" = 0 ] || labels+="kvm "
	[ "$n_linux" = 0 ] || labels+="linux"
	for l in kvm linux; do
		[[ $labels == *$l* ]] && continue
		d=$(new_run "$order-$suite-$l" "$suite" "$l" "")
		not_run "$d" "not selected by the ctest arguments" 0
	done
	[ -n "$labels" ] || return 0
	# Under ASan, the Linux tests of tests/asan-linux-subset.txt; every
	# other Criterion suite whole.
	local pattern="" where_extra=""
	if [ "$suite" = asan ]; then
		pattern=$(asan_linux_pattern)
		where_extra=", Linux tests: tests/asan-linux-subset.txt"
	fi
	mode=$GUESTS
	if [ "$mode" = auto ]; then
		if kvm_usable; then mode=direct; else mode=rig; fi
	fi
	if [ "$mode" = direct ]; then
		d=$(new_run "$order-$suite-guests" "$suite" "$labels" \
			"$(host_kind)$where_extra")
		if ! kvm_usable; then
			not_run "$d" "VPMU_GUESTS=direct but /dev/kvm cannot be opened" 1
			echo "test.sh: VPMU_GUESTS=direct, but /dev/kvm cannot be opened here: the guest labels cannot run (VPMU_GUESTS=auto would use the nested rig)" >&2
			return 1
		fi
		step "guest labels ($labels) in $build, directly on /dev/kvm: $(host_kind)"
		run_ctest "$d" "$build" VPMU_REQUIRE_KVM=1 \
			${pattern:+"CRITERION_TEST_PATTERN=$pattern"} -- -j2 \
			-L '^(kvm|linux)$' "$@"
		return
	fi
	d=$(new_run "$order-$suite-guests" "$suite" "$labels" \
		"nested rig (QEMU TCG L1, KVM on emulated SVM), subset")
	if [ "$rig_ok" != 1 ]; then
		not_run "$d" "nested rig: the $suite guest suite is left out to bound the rig's time" 0
		return 0
	fi
	[ "$GUESTS" = rig ] ||
		echo "test.sh: /dev/kvm cannot be opened here: the guest labels run in the nested rig"
	step "guest labels ($labels) of $build in the nested rig (subset: tests/rig-subset.txt; about 10 min)"
	if ! run_rig "$d" "$build" "$@"; then
		if grep -q '^state=notrun' "$d/meta"; then
			if [ "$GUESTS" = rig ]; then
				echo "test.sh: the guest labels could not run: the nested rig (VPMU_GUESTS=rig) failed twice" >&2
			else
				echo "test.sh: the guest labels could not run: /dev/kvm is not usable here and the nested rig failed twice" >&2
			fi
		fi
		return 1
	fi
}

# unit label of build dir $1, suite $2.
units() {
	local build=$1 suite=$2 d
	shift 2
	d=$(new_run "$([ "$suite" = normal ] && echo 1 || echo 3)-$suite-unit" \
		"$suite" unit "host (no KVM needed)")
	if [ "$(selected "$build" unit "$@")" = 0 ]; then
		not_run "$d" "not selected by the ctest arguments" 0
		return 0
	fi
	step "unit label in $build"
	run_ctest "$d" "$build" -- -j2 -L '^unit$' "$@"
}

FAILED=0
CTEST_ENV=()
HEARTBEAT=
# At exit, whatever happened: the table, and the verdict.
report() {
	local rc=$?
	[ -z "$HEARTBEAT" ] || kill "$HEARTBEAT" 2>/dev/null || true
	echo
	scripts/test-report.sh "$REPORT" || rc=1
	if [ "$rc" = 0 ]; then
		step "all tests passed"
	else
		step "FAILED (see the table above)"
	fi
	exit $rc
}

step "packages and build ($BUILD_DIR)"
scripts/setup.sh
step "format check"
scripts/check-format.sh
step "Linux test kernel (cached after the first build, ~20 min cold)"
BUILD_DIR=$BUILD_DIR scripts/build-linux.sh

rm -rf "$REPORT"
mkdir -p "$REPORT"
trap report EXIT
units "$BUILD_DIR" normal "$@" || FAILED=1
guests "$BUILD_DIR" normal 1 "$@" || FAILED=1

if [ "$SANITIZE" != 0 ]; then
	step "sanitizer build (ASan + UBSan) in build-asan"
	BUILD_DIR=build-asan scripts/setup.sh -DVPMU_SANITIZE=ON
	BUILD_DIR=build-asan scripts/build-linux.sh
	CTEST_ENV=(
		"ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
		"LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp}"
		"UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
	)
	units build-asan asan "$@" || FAILED=1
	guests build-asan asan 0 "$@" || FAILED=1
	CTEST_ENV=()
else
	d=$(new_run 3-asan asan "unit kvm linux" "")
	not_run "$d" "SANITIZE=0" 0
fi

if [ "$FUZZ_SECONDS" != 0 ]; then
	step "fuzz targets, $FUZZ_RUNS executions each, at most $FUZZ_SECONDS s (build-fuzz)"
	scripts/fuzz.sh "$FUZZ_SECONDS" || FAILED=1
fi
[ "$FAILED" = 0 ]
