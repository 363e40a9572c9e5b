#!/bin/sh
# check_virtio_leaf.sh: vmm/virtio is a leaf the core links, not the other
# way round: its archive may need nothing of the VMM, libvpmu or the guest
# ABI (only libc and pthreads), so it stays testable without a VM, and
# its public names all carry the component's prefix.
#
# Usage: check_virtio_leaf.sh NM virtio.a
set -eu
NM=$1 LIB=$2

# defined, undefined and $status.
. "$(dirname "$0")/../../layers.sh"

bad=$(undefined "$LIB" | grep -E '^(vmm_|vpmu_|pvpmu_|kvm_)' || true)
if [ -n "$bad" ]; then
	echo "layering: $(basename "$LIB") needs VMM code:" $bad
	status=1
else
	echo "layering: $(basename "$LIB") needs no VMM code"
fi
# Internal names (virtq_*, virtio_dev_*) are global only between its
# own objects; nothing else may be exported.
bad=$(defined "$LIB" | grep -vE '^(vmm_virtio_|virtq_|virtio_dev_)' || true)
if [ -n "$bad" ]; then
	echo "layering: $(basename "$LIB") exports other names:" $bad
	status=1
else
	echo "layering: $(basename "$LIB") exports vmm_virtio_* and its own internals only"
fi
exit $status
