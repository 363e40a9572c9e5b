/* SPDX-License-Identifier: MIT */
/*
 * entry.S: the 256 interrupt/exception entry stubs, their common path, and
 * the IDT that points at them.
 *
 * Stub v lives at TRAP_STUBS_ADDR + 16 * v: guest.ld places .text.trap first
 * in the image, at PVPMU_BOOT_IMAGE_MIN, and asserts it. Knowing the stub
 * addresses at assembly time lets the IDT be built here as initialised data
 * instead of by a loop at boot, which cost ~6 ms of emulated ring-0 code.
 *
 * A stub pushes a zero error code unless the CPU pushes one (vectors 8,
 * 10-14, 17, 21, 29, 30; SDM vol. 3, table 6-1), then the vector, and jumps
 * to trap_common, which saves the GPRs so that RSP points at a struct
 * trap_frame (kernel.h) and calls trap_dispatch(frame). The frame is 176
 * bytes, a multiple of 16: the CPU aligns RSP to 16 when it delivers an
 * event in 64-bit mode, so the C code gets an ABI-aligned stack.
 */
#define TRAP_STUBS_ADDR 0x100000	/* PVPMU_BOOT_IMAGE_MIN, see guest.ld */
#define TRAP_STUB_LEN   16
#define GDT_KERNEL_CS   0x08
#define GATE_INTERRUPT  0x8e		/* present, DPL 0, 64-bit interrupt gate */

	.section .text.trap, "ax"
	.code64
	.balign 16
	.globl trap_stubs
	.type trap_stubs, @function
trap_stubs:
	.set .Lvec, 0
	.rept 256
	.org trap_stubs + TRAP_STUB_LEN * .Lvec, 0xcc	/* errors out if a stub > 16 bytes */
	.if (.Lvec == 8) || ((.Lvec >= 10) && (.Lvec <= 14)) || (.Lvec == 17) || (.Lvec == 21) || (.Lvec == 29) || (.Lvec == 30)
	.else
	pushq $0
	.endif
	pushq $.Lvec
	jmp trap_common
	.set .Lvec, .Lvec + 1
	.endr
	.org trap_stubs + TRAP_STUB_LEN * 256, 0xcc
	.size trap_stubs, . - trap_stubs

	.type trap_common, @function
trap_common:
	push %rax
	push %rbx
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %rbp
	push %r8
	push %r9
	push %r10
	push %r11
	push %r12
	push %r13
	push %r14
	push %r15
	mov %rsp, %rdi
	cld
	call trap_dispatch
	pop %r15
	pop %r14
	pop %r13
	pop %r12
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rbp
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rbx
	pop %rax
	add $16, %rsp			/* vector, error code */
	iretq
	.size trap_common, . - trap_common

/*
 * The shared IDT: 256 64-bit interrupt gates (SDM vol. 3, 6.14.1), in .data
 * so that trap.c can still change a gate (DPL, IST) at run time.
 */
	.section .data.idt, "aw"
	.balign 16
	.globl idt_table
	.type idt_table, @object
idt_table:
	.set .Lvec, 0
	.rept 256
	.short (TRAP_STUBS_ADDR + TRAP_STUB_LEN * .Lvec) & 0xffff
	.short GDT_KERNEL_CS
	.byte 0				/* IST */
	.byte GATE_INTERRUPT
	.short (TRAP_STUBS_ADDR + TRAP_STUB_LEN * .Lvec) >> 16
	.long 0				/* offset 63:32 */
	.long 0
	.set .Lvec, .Lvec + 1
	.endr
	.size idt_table, . - idt_table

	.section .note.GNU-stack, "", @progbits
