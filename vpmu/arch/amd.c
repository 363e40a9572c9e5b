// SPDX-License-Identifier: MIT
/*
 * amd.c: AMD core performance counters (APM vol. 2 chapter 13.2) as
 * vpmu_amd_core_ops and vpmu_amd_v2_ops.
 *
 * amd-core: 6 counters of the F15h core extension (PerfEvtSeln at
 * 0xc0010200 + 2n, PerfCtrn at 0xc0010201 + 2n), the first 4 also reached
 * through the K7 legacy MSRs (PerfEvtSel0-3 0xc0010000, PerfCtr0-3
 * 0xc0010004), as on hardware; CPUID 0x80000001 ECX perfctr_core.
 * amd-v2 adds PerfMonV2 (CPUID 0x80000022 EAX bit 0, EBX[3:0] = 6):
 * PerfCntrGlobalStatus (0xc0000300, read-only), PerfCntrGlobalCtl
 * (0xc0000301, reset: every counter enabled, as KVM emulates it),
 * PerfCntrGlobalStatusClr/Set (0xc0000302/3, write-only, read 0).
 * Counters are 48 bits; writes keep the low 48 bits. #GP rules (as KVM):
 * PerfEvtSel bits 63:36 (incl. HostOnly/GuestOnly), 21 and 19 reserved;
 * GLOBAL_CTL and STATUS_SET bits of counters that do not exist (STATUS_SET
 * accepts LbrFreeze, bit 58, which has no effect; STATUS_CLR takes any
 * value, as KVM's does and as Linux's driver relies on); a
 * write to GLOBAL_STATUS. Enabling an event the host cannot count, or an
 * extended event select (bits 35:32 != 0, no backend code), #GPs.
 * Without PerfMonV2 there is no status register: as on hardware, software
 * finds the overflowed counter by its value.
 */
#include "arch_priv.h"
#include "vpmu_common.h"

#include <errno.h>

#define MSR_K7_EVNTSEL0       0xc0010000U
#define MSR_K7_PERFCTR0       0xc0010004U
#define MSR_F15H_PERF_CTL0    0xc0010200U
#define MSR_GLOBAL_STATUS     0xc0000300U
#define MSR_GLOBAL_CTL        0xc0000301U
#define MSR_GLOBAL_STATUS_CL  0xc0000302U
#define MSR_GLOBAL_STATUS_ST  0xc0000303U
#define AMD_STATUS_LBR_FREEZE (1ULL << 58)

#define AMD_NR_GP           6
#define AMD_NR_LEGACY       4
#define AMD_EVSEL_RSVD      0xfffffff000280000ULL
#define AMD_EVSEL_EXT       0x0000000f00000000ULL
#define EXT1_ECX_PERFCTR    (1U << 23)
#define EXT22_EAX_PERFMONV2 (1U << 0)

static const struct vpmu_arch_range core_ranges[] = {
	{MSR_K7_EVNTSEL0, 8},
	{MSR_F15H_PERF_CTL0, 12},
};

static const struct vpmu_arch_range v2_ranges[] = {
	{MSR_K7_EVNTSEL0, 8},
	{MSR_F15H_PERF_CTL0, 12},
	{MSR_GLOBAL_STATUS, 4},
};

static bool is_v2(const struct vpmu_arch_pmu *p)
{
	return p->ops == &vpmu_amd_v2_ops;
}

static void amd_reset(struct vpmu_arch_pmu *p)
{
	unsigned int i;

	p->nr_gp    = AMD_NR_GP;
	p->nr_fixed = 0;
	for (i = 0; i < VPMU_ARCH_MAX_CTRS; i++)
		p->evtsel[i] = 0;
	p->global_status = 0;
	p->perf_caps     = 0;
	p->fixed_ctrl    = 0;
	/* Without GLOBAL_CTL the counters are enabled by PerfEvtSel alone. */
	p->global_ctrl = vpmu_arch_bits(p->nr_gp);
}

/*
 * Decode (msr): counter (*i) and whether it is the event select. Returns
 * false for MSRs that are not counter registers.
 */
static bool decode(const struct vpmu_arch_pmu *p, uint32_t msr, unsigned int *i,
		   bool *is_sel)
{
	if (msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_EVNTSEL0 + 8) {
		*i      = (msr - MSR_K7_EVNTSEL0) % AMD_NR_LEGACY;
		*is_sel = msr < MSR_K7_PERFCTR0;
	} else if (msr >= MSR_F15H_PERF_CTL0 &&
		   msr < MSR_F15H_PERF_CTL0 + 2 * AMD_NR_GP) {
		*i      = (msr - MSR_F15H_PERF_CTL0) / 2;
		*is_sel = !((msr - MSR_F15H_PERF_CTL0) & 1);
	} else {
		return false;
	}
	return *i < p->nr_gp;
}

static bool amd_is_valid_msr(const struct vpmu_arch_pmu *p, uint32_t msr)
{
	unsigned int i;
	bool is_sel;

	if (decode(p, msr, &i, &is_sel))
		return true;
	return is_v2(p) && msr >= MSR_GLOBAL_STATUS &&
	       msr <= MSR_GLOBAL_STATUS_ST;
}

static int amd_msr_to_pmc(const struct vpmu_arch_pmu *p, uint32_t msr)
{
	unsigned int i;
	bool is_sel;

	if (decode(p, msr, &i, &is_sel) && !is_sel)
		return (int)i;
	return -1;
}

