// SPDX-License-Identifier: MIT
/*
 * pmu.c: the default logical PMU description table. The commands that
 * only read a description, PFM_GETINFO_PMCS/PMDS, are in cmd/regs.c.
 */
#include "vpmu_pmu.h"

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
