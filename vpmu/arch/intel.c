// SPDX-License-Identifier: MIT
/*
 * intel.c: Intel architectural performance monitoring version 2 (SDM vol.
 * 3B chapter 20, vol. 4 chapter 2) as vpmu_intel_v2_ops.
 *
 * 4 general-purpose counters, 3 fixed counters, 48 bits wide. Reset
 * values: every register 0 but GLOBAL_CTRL, whose GP enable bits are set
 * ("Sets bits n-1:0 and clears the upper bits", as KVM emulates it).
 * #GP rules, as KVM's vPMU and its selftests (pmu_counters_test) expect:
 *  - PERFEVTSELx: bits 63:32 and 21 (AnyThread, v3+) are reserved.
 *  - PMCx (0xc1): a write takes the low 32 bits sign-extended to 48 (the
 *    legacy behaviour); A_PMCx (0x4c1, only with PERF_CAPABILITIES
 *    FW_WRITE) takes all 48 bits and #GPs on bits above.
 *  - A counter that does not exist #GPs, except PERFCTR0/1 (0xc1/0xc2),
 *    whose writes KVM drops and which read 0.
 *  - FIXED_CTR_CTRL: only the OS, USR and PMI bits of existing fixed
 *    counters; GLOBAL_CTRL: existing counters only; GLOBAL_OVF_CTRL: those
 *    bits plus OvfBuf/CondChgd (62, 63); GLOBAL_STATUS and
 *    PERF_CAPABILITIES are read-only.
 *  - Enabling an event no backend of the host can count #GPs (DESIGN 5:
 *    refused at MSR-write time, never silent zeros).
 * Fixed counters: FIXED_CTR0 counts instructions and FIXED_CTR1 core
 * cycles through host hardware events (perf, guest-only); FIXED_CTR2
 * counts reference cycles at the TSC rate, exactly, from the hv backend.
 * CPUID.0AH:EBX marks the architectural events the host cannot count.
 */
#include "arch_priv.h"
#include "vpmu_common.h"

#include <errno.h>

#define MSR_PERFCTR0          0x000000c1U
#define MSR_EVNTSEL0          0x00000186U
#define MSR_FIXED_CTR0        0x00000309U
#define MSR_PERF_CAPABILITIES 0x00000345U
#define MSR_FIXED_CTR_CTRL    0x0000038dU
#define MSR_GLOBAL_STATUS     0x0000038eU
#define MSR_GLOBAL_CTRL       0x0000038fU
#define MSR_GLOBAL_OVF_CTRL   0x00000390U
#define MSR_A_PMC0            0x000004c1U
#define MAX_GP                8 /* MSR slots, as on hardware */
#define MAX_FIXED             3

#define INTEL_NR_GP         4
#define INTEL_NR_FIXED      3
#define INTEL_VERSION       2
#define INTEL_EVSEL_RSVD    0xffffffff00200000ULL
#define PERF_CAP_FW_WRITE   (1ULL << 13)
#define FIXED_BITS          0xbULL /* OS, USR, PMI; AnyThread reserved */
#define FIXED_PMI           0x8ULL
#define OVF_CTRL_EXTRA      (3ULL << 62) /* OvfBuf, CondChgd */
#define LEAF1_ECX_PDCM      (1U << 15)
#define EXT1_ECX_PERFCTR_CO (1U << 23)

/* Architectural events in CPUID.0AH:EBX bit order (SDM table 20-1). */
static const uint16_t arch_events[] = {
	PVPMU_EV_CYCLES,         PVPMU_EV_INSTRUCTIONS, PVPMU_EV_REF_CYCLES,
	PVPMU_EV_LLC_REFERENCES, PVPMU_EV_LLC_MISSES,   PVPMU_EV_BRANCHES,
	PVPMU_EV_BRANCH_MISSES,
};

/* What fixed counter j counts. */
static const uint16_t fixed_events[MAX_FIXED] = {
	PVPMU_EV_INSTRUCTIONS,
	PVPMU_EV_CYCLES,
	PVPMU_EV_HV_GUEST_CYCLES,
};

static const struct vpmu_arch_range intel_ranges[] = {
	{MSR_PERFCTR0, 8},       {MSR_EVNTSEL0, 8},
	{MSR_FIXED_CTR0, 3},     {MSR_PERF_CAPABILITIES, 1},
	{MSR_FIXED_CTR_CTRL, 4}, {MSR_A_PMC0, 8},
};

static uint64_t gp_mask(const struct vpmu_arch_pmu *p)
{
	return vpmu_arch_bits(p->nr_gp);
}

static uint64_t ctrl_rsvd(const struct vpmu_arch_pmu *p)
{
	return ~(gp_mask(p) | (vpmu_arch_bits(p->nr_fixed) << 32));
}

