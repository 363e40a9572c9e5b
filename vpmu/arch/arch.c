// SPDX-License-Identifier: MIT
/*
 * arch.c: the generic side of the architectural PMU models (see vpmu_arch.h):
 * model lookup, the per-vCPU ARCH context, MSR dispatch to the vendor
 * layout, counter reads and writes through libvpmu and the programming of
 * effective enables.
 */
#include <vpmu/vpmu.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu_priv.h"
#include "vpmu_common.h"
#include "arch_priv.h"

#define INTEL_REF_CYCLES 0x013c /* architectural event: reference cycles */
#define AMD_CPU_CYCLES   0x0076 /* AMD core cycles not in halt (APM 13.2) */

static const struct vpmu_arch_ops *const models[] = {
	&vpmu_intel_v2_ops,
	&vpmu_amd_core_ops,
	&vpmu_amd_v2_ops,
};

const struct vpmu_arch_ops *vpmu_arch_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(models); i++) {
		if (!strcmp(models[i]->name, name))
			return models[i];
	}
	return NULL;
}

const struct vpmu_arch_ops *vpmu_arch_auto(const char vendor[12])
{
	if (!memcmp(vendor, "GenuineIntel", 12))
		return &vpmu_intel_v2_ops;
	if (!memcmp(vendor, "AuthenticAMD", 12) ||
	    !memcmp(vendor, "HygonGenuine", 12))
		return &vpmu_amd_v2_ops;
	return NULL;
}

const char *vpmu_arch_name(const struct vpmu_arch_ops *ops)
{
	return ops->name;
}

unsigned int vpmu_arch_ranges(const struct vpmu_arch_ops *ops,
			      const struct vpmu_arch_range **out)
{
	*out = ops->ranges;
	return ops->nr_ranges;
}

bool vpmu_arch_masks_lvtpc(const struct vpmu_arch_ops *ops)
{
	return ops->masks_lvtpc;
}

int vpmu_arch_handle(const struct vpmu_arch_pmu *p)
{
	return p->fd;
}

/* Does a backend of (bes) count the code at (opaque)? Lock held. */
static int any_counts(void *opaque, const struct vpmu_backend *bes,
		      unsigned int nr)
{
	const uint16_t *code = opaque;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (bes[i].ops->describe(&bes[i], *code, NULL) == 0)
			return 1;
	}
	return 0;
}

/* Backends are asked under the domain lock (vpmu_backend.h). */
static bool backends_count(struct vpmu_domain *d, uint16_t code)
{
	return vpmu_domain_backends_run(d, any_counts, &code) == 1;
}

/*
 * SDM 20.2.1.2: reference cycles count "at a fixed frequency"; without a
 * host event for them, the guest's TSC-rate cycles (hv) are that clock.
 */
uint16_t vpmu_arch_event(struct vpmu_arch_pmu *p, uint16_t code)
{
	if (code == INTEL_REF_CYCLES && !backends_count(p->dom, code))
		return PVPMU_EV_HV_GUEST_CYCLES;
	/* AMD CPU_CLK_UNHALTED is the core-cycles event vpmu knows. */
	if (code == AMD_CPU_CYCLES && !backends_count(p->dom, code))
		return PVPMU_EV_CYCLES;
	return code;
}

bool vpmu_arch_can_count(struct vpmu_arch_pmu *p, uint16_t code)
{
	return backends_count(p->dom, vpmu_arch_event(p, code));
}

uint64_t vpmu_arch_evsel(struct vpmu_arch_pmu *p, uint64_t evtsel)
{
	/* Bits 31:16 but pin control (19) and any-thread (21). */
	const uint64_t keep = 0xffd70000ULL;
	uint16_t code       = vpmu_arch_event(p, (uint16_t)(evtsel & 0xffff));

	if (!(evtsel & (ARCH_EVSEL_USR | ARCH_EVSEL_OS)))
		return 0;
	return (evtsel & keep) | code | ARCH_EVSEL_EN;
}

/*
 * Logical counter (idx) with (evsel): overflows always notify (status bits
 * are set whatever the interrupt bit says) and the counter is the 48-bit
 * hardware value (NO_EMUL64).
 */
static struct pfarg_pmc pmc_of(unsigned int idx, uint64_t evsel)
{
	return (struct pfarg_pmc){
		.reg_num   = (uint16_t)idx,
		.reg_flags = PFM_REGFL_NO_EMUL64 | PFM_REGFL_OVFL_NOTIFY,
		.reg_value = evsel,
	};
}

/*
 * Program every logical counter whose effective value changed in one
 * WRITE_PMCS, so that the counters one WRMSR starts or stops (GLOBAL_CTRL,
 * say) count the same window (libvpmu switches a command's PMCs at one
 * point).
 */
int vpmu_arch_refresh(struct vpmu_arch_pmu *p)
{
	struct pfarg_pmc pmc[VPMU_ARCH_MAX_CTRS];
	unsigned int i, k = 0, n = p->nr_gp + p->nr_fixed;

	for (i = 0; i < n; i++) {
		uint64_t want = p->ops->effective(p, i);

		if (want != p->prog[i])
			pmc[k++] = pmc_of(i, want);
	}
	if (!k)
		return 0;
	if (!vpmu_ctx_write_pmcs(p->dom, &p->who, p->fd, pmc, (int)k)) {
		for (i = 0; i < k; i++)
			p->prog[pmc[i].reg_num] = pmc[i].reg_value;
		return 0;
	}
	/*
	 * A refused write may leave libvpmu's PMCs changed but not counting
	 * (the elements before the refused one are applied): "unknown" (no
	 * event select has bits 63:32 here) makes the next refresh program
	 * them again.
	 */
	for (i = 0; i < k; i++)
		p->prog[pmc[i].reg_num] = ~0ULL;
	return -EPERM;
}

