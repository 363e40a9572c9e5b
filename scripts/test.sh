#!/usr/bin/env bash
# test.sh: set everything up (packages, build, the Linux test kernel) and
# run every test: formatting, Criterion unit tests, KVM integration tests
# and Linux guest tests; then the whole suite again under ASan + UBSan
# (build-asan, halting on the first report), then every fuzz target of
# tests/fuzz for a short bounded time (build-fuzz, clang + libFuzzer).
# KVM and Linux tests skip with a reason where /dev/kvm is unusable; the
# kernel is built (and its patches and config checked) anyway.
# Usage: scripts/test.sh [ctest args...]   e.g. scripts/test.sh -L unit
#   (ctest arguments apply to both suites)
#   FUZZ_SECONDS=N  seconds per fuzz target (default 20; 0 skips fuzzing)
#   SANITIZE=0      skip the sanitizer suite
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
SANITIZE=${SANITIZE:-1}
T0=$(date +%s)

step() {
	echo "=== test.sh [$(($(date +%s) - T0)) s]: $*"
}

step "packages and build ($BUILD_DIR)"
scripts/setup.sh
step "format check"
scripts/check-format.sh
step "Linux test kernel (cached after the first build, ~20 min cold)"
BUILD_DIR=$BUILD_DIR scripts/build-linux.sh
step "ctest in $BUILD_DIR"
(cd "$BUILD_DIR" && ctest --output-on-failure -j2 "$@")

if [ "$SANITIZE" != 0 ]; then
	step "sanitizer build (ASan + UBSan) in build-asan"
	BUILD_DIR=build-asan scripts/setup.sh -DVPMU_SANITIZE=ON
	BUILD_DIR=build-asan scripts/build-linux.sh
	step "ctest in build-asan (ASan + UBSan, halt on error)"
	(cd build-asan &&
		ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0} \
		LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/../scripts/lsan.supp} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
		ctest --output-on-failure -j2 "$@")
fi

if [ "$FUZZ_SECONDS" != 0 ]; then
	step "fuzz targets, $FUZZ_SECONDS s each (build-fuzz)"
	scripts/fuzz.sh "$FUZZ_SECONDS"
fi
step "all tests passed"
