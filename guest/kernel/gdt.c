// SPDX-License-Identifier: MIT
/*
 * gdt.c: the kernel's GDT and the per-vCPU TSSs.
 *
 * Selectors match the boot CPU state (pvpmu/abi.h: CS 0x08, DS 0x10), so
 * switching from the VMM's boot GDT to this one changes nothing visible.
 * User data precedes user code so that the layout also suits STAR. Then
 * come the TSS descriptors, 16 bytes each, one per vCPU.
 *
 * Each TSS carries RSP0 (the stack of events from ring 3) and an I/O
 * permission bitmap (SDM vol. 1, 19.5.2) that grants ring 3 exactly the
 * hypercall doorbells. Ports past the end of the bitmap are denied, so it
 * only needs to reach the last doorbell; the CPU may read one byte beyond
 * the bitmap, which must be 0xff and inside the TSS limit. The TSSs are
 * initialised data so that no emulated loop fills the bitmaps at boot.
 */
#include "kernel.h"

#define GDT_NR_SEGS 5 /* null, kernel CS/DS, user DS/CS */

#define IOPB_FIRST_PORT PVPMU_PORT_HC_BASE
#define IOPB_LAST_PORT  (PVPMU_PORT_HC_BASE + PVPMU_HC_MAX - 1)
#define IOPB_BYTES      (IOPB_LAST_PORT / 8 + 1)

_Static_assert(IOPB_FIRST_PORT % 8 == 0 && (IOPB_LAST_PORT + 1) % 8 == 0,
	       "doorbells fill whole bitmap bytes");

/* 64-bit TSS (SDM vol. 3, 8.7), with its I/O bitmap and the 0xff byte. */
struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
	uint8_t iopb[IOPB_BYTES + 1];
} __attribute__((packed, aligned(64)));

_Static_assert(offsetof(struct tss, rsp) == 4, "TSS.RSP0");
_Static_assert(offsetof(struct tss, iomap_base) == 102, "TSS I/O map base");
_Static_assert(offsetof(struct tss, iopb) == 104, "TSS I/O bitmap");

#define TSS_LIMIT (offsetof(struct tss, iopb) + IOPB_BYTES) /* incl. 0xff */
#define TSS_TYPE  0x89ULL /* present, DPL 0, 64-bit TSS (available) */

/* Denied ports are 1 bits: all but the doorbells, and the trailing byte. */
static struct tss tss[KERNEL_MAX_VCPUS] = {
	[0 ... KERNEL_MAX_VCPUS - 1] =
		{
			.iomap_base = offsetof(struct tss, iopb),
			.iopb =
				{
					[0 ... IOPB_FIRST_PORT / 8 - 1] = 0xff,
					[IOPB_BYTES]                    = 0xff,
				},
		},
};

/* Descriptor words (SDM vol. 3, 3.4.5): flat, present, G=1. */
#define SEG_KERNEL_CODE64 0x00af9a000000ffffULL /* L=1, DPL 0, exec/read */
#define SEG_KERNEL_DATA   0x00cf92000000ffffULL /* DPL 0, read/write */
#define SEG_USER_DATA     0x00cff2000000ffffULL /* DPL 3, read/write */
#define SEG_USER_CODE64   0x00affa000000ffffULL /* L=1, DPL 3, exec/read */

static uint64_t gdt[GDT_NR_SEGS + 2 * KERNEL_MAX_VCPUS]
	__attribute__((aligned(16))) = {
		[GDT_KERNEL_CS >> 3] = SEG_KERNEL_CODE64,
		[GDT_KERNEL_DS >> 3] = SEG_KERNEL_DATA,
		[GDT_USER_DS >> 3]   = SEG_USER_DATA,
		[GDT_USER_CS >> 3]   = SEG_USER_CODE64,
};

void gdt_load(void)
{
	struct desc_ptr p = {
		.limit = sizeof(gdt) - 1,
		.base  = (uintptr_t)gdt,
	};

	lgdt(&p);
	/* A far return is the only way to reload CS in 64-bit mode. */
	__asm__ __volatile__(
		"pushq %[cs]\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"mov %[ds], %%ds\n\t"
		"mov %[ds], %%es\n\t"
		"mov %[ds], %%ss"
		:
		: [cs] "i"(GDT_KERNEL_CS), [ds] "r"((uint16_t)GDT_KERNEL_DS)
		: "rax", "memory");
}

void tss_load(unsigned int vcpu, uint64_t rsp0)
{
	uint64_t base    = (uintptr_t)&tss[vcpu];
	unsigned int idx = GDT_NR_SEGS + 2 * vcpu;

	tss[vcpu].rsp[0] = rsp0;
	/* 16-byte system descriptor (SDM vol. 3, 8.2.3). */
	gdt[idx] = (TSS_LIMIT & 0xffff) | ((base & 0xffffff) << 16) |
		   (TSS_TYPE << 40) | ((uint64_t)(TSS_LIMIT >> 16) << 48) |
		   ((base >> 24 & 0xff) << 56);
	gdt[idx + 1] = base >> 32;
	ltr((uint16_t)(idx << 3));
}