int vpmu_arch_commit(struct vpmu_arch_pmu *p, uint64_t *reg, uint64_t val)
{
	uint64_t old = *reg;

	*reg = val;
	if (!vpmu_arch_refresh(p))
		return 0;
	*reg = old;
	vpmu_arch_refresh(p);
	return -EPERM;
}

int vpmu_arch_ctr_read(struct vpmu_arch_pmu *p, unsigned int idx, uint64_t *val)
{
	struct pfarg_pmd pmd = {.reg_num = (uint16_t)idx};

	if (vpmu_ctx_read_pmds(p->dom, &p->who, p->fd, &pmd, 1))
		return -EPERM;
	*val = pmd.reg_value & VPMU_ARCH_MASK;
	return 0;
}

/* Short and long resets 0: an overflowed counter wraps to its skid. */
int vpmu_arch_ctr_write(struct vpmu_arch_pmu *p, unsigned int idx, uint64_t val)
{
	struct pfarg_pmd pmd = {.reg_num   = (uint16_t)idx,
				.reg_value = val & VPMU_ARCH_MASK};

	if (vpmu_ctx_write_pmds(p->dom, &p->who, p->fd, &pmd, 1))
		return -EPERM;
	return 0;
}

static int setup_ctx(struct vpmu_arch_pmu *p, uint32_t cpu_index)
{
	struct pfarg_ctx ctx   = {.ctx_flags = PFM_FL_SYSTEM_WIDE |
					       PFM_FL_OVFL_NO_MSG};
	struct pfarg_load load = {.load_pid = cpu_index};
	struct pfarg_pmc pmc[VPMU_ARCH_MAX_CTRS];
	unsigned int i;
	int ret;

	ret = vpmu_ctx_create(p->dom, &p->who, &ctx, 1, NULL, 0);
	if (ret)
		return ret;
	p->fd = ctx.ctx_fd;
	for (i = 0; i < VPMU_ARCH_MAX_CTRS; i++) {
		pmc[i]     = pmc_of(i, 0);
		p->prog[i] = 0;
	}
	ret = vpmu_ctx_write_pmcs(p->dom, &p->who, p->fd, pmc,
				  VPMU_ARCH_MAX_CTRS);
	if (!ret)
		ret = vpmu_ctx_load(p->dom, &p->who, p->fd, &load, 1);
	if (!ret)
		ret = vpmu_ctx_start(p->dom, &p->who, p->fd, NULL, 0);
	if (ret)
		vpmu_ctx_destroy(p->dom, &p->who, p->fd);
	return ret;
}

int vpmu_arch_create(struct vpmu_domain *d, struct vpmu_cpu *cpu,
		     const struct vpmu_arch_ops *ops,
		     struct vpmu_arch_pmu **out)
{
	struct vpmu_arch_pmu *p;
	unsigned int i;
	int ret;

	if (!d || !cpu || !ops || d->cfg.limits.counter_width != 48 ||
	    d->pmu->nr_counters < VPMU_ARCH_MAX_CTRS)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ops = ops;
	p->dom = d;
	p->who = (struct vpmu_caller){.owner = VPMU_OWNER_ARCH, .cpu = cpu};
	ret    = setup_ctx(p, cpu->index);
	if (ret) {
		free(p);
		return ret;
	}
	ops->reset(p);
	for (i = 0; !ret && i < VPMU_ARCH_MAX_CTRS; i++)
		ret = vpmu_arch_ctr_write(p, i, 0);
	if (!ret)
		ret = vpmu_arch_refresh(p);
	if (ret) {
		vpmu_arch_destroy(p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

void vpmu_arch_destroy(struct vpmu_arch_pmu *p)
{
	if (!p)
		return;
	vpmu_ctx_destroy(p->dom, &p->who, p->fd);
	free(p);
}

int vpmu_arch_rdmsr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t *val)
{
	if (!p->ops->is_valid_msr(p, msr))
		return -EPERM;
	return p->ops->get_msr(p, msr, val);
}

int vpmu_arch_wrmsr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val)
{
	if (!p->ops->is_valid_msr(p, msr))
		return -EPERM;
	return p->ops->set_msr(p, msr, val);
}

unsigned int vpmu_arch_overflow(struct vpmu_arch_pmu *p, uint64_t ovfl_pmds)
{
	unsigned int i, n = p->nr_gp + p->nr_fixed, pmi = 0;

	for (i = 0; i < n; i++) {
		if (ovfl_pmds & (1ULL << i))
			pmi |= p->ops->overflow(p, i);
	}
	return pmi;
}

bool vpmu_arch_cpuid(struct vpmu_arch_pmu *p, uint32_t leaf,
		     struct vpmu_arch_cpuid *r)
{
	return p->ops->cpuid(p, leaf, r);
}

#define EXT1_ECX_PERFCTR_CORE (1U << 23)

void vpmu_arch_cpuid_none(uint32_t leaf, struct vpmu_arch_cpuid *r)
{
	switch (leaf) {
	case 0xa:
	case 0x80000022:
		*r = (struct vpmu_arch_cpuid){0};
		break;
	case 0x80000001:
		r->ecx &= ~EXT1_ECX_PERFCTR_CORE;
		break;
	default:
		break;
	}
}