static uint64_t fixed_rsvd(const struct vpmu_arch_pmu *p)
{
	uint64_t ok = 0;
	unsigned int j;

	for (j = 0; j < p->nr_fixed; j++)
		ok |= FIXED_BITS << (4 * j);
	return ~ok;
}

static void intel_reset(struct vpmu_arch_pmu *p)
{
	unsigned int i;

	p->nr_gp    = INTEL_NR_GP;
	p->nr_fixed = INTEL_NR_FIXED;
	for (i = 0; i < VPMU_ARCH_MAX_CTRS; i++)
		p->evtsel[i] = 0;
	p->fixed_ctrl    = 0;
	p->global_status = 0;
	p->perf_caps     = PERF_CAP_FW_WRITE;
	p->global_ctrl   = gp_mask(p);
}

/* (msr) in [base, base + n)? Sets (*i) to its offset. */
static bool in(uint32_t msr, uint32_t base, uint32_t n, unsigned int *i)
{
	if (msr < base || msr - base >= n)
		return false;
	*i = msr - base;
	return true;
}

static bool intel_is_valid_msr(const struct vpmu_arch_pmu *p, uint32_t msr)
{
	unsigned int i;

	switch (msr) {
	case MSR_PERF_CAPABILITIES:
	case MSR_FIXED_CTR_CTRL:
	case MSR_GLOBAL_STATUS:
	case MSR_GLOBAL_CTRL:
	case MSR_GLOBAL_OVF_CTRL:
		return true;
	default:
		break;
	}
	if (in(msr, MSR_EVNTSEL0, MAX_GP, &i))
		return i < p->nr_gp;
	/* KVM drops accesses to PERFCTR0/1 that do not exist. */
	if (in(msr, MSR_PERFCTR0, MAX_GP, &i))
		return i < p->nr_gp || i < 2;
	if (in(msr, MSR_A_PMC0, MAX_GP, &i))
		return (p->perf_caps & PERF_CAP_FW_WRITE) && i < p->nr_gp;
	if (in(msr, MSR_FIXED_CTR0, MAX_FIXED, &i))
		return i < p->nr_fixed;
	return false;
}

static int intel_msr_to_pmc(const struct vpmu_arch_pmu *p, uint32_t msr)
{
	unsigned int i;

	if ((in(msr, MSR_PERFCTR0, MAX_GP, &i) ||
	     in(msr, MSR_A_PMC0, MAX_GP, &i)) &&
	    i < p->nr_gp)
		return (int)i;
	if (in(msr, MSR_FIXED_CTR0, MAX_FIXED, &i) && i < p->nr_fixed)
		return (int)(p->nr_gp + i);
	return -1;
}

static int intel_get_msr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t *val)
{
	int idx = intel_msr_to_pmc(p, msr);
	unsigned int i;

	if (idx >= 0)
		return vpmu_arch_ctr_read(p, (unsigned int)idx, val);
	if (in(msr, MSR_EVNTSEL0, MAX_GP, &i)) {
		*val = p->evtsel[i];
		return 0;
	}
	switch (msr) {
	case MSR_PERF_CAPABILITIES:
		*val = p->perf_caps;
		break;
	case MSR_FIXED_CTR_CTRL:
		*val = p->fixed_ctrl;
		break;
	case MSR_GLOBAL_STATUS:
		*val = p->global_status;
		break;
	case MSR_GLOBAL_CTRL:
		*val = p->global_ctrl;
		break;
	default: /* GLOBAL_OVF_CTRL (write-only), dropped PERFCTR0/1 */
		*val = 0;
		break;
	}
	return 0;
}

static int set_evtsel(struct vpmu_arch_pmu *p, unsigned int i, uint64_t val)
{
	if (val & INTEL_EVSEL_RSVD)
		return -EPERM;
	if ((val & ARCH_EVSEL_EN) && (val & (ARCH_EVSEL_USR | ARCH_EVSEL_OS)) &&
	    !vpmu_arch_can_count(p, (uint16_t)(val & 0xffff)))
		return -EPERM;
	return vpmu_arch_commit(p, &p->evtsel[i], val);
}

static int set_fixed_ctrl(struct vpmu_arch_pmu *p, uint64_t val)
{
	unsigned int j;

	if (val & fixed_rsvd(p))
		return -EPERM;
	for (j = 0; j < p->nr_fixed; j++) {
		if (((val >> (4 * j)) & 3) &&
		    !vpmu_arch_can_count(p, fixed_events[j]))
			return -EPERM;
	}
	return vpmu_arch_commit(p, &p->fixed_ctrl, val);
}

static int intel_set_global(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val)
{
	switch (msr) {
	case MSR_FIXED_CTR_CTRL:
		return set_fixed_ctrl(p, val);
	case MSR_GLOBAL_CTRL:
		if (val & ctrl_rsvd(p))
			return -EPERM;
		return vpmu_arch_commit(p, &p->global_ctrl, val);
	case MSR_GLOBAL_OVF_CTRL:
		if (val & (ctrl_rsvd(p) & ~OVF_CTRL_EXTRA))
			return -EPERM;
		p->global_status &= ~val;
		return 0;
	default: /* GLOBAL_STATUS, PERF_CAPABILITIES: read-only */
		return -EPERM;
	}
}

