// SPDX-License-Identifier: MIT
/*
 * arch_amd.c: the amd-core and amd-v2 architectural PMU models from an
 * unmodified ring-0 guest (run with --pmu amd-core or amd-v2; the program
 * tells them apart by CPUID 0x80000022 and prints "arch_amd: model ..."),
 * after the checks of the KVM selftest pmu_counters_test: CPUID, reset
 * values, the 6 core counters and their K7 legacy aliases, #GP for MSRs
 * that do not exist and for reserved bits, 48-bit counters, exact counts
 * of hv events over a known loop, the PerfMonV2 global registers,
 * overflow status and PMI delivery (LVTPC not masked on AMD), and RDPMC.
 */
#include "arch_check.h"

#define K7_EVNTSEL0 0xc0010000U
#define K7_PERFCTR0 0xc0010004U
#define F15_CTL0    0xc0010200U
#define F15_CTL(i)  (F15_CTL0 + 2 * (i))
#define F15_CTR(i)  (F15_CTL0 + 2 * (i) + 1)
#define G_STATUS    0xc0000300U
#define G_CTL       0xc0000301U
#define G_CLR       0xc0000302U
#define G_SET       0xc0000303U
#define NR_GP       6
#define N_LOOP      100
#define EV_MSR_RD   PVPMU_EV_HV_MSR_READS
#define EV_MSR_WR   PVPMU_EV_HV_MSR_WRITES

static bool has_v2;

static void check_cpuid(void)
{
	struct cpuid_regs r;

	cpuid(0x80000001, &r);
	check_u64("perfctr_core", (r.ecx >> 23) & 1, 1);
	cpuid(0xa, &r);
	check_u64("no Intel leaf 0xa", r.eax, 0);
	cpuid(0x80000000, &r);
	if (r.eax >= 0x80000022) {
		cpuid(0x80000022, &r);
		has_v2 = r.eax & 1;
		if (has_v2)
			check_u64("NumPerfCtrCore", r.ebx & 0xf, NR_GP);
	}
	kprintf("arch_amd: model %s\n", has_v2 ? "amd-v2" : "amd-core");
}

static void check_reset(void)
{
	unsigned int i;

	for (i = 0; i < NR_GP; i++) {
		check_rd(F15_CTL(i), 0);
		check_rd(F15_CTR(i), 0);
	}
	if (has_v2) {
		check_rd(G_CTL, (1ULL << NR_GP) - 1); /* all enabled */
		check_rd(G_STATUS, 0);
	}
	check_u64("LVTPC reset (masked)", lvtpc_read(), LVT_MASKED);
}

static void check_counter_msrs(void)
{
	static const uint32_t intel[] = {0xc1,  0x186, 0x309,
					 0x345, 0x38f, 0x4c1};
	unsigned int i;

	for (i = 0; i < NR_GP; i++) {
		check_wr(F15_CTR(i), 0xffff, 0);
		check_rd(F15_CTR(i), 0xffff);
		wr(F15_CTR(i), 0);
	}
	/* The K7 MSRs are the first 4 counters under other names. */
	for (i = 0; i < 4; i++) {
		wr(K7_PERFCTR0 + i, 0x1230 + i);
		check_rd(F15_CTR(i), 0x1230 + i);
		wr(F15_CTL(i), 0x76 | EVSEL_OS); /* not enabled */
		check_rd(K7_EVNTSEL0 + i, 0x76 | EVSEL_OS);
		wr(F15_CTL(i), 0);
		wr(F15_CTR(i), 0);
	}
	/* Counters are 48 bits: writes keep the low 48. */
	wr(F15_CTR(0), ~0ULL);
	check_rd(F15_CTR(0), CTR_MASK);
	wr(F15_CTR(0), 0);
	/* What does not exist: #GP. */
	check_wr(F15_CTL(NR_GP), 0, X86_VEC_GP);
	check_wr(F15_CTR(NR_GP), 0, X86_VEC_GP);
	check_rd_gp(F15_CTR(NR_GP));
	for (i = 0; i < sizeof(intel) / sizeof(intel[0]); i++) {
		check_rd_gp(intel[i]);
		check_wr(intel[i], 0, X86_VEC_GP);
	}
	if (!has_v2) {
		for (i = G_STATUS; i <= G_SET; i++) {
			check_rd_gp(i);
			check_wr(i, 0, X86_VEC_GP);
		}
	}
}

