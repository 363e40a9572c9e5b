/* SPDX-License-Identifier: MIT */
/*
 * x86.h: inline wrappers of the x86-64 instructions guest code needs (port
 * I/O, CPUID, TSC, MSRs, descriptor tables, control registers).
 *
 * Freestanding and free of kernel state: usable by the minimal kernel, the
 * driver core and guest test programs alike. The faulting-safe MSR accessors
 * need the kernel's exception table and live in kernel.h.
 */
#ifndef GUEST_X86_H
#define GUEST_X86_H

#include <stddef.h>
#include <stdint.h>

/* MSRs (Intel SDM vol. 4, chapter 2). */
#define MSR_IA32_PMC0             0x000000c1U
#define MSR_IA32_PERFEVTSEL0      0x00000186U
#define MSR_IA32_MISC_ENABLE      0x000001a0U
#define MSR_IA32_PERF_GLOBAL_CTRL 0x0000038fU
#define MSR_EFER                  0xc0000080U
#define MSR_STAR                  0xc0000081U
#define MSR_LSTAR                 0xc0000082U
#define MSR_SFMASK                0xc0000084U
#define MSR_FS_BASE               0xc0000100U
#define MSR_GS_BASE               0xc0000101U
#define MSR_KERNEL_GS_BASE        0xc0000102U

#define X86_RFLAGS_TF       (1UL << 8)
#define X86_RFLAGS_IF       (1UL << 9)
#define X86_RFLAGS_DF       (1UL << 10)
#define X86_RFLAGS_AC       (1UL << 18)
#define X86_RFLAGS_RESERVED (1UL << 1) /* always 1 */

/* Exception vectors (SDM vol. 3, table 6-1). */
#define X86_VEC_DE 0
#define X86_VEC_DB 1
#define X86_VEC_BP 3
#define X86_VEC_UD 6
#define X86_VEC_DF 8
#define X86_VEC_GP 13
#define X86_VEC_PF 14

/* The operand of LGDT/LIDT. */
struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline void outb(uint16_t port, uint8_t val)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(val), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t val)
{
	__asm__ __volatile__("outw %0, %1" : : "a"(val), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t val)
{
	__asm__ __volatile__("outl %0, %1" : : "a"(val), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t val;

	__asm__ __volatile__("inb %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t val;

	__asm__ __volatile__("inl %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

/*
 * Write (n) bytes from (buf) to (port) with one `rep outsb`. KVM still exits
 * once per byte (it batches string input, not output), but the loop runs
 * in the CPU/emulator rather than as guest instructions.
 */
static inline void outsb(uint16_t port, const void *buf, size_t n)
{
	__asm__ __volatile__("rep outsb"
			     : "+S"(buf), "+c"(n)
			     : "d"(port)
			     : "memory");
}

/* CPUID leaf (leaf), sub-leaf (sub). */
static inline void cpuid_count(uint32_t leaf, uint32_t sub,
			       struct cpuid_regs *r)
{
	__asm__ __volatile__("cpuid"
			     : "=a"(r->eax), "=b"(r->ebx), "=c"(r->ecx),
			       "=d"(r->edx)
			     : "a"(leaf), "c"(sub));
}

static inline void cpuid(uint32_t leaf, struct cpuid_regs *r)
{
	cpuid_count(leaf, 0, r);
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* RDTSC that does not start before earlier instructions complete. */
static inline uint64_t rdtsc_ordered(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* Raw RDMSR/WRMSR: #GP on a bad MSR is fatal. See guest_rdmsr_safe(). */
static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t val)
{
	__asm__ __volatile__("wrmsr"
			     :
			     : "c"(msr), "a"((uint32_t)val),
			       "d"((uint32_t)(val >> 32))
			     : "memory");
}

static inline void cpu_relax(void)
{
	__asm__ __volatile__("pause" : : : "memory");
}

static inline void lidt(const struct desc_ptr *p)
{
	__asm__ __volatile__("lidt %0" : : "m"(*p));
}

static inline void lgdt(const struct desc_ptr *p)
{
	__asm__ __volatile__("lgdt %0" : : "m"(*p));
}

static inline uint64_t read_cr0(void)
{
	uint64_t v;

	__asm__ __volatile__("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;

	__asm__ __volatile__("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;

	__asm__ __volatile__("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	__asm__ __volatile__("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline uint64_t read_cr4(void)
{
	uint64_t v;

	__asm__ __volatile__("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_rsp(void)
{
	uint64_t v;

	__asm__ __volatile__("mov %%rsp, %0" : "=r"(v));
	return v;
}

static inline void cli(void)
{
	__asm__ __volatile__("cli" : : : "memory");
}

static inline void hlt(void)
{
	__asm__ __volatile__("hlt" : : : "memory");
}

/* Load the task register with selector (sel). */
static inline void ltr(uint16_t sel)
{
	__asm__ __volatile__("ltr %0" : : "r"(sel) : "memory");
}

#endif /* GUEST_X86_H */
