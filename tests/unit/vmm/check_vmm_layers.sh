#!/bin/sh
# check_vmm_layers.sh: the VMM's layering, checked on the built archives
# (a static library links even when it calls a layer above it, so this
# looks at the symbols). From the bottom:
#   vmm_core  the KVM machine; knows no module, calls them only through
#             the hooks they register (struct vmm_module)
#   vmm_pv    the guest PMU interfaces, a module on the core
#   vmm_ctl   the control server, a module on the core and pv
# The core may neither need a symbol pv or ctl defines nor define one
# under their names (their code compiled into it); pv may not need ctl.
#
# Usage: check_vmm_layers.sh NM core.a pv.a ctl.a
set -eu
NM=$1 CORE=$2 PV=$3 CTL=$4

# defined, undefined, check and $status.
. "$(dirname "$0")/../../layers.sh"

# The names pv and ctl export under (vmm_pv.h, ctl_server.h).
MODULE_NAMES='^(vmm_pv_|vmm_control_|vmm_ctl_)'

check "$CORE" "pv or ctl code" "$PV" "$CTL"
check "$PV" "ctl code" "$CTL"
defined "$PV" "$CTL" >"$tmp/modules"
own=$(defined "$CORE" | grep -E "$MODULE_NAMES" || true)
both=$(defined "$CORE" | comm -12 - "$tmp/modules")
if [ -n "$own$both" ]; then
	echo "layering: $(basename "$CORE") defines pv or ctl code:" $own $both
	status=1
else
	echo "layering: $(basename "$CORE") defines no pv or ctl code"
fi
exit $status
