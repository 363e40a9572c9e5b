/* SPDX-License-Identifier: MIT */
/*
 * arch_check.h: checks shared by the architectural PMU guest programs
 * (arch_*.c), in the spirit of the KVM selftest pmu_counters_test: each
 * check prints one line ("<prog>: FAIL ..." on failure) and counts
 * failures; the program prints "<prog>: ok, N checks" and exits 0, or
 * exits 1.
 */
#ifndef ARCH_CHECK_H
#define ARCH_CHECK_H

#include "kernel.h"

#include <stdbool.h>

#define LAPIC_LVTPC     0xfee00340UL
#define LVT_MASKED      (1U << 16)
#define LVT_DM_NMI      (4U << 8)
#define ARCH_PMI_VECTOR 0xf1
#define X86_VEC_NMI     2

#define EVSEL_USR PVPMU_EVSEL_USR
#define EVSEL_OS  PVPMU_EVSEL_OS
#define EVSEL_INT PVPMU_EVSEL_INT
#define EVSEL_EN  PVPMU_EVSEL_EN

#define CTR_MASK ((1ULL << 48) - 1)
#define EV_PIO   PVPMU_EV_HV_PIO

static const char *arch_prog;
static unsigned int arch_checks, arch_failures;
static volatile unsigned int arch_pmis, arch_nmis;

static inline void check_u64(const char *what, uint64_t got, uint64_t want)
{
	arch_checks++;
	if (got == want)
		return;
	arch_failures++;
	kprintf("%s: FAIL %s: got 0x%llx, want 0x%llx\n", arch_prog, what,
		(unsigned long long)got, (unsigned long long)want);
}

/* RDMSR that must succeed and return (want). */
static inline void check_rd(uint32_t msr, uint64_t want)
{
	uint64_t v = 0;
	int vec    = guest_rdmsr_safe(msr, &v);
	char what[48];

	ksnprintf(what, sizeof(what), "rdmsr 0x%x vector", msr);
	check_u64(what, (uint64_t)vec, 0);
	ksnprintf(what, sizeof(what), "rdmsr 0x%x", msr);
	check_u64(what, v, want);
}

/* WRMSR whose fault vector must be (want_vec) (0 or X86_VEC_GP). */
static inline void check_wr(uint32_t msr, uint64_t val, int want_vec)
{
	char what[64];

	ksnprintf(what, sizeof(what), "wrmsr 0x%x <- 0x%llx vector", msr,
		  (unsigned long long)val);
	check_u64(what, (uint64_t)guest_wrmsr_safe(msr, val),
		  (uint64_t)want_vec);
}

/* RDMSR that must #GP. */
static inline void check_rd_gp(uint32_t msr)
{
	uint64_t v;
	char what[48];

	ksnprintf(what, sizeof(what), "rdmsr 0x%x vector", msr);
	check_u64(what, (uint64_t)guest_rdmsr_safe(msr, &v), X86_VEC_GP);
}

static inline uint64_t rd(uint32_t msr)
{
	uint64_t v = 0;

	if (guest_rdmsr_safe(msr, &v))
		check_u64("unexpected rdmsr fault", msr, 0);
	return v;
}

static inline void wr(uint32_t msr, uint64_t val)
{
	if (guest_wrmsr_safe(msr, val))
		check_u64("unexpected wrmsr fault", msr, 0);
}

/* RDPMC with a fault vector (0 = no fault), like guest_rdmsr_safe(). */
static inline int rdpmc_safe(uint32_t idx, uint64_t *val)
{
	uint64_t vec;
	uint32_t lo, hi;

	__asm__ __volatile__("xor %%esi, %%esi\n"
			     "1:\trdpmc\n"
			     "2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
			     : "=&S"(vec), "=a"(lo), "=d"(hi)
			     : "c"(idx), [reg] "i"(TRAP_REG_RSI)
			     : "memory");
	if (vec)
		return (int)(vec & 0xff);
	*val = ((uint64_t)hi << 32) | lo;
	return 0;
}

/*
 * RDPMC never reaches vpmu (KVM does not forward it) and must not reveal
 * a count: vpmu switches KVM's own vPMU off (KVM_PMU_CAP_DISABLE), so
 * RDPMC takes #GP. Host kernels before Linux 6.6 still give an AMD guest
 * KVM's counters after that switch (fixed by "KVM: x86/pmu: Zero out PMU
 * metadata on AMD if PMU is disabled"): RDPMC then reads KVM's counter,
 * which nothing ever programs (every PMU MSR is vpmu's), so 0. Either
 * answer passes; any other value fails.
 */
static inline void check_rdpmc_idle(void)
{
	uint64_t v = ~0ULL;
	int vec    = rdpmc_safe(0, &v);
	bool idle  = vec == 0 && v == 0;

	if (idle)
		kprintf("%s: rdpmc(0) = 0 without #GP: the host KVM keeps "
			"its idle in-kernel counters (AMD, Linux < 6.6)\n",
			arch_prog);
	check_u64("rdpmc(0): #GP, or 0 from KVM's idle counter",
		  idle ? X86_VEC_GP : (vec ? (uint64_t)vec : v), X86_VEC_GP);
}

/* (n) trapped RDMSRs of (msr): the exact hv_msr_reads payload. */
static inline void msr_reads(uint32_t msr, unsigned int n)
{
	while (n--)
		(void)rdmsr(msr);
}

static inline uint32_t lvtpc_read(void)
{
	return *(volatile uint32_t *)LAPIC_LVTPC;
}

static inline void lvtpc_write(uint32_t v)
{
	*(volatile uint32_t *)LAPIC_LVTPC = v;
}

static inline void pmi_handler(void)
{
	arch_pmis++;
}

static inline void nmi_handler(struct trap_frame *tf)
{
	(void)tf;
	arch_nmis++;
}

/*
 * Open an interrupt window in ring 0: a pending PMI is taken here. The
 * VMM injects at an exit with IF=1 (PVM emulates ring 0 and may not stop
 * for a bare window), so the window holds a bare PIO exit (the null port:
 * not an MSR access, so no hv MSR event moves).
 */
static inline void irq_window(void)
{
	__asm__ __volatile__("sti\n\tnop\n\toutb %%al, %%dx\n\tnop\n\tcli"
			     :
			     : "a"(0), "d"(PVPMU_PORT_NULL)
			     : "memory");
}

/* (n) PIO exits to the null port with interrupts on: PMIs come in. */
static inline void pio_loop_irq_on(unsigned int n)
{
	__asm__ __volatile__("sti" : : : "memory");
	while (n--)
		outb(PVPMU_PORT_NULL, 0);
	__asm__ __volatile__("cli" : : : "memory");
}

static inline void arch_setup(const char *prog)
{
	arch_prog = prog;
	kernel_set_notify_handler(ARCH_PMI_VECTOR, pmi_handler);
	trap_register(X86_VEC_NMI, nmi_handler);
}

static inline noreturn void arch_done(void)
{
	if (arch_failures) {
		kprintf("%s: %u of %u checks failed\n", arch_prog,
			arch_failures, arch_checks);
		guest_exit(1);
	}
	kprintf("%s: ok, %u checks\n", arch_prog, arch_checks);
	guest_exit(0);
}

#endif /* ARCH_CHECK_H */
