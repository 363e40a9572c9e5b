// SPDX-License-Identifier: MIT
/*
 * pmu.c: the default logical PMU description table and the commands that
 * only read it, PFM_GETINFO_PMCS/PMDS (spec 3.1.13, 3.1.14).
 */
#include "vpmu_pmu.h"

#include <errno.h>
#include <string.h>

#include "vpmu_priv.h"

#define PMC(i)                                                                 \
	[i] = {                                                                \
		.name      = "PERFEVTSEL" #i,                                  \
		.kind      = VPMU_REG_COUNTER,                                 \
		.idx       = i,                                                \
		.type      = PFM_REG_TYPE_MSR,                                 \
		.def_value = 0,                                                \
		.rsvd_mask = VPMU_EVSEL_RSVD,                                  \
		.index     = 0x186 + i,                                        \
	}

#define PMD(i)                                                                 \
	[i] = {                                                                \
		.name  = "PMC" #i,                                             \
		.kind  = VPMU_REG_COUNTER,                                     \
		.idx   = i,                                                    \
		.type  = PFM_REG_TYPE_MSR,                                     \
		.index = 0xc1 + i,                                             \
	}

#define VPMD(i, nm, id)                                                        \
	[i] = {                                                                \
		.name  = nm,                                                   \
		.kind  = VPMU_REG_VIRT,                                        \
		.idx   = id,                                                   \
		.type  = PFM_REG_TYPE_VIRT,                                    \
		.index = PFM_REG_IDX_NONE,                                     \
	}

static const struct vpmu_reg_desc default_pmcs[PFM_MAX_PMCS] = {
	PMC(0), PMC(1), PMC(2), PMC(3), PMC(4), PMC(5), PMC(6), PMC(7),
};

static const struct vpmu_reg_desc default_pmds[PFM_MAX_PMDS] = {
	PMD(0),
	PMD(1),
	PMD(2),
	PMD(3),
	PMD(4),
	PMD(5),
	PMD(6),
	PMD(7),
	VPMD(VPMU_PMD_VIRT_BASE + 0, "VPMD_RUN_NS", VPMU_VPMD_RUN_NS),
	VPMD(VPMU_PMD_VIRT_BASE + 1, "VPMD_EXITS", VPMU_VPMD_EXITS),
	VPMD(VPMU_PMD_VIRT_BASE + 2, "VPMD_STEAL_NS", VPMU_VPMD_STEAL),
	VPMD(VPMU_PMD_VIRT_BASE + 3, "VPMD_IRQS", VPMU_VPMD_IRQS),
};

const struct vpmu_pmu_desc vpmu_pmu_default = {
	.name        = "vpmu-x86",
	.nr_counters = 8,
	.impl_pmcs   = 0xffULL,
	.impl_pmds   = 0xffULL | (0xfULL << VPMU_PMD_VIRT_BASE),
	.pmcs        = default_pmcs,
	.pmds        = default_pmds,
};

/*
 * Fill the (n) info elements at (arr) (pfarg_pmcinfo and pfarg_pmdinfo share
 * one layout) from (tab)/(impl). 3.1.13: "there are no input flags"; an
 * unimplemented register is reported with PFM_REG_RETFL_EINVAL (not
 * NOTAVAIL, digest 14.27). Stops at the first bad element.
 */
static int getinfo(struct vpmu_domain *d, const struct vpmu_reg_desc *tab,
		   uint64_t impl, void *arr, int n)
{
	struct pfarg_pmcinfo p;
	int i, ret;

	_Static_assert(sizeof(struct pfarg_pmcinfo) ==
			       sizeof(struct pfarg_pmdinfo),
		       "one layout");
	pthread_mutex_lock(&d->lock);
	ret = vpmu_check_vec(d, arr, n, sizeof(p));
	for (i = 0; !ret && i < n; i++) {
		unsigned char *slot = (unsigned char *)arr + i * sizeof(p);

		memcpy(&p, slot, sizeof(p));
		if (p.reg_flags != 0 || p.reg_num >= VPMU_NR_REGS ||
		    !(impl & VPMU_BIT(p.reg_num))) {
			p.reg_flags = PFM_REG_RETFL_EINVAL;
			ret         = -EINVAL;
		} else {
			p.reg_type      = tab[p.reg_num].type;
			p.reg_def_value = tab[p.reg_num].def_value;
			p.reg_rsvd_mask = tab[p.reg_num].rsvd_mask;
			p.reg_index     = tab[p.reg_num].index;
		}
		memcpy(slot, &p, sizeof(p));
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int vpmu_getinfo_pmcs(struct vpmu_domain *d, const struct vpmu_caller *who,
		      struct pfarg_pmcinfo *pmcs, int n)
{
	(void)who;
	return getinfo(d, d->pmu->pmcs, d->pmu->impl_pmcs, pmcs, n);
}

int vpmu_getinfo_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
		      struct pfarg_pmdinfo *pmds, int n)
{
	(void)who;
	return getinfo(d, d->pmu->pmds, d->pmu->impl_pmds, pmds, n);
}
