// SPDX-License-Identifier: MIT
/*
 * arch_intel.c: the intel-v2 architectural PMU model from an unmodified
 * ring-0 guest (run with --pmu intel-v2), after the checks of the KVM
 * selftest pmu_counters_test: CPUID leaf 0xA, reset values, which counter
 * MSRs exist (#GP for the others), reserved bits, legacy sign extension
 * and full-width writes, exact counts of hv events over a known loop, the
 * GLOBAL_CTRL gate, overflow status and PMI delivery (fixed vector and
 * NMI, LVTPC masked on delivery), and RDPMC.
 */
#include "arch_check.h"

#define PMC0       0xc1U
#define EVTSEL0    0x186U
#define FIXED_CTR0 0x309U
#define PERF_CAPS  0x345U
#define FIXED_CTRL 0x38dU
#define GLB_STATUS 0x38eU
#define GLB_CTRL   0x38fU
#define GLB_OVF    0x390U
#define A_PMC0     0x4c1U
#define NR_GP      4
#define NR_FIXED   3
#define N_LOOP     100
#define EV_MSR_RD  PVPMU_EV_HV_MSR_READS
#define EV_MSR_WR  PVPMU_EV_HV_MSR_WRITES
#define FW_WRITE   (1ULL << 13)

/* Architectural events, CPUID.0AH:EBX bit order. */
static const uint16_t arch_events[] = {0x003c, 0x00c0, 0x013c, 0x4f2e,
				       0x412e, 0x00c4, 0x00c5};

static void check_cpuid(void)
{
	struct cpuid_regs r;
	unsigned int k;

	cpuid(1, &r);
	check_u64("CPUID.1:ECX.PDCM", (r.ecx >> 15) & 1, 1);
	cpuid(0xa, &r);
	kprintf("arch_intel: cpuid 0xa eax 0x%x ebx 0x%x edx 0x%x\n", r.eax,
		r.ebx, r.edx);
	check_u64("version", r.eax & 0xff, 2);
	check_u64("nr_gp", (r.eax >> 8) & 0xff, NR_GP);
	check_u64("gp width", (r.eax >> 16) & 0xff, 48);
	check_u64("ebx length", r.eax >> 24, 7);
	check_u64("nr_fixed", r.edx & 0x1f, NR_FIXED);
	check_u64("fixed width", (r.edx >> 5) & 0xff, 48);
	check_u64("ref cycles available", (r.ebx >> 2) & 1, 0);
	/* EBX is the truth: an available event enables, others #GP. */
	for (k = 0; k < sizeof(arch_events) / sizeof(arch_events[0]); k++) {
		check_wr(EVTSEL0, arch_events[k] | EVSEL_OS | EVSEL_EN,
			 (r.ebx >> k) & 1 ? X86_VEC_GP : 0);
		wr(EVTSEL0, 0);
	}
	/* FIXED_CTR0/1 (instructions, core cycles) count iff available. */
	check_wr(FIXED_CTRL, 0x1, (r.ebx >> 1) & 1 ? X86_VEC_GP : 0);
	check_wr(FIXED_CTRL, 0x10, (r.ebx >> 0) & 1 ? X86_VEC_GP : 0);
	wr(FIXED_CTRL, 0);
	cpuid(0x80000001, &r);
	check_u64("no AMD perfctr_core", (r.ecx >> 23) & 1, 0);
}

static void check_reset(void)
{
	unsigned int i;

	check_rd(GLB_CTRL, (1ULL << NR_GP) - 1); /* SDM: bits n-1:0 set */
	check_rd(GLB_STATUS, 0);
	check_rd(FIXED_CTRL, 0);
	check_rd(PERF_CAPS, FW_WRITE);
	for (i = 0; i < NR_GP; i++) {
		check_rd(EVTSEL0 + i, 0);
		check_rd(PMC0 + i, 0);
	}
	check_u64("LVTPC reset (masked)", lvtpc_read(), LVT_MASKED);
}

/* selftest guest_rd_wr_counters(): 8 possible GP, 3 fixed. */
static void check_counter_msrs(void)
{
	unsigned int i;

	for (i = 0; i < 8; i++) {
		int gp = i < NR_GP ? 0 : X86_VEC_GP;

		check_wr(PMC0 + i, 0xffff, gp);
		check_wr(A_PMC0 + i, 0xffff, gp);
		check_wr(EVTSEL0 + i, 0, gp);
		if (gp) {
			check_rd_gp(PMC0 + i);
			check_rd_gp(A_PMC0 + i);
			check_rd_gp(EVTSEL0 + i);
		} else {
			check_rd(PMC0 + i, 0xffff);
			check_rd(A_PMC0 + i, 0xffff);
		}
		if (!gp)
			wr(PMC0 + i, 0);
	}
	for (i = 0; i < NR_FIXED; i++) {
		check_wr(FIXED_CTR0 + i, 0xffff, 0);
		check_rd(FIXED_CTR0 + i, 0xffff);
		wr(FIXED_CTR0 + i, 0);
	}
	/* Counters beyond the enumerated ones: ctrl and global bits #GP. */
	check_wr(FIXED_CTRL, 0x1ULL << (4 * NR_FIXED), X86_VEC_GP);
	check_wr(GLB_CTRL, 1ULL << (32 + NR_FIXED), X86_VEC_GP);
	check_wr(GLB_CTRL, 1ULL << NR_GP, X86_VEC_GP);
}

