/* SPDX-License-Identifier: MIT */
/*
 * user.h: the ring-3 API of the minimal vpmu guest kernel.
 *
 * Ring-3 programs are C functions linked into the guest image (see
 * "Programs" below: user_main() or user_program()). They run in ring 3
 * with IOPL 0 and interrupts enabled, each vCPU on its own USER_STACK_SIZE
 * stack, and reach the kernel through `int3` (USER_SYSCALL_VECTOR, #BP)
 * with the inline wrappers below. Include this header, not kernel.h, from
 * ring-3 code; an image that also has ring-0 parts (guest_main(), a
 * notification handler) includes both.
 *
 * What ring 3 may do:
 *   - read and write all of guest RAM (the identity map is user-accessible;
 *     only page 0 is unmapped, so NULL dereferences fault);
 *   - `rdtsc`, and `out`/`in` on the hypercall doorbells
 *     PVPMU_PORT_HC_BASE .. PVPMU_PORT_HC_BASE + PVPMU_HC_MAX - 1 only (the
 *     TSS I/O bitmap; use pvpmu_hypercall() from pvpmu_hc.h). A 4-byte OUT
 *     checks 4 port bits, so `outl` works on doorbells 1..60; doorbells
 *     61..63 (unassigned) take #GP. Every other port, `cli`, `sti`, `hlt`
 *     and MSR access take #GP;
 *   - not use the `syscall` instruction (on the PVM hosts its handler never
 *     reaches ring 0; here it ends in a #UD dump) nor `int $n` (#UD on
 *     PVM): see kernel/syscall.S.
 *
 * An exception in ring 3 that is not in the exception table is dumped on
 * the console with all registers and ends the VM with status 128 + vector
 * (e.g. 142 for a page fault).
 *
 * Syscall convention: `int3` with RAX = number, arguments in RDI,
 * RSI, RDX; the result comes back in RAX; RCX, R8-R11 and the argument
 * registers are clobbered (as by a C call). DF must be 0 (as at any C
 * call). An unknown number returns -PVPMU_ENOSYS. Interrupts are off while
 * the kernel runs a syscall, so keep write()s short where notification
 * latency matters.
 */
#ifndef GUEST_USER_H
#define GUEST_USER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include <pvpmu/abi.h>

#include "extable.h"
#include "x86.h"

#define USER_STACK_SIZE 16384 /* per vCPU */

#define USER_SYSCALL_VECTOR 3 /* #BP: the syscall instruction is int3 */

/* Syscall numbers (RAX). 0 is reserved and answers -PVPMU_ENOSYS. */
#define USER_SYS_WRITE 1
#define USER_SYS_EXIT  2
#define USER_SYS_TIME  3
#define USER_SYS_YIELD 4
#define USER_SYS_READ  5
#define USER_NR_SYS    6

/* A ring-3 program; (vcpu) is the vCPU it runs on. Returning = exit(ret). */
typedef int (*user_main_fn_t)(unsigned int vcpu);

/*
 * Programs. The image names the program of each vCPU in one of two ways:
 *   - define int user_main(unsigned int vcpu): every vCPU runs it;
 *   - define user_main_fn_t user_program(unsigned int vcpu): vCPU (vcpu)
 *     runs the function it returns (NULL: that vCPU halts at once). The
 *     kernel's weak default returns user_main (NULL if the image has none).
 * Both are called once per vCPU, concurrently on all vCPUs; user_program()
 * runs in ring 0 (keep it a table lookup). Returning from a program is
 * user_exit(return value).
 */
int user_main(unsigned int vcpu);
user_main_fn_t user_program(unsigned int vcpu);

/* Raw syscall (nr) with three arguments; returns RAX. Prefer the wrappers. */
static inline long user_syscall(long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	__asm__ __volatile__("int3"
			     : "+a"(nr), "+D"(a0), "+S"(a1), "+d"(a2)
			     :
			     : "rcx", "r8", "r9", "r10", "r11", "memory");
	return nr;
}

/*
 * Write (len) bytes at (buf) to the console, atomically with respect to
 * other console output. Returns (len), or -PVPMU_EFAULT (and writes
 * nothing) unless [buf, buf + len) lies inside guest RAM above page 0.
 */
static inline long user_write(const void *buf, size_t len)
{
	return user_syscall(USER_SYS_WRITE, (uintptr_t)buf, len, 0);
}

/*
 * End this vCPU's program. Status 0: this vCPU halts for good (the VM ends
 * with status 0 once every vCPU has halted). Nonzero: the whole VM ends at
 * once with exit status (status), or 255 if (status) is outside 1..255;
 * output of other vCPUs that is still in flight may be lost.
 */
