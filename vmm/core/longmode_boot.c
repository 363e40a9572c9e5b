// SPDX-License-Identifier: MIT
/*
 * longmode_boot.c: put a vCPU straight into 64-bit long mode.
 *
 * The VMM writes a GDT, a TSS and identity page tables into the reserved
 * area below 1 MiB (layout below), then sets each vCPU's segment, control
 * and general registers as the boot protocol of pvpmu/abi.h describes.
 *
 *   0x1000  GDT: null, 64-bit code (0x08), data (0x10), TSS (0x18, 16 B);
 *           for Linux (boot.rst: __BOOT_CS 0x10, __BOOT_DS 0x18): null,
 *           null, code (0x10), data (0x18), TSS (0x20)
 *   0x1100  TSS (104 bytes, unused but valid: VMX entry wants a busy TSS)
 *   0x2000  PML4
 *   0x3000  PDPT
 *   0x4000  4 page directories: 0-4 GiB in 2 MiB pages, user-accessible
 *           (U/S set) so ring-3 programs run without new page tables
 *   0x9000  struct pvpmu_boot_info
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#define GDT_GPA  0x1000
#define TSS_GPA  0x1100
#define PML4_GPA 0x2000
#define PDPT_GPA 0x3000
#define PD_GPA   0x4000
#define NR_PD    4

#define PTE_P  (1ULL << 0)
#define PTE_RW (1ULL << 1)
#define PTE_US (1ULL << 2)
#define PTE_PS (1ULL << 7)

#define CR0_PE         (1ULL << 0)
#define CR0_MP         (1ULL << 1)
#define CR0_ET         (1ULL << 4)
#define CR0_NE         (1ULL << 5)
#define CR0_WP         (1ULL << 16)
#define CR0_PG         (1ULL << 31)
#define CR4_PAE        (1ULL << 5)
#define CR4_OSFXSR     (1ULL << 9)
#define CR4_OSXMMEXCPT (1ULL << 10)
#define EFER_SCE       (1ULL << 0)
#define EFER_LME       (1ULL << 8)
#define EFER_LMA       (1ULL << 10)

#define LINUX_BOOT_CS 0x10
#define LINUX_BOOT_DS 0x18
#define GDT_ENTRIES   6

/* The selectors of one boot protocol. */
struct boot_selectors {
	uint16_t cs, ds, tr;
};

static const struct boot_selectors vpmu_selectors = {
	PVPMU_BOOT_CS, PVPMU_BOOT_DS, PVPMU_BOOT_DS + 8};
static const struct boot_selectors linux_selectors = {
	LINUX_BOOT_CS, LINUX_BOOT_DS, LINUX_BOOT_DS + 8};

static const struct boot_selectors *selectors(const struct vmm_vm *vm)
{
	return vm->image_kind == VMM_IMAGE_ELF ? &vpmu_selectors
					       : &linux_selectors;
}

static void write_gdt(uint64_t *gdt, const struct boot_selectors *sel)
{
	uint64_t base = TSS_GPA, limit = 103;

	memset(gdt, 0, GDT_ENTRIES * 8);
	gdt[sel->cs / 8] = 0x00af9a000000ffffULL; /* code: L=1, P, DPL0 */
	gdt[sel->ds / 8] = 0x00cf92000000ffffULL; /* data: P, DPL0, r/w */
	/* 64-bit TSS descriptor, type 0xb (busy), SDM 3A §8.2.3. */
	gdt[sel->tr / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
			   (0x8bULL << 40) | ((base >> 24 & 0xff) << 56);
	gdt[sel->tr / 8 + 1] = base >> 32;
}

void vmm_boot_write_tables(struct vmm_vm *vm)
{
	uint64_t *pml4 = vmm_gpa_ptr(vm, PML4_GPA, 4096);
	uint64_t *pdpt = vmm_gpa_ptr(vm, PDPT_GPA, 4096);
	uint64_t *pd   = vmm_gpa_ptr(vm, PD_GPA, NR_PD * 4096);
	unsigned int i;

	memset((char *)vm->mem + GDT_GPA, 0, 0x1000);
	write_gdt(vmm_gpa_ptr(vm, GDT_GPA, GDT_ENTRIES * 8), selectors(vm));
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = PDPT_GPA | PTE_P | PTE_RW | PTE_US;
	for (i = 0; i < NR_PD; i++)
		pdpt[i] = (PD_GPA + i * 4096ULL) | PTE_P | PTE_RW | PTE_US;
	for (i = 0; i < NR_PD * 512; i++)
		pd[i] = ((uint64_t)i << 21) | PTE_P | PTE_RW | PTE_US | PTE_PS;
}

static void set_segments(struct kvm_sregs *s, const struct boot_selectors *sel)
{
	struct kvm_segment code = {
		.base     = 0,
		.limit    = 0xffffffff,
		.selector = sel->cs,
		.type     = 11,
		.present  = 1,
		.dpl      = 0,
		.db       = 0,
		.s        = 1,
		.l        = 1,
		.g        = 1,
	};
	struct kvm_segment data = {
		.base     = 0,
		.limit    = 0xffffffff,
		.selector = sel->ds,
		.type     = 3,
		.present  = 1,
		.dpl      = 0,
		.db       = 1,
		.s        = 1,
		.l        = 0,
		.g        = 1,
	};
	struct kvm_segment tr = {
		.base     = TSS_GPA,
		.limit    = 103,
		.selector = sel->tr,
		.type     = 11,
		.present  = 1,
		.s        = 0,
	};
	struct kvm_segment ldt = {
		.selector = 0, .type = 2, .present = 1, .unusable = 1};

	s->cs = code;
	s->ds = s->es = s->fs = s->gs = s->ss = data;
	s->tr                                 = tr;
	s->ldt                                = ldt;
	s->gdt.base                           = GDT_GPA;
	s->gdt.limit                          = GDT_ENTRIES * 8 - 1;
	s->idt.base                           = 0;
	s->idt.limit                          = 0;
}

int vmm_boot_setup_vcpu(struct vmm_vcpu *vcpu, uint64_t entry, uint64_t rsi)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	set_segments(&sregs, selectors(vcpu->vm));
	sregs.cr0  = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_PG;
	sregs.cr3  = PML4_GPA;
	sregs.cr4  = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT;
	sregs.efer = EFER_SCE | EFER_LME | EFER_LMA;
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;

	memset(&regs, 0, sizeof(regs));
	regs.rip    = entry;
	regs.rflags = 0x2;
	regs.rdi    = vcpu->index;
	regs.rsi    = rsi;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}
