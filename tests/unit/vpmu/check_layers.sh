#!/bin/sh
# check_layers.sh: libvpmu's layering, checked on the built archives. A
# static library links even when it calls a layer above it, so this test
# looks at the symbols: no layer may need a symbol that only a layer it
# must not depend on defines. Inside the logical PMU, the mechanisms
# (vpmu_mech) sit under the command layer (vpmu_core): they never call a
# command, a handle lookup or a vector run, and never take the domain lock
# (they need no pthread_mutex_lock: their callers hold it).
#
# Usage: check_layers.sh NM formats.a backends.a mech.a core.a arch.a vpmu.a
set -eu
NM=$1 FORMATS=$2 BACKENDS=$3 MECH=$4 CORE=$5 ARCH=$6 TOP=$7

# defined, undefined, check and $status.
. "$(dirname "$0")/../../layers.sh"

check "$FORMATS" "mechanisms, commands, backends, arch or host layer" \
	"$MECH" "$CORE" "$BACKENDS" "$ARCH" "$TOP"
check "$BACKENDS" "mechanisms, commands, formats, arch or host layer" \
	"$MECH" "$CORE" "$FORMATS" "$ARCH" "$TOP"
check "$MECH" "command layer, backends, arch or host layer" "$CORE" \
	"$BACKENDS" "$ARCH" "$TOP"
check "$CORE" "backends, arch or host layer" "$BACKENDS" "$ARCH" "$TOP"
check "$ARCH" "backends or host layer" "$BACKENDS" "$TOP"
# The domain lock is the command layer's: a mechanism runs under it.
if undefined "$MECH" | grep -qx 'pthread_mutex_lock'; then
	echo "layering: $(basename "$MECH") takes a lock (pthread_mutex_lock)"
	status=1
else
	echo "layering: $(basename "$MECH") takes no lock"
fi
exit $status
