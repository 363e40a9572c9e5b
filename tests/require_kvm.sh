# SPDX-License-Identifier: MIT
# require_kvm.sh: sourced by the shell tests that boot guests. Exits 77
# (ctest's skip) where /dev/kvm cannot be opened read-write, or 1 under
# VPMU_REQUIRE_KVM=1 (scripts/test.sh runs the guest labels only where
# KVM works), as kvm_require() does for the Criterion tests. Never
# creates the path.
if ! [ -c /dev/kvm ] || ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	if [ "${VPMU_REQUIRE_KVM:-0}" = 1 ]; then
		echo "FAIL: /dev/kvm cannot be opened and VPMU_REQUIRE_KVM=1"
		exit 1
	fi
	echo "SKIP: /dev/kvm cannot be opened"
	exit 77
fi
