/* SPDX-License-Identifier: MIT */
/*
 * syscall.S: the ring-3 boundary: the syscall entry (`int3`), the first
 * entry into ring 3, the ring-3 start of every program, the short entry
 * path of the notification vector, and the target of a stray `syscall`.
 *
 * Why `int3`: on the PVM development hosts, probed from ring 3,
 *   - `syscall` runs its LSTAR handler with the guest still at CPL 3 (CS
 *     reads 0x33, port I/O takes #GP, iretq cannot set IF again), so it
 *     never reaches ring 0 (and sysretq takes #GP);
 *   - `int $n` (opcode CD) raises #UD, whatever the gate;
 *   - `int3` (CC) is delivered through a DPL-3 gate into ring 0, like the
 *     exceptions (#UD, #GP, #PF) that reach ring 0 there.
 * A DPL-3 interrupt gate on vector 3 (#BP) works the same on VT-x/SVM, and
 * the CPU switches to TSS.RSP0 and builds the iretq frame itself, which
 * keeps the emulated path short. #BP is a trap: the saved RIP is already
 * past the 1-byte `int3`. (Nothing else in the guest uses breakpoints.)
 *
 * Ring-0 instructions are emulated on PVM (~1 us each), so the paths are
 * counted (excluding the C handler):
 *   syscall_entry: 6 (cmp, jae, sub, call, add, iretq); yield adds 2
 *   notify_entry: 22 (9 push, cld, lea, call, 9 pop, iretq)
 */
#define GDT_USER_DS     0x1b
#define GDT_USER_CS     0x23
#define USER_RFLAGS     0x202		/* IF, IOPL 0 */
#define USER_SYS_EXIT   2
#define USER_NR_SYS     6
#define PVPMU_ENOSYS    38

	.text
	.code64

/*
 * int3 from ring 3. In: RAX = number, RDI/RSI/RDX = arguments; the
 * CPU has switched to TSS.RSP0 (16-byte aligned), pushed the 40-byte frame
 * and cleared IF. Out: RAX. DF is 0 as the C ABI guarantees at the call of
 * the wrapper. The sub keeps RSP 16-byte aligned at the C call.
 */
	.globl syscall_entry
	.type syscall_entry, @function
syscall_entry:
	cmp $USER_NR_SYS, %rax
	jae 1f
	sub $8, %rsp
	call *syscall_table(, %rax, 8)
	add $8, %rsp
	iretq
1:	mov $-PVPMU_ENOSYS, %rax
	iretq
	.size syscall_entry, . - syscall_entry

/*
 * user_enter(vcpu, fn, user_rsp, kernel_rsp): never returns. Resets the
 * kernel stack to (kernel_rsp) and enters user_start in ring 3 with RDI =
 * vcpu, RSI = fn, RSP = user_rsp, IF = 1.
 */
	.globl user_enter
	.type user_enter, @function
user_enter:
	mov %rcx, %rsp
	pushq $GDT_USER_DS
	push %rdx
	pushq $USER_RFLAGS
	pushq $GDT_USER_CS
	pushq $user_start
	xor %ebp, %ebp
	iretq
	.size user_enter, . - user_enter

/* Ring 3: RSP = top of the user stack (16-byte aligned), RSI = program. */
	.type user_start, @function
user_start:
	call *%rsi
	mov %eax, %edi
	mov $USER_SYS_EXIT, %eax
	int3
	ud2
	.size user_start, . - user_start

/*
 * The notification vector. The CPU aligned RSP to 16 before pushing its
 * 40-byte frame; 9 pushes more leave RSP 16-byte aligned at the call.
 */
	.globl notify_entry
	.type notify_entry, @function
notify_entry:
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	cld
	lea 72(%rsp), %rdi		/* the CPU's frame: rip, cs, ... */
	call kernel_notify_dispatch
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rax
	iretq
	.size notify_entry, . - notify_entry

/*
 * LSTAR: where a `syscall` instruction lands. It is not the syscall ABI
 * (see above); the #UD dump names this function and RCX holds the address
 * after the offending `syscall`.
 */
	.globl syscall_unsupported
	.type syscall_unsupported, @function
syscall_unsupported:
	ud2
	.size syscall_unsupported, . - syscall_unsupported

	.section .note.GNU-stack, "", @progbits
