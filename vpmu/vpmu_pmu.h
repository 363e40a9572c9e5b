/* SPDX-License-Identifier: MIT */
/*
 * vpmu_pmu.h: the PMU description table of the logical PMU (spec 3.1.13,
 * 3.1.14, 3.2): name, type, default value and reserved-bit mask of every
 * PMC and PMD, in the libpfm4 descriptor style.
 *
 * The default PMU (vpmu_pmu_default):
 *   PMC0..7   counting PMCs, x86 IA32_PERFEVTSELx layout (below), MSR
 *             0x186+i; PMCi controls PMDi. Default 0 (disabled: nothing
 *             is measured, spec 3.1.2).
 *   PMD0..7   counting PMDs, 64-bit emulated over the domain's counter
 *             width, MSR 0xc1+i.
 *   PMD16..19 read-only virtual PMDs (spec 3.2.2), VPMU_VPMD_*: the vCPU's
 *             guest run time (ns, kept by libvpmu), VM exits, steal time
 *             (ns) and injected interrupts (from the VMM's vpmd callback).
 */
#ifndef VPMU_PMU_H
#define VPMU_PMU_H

#include <stdint.h>

#include <pvpmu/abi.h>

/*
 * Counting PMC layout: the guest-visible ABI, pvpmu/abi.h section 9.1.
 * libvpmu's own spellings of it.
 */
#define VPMU_EVSEL_EVENT_MASK    PVPMU_EVSEL_EVENT_MASK
#define VPMU_EVSEL_UMASK_SHIFT   PVPMU_EVSEL_UMASK_SHIFT
#define VPMU_EVSEL_USR           PVPMU_EVSEL_USR
#define VPMU_EVSEL_OS            PVPMU_EVSEL_OS
#define VPMU_EVSEL_EDGE          PVPMU_EVSEL_EDGE
#define VPMU_EVSEL_INT           PVPMU_EVSEL_INT
#define VPMU_EVSEL_EN            PVPMU_EVSEL_EN
#define VPMU_EVSEL_INV           PVPMU_EVSEL_INV
#define VPMU_EVSEL_CMASK_SHIFT   PVPMU_EVSEL_CMASK_SHIFT
#define VPMU_EVSEL_RSVD          PVPMU_EVSEL_RSVD
#define VPMU_EVSEL(event, umask) PVPMU_EVSEL(event, umask)

/* Virtual PMD ids (argument of vpmu_vpmd_fn_t). */
enum vpmu_vpmd {
	VPMU_VPMD_RUN_NS = 0, /* guest run time of the vCPU, ns (internal) */
	VPMU_VPMD_EXITS  = 1, /* VM exits */
	VPMU_VPMD_STEAL  = 2, /* steal time, ns */
	VPMU_VPMD_IRQS   = 3, /* interrupts injected */
};

/* What a register is, for the core. */
enum vpmu_reg_kind {
	VPMU_REG_NONE = 0, /* not implemented */
	VPMU_REG_COUNTER,  /* counting PMC or PMD (counter index in .idx) */
	VPMU_REG_VIRT,     /* virtual PMD (VPMU_VPMD_* in .idx) */
};

struct vpmu_reg_desc {
	const char *name;   /* e.g. "PERFEVTSEL0", NULL = not implemented */
	uint8_t kind;       /* enum vpmu_reg_kind */
	uint8_t idx;        /* counter index or virtual PMD id */
	uint16_t type;      /* PFM_REG_TYPE_* */
	uint64_t def_value; /* default value */
	uint64_t rsvd_mask; /* 1 = reserved bit */
	uint64_t index;     /* hardware address or PFM_REG_IDX_NONE */
};

struct vpmu_pmu_desc {
	const char *name;
	unsigned int nr_counters; /* counting PMC/PMD pairs, indexes 0.. */
	uint64_t impl_pmcs;       /* bitvector of implemented PMCs */
	uint64_t impl_pmds;       /* bitvector of implemented PMDs */
	const struct vpmu_reg_desc *pmcs; /* PFM_MAX_PMCS entries */
	const struct vpmu_reg_desc *pmds; /* PFM_MAX_PMDS entries */
};

/* The default logical PMU described above. */
extern const struct vpmu_pmu_desc vpmu_pmu_default;

/* First index of the virtual PMDs in vpmu_pmu_default. */
#define VPMU_PMD_VIRT_BASE 16

#endif /* VPMU_PMU_H */
