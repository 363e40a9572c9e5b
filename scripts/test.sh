#!/usr/bin/env bash
# test.sh: set everything up (packages, build) and run every test:
# formatting, Criterion unit tests and KVM integration tests.
# KVM tests skip with a reason where /dev/kvm is unusable.
# Usage: scripts/test.sh [ctest args...]   e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/check-format.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j2 "$@"
