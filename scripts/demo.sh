#!/usr/bin/env bash
# demo.sh: install the packages that build vpmu (not the tests' ones),
# build only what the demo runs (the two programs, the demo guest, and
# op_hot, the long-running guest of the README's operator examples), and
# boot the demo guest, which uses the virtual PMU and prints what it
# measured.
set -euo pipefail
cd "$(dirname "$0")/.."

VPMU_SETUP=demo VPMU_TARGETS="vpmu_cmd vpmu_vmm sdk_demo_pmu guest_op_hot" \
	scripts/setup.sh
exec "${BUILD_DIR:-build}/vmm/vpmu" run "${BUILD_DIR:-build}/configs/demo.xml" \
	--stats "$@"
