#!/usr/bin/env bash
# build-module.sh: build pvpmu.ko against a kernel build tree.
#
# Usage: guest/linux/build-module.sh KDIR OUTDIR
#   KDIR    a configured kernel tree with Module.symvers (the test kernel
#           of scripts/build-linux.sh, or /lib/modules/$(uname -r)/build,
#           e.g. Debian's linux-headers-amd64)
#   OUTDIR  where the sources are staged and pvpmu.ko is written
# The staging directory gets this folder, guest/sdk/include/pvpmu/abi.h and the
# driver core files the module uses, so kbuild never writes into the tree.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 KDIR OUTDIR" >&2; exit 2; }
KDIR=$1
OUT=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$OUT/include/pvpmu" "$OUT/core"
cp "$ROOT"/guest/linux/Kbuild "$ROOT"/guest/linux/*.[ch] "$OUT/"
cp "$ROOT/guest/sdk/include/pvpmu/abi.h" "$OUT/include/pvpmu/"
cp "$ROOT/guest/core/pvpmu_core.h" "$ROOT/guest/core/detect.c" \
	"$ROOT/guest/core/hypercall.c" "$ROOT/guest/core/pvpmu_hc.h" "$OUT/core/"
make -s -C "$KDIR" M="$(cd "$OUT" && pwd)" modules
