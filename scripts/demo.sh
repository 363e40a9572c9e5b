#!/usr/bin/env bash
# demo.sh: set everything up (packages, build) and boot the demo guest,
# which uses the virtual PMU and prints what it measured.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
exec "${BUILD_DIR:-build}/vmm/vpmu" run "${BUILD_DIR:-build}/configs/demo.xml" \
	--stats "$@"