static int amd_get_msr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t *val)
{
	unsigned int i;
	bool is_sel;

	if (decode(p, msr, &i, &is_sel)) {
		if (!is_sel)
			return vpmu_arch_ctr_read(p, i, val);
		*val = p->evtsel[i];
		return 0;
	}
	switch (msr) {
	case MSR_GLOBAL_STATUS:
		*val = p->global_status;
		break;
	case MSR_GLOBAL_CTL:
		*val = p->global_ctrl;
		break;
	default: /* STATUS_CLR, STATUS_SET: write-only */
		*val = 0;
		break;
	}
	return 0;
}

static int set_evtsel(struct vpmu_arch_pmu *p, unsigned int i, uint64_t val)
{
	bool on = (val & ARCH_EVSEL_EN) &&
		  (val & (ARCH_EVSEL_USR | ARCH_EVSEL_OS));

	if (val & AMD_EVSEL_RSVD)
		return -EPERM;
	if (on && ((val & AMD_EVSEL_EXT) ||
		   !vpmu_arch_can_count(p, (uint16_t)(val & 0xffff))))
		return -EPERM;
	return vpmu_arch_commit(p, &p->evtsel[i], val);
}

static int amd_set_global(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val)
{
	uint64_t rsvd = ~vpmu_arch_bits(p->nr_gp);

	/*
	 * STATUS_CLR takes any value, as KVM does: Linux 6.1 writes LbrFreeze
	 * (bit 58) with the counters' bits at every CPU reset and ~0 from
	 * its PMI handler. Bits of counters that do not exist clear nothing.
	 * STATUS_SET accepts LbrFreeze, which never gets set without LBRs.
	 */
	if (msr == MSR_GLOBAL_STATUS_CL)
		rsvd = 0;
	if (msr == MSR_GLOBAL_STATUS_ST) {
		rsvd &= ~AMD_STATUS_LBR_FREEZE;
		val &= ~AMD_STATUS_LBR_FREEZE;
	}
	if (msr == MSR_GLOBAL_STATUS || (val & rsvd))
		return -EPERM;
	switch (msr) {
	case MSR_GLOBAL_CTL:
		return vpmu_arch_commit(p, &p->global_ctrl, val);
	case MSR_GLOBAL_STATUS_CL:
		p->global_status &= ~(val & vpmu_arch_bits(p->nr_gp));
		return 0;
	default: /* STATUS_SET */
		p->global_status |= val;
		return 0;
	}
}

static int amd_set_msr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val)
{
	unsigned int i;
	bool is_sel;

	if (decode(p, msr, &i, &is_sel)) {
		if (is_sel)
			return set_evtsel(p, i, val);
		return vpmu_arch_ctr_write(p, i, val & VPMU_ARCH_MASK);
	}
	return amd_set_global(p, msr, val);
}

static uint64_t amd_effective(struct vpmu_arch_pmu *p, unsigned int idx)
{
	if (idx >= p->nr_gp || !(p->evtsel[idx] & ARCH_EVSEL_EN) ||
	    !(p->global_ctrl & (1ULL << idx)))
		return 0;
	return vpmu_arch_evsel(p, p->evtsel[idx] & 0xffffffffULL);
}

static unsigned int amd_overflow(struct vpmu_arch_pmu *p, unsigned int idx)
{
	if (is_v2(p))
		p->global_status |= 1ULL << idx;
	return (p->evtsel[idx] & ARCH_EVSEL_INT) ? VPMU_ARCH_PMI : 0;
}

static bool amd_cpuid(struct vpmu_arch_pmu *p, uint32_t leaf,
		      struct vpmu_arch_cpuid *r)
{
	switch (leaf) {
	case 0xa:
		*r = (struct vpmu_arch_cpuid){0};
		return true;
	case 0x80000001:
		r->ecx |= EXT1_ECX_PERFCTR;
		return true;
	case 0x80000022:
		*r = (struct vpmu_arch_cpuid){0};
		if (is_v2(p)) {
			r->eax = EXT22_EAX_PERFMONV2;
			r->ebx = p->nr_gp; /* NumPerfCtrCore */
		}
		return true;
	default:
		return false;
	}
}

const struct vpmu_arch_ops vpmu_amd_core_ops = {
	.name         = "amd-core",
	.ranges       = core_ranges,
	.nr_ranges    = ARRAY_SIZE(core_ranges),
	.reset        = amd_reset,
	.is_valid_msr = amd_is_valid_msr,
	.msr_to_pmc   = amd_msr_to_pmc,
	.get_msr      = amd_get_msr,
	.set_msr      = amd_set_msr,
	.effective    = amd_effective,
	.overflow     = amd_overflow,
	.cpuid        = amd_cpuid,
};

const struct vpmu_arch_ops vpmu_amd_v2_ops = {
	.name         = "amd-v2",
	.ranges       = v2_ranges,
	.nr_ranges    = ARRAY_SIZE(v2_ranges),
	.reset        = amd_reset,
	.is_valid_msr = amd_is_valid_msr,
	.msr_to_pmc   = amd_msr_to_pmc,
	.get_msr      = amd_get_msr,
	.set_msr      = amd_set_msr,
	.effective    = amd_effective,
	.overflow     = amd_overflow,
	.cpuid        = amd_cpuid,
};