static void check_reserved_bits(void)
{
	check_wr(EVTSEL0, 1ULL << 32, X86_VEC_GP);
	check_wr(EVTSEL0, 1ULL << 21, X86_VEC_GP); /* AnyThread: v3+ */
	check_wr(FIXED_CTRL, 0x4, X86_VEC_GP);     /* AnyThread */
	check_wr(GLB_OVF, 1ULL << NR_GP, X86_VEC_GP);
	check_wr(GLB_OVF, 3ULL << 62, 0); /* OvfBuf, CondChgd */
	check_wr(GLB_STATUS, 0, X86_VEC_GP);
	check_wr(PERF_CAPS, 0, X86_VEC_GP);
	check_wr(A_PMC0, 1ULL << 48, X86_VEC_GP);
	check_wr(FIXED_CTR0, ~0ULL, 0); /* fixed counters keep 48 bits */
	check_rd(FIXED_CTR0, CTR_MASK);
	wr(FIXED_CTR0, 0);
}

/* SDM 20.2.5: legacy PMC writes sign-extend bit 31; A_PMC is 48 bits. */
static void check_writes(void)
{
	wr(PMC0, 0x80000000ULL);
	check_rd(PMC0, 0xffff80000000ULL);
	wr(PMC0, 0x1234567f0000ffffULL);
	check_rd(PMC0, 0xffff);
	wr(PMC0, 0xfffffffe);
	check_rd(A_PMC0, 0xfffffffffffeULL);
	wr(A_PMC0, 0x123456789abcULL);
	check_rd(PMC0, 0x123456789abcULL);
	check_rd(A_PMC0, 0x123456789abcULL);
	wr(PMC0, 0);
}

/*
 * Exact counts of trapped MSR reads: counting starts after the enabling
 * WRMSR's exit; every RDMSR exit, the counter's own read included, is
 * counted before it is served.
 */
static void check_counts(void)
{
	uint64_t v;

	wr(PMC0, 0);
	wr(PMC0 + 1, 0);
	wr(EVTSEL0 + 1, EV_MSR_WR | EVSEL_OS | EVSEL_EN);
	wr(EVTSEL0, EV_MSR_RD | EVSEL_OS | EVSEL_USR | EVSEL_EN);
	msr_reads(GLB_STATUS, N_LOOP);
	check_rd(PMC0, N_LOOP + 1);
	/* GLOBAL_CTRL gates the counter; the register keeps its value. */
	wr(GLB_CTRL, 0x2);
	msr_reads(GLB_STATUS, N_LOOP);
	check_rd(PMC0, N_LOOP + 1);
	check_rd(EVTSEL0, EV_MSR_RD | EVSEL_OS | EVSEL_USR | EVSEL_EN);
	wr(GLB_CTRL, 0xf);
	msr_reads(GLB_STATUS, N_LOOP);
	check_rd(PMC0, 2 * N_LOOP + 2);
	/* PMC1 counted the WRMSRs after its own enable: EVTSEL0, 2 GLOBAL_CTRL.
	 */
	check_rd(PMC0 + 1, 3);
	/* Neither USR nor OS: nothing counts (SDM 20.2.1.1). */
	wr(EVTSEL0, EV_MSR_RD | EVSEL_EN);
	v = rd(PMC0);
	msr_reads(GLB_STATUS, N_LOOP);
	check_rd(PMC0, v);
	wr(EVTSEL0, 0);
	wr(EVTSEL0 + 1, 0);
	/* FIXED_CTR2: reference cycles at the TSC rate (hv). */
	wr(FIXED_CTR0 + 2, 0);
	wr(FIXED_CTRL, 0x3ULL << 8);
	wr(GLB_CTRL, 0xf | (1ULL << 34));
	msr_reads(GLB_STATUS, 10);
	wr(GLB_CTRL, 0xf);
	v = rd(FIXED_CTR0 + 2);
	check_u64("FIXED_CTR2 counted", v != 0 && v < (1ULL << 40), 1);
	msr_reads(GLB_STATUS, 10);
	check_rd(FIXED_CTR0 + 2, v); /* stopped by GLOBAL_CTRL */
	wr(FIXED_CTRL, 0);
}

