// SPDX-License-Identifier: MIT
/*
 * gdt.c: the kernel's GDT.
 *
 * Selectors match the boot CPU state (pvpmu/abi.h: CS 0x08, DS 0x10), so
 * switching from the VMM's boot GDT to this one changes nothing visible.
 * User data precedes user code so that the layout also suits STAR. The TSS
 * descriptors (16 bytes each, one per vCPU) are reserved for issue 4 (ring 3,
 * I/O bitmap) and still zero (not present).
 */
#include "kernel.h"

#define GDT_NR_SEGS 5 /* null, kernel CS/DS, user DS/CS */

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
