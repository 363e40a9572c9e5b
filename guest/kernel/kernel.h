/* SPDX-License-Identifier: MIT */
/*
 * kernel.h: the API of the minimal vpmu guest kernel (ring 0).
 *
 * The kernel is a static library linked into every guest image. The VMM
 * starts each vCPU at _start in 64-bit ring 0 (see pvpmu/abi.h, section 1);
 * start.S puts it on its own stack and calls kernel_main(), which sets up the
 * per-vCPU state (GDT and TSS, IDT with the int3 syscall gate, the null
 * page guard) and calls the image's
 * guest_main(). An image either
 *   - defines guest_main() and runs in ring 0 (the older test images), or
 *   - defines ring-3 programs (user_main() or user_program(), see
 *     "Programs" below) and lets the kernel's default guest_main() start
 *     them, or
 *   - defines guest_main() for ring-0 set-up (a notification handler, say)
 *     that ends with kernel_user_run(vcpu).
 * When guest_main() returns, the vCPU halts with interrupts off; the VMM ends
 * the VM with status 0 once every vCPU has halted.
 *
 * Ring-0 code is emulated on the PVM development hosts (~1 us per
 * instruction) and every port access is an exit (~7 us): keep ring-0 paths
 * short and do the work in ring 3, which runs natively.
 */
#ifndef GUEST_KERNEL_H
#define GUEST_KERNEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#include <pvpmu/abi.h>

#include "extable.h"
#include "user.h"
#include "x86.h"

#define KERNEL_MAX_VCPUS  64
#define KERNEL_STACK_SIZE 16384 /* per vCPU, aligned to its size */

/* VM exit statuses chosen by the kernel itself (guest_exit()). */
#define KERNEL_EXIT_BAD_BOOT 125 /* boot info magic or ABI mismatch */
#define KERNEL_EXIT_TRAP     128 /* + vector: unhandled exception */

/*
 * Per-vCPU state. It sits at the bottom of the vCPU's kernel stack, so
 * this_cpu() is one AND of RSP; this holds in every ring-0 context (events
 * from ring 3, syscalls included, switch to TSS.RSP0, the top of this
 * stack).
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

/*
 * Wait for an interrupt in ring 0: `sti; hlt; cli`. Returns, with
 * interrupts off again, after one interrupt has been handled (STI's
 * one-instruction shadow means none is taken before HLT starts). The VMM
 * ends the VM with status 0 once every vCPU is halted, interrupts enabled
 * or not; today that includes a vCPU whose notification is already pending
 * when the last other vCPU halts (reported to the VMM side), so keep another
 * vCPU busy if the VM must outlive the wait.
 */
void kernel_idle(void);

/* Programs (ring 3): user_main() and user_program(), see user.h. */

/*
 * Enter this vCPU's program in ring 3 (iretq with IF=1, IOPL 0, on the
 * vCPU's user stack) with the kernel stack reset to its top. Call it
 * last in a guest_main() that needs ring-0 set-up first; the kernel's weak
 * default guest_main() calls only this. Does not return.
 */
noreturn void kernel_user_run(unsigned int vcpu);

/* Nanoseconds since boot (what the time syscall returns). */
uint64_t kernel_time_ns(void);

/*
 * Notification vector.
 *
 * The VMM injects the vector registered with PVPMU_HC_SET_VECTOR (no local
 * APIC is emulated, so no EOI is needed). kernel_set_notify_handler() points
 * IDT gate (vector) (32..255) at a short entry path that saves the
 * caller-saved registers, calls (fn) on the current kernel stack (RSP0 when
 * the interrupt came from ring 3; this_cpu() works) with interrupts off,
 * and returns with iretq: 21 ring-0 instructions plus (fn). (fn) NULL
 * selects the default handler, which counts notifications per vCPU in
 * user_notify_counts[] (user.h) for ring 3 to poll; the kernel installs it
 * at KERNEL_NOTIFY_VECTOR at boot. One vector at a time: a new vector
 * returns the previous one to its default gate (unhandled: fatal).
 * Applies to all vCPUs. Registering the vector with the VMM is separate
 * (the hypercall, from ring 0 or ring 3). Returns 0, or -1 for a bad
 * vector.
 */
