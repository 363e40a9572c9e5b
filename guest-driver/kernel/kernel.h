/* SPDX-License-Identifier: MIT */
/*
 * kernel.h: the API of the minimal vpmu guest kernel.
 *
 * The kernel is a static library linked into every guest image. The VMM
 * starts each vCPU at _start in 64-bit ring 0 (see pvpmu/abi.h, section 1);
 * start.S puts it on its own stack and calls kernel_main(), which sets up the
 * per-vCPU state (GDT, IDT) and calls the image's guest_main(). When
 * guest_main() returns, the vCPU halts with interrupts off; the VMM ends the
 * VM with status 0 once every vCPU has halted that way.
 *
 * Everything runs in ring 0 for now. Ring-0 code is emulated on the PVM
 * development hosts (~1 us per instruction) and every port access is an exit
 * (~7 us): keep paths short.
 */
#ifndef GUEST_KERNEL_H
#define GUEST_KERNEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include <pvpmu/abi.h>

#include "x86.h"

#define KERNEL_MAX_VCPUS  64
#define KERNEL_STACK_SIZE 16384 /* per vCPU, aligned to its size */

/* VM exit statuses chosen by the kernel itself (guest_exit()). */
#define KERNEL_EXIT_BAD_BOOT 125 /* boot info magic or ABI mismatch */
#define KERNEL_EXIT_TRAP     128 /* + vector: unhandled exception */

/*
 * Per-vCPU state. It sits at the bottom of the vCPU's stack, so this_cpu()
 * is one AND of RSP. (Issue 4 moves it behind GS once ring 3 exists.)
 */
struct cpu {
	unsigned int id; /* vCPU index from the VMM (RDI at _start) */
	unsigned int pad0;
	const struct pvpmu_boot_info *bi;
};

static inline struct cpu *this_cpu(void)
{
	return (struct cpu *)(read_rsp() & ~(uint64_t)(KERNEL_STACK_SIZE - 1));
}

/* The boot info of the VM; valid once guest_main() runs on any vCPU. */
extern const struct pvpmu_boot_info *kernel_boot_info;

/*
 * Entry point of the image, provided by each guest program. Called once on
 * every vCPU (vcpu = 0 .. bi->nr_vcpus-1) after the kernel is set up; the
 * vCPUs run concurrently. Returning halts the vCPU.
 */
void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi);

/* Called by start.S only. */
void kernel_main(unsigned int vcpu, const struct pvpmu_boot_info *bi);

/*
 * End the whole VM with exit status (status) (0..255) through
 * PVPMU_PORT_EXIT. Does not return; if the VMM ignores the port the vCPU
 * halts.
 */
noreturn void guest_exit(int status);

/* Halt this vCPU for good (cli; hlt). */
noreturn void guest_halt(void);

/* Identity-mapped guest: a kernel pointer is its guest-physical address. */
static inline uint32_t virt_to_gpa(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

/*
 * Spinlocks. (owner) is the holder's vCPU id + 1 so that the trap handler
 * can break a lock its own vCPU held when it faulted.
 */
struct spinlock {
	volatile uint32_t owner;
};

void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);

/* Console: polled 16550 at PVPMU_PORT_COM1. */

/* Set up the UART (FIFO on). Called by kernel_main() on vCPU 0. */
void console_init(void);

/* Write (n) bytes of (s) atomically with respect to other console output. */
void console_write(const char *s, size_t n);

/*
 * printf to the console: %d %i %u %x %X %p %s %c %%, length modifiers
 * h l ll z, flags '0' and '-', a field width, and a precision for %s
 * ("%.*s" too). One call is written as one unit (at most 511 bytes), so
 * lines from different vCPUs never interleave. Returns the number of bytes
 * written.
 */
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* vsnprintf/snprintf with kprintf's format; always NUL-terminates. */
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
int ksnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* GDT: kernel and user segments; TSS slots are reserved for issue 4. */
#define GDT_KERNEL_CS 0x08 /* == PVPMU_BOOT_CS */
#define GDT_KERNEL_DS 0x10 /* == PVPMU_BOOT_DS */
#define GDT_USER_DS   0x1b /* 0x18 | RPL 3 */
#define GDT_USER_CS   0x23 /* 0x20 | RPL 3 */

/* Load the kernel GDT and reload CS, DS, ES and SS (every vCPU). */
void gdt_load(void);

/*
 * Traps.
 *
 * entry.S has one 16-byte stub per vector and the IDT; each pushes an error
 * code (0 if the CPU pushes none) and the vector, saves the GPRs and calls
 * trap_dispatch() with this frame. Returning from a handler resumes the
 * frame with iretq, including any change the handler made to it.
 */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error_code;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

/* Index of a saved register in a trap frame seen as uint64_t[]. */
#define TRAP_REG_RSI 10
#define TRAP_REG_RAX 14

typedef void (*trap_handler_fn_t)(struct trap_frame *tf);

/* Load the shared IDT (256 gates, built at assembly time) on this vCPU. */
void trap_load(void);

/*
 * Route vector (vector) to (fn) instead of the default handler (fixup, then
 * dump and guest_exit(KERNEL_EXIT_TRAP + vector)). Returns 0, or -1 if
 * (vector) is out of range. Takes effect on all vCPUs.
 */
int trap_register(unsigned int vector, trap_handler_fn_t fn);

/* C side of the stubs in entry.S. */
void trap_dispatch(struct trap_frame *tf);

/*
 * Exception table. An instruction that may fault is recorded with
 * EXTABLE_ENTRY(fault, resume, op) inside its inline asm: if it raises any
 * exception in ring 0, the handler writes EXTABLE_FAULT | vector (never 0,
 * even for #DE) into the saved register whose TRAP_REG_* index is the asm
 * operand named (op), and resumes at (resume) instead of dying. Clear that
 * register before the instruction, e.g.
 *   "xor %%esi, %%esi\n1: rdmsr\n2:\n" EXTABLE_ENTRY(1b, 2b, reg)
 *   : "=&S"(vec) ... : [reg] "i"(TRAP_REG_RSI)
 * (see guest_rdmsr_safe() in trap.c).
 */
#define EXTABLE_FAULT 0x100

struct extable_entry {
	uint64_t fault_rip;
	uint64_t resume_rip;
	uint64_t reg;
};

#define EXTABLE_ENTRY(fault, resume, op)                                       \
	".pushsection .extable, \"a\"\n\t"                                     \
	".balign 8\n\t"                                                        \
	".quad " #fault ", " #resume ", %c[" #op "]\n\t"                       \
	".popsection\n\t"

/*
 * RDMSR/WRMSR that survive a fault. Return 0 on success or the exception
 * vector (X86_VEC_GP for an MSR the VMM or KVM refuses); (*val) is only
 * written on success.
 */
int guest_rdmsr_safe(uint32_t msr, uint64_t *val);
int guest_wrmsr_safe(uint32_t msr, uint64_t val);

/* string.c: what the compiler may call even when freestanding. */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);

#endif /* GUEST_KERNEL_H */
