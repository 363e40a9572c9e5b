#!/usr/bin/env bash
# test.sh: set everything up (packages, build, the Linux test kernel) and
# run every test: formatting, Criterion unit tests, KVM integration tests
# and Linux guest tests. KVM and Linux tests skip with a reason where
# /dev/kvm is unusable; the kernel is built (and its patches and config
# checked) anyway.
# Usage: scripts/test.sh [ctest args...]   e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/check-format.sh
BUILD_DIR=${BUILD_DIR:-build} scripts/build-linux.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j2 "$@"
