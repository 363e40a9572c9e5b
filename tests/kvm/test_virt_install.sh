#!/bin/bash
# SPDX-License-Identifier: MIT
# test_virt_install.sh BUILD_DIR: domains written by `virt-install
# --print-xml` (Debian's virtinst), as its users would hand them to vpmu:
#   1. a typical one (virtio NIC, VNC graphics, video, RNG, balloon,
#      host-passthrough CPU, a firmware loader) boots the hello guest, and
#      stderr has exactly one warning line, naming what vpmu ignored;
#   2. one with --features pmu.state=off boots arch_none, whose checks pass
#      only without a PMU (CPUID leaves zero, every PMU MSR #GP).
# virt-install answers without libvirtd only through libvirt's test
# driver, whose one guest kind is type 'test' on i686: those two values
# are set to what the qemu driver writes (qemu, x86_64), nothing else.
# Label kvm; skips (77) without virt-install, or without /dev/kvm unless
# VPMU_REQUIRE_KVM=1.
set -u
B=$(cd "$1" && pwd)
command -v virt-install >/dev/null ||
	{ echo "SKIP: no virt-install (package virtinst)"; exit 77; }
# shellcheck source=../require_kvm.sh
. "$(dirname "$0")/../require_kvm.sh"
T=$(mktemp -d /tmp/vpmu-virt-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
export VPMU_RUNTIME_DIR=$T/run
fail() {
	echo "FAIL: $*"
	exit 1
}

# domain NAME GUEST [virt-install options...]: $T/NAME.xml
domain() {
	local name=$1 guest=$2
	shift 2
	virt-install --print-xml --connect test:///default --name "$name" \
		--memory 64 --os-variant generic \
		--boot "kernel=$B/guests/$guest.elf" "$@" >"$T/$name.raw" \
		2>"$T/$name.vi-err" ||
		fail "virt-install: $(cat "$T/$name.vi-err")"
	sed -e 's/<domain type="test">/<domain type="qemu">/' \
		-e 's/arch="i686"/arch="x86_64"/' "$T/$name.raw" >"$T/$name.xml"
}

# boot NAME: run it, print status and output, fail unless it exited 0.
boot() {
	"$B/vmm/vpmu" run "$T/$1.xml" >"$T/$1.out" 2>"$T/$1.err" </dev/null
	local status=$?
	echo "$1: status $status; stdout:"
	cat "$T/$1.out"
	echo "--- stderr:"
	cat "$T/$1.err"
	[ "$status" = 0 ] || fail "$1: exit status $status"
}

domain vi-hello hello --vcpus 2 --disk none \
	--network network=default,model=virtio --graphics vnc \
	--rng /dev/urandom --memballoon virtio --video vga \
	--cpu host-passthrough \
	--boot loader=/usr/share/OVMF/OVMF_CODE.fd,loader.readonly=yes,loader.type=pflash
boot vi-hello
grep -q "hello from vcpu 0" "$T/vi-hello.out" || fail "no hello"
want="vpmu: warning: $T/vi-hello.xml: vpmu ignores (it has no such device or setting): <domain type='qemu'> (vpmu runs on KVM), <os><loader>, <features><pae>, <cpu>, <clock>, <pm>, <devices><emulator>, <devices><controller> (x4), <devices><interface>, <devices><console>, <devices><input>, <devices><graphics>, <devices><video>, <devices><memballoon>, <devices><rng>"
[ "$(grep -c warning "$T/vi-hello.err")" = 1 ] ||
	fail "not exactly one warning line"
grep -qxF "$want" "$T/vi-hello.err" || fail "warning is not: $want"

domain vi-nopmu arch_none --features pmu.state=off --graphics none \
	--network none --disk none
grep -q "<pmu state=\"off\"/>" "$T/vi-nopmu.xml" ||
	fail "virt-install wrote no <pmu state='off'/>"
boot vi-nopmu
grep -q "arch_none: ok, 45 checks" "$T/vi-nopmu.out" ||
	fail "the guest saw a PMU"
echo "PASS"
