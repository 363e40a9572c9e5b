// SPDX-License-Identifier: MIT
/*
 * vcpu_dump.c: print a vCPU's registers when the guest dies.
 */
#include "vmm_core_priv.h"

#include <sys/ioctl.h>

static void dump_segment(const char *name, const struct kvm_segment *s)
{
	fprintf(stderr,
		"  %-3s sel=0x%04x base=0x%016llx limit=0x%08x type=%u "
		"dpl=%u l=%u db=%u p=%u\n",
		name, s->selector, (unsigned long long)s->base, s->limit,
		s->type, s->dpl, s->l, s->db, s->present);
}

static void dump_sregs(const struct kvm_sregs *s)
{
	fprintf(stderr,
		"  cr0=0x%llx cr2=0x%llx cr3=0x%llx cr4=0x%llx efer=0x%llx\n",
		(unsigned long long)s->cr0, (unsigned long long)s->cr2,
		(unsigned long long)s->cr3, (unsigned long long)s->cr4,
		(unsigned long long)s->efer);
	dump_segment("cs", &s->cs);
	dump_segment("ss", &s->ss);
	dump_segment("tr", &s->tr);
	fprintf(stderr, "  gdt=0x%llx/%u idt=0x%llx/%u\n",
		(unsigned long long)s->gdt.base, s->gdt.limit,
		(unsigned long long)s->idt.base, s->idt.limit);
}

void vmm_vcpu_dump(struct vmm_vcpu *vcpu, const char *why)
{
	struct kvm_sregs sregs;
	struct kvm_regs r;

	vmm_log(vcpu->vm, VMM_LOG_ERROR, "vcpu %u: %s", vcpu->index, why);
	if (ioctl(vcpu->fd, KVM_GET_REGS, &r) < 0) {
		fprintf(stderr, "  (registers unavailable)\n");
		return;
	}
	fprintf(stderr,
		"  rip=0x%016llx rsp=0x%016llx rflags=0x%llx\n"
		"  rax=0x%016llx rbx=0x%016llx rcx=0x%016llx rdx=0x%016llx\n"
		"  rsi=0x%016llx rdi=0x%016llx rbp=0x%016llx\n"
		"  r8 =0x%016llx r9 =0x%016llx r10=0x%016llx r11=0x%016llx\n"
		"  r12=0x%016llx r13=0x%016llx r14=0x%016llx r15=0x%016llx\n",
		r.rip, r.rsp, r.rflags, r.rax, r.rbx, r.rcx, r.rdx, r.rsi,
		r.rdi, r.rbp, r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14,
		r.r15);
	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) == 0)
		dump_sregs(&sregs);
}