static inline noreturn void user_exit(int status)
{
	user_syscall(USER_SYS_EXIT, (uint64_t)(unsigned int)status, 0, 0);
	__builtin_unreachable();
}

/*
 * Nanoseconds since the VM booted (vCPU 0's kernel start), from the TSC
 * and the boot info's tsc_khz (1 GHz is assumed when the VMM gives none).
 * Monotonic on one vCPU.
 */
static inline uint64_t user_time_ns(void)
{
	return (uint64_t)user_syscall(USER_SYS_TIME, 0, 0, 0);
}

/*
 * Give the kernel a chance to run. There is one program per vCPU and no
 * scheduler, so this returns 0 at once; it is the cheapest syscall (the
 * null round trip of bench_syscall).
 */
static inline long user_yield(void)
{
	return user_syscall(USER_SYS_YIELD, 0, 0, 0);
}

/*
 * Read at most (len) bytes of console input (the VMM's standard input)
 * into (buf) without waiting: the bytes read (0: none has arrived), or
 * -PVPMU_EFAULT unless [buf, buf + len) lies inside guest RAM above page
 * 0. Tests use a byte as a go signal (tests/kvm/guests/op_go.h).
 */
static inline long user_read(void *buf, size_t len)
{
	return user_syscall(USER_SYS_READ, (uintptr_t)buf, len, 0);
}

/*
 * `outb`/`outl` from ring 3 that survive a fault: return 0 if the OUT was
 * allowed, or the exception vector (X86_VEC_GP for a port the TSS I/O
 * bitmap does not grant). For tests of the port policy.
 */
static inline int user_outb_safe(uint16_t port, uint8_t val)
{
	uint64_t vec;

	__asm__ __volatile__(
		"xor %%esi, %%esi\n"
		"1:\toutb %b[v], %w[p]\n"
		"2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
		: "=&S"(vec)
		: [v] "a"(val), [p] "d"(port), [reg] "i"(TRAP_REG_RSI)
		: "memory");
	return (int)(vec & 0xff);
}

static inline int user_outl_safe(uint16_t port, uint32_t val)
{
	uint64_t vec;

	__asm__ __volatile__("xor %%esi, %%esi\n"
			     "1:\toutl %k[v], %w[p]\n"
			     "2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
			     : "=&S"(vec), [v] "+a"(val)
			     : [p] "d"(port), [reg] "i"(TRAP_REG_RSI)
			     : "memory");
	return (int)(vec & 0xff);
}

/*
 * Notifications. The kernel's default handler of the notification vector
 * (KERNEL_NOTIFY_VECTOR, 0xf0) counts interrupts per vCPU here. A ring-3
 * program registers the vector itself with PVPMU_HC_SET_VECTOR (the
 * doorbell is granted) and polls its count; an image that installs its own
 * ring-0 handler (kernel_set_notify_handler()) stops the counting.
 */
extern volatile uint64_t user_notify_counts[];

static inline uint64_t user_notify_count(unsigned int vcpu)
{
	return user_notify_counts[vcpu];
}

/*
 * Blocking (spec 3.1.9, 3.4.3). When a PFM_FL_NOTIFY_BLOCK context of
 * another thread notifies an overflow of the program on vCPU (vcpu), the
 * kernel holds that program on the notification vector (so the vCPU must
 * have one registered, PVPMU_HC_SET_VECTOR) until the controlling thread
 * issues PFM_RESTART; it counts each time here. The program itself only
 * schedules its context in (pvpmu_sched()), as a driver would.
 */
extern volatile uint64_t kernel_blocked_counts[];

static inline uint64_t user_blocked_count(unsigned int vcpu)
{
	return kernel_blocked_counts[vcpu];
}

/* The VM's boot info (read-only by convention; readable from ring 3). */
static inline const struct pvpmu_boot_info *user_boot_info(void)
{
	return (const struct pvpmu_boot_info *)(uintptr_t)PVPMU_BOOT_INFO_GPA;
}

/* The current privilege level (CS.RPL): 3 in a ring-3 program. */
static inline unsigned int user_cpl(void)
{
	uint16_t cs;

	__asm__ __volatile__("mov %%cs, %0" : "=r"(cs));
	return cs & 3;
}

/*
 * ulib.c, ring-3 code: printf to the console through user_write(), with
 * kprintf's format (kernel.h); one call is one write (at most 511 bytes).
 * Returns the bytes written or a negative status from user_write().
 */
int uprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* vsnprintf/snprintf with kprintf's format; always NUL-terminates. */
int uvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
int usnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* GUEST_USER_H */
