/* SPDX-License-Identifier: MIT */
/*
 * entry.S: the 256 interrupt/exception entry stubs and their common path.
 *
 * Stub v lives at trap_stubs + 16 * v (trap.c builds the IDT from that). It
 * pushes a zero error code unless the CPU pushes one (vectors 8, 10-14, 17,
 * 21, 29, 30; SDM vol. 3, table 6-1), then the vector, and jumps to
 * trap_common, which saves the GPRs so that RSP points at a struct
 * trap_frame (kernel.h) and calls trap_dispatch(frame). The frame is 176
 * bytes, a multiple of 16: the CPU aligns RSP to 16 when it delivers an
 * event in 64-bit mode, so the C code gets an ABI-aligned stack.
 */
	.section .text.trap, "ax"
	.code64
	.balign 16
	.globl trap_stubs
	.type trap_stubs, @function
trap_stubs:
	.set .Lvec, 0
	.rept 256
	.org trap_stubs + 16 * .Lvec, 0xcc	/* errors out if a stub > 16 bytes */
	.if (.Lvec == 8) || ((.Lvec >= 10) && (.Lvec <= 14)) || (.Lvec == 17) || (.Lvec == 21) || (.Lvec == 29) || (.Lvec == 30)
	.else
	pushq $0
	.endif
	pushq $.Lvec
	jmp trap_common
	.set .Lvec, .Lvec + 1
	.endr
	.org trap_stubs + 16 * 256, 0xcc
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

	.section .note.GNU-stack, "", @progbits