static void check_reserved_bits(void)
{
	check_wr(F15_CTL(0), 1ULL << 21, X86_VEC_GP);
	check_wr(F15_CTL(0), 1ULL << 19, X86_VEC_GP);
	check_wr(F15_CTL(0), 1ULL << 40, X86_VEC_GP); /* HostOnly */
	check_wr(F15_CTL(0), 1ULL << 63, X86_VEC_GP);
	/* An extended event select is stored, but cannot be enabled. */
	check_wr(F15_CTL(0), (1ULL << 32) | EVSEL_OS, 0);
	check_rd(F15_CTL(0), (1ULL << 32) | EVSEL_OS);
	check_wr(F15_CTL(0), (1ULL << 32) | EVSEL_OS | EVSEL_EN, X86_VEC_GP);
	wr(F15_CTL(0), 0);
	if (!has_v2)
		return;
	check_wr(G_CTL, 1ULL << NR_GP, X86_VEC_GP);
	check_wr(G_STATUS, 0, X86_VEC_GP);
	/* STATUS_CLR takes any value, as KVM's (Linux writes ~0 to it). */
	check_wr(G_CLR, 1ULL << NR_GP, 0);
	check_wr(G_CLR, ~0ULL, 0);
	check_wr(G_SET, 1ULL << NR_GP, X86_VEC_GP);
	wr(G_SET, 0x5);
	check_rd(G_STATUS, 0x5);
	check_rd(G_SET, 0); /* write-only */
	check_rd(G_CLR, 0);
	wr(G_CLR, 0x4);
	check_rd(G_STATUS, 0x1);
	wr(G_CLR, 0x1);
	check_rd(G_STATUS, 0);
}

/* Exact counts of trapped MSR accesses (see arch_intel.c). */
static void check_counts(void)
{
	uint64_t v;

	wr(F15_CTL(1), EV_MSR_WR | EVSEL_OS | EVSEL_EN);
	wr(F15_CTL(0), EV_MSR_RD | EVSEL_OS | EVSEL_USR | EVSEL_EN);
	msr_reads(F15_CTL(2), N_LOOP);
	check_rd(F15_CTR(0), N_LOOP + 1);
	/* The legacy alias reads the same counter. */
	check_rd(K7_PERFCTR0, N_LOOP + 2);
	if (has_v2) {
		wr(G_CTL, 0x3e); /* counter 0 off globally */
		msr_reads(F15_CTL(2), N_LOOP);
		check_rd(F15_CTR(0), N_LOOP + 2);
		wr(G_CTL, 0x3f);
		msr_reads(F15_CTL(2), N_LOOP);
		check_rd(F15_CTR(0), 2 * N_LOOP + 3);
		/* CTL0 and two GLOBAL_CTL writes since CTL1 was enabled. */
		check_rd(F15_CTR(1), 3);
	} else {
		check_rd(F15_CTR(1), 1);
	}
	/* Neither USR nor OS: nothing counts. */
	wr(F15_CTL(0), EV_MSR_RD | EVSEL_EN);
	v = rd(F15_CTR(0));
	msr_reads(F15_CTL(2), N_LOOP);
	check_rd(F15_CTR(0), v);
	wr(F15_CTL(0), 0);
	wr(F15_CTL(1), 0);
}

