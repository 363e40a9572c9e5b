/* SPDX-License-Identifier: MIT */
/*
 * start.S: _start, where the VMM starts every vCPU (pvpmu/abi.h, section 1),
 * and the page table of the null-page guard.
 *
 * In:  RDI = vCPU index, RSI = GPA of struct pvpmu_boot_info, RSP = 0,
 *      64-bit ring 0, interrupts off, identity-mapped first 4 GiB.
 * Each vCPU gets the KERNEL_STACK_SIZE (16 KiB) slot kernel_stacks[RDI];
 * struct cpu sits at the bottom of the slot, RSP starts at its top (which
 * is also TSS.RSP0, where events from ring 3 land). A vCPU
 * index beyond KERNEL_MAX_VCPUS has no stack and halts at once.
 */
#define KERNEL_MAX_VCPUS  64
#define KERNEL_STACK_SHIFT 14
#define PTE_P_RW_US        7

	.section .text.entry, "ax"
	.code64
	.globl _start
	.type _start, @function
_start:
	cmp $KERNEL_MAX_VCPUS, %rdi
	jae 1f
	lea 1(%rdi), %rax
	shl $KERNEL_STACK_SHIFT, %rax
	lea kernel_stacks(%rax), %rsp	/* top of slot RDI, 16-byte aligned */
	xor %ebp, %ebp
	call kernel_main		/* (RDI, RSI) pass straight through */
1:	cli
	hlt
	jmp 1b
	.size _start, . - _start

	.section .bss
	.balign 1 << KERNEL_STACK_SHIFT
	.globl kernel_stacks
	.type kernel_stacks, @object
kernel_stacks:
	.zero KERNEL_MAX_VCPUS << KERNEL_STACK_SHIFT
	.size kernel_stacks, . - kernel_stacks

/*
 * 4 KiB pages for GPA 0 .. 2 MiB, identity, present, writable and
 * user-accessible like the VMM's 2 MiB page they replace, except page 0,
 * which is not present (paging.c). Built here rather than by a loop at
 * boot: 512 emulated stores would cost ~1.5 ms.
 */
	.section .data.low_pt, "aw"
	.balign 4096
	.globl kernel_low_pt
	.type kernel_low_pt, @object
kernel_low_pt:
	.quad 0
	.set .Lpage, 1
	.rept 511
	.quad (.Lpage << 12) | PTE_P_RW_US
	.set .Lpage, .Lpage + 1
	.endr
	.size kernel_low_pt, . - kernel_low_pt

	.section .note.GNU-stack, "", @progbits
