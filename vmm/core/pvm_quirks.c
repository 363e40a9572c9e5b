// SPDX-License-Identifier: MIT
/*
 * pvm_quirks.c: host quirks of software-virtualized KVM (PVM) hosts, in one
 * place. PVM runs guest ring 3 natively and emulates guest ring 0; its
 * instruction emulator refuses a few instructions Linux executes there and
 * reports "KVM internal error, suberror 1" (KVM_INTERNAL_ERROR_EMULATION).
 * The VMM finishes the two that are harmless to emulate here:
 *
 *   int3   (int3_selftest() at boot): injects #BP after the instruction,
 *          as the CPU would (a trap: the saved RIP follows the int3);
 *   fwait  (fpu__drop() on every exec): skipped; the guest runs with
 *          noxsave and no pending x87 exceptions to deliver.
 *
 * Anything else stays a fatal internal error with a register dump. On
 * VT-x/SVM hosts none of this triggers. What a VMM cannot do (the user
 * `syscall` that PVM delivers at CPL 3) is a guest kernel patch:
 * guest/linux-kernel/patches. The kernel parameters a PVM host needs
 * for a stock kernel are vmm_pvm_cmdline, merged into every Linux command
 * line on PVM hosts (host_kind.c).
 */
#include "vmm_core_priv.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define OP_INT3   0xcc
#define OP_FWAIT  0x9b
#define BP_VECTOR 3

const char vmm_pvm_cmdline[] =
	"noxsave clearcpuid=smap,erms,fsrm,popcnt,rdrand,rdseed,fsgsbase,"
	"pcid,invpcid,pku";

/* The first byte of the instruction at RIP: from KVM, else guest memory. */
static int fetch_opcode(struct vmm_vcpu *vcpu, uint64_t rip, uint8_t *op)
{
	struct kvm_run *run       = vcpu->run;
	struct kvm_translation tr = {.linear_address = rip};

	if ((run->emulation_failure.flags &
	     KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES) &&
	    run->emulation_failure.insn_size > 0) {
		*op = run->emulation_failure.insn_bytes[0];
		return 0;
	}
	if (ioctl(vcpu->fd, KVM_TRANSLATE, &tr) < 0 || !tr.valid)
		return -1;
	return vmm_guest_read(vcpu->vm, tr.physical_address, op, 1);
}

static bool inject_bp(struct vmm_vcpu *vcpu)
{
	struct kvm_vcpu_events ev;

	if (ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return false;
	ev.exception.injected       = 1;
	ev.exception.nr             = BP_VECTOR;
	ev.exception.has_error_code = 0;
	ev.flags &= ~KVM_VCPUEVENT_VALID_PAYLOAD;
	return ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &ev) == 0;
}

bool vmm_pvm_quirk_handled(struct vmm_vcpu *vcpu)
{
	struct kvm_regs regs;
	uint8_t op;

	if (vcpu->run->internal.suberror != KVM_INTERNAL_ERROR_EMULATION ||
	    ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0 ||
	    fetch_opcode(vcpu, regs.rip, &op))
		return false;
	if (op != OP_INT3 && op != OP_FWAIT)
		return false;
	regs.rip += 1;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		return false;
	if (op == OP_INT3 && !inject_bp(vcpu))
		return false;
	vcpu->stats.quirks++;
	return true;
}