static void check_overflow(void)
{
	lvtpc_write(ARCH_PMI_VECTOR);
	wr(F15_CTR(2), CTR_MASK - 4); /* wraps at the 5th event */
	wr(F15_CTL(2), EV_MSR_RD | EVSEL_OS | EVSEL_INT | EVSEL_EN);
	msr_reads(F15_CTL(3), 10);
	if (has_v2)
		check_rd(G_STATUS, 1ULL << 2); /* the 11th read */
	else
		(void)rd(F15_CTL(3));
	check_rd(F15_CTR(2), 7); /* -5 + 12 */
	check_u64("no PMI with IF=0", arch_pmis, 0);
	irq_window();
	check_u64("PMI delivered", arch_pmis, 1);
	check_u64("LVTPC not masked on PMI (AMD)", lvtpc_read(),
		  ARCH_PMI_VECTOR);
	/* Not masked: the next overflow interrupts again. */
	wr(F15_CTR(2), CTR_MASK);
	msr_reads(F15_CTL(3), 2);
	irq_window();
	check_u64("second PMI", arch_pmis, 2);
	/* A pending PMI wakes `sti; hlt` (the idle loop). */
	wr(F15_CTR(2), CTR_MASK);
	msr_reads(F15_CTL(3), 2);
	kernel_idle();
	check_u64("PMI wakes HLT", arch_pmis, 3);
	if (has_v2)
		wr(G_CLR, 1ULL << 2);
	/* Masked by the guest: status only. */
	lvtpc_write(ARCH_PMI_VECTOR | LVT_MASKED);
	wr(F15_CTR(2), CTR_MASK);
	msr_reads(F15_CTL(3), 2);
	irq_window();
	check_u64("no PMI while masked", arch_pmis, 3);
	if (has_v2) {
		check_rd(G_STATUS, 1ULL << 2);
		wr(G_CLR, 1ULL << 2);
	}
	/* NMI delivery mode: taken even with IF=0. */
	lvtpc_write(LVT_DM_NMI);
	wr(F15_CTR(2), CTR_MASK);
	msr_reads(F15_CTL(3), 3);
	check_u64("NMI delivered", arch_nmis, 1);
	wr(F15_CTL(2), 0);
	if (has_v2)
		wr(G_CLR, 1ULL << 2);
}

/*
 * Sampling as a PMU driver does it (see arch_intel.c): the handler
 * acknowledges PerfCntrGlobalStatus (amd-v2) and re-arms the counter at
 * -PERIOD; LVTPC stays unmasked on AMD.
 */
#define SMPL_PERIOD 10
#define SMPL_N      200

static volatile uint64_t smpl_status;

static void smpl_handler(void)
{
	uint64_t st;

	if (has_v2) {
		st = rdmsr(G_STATUS);
		smpl_status |= st;
		wrmsr(G_CLR, st);
	}
	wrmsr(F15_CTR(5), CTR_MASK + 1 - SMPL_PERIOD);
	arch_pmis++;
}

static void check_sampling(void)
{
	unsigned int before = arch_pmis;

	kernel_set_notify_handler(ARCH_PMI_VECTOR, smpl_handler);
	lvtpc_write(ARCH_PMI_VECTOR);
	wr(F15_CTR(5), CTR_MASK + 1 - SMPL_PERIOD);
	wr(F15_CTL(5), EV_PIO | EVSEL_OS | EVSEL_INT | EVSEL_EN);
	pio_loop_irq_on(SMPL_N);
	wr(F15_CTL(5), 0);
	check_u64("sampling PMIs", arch_pmis - before, SMPL_N / SMPL_PERIOD);
	check_u64("sampling status", smpl_status, has_v2 ? 1ULL << 5 : 0);
	check_rd(F15_CTR(5), CTR_MASK + 1 - SMPL_PERIOD);
	kernel_set_notify_handler(ARCH_PMI_VECTOR, pmi_handler);
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu != 0)
		return;
	arch_setup("arch_amd");
	check_cpuid();
	check_reset();
	check_counter_msrs();
	check_reserved_bits();
	check_counts();
	check_overflow();
	check_sampling();
	check_rdpmc_idle();
	arch_done();
}