static int intel_set_msr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val)
{
	int idx = intel_msr_to_pmc(p, msr);
	unsigned int i;

	if (in(msr, MSR_EVNTSEL0, MAX_GP, &i))
		return set_evtsel(p, i, val);
	if (in(msr, MSR_PERFCTR0, MAX_GP, &i)) {
		if (idx < 0)
			return 0; /* dropped PERFCTR0/1 */
		/* SDM 20.2.5: legacy writes sign-extend bit 31. */
		return vpmu_arch_ctr_write(p, i,
					   (uint64_t)(int64_t)(int32_t)val);
	}
	if (in(msr, MSR_A_PMC0, MAX_GP, &i)) {
		if (val & ~VPMU_ARCH_MASK)
			return -EPERM;
		return vpmu_arch_ctr_write(p, i, val);
	}
	if (idx >= 0) /* fixed counters keep the low 48 bits */
		return vpmu_arch_ctr_write(p, (unsigned int)idx, val);
	return intel_set_global(p, msr, val);
}

static uint64_t intel_effective(struct vpmu_arch_pmu *p, unsigned int idx)
{
	uint64_t bits, ev;
	unsigned int j;

	if (idx < p->nr_gp) {
		if (!(p->evtsel[idx] & ARCH_EVSEL_EN) ||
		    !(p->global_ctrl & (1ULL << idx)))
			return 0;
		return vpmu_arch_evsel(p, p->evtsel[idx]);
	}
	j    = idx - p->nr_gp;
	bits = (p->fixed_ctrl >> (4 * j)) & 0xf;
	if (!(bits & 3) || !(p->global_ctrl & (1ULL << (32 + j))))
		return 0;
	ev = vpmu_arch_event(p, fixed_events[j]) | ARCH_EVSEL_EN;
	ev |= (bits & 1) ? ARCH_EVSEL_OS : 0;
	ev |= (bits & 2) ? ARCH_EVSEL_USR : 0;
	ev |= (bits & FIXED_PMI) ? ARCH_EVSEL_INT : 0;
	return ev;
}

static unsigned int intel_overflow(struct vpmu_arch_pmu *p, unsigned int idx)
{
	unsigned int j;

	if (idx < p->nr_gp) {
		p->global_status |= 1ULL << idx;
		return (p->evtsel[idx] & ARCH_EVSEL_INT) ? VPMU_ARCH_PMI : 0;
	}
	j = idx - p->nr_gp;
	p->global_status |= 1ULL << (32 + j);
	return ((p->fixed_ctrl >> (4 * j)) & FIXED_PMI) ? VPMU_ARCH_PMI : 0;
}

/* CPUID.0AH:EBX: 1 = architectural event not available. */
static uint32_t unavailable(struct vpmu_arch_pmu *p)
{
	uint32_t ebx = 0;
	unsigned int k;

	for (k = 0; k < ARRAY_SIZE(arch_events); k++) {
		if (!vpmu_arch_can_count(p, arch_events[k]))
			ebx |= 1U << k;
	}
	return ebx;
}

static bool intel_cpuid(struct vpmu_arch_pmu *p, uint32_t leaf,
			struct vpmu_arch_cpuid *r)
{
	const uint32_t len = ARRAY_SIZE(arch_events);

	switch (leaf) {
	case 0x1:
		r->ecx |= LEAF1_ECX_PDCM; /* IA32_PERF_CAPABILITIES exists */
		return true;
	case 0xa:
		r->eax = INTEL_VERSION | (p->nr_gp << 8) |
			 (VPMU_ARCH_WIDTH << 16) | (len << 24);
		r->ebx = unavailable(p);
		r->ecx = 0;
		r->edx = p->nr_fixed | (VPMU_ARCH_WIDTH << 5);
		return true;
	case 0x80000001:
		r->ecx &= ~EXT1_ECX_PERFCTR_CO;
		return true;
	case 0x80000022:
		*r = (struct vpmu_arch_cpuid){0};
		return true;
	default:
		return false;
	}
}

const struct vpmu_arch_ops vpmu_intel_v2_ops = {
	.name         = "intel-v2",
	.masks_lvtpc  = true,
	.ranges       = intel_ranges,
	.nr_ranges    = ARRAY_SIZE(intel_ranges),
	.reset        = intel_reset,
	.is_valid_msr = intel_is_valid_msr,
	.msr_to_pmc   = intel_msr_to_pmc,
	.get_msr      = intel_get_msr,
	.set_msr      = intel_set_msr,
	.effective    = intel_effective,
	.overflow     = intel_overflow,
	.cpuid        = intel_cpuid,
};
