#!/usr/bin/env bash
# build-module.sh: build pvpmu.ko against a kernel build tree.
#
# Usage: guest-driver/linux/build-module.sh KDIR OUTDIR
#   KDIR    a configured kernel tree with Module.symvers (the test kernel
#           of scripts/build-linux.sh, or /lib/modules/$(uname -r)/build,
#           e.g. Debian's linux-headers-amd64)
#   OUTDIR  where the sources are staged and pvpmu.ko is written
# The staging directory gets this folder, sdk/include/pvpmu/abi.h and the
# driver core files the module uses, so kbuild never writes into the tree.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 KDIR OUTDIR" >&2; exit 2; }
KDIR=$1
OUT=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$OUT/include/pvpmu" "$OUT/core"
cp "$ROOT"/guest-driver/linux/Kbuild "$ROOT"/guest-driver/linux/*.[ch] "$OUT/"
cp "$ROOT/sdk/include/pvpmu/abi.h" "$OUT/include/pvpmu/"
cp "$ROOT/guest-driver/core/pvpmu_core.h" "$ROOT/guest-driver/core/detect.c" \
	"$ROOT/guest-driver/pvpmu_hc.h" "$OUT/core/"
make -s -C "$KDIR" M="$(cd "$OUT" && pwd)" modules