/* Overflow at the 48-bit wrap: status bit, PMI through LVTPC. */
static void check_overflow(void)
{
	uint32_t lvt;

	lvtpc_write(ARCH_PMI_VECTOR);
	check_u64("LVTPC", lvtpc_read(), ARCH_PMI_VECTOR);
	wr(A_PMC0, CTR_MASK - 4); /* wraps at the 5th event */
	wr(EVTSEL0, EV_MSR_RD | EVSEL_OS | EVSEL_INT | EVSEL_EN);
	msr_reads(GLB_CTRL, 10);
	check_rd(GLB_STATUS, 1); /* the 11th read */
	check_rd(PMC0, 7);       /* -5 + 12 */
	check_u64("no PMI with IF=0", arch_pmis, 0);
	irq_window();
	check_u64("PMI delivered", arch_pmis, 1);
	lvt = lvtpc_read();
	check_u64("LVTPC masked on PMI (Intel)", lvt,
		  ARCH_PMI_VECTOR | LVT_MASKED);
	/* Masked: a second overflow sets status but raises nothing. */
	wr(GLB_OVF, 1);
	check_rd(GLB_STATUS, 0);
	wr(A_PMC0, CTR_MASK);
	msr_reads(GLB_CTRL, 2);
	irq_window();
	check_u64("no PMI while masked", arch_pmis, 1);
	check_rd(GLB_STATUS, 1);
	/* INT clear: status only. */
	wr(GLB_OVF, 1);
	lvtpc_write(ARCH_PMI_VECTOR);
	wr(EVTSEL0, EV_MSR_RD | EVSEL_OS | EVSEL_EN);
	wr(A_PMC0, CTR_MASK);
	msr_reads(GLB_CTRL, 2);
	irq_window();
	check_u64("no PMI without INT", arch_pmis, 1);
	check_rd(GLB_STATUS, 1);
	wr(GLB_OVF, 1);
	/* NMI delivery mode: taken even with IF=0. */
	lvtpc_write(LVT_DM_NMI);
	wr(EVTSEL0, EV_MSR_RD | EVSEL_OS | EVSEL_INT | EVSEL_EN);
	wr(A_PMC0, CTR_MASK);
	msr_reads(GLB_CTRL, 3);
	check_u64("NMI delivered", arch_nmis, 1);
	check_u64("PMI count unchanged", arch_pmis, 1);
	check_rd(GLB_STATUS, 1);
	wr(EVTSEL0, 0);
	wr(GLB_OVF, 1);
}

/*
 * Sampling as a PMU driver does it: every PERIOD PIO exits the counter
 * wraps, the PMI comes in at the next entry (IF=1), and the handler
 * acknowledges GLOBAL_STATUS, re-arms the counter at -PERIOD and unmasks
 * LVTPC (Intel masks it on delivery). PMIs are exactly N / PERIOD.
 */
#define SMPL_PERIOD 10
#define SMPL_N      200

static volatile uint64_t smpl_status;

static void smpl_handler(void)
{
	uint64_t st = rdmsr(GLB_STATUS);

	smpl_status |= st;
	wrmsr(GLB_OVF, st);
	wrmsr(A_PMC0, CTR_MASK + 1 - SMPL_PERIOD);
	arch_pmis++;
	lvtpc_write(ARCH_PMI_VECTOR);
}

static void check_sampling(void)
{
	unsigned int before;

	kernel_set_notify_handler(ARCH_PMI_VECTOR, smpl_handler);
	lvtpc_write(ARCH_PMI_VECTOR);
	before = arch_pmis;
	wr(A_PMC0, CTR_MASK + 1 - SMPL_PERIOD);
	wr(EVTSEL0, EV_PIO | EVSEL_OS | EVSEL_INT | EVSEL_EN);
	pio_loop_irq_on(SMPL_N);
	wr(EVTSEL0, 0);
	check_u64("sampling PMIs", arch_pmis - before, SMPL_N / SMPL_PERIOD);
	check_u64("sampling status", smpl_status, 1);
	check_rd(PMC0, CTR_MASK + 1 - SMPL_PERIOD);
	check_rd(GLB_STATUS, 0);
	kernel_set_notify_handler(ARCH_PMI_VECTOR, pmi_handler);
}

/*
 * A time-based overflow: FIXED_CTR2 (TSC-rate reference cycles) 10^7
 * cycles before the wrap, NMI delivery, the guest spinning in ring 0
 * without exits: the VMM's deadline timer kicks the vCPU out at the
 * predicted overflow and the NMI follows.
 */
static void check_time_overflow(void)
{
	uint64_t t0, spin = 0;
	unsigned int nmis = arch_nmis;

	lvtpc_write(LVT_DM_NMI);
	wr(FIXED_CTR0 + 2, CTR_MASK - 10000000);
	wr(FIXED_CTRL, 0xbULL << 8); /* ctr2: OS, USR, PMI */
	wr(GLB_CTRL, 0xf | (1ULL << 34));
	t0 = rdtsc();
	while (arch_nmis == nmis && rdtsc() - t0 < 2000000000ULL)
		spin++;
	wr(GLB_CTRL, 0xf);
	wr(FIXED_CTRL, 0);
	check_u64("time-based overflow NMI", arch_nmis - nmis, 1);
	check_rd(GLB_STATUS, 1ULL << 34);
	wr(GLB_OVF, 1ULL << 34);
	kprintf("arch_intel: FIXED_CTR2 overflow NMI after %llu spins\n",
		(unsigned long long)spin);
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu != 0)
		return;
	arch_setup("arch_intel");
	check_reset();
	check_cpuid();
	check_counter_msrs();
	check_reserved_bits();
	check_writes();
	check_counts();
	check_overflow();
	check_sampling();
	check_time_overflow();
	check_rdpmc_idle();
	arch_done();
}