#define KERNEL_NOTIFY_VECTOR 0xf0

typedef void (*kernel_notify_fn_t)(void);

int kernel_set_notify_handler(unsigned int vector, kernel_notify_fn_t fn);

/* Identity-mapped guest: a kernel pointer is its guest-physical address. */
static inline uint32_t virt_to_gpa(const void *p)
{
	return (uint32_t)(uintptr_t)p;
}

/*
 * The kernel's glue for the paravirtual driver core (pvpmu_glue.c): this
 * identity translation and the core's direct doorbell. kernel_main()
 * registers it (pvpmu_os_register()) on vCPU 0 before any guest_main().
 */
struct pvpmu_drv;
extern const struct pvpmu_drv kernel_pvpmu_drv;

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

/* Up to (n) bytes the UART has received into (s), without waiting. */
size_t console_read(char *s, size_t n);

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

/*
 * kvsnprintf() into (buf) of (size) > 0 bytes; returns the bytes stored
 * (the output cut to size - 1): what kprintf() and uprintf() write.
 */
size_t kvsnprintf_cut(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * GDT: kernel and user segments, then one 64-bit TSS descriptor per vCPU.
 * The layout suits STAR (user DS = user CS - 8).
 */
#define GDT_KERNEL_CS 0x08 /* == PVPMU_BOOT_CS */
#define GDT_KERNEL_DS 0x10 /* == PVPMU_BOOT_DS */
#define GDT_USER_DS   0x1b /* 0x18 | RPL 3 */
#define GDT_USER_CS   0x23 /* 0x20 | RPL 3 */

/* Load the kernel GDT and reload CS, DS, ES and SS (every vCPU). */
void gdt_load(void);

/*
 * Set up this vCPU's TSS (RSP0 = (rsp0); an I/O permission bitmap that
 * grants exactly the hypercall doorbell ports) and load it with ltr. Once,
 * after gdt_load().
 */
void tss_load(unsigned int vcpu, uint64_t rsp0);

/*
 * The `syscall` MSRs of this vCPU (syscall.c): a stray `syscall` lands in
 * a #UD (see user.h). Once per vCPU.
 */
void syscall_init_cpu(void);

/* The clock and the syscall gate (syscall.c); vCPU 0, once, before others. */
void syscall_init(const struct pvpmu_boot_info *bi);

/*
 * Unmap page 0 (GPA 0..4095) so that NULL dereferences fault in both
 * rings: vCPU 0 splits the first 2 MiB page of the VMM's identity map
 * (paging.c); every vCPU then calls paging_flush().
 */
void paging_guard_null(void);
void paging_flush(void);

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

typedef void (*trap_handler_fn_t)(struct trap_frame *tf);

/* Load the shared IDT (256 gates, built at assembly time) on this vCPU. */
void trap_load(void);

/*
 * Route vector (vector) to (fn) instead of the default handler (fixup, then
 * dump and guest_exit(KERNEL_EXIT_TRAP + vector)). Returns 0, or -1 if
 * (vector) is out of range. Takes effect on all vCPUs.
 */
int trap_register(unsigned int vector, trap_handler_fn_t fn);

/*
 * Point IDT gate (vector) at (addr) as an interrupt gate of privilege
 * (dpl) (3: `int` from ring 3 allowed), or back at its default stub when
 * (addr) is 0. All vCPUs share the IDT; the address must be below 4 GiB.
 */
void trap_set_gate(unsigned int vector, uint64_t addr, unsigned int dpl);

/* C side of the stubs in entry.S. */
void trap_dispatch(struct trap_frame *tf);

/* Exception table: see extable.h. */

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
