/* SPDX-License-Identifier: MIT */
/*
 * arch_priv.h: the vendor layout contract of the architectural PMU models
 * and the per-vCPU state they share. Only vpmu/arch/ (and its unit tests)
 * include it.
 */
#ifndef VPMU_ARCH_PRIV_H
#define VPMU_ARCH_PRIV_H

#include <vpmu/vpmu.h>

#include <pvpmu/abi.h>

#define VPMU_ARCH_MAX_CTRS 8 /* logical counters of vpmu_pmu_default */
#define VPMU_ARCH_WIDTH    48
#define VPMU_ARCH_MASK     ((1ULL << VPMU_ARCH_WIDTH) - 1)

/* Event-select bits both vendors share (SDM 20.2.1.1, APM 13.2.1). */
#define ARCH_EVSEL_USR (1ULL << 16)
#define ARCH_EVSEL_OS  (1ULL << 17)
#define ARCH_EVSEL_INT (1ULL << 20)
#define ARCH_EVSEL_EN  (1ULL << 22)

/*
 * The vendor layout (STYLE 3.5: "Which MSRs exist" apart from "where
 * counts come from"). All ops are required except (cpuid_extra).
 */
struct vpmu_arch_ops {
	const char *name;
	bool masks_lvtpc; /* LVTPC.mask set on PMI delivery */
	const struct vpmu_arch_range *ranges;
	unsigned int nr_ranges;

	/* Counter numbers, capabilities and reset values of (p). */
	void (*reset)(struct vpmu_arch_pmu *p);
	/* Does (msr) exist (served without #GP) in (p)? */
	bool (*is_valid_msr)(const struct vpmu_arch_pmu *p, uint32_t msr);
	/* The logical counter of counter register (msr), or -1. */
	int (*msr_to_pmc)(const struct vpmu_arch_pmu *p, uint32_t msr);
	/* RDMSR/WRMSR of a valid (msr): 0 or -EPERM (#GP). */
	int (*get_msr)(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t *val);
	int (*set_msr)(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val);
	/*
	 * The libvpmu event-select value logical counter (idx) must have
	 * now (0: not counting), from the guest registers.
	 */
	uint64_t (*effective)(struct vpmu_arch_pmu *p, unsigned int idx);
	/* Record an overflow of logical counter (idx); VPMU_ARCH_PMI? */
	unsigned int (*overflow)(struct vpmu_arch_pmu *p, unsigned int idx);
	/* Rewrite CPUID (leaf); true if changed. */
	bool (*cpuid)(struct vpmu_arch_pmu *p, uint32_t leaf,
		      struct vpmu_arch_cpuid *r);
};

/* The models (intel.c, amd.c); the VMM finds them by name. */
extern const struct vpmu_arch_ops vpmu_intel_v2_ops;
extern const struct vpmu_arch_ops vpmu_amd_core_ops;
extern const struct vpmu_arch_ops vpmu_amd_v2_ops;

/*
 * Per-vCPU state: guest-visible registers, and what is programmed into
 * libvpmu (prog[]), kept apart.
 */
struct vpmu_arch_pmu {
	const struct vpmu_arch_ops *ops;
	struct vpmu_domain *dom;
	struct vpmu_caller who;
	int fd;                              /* the ARCH context */
	unsigned int nr_gp;                  /* general-purpose counters */
	unsigned int nr_fixed;               /* Intel fixed counters */
	uint64_t evtsel[VPMU_ARCH_MAX_CTRS]; /* by GP index */
	uint64_t fixed_ctrl;                 /* IA32_FIXED_CTR_CTRL */
	uint64_t global_ctrl;                /* GLOBAL_CTRL / GLOBAL_CTL */
	uint64_t global_status;              /* GLOBAL_STATUS */
	uint64_t perf_caps;                  /* IA32_PERF_CAPABILITIES */
	uint64_t prog[VPMU_ARCH_MAX_CTRS];   /* PMC value in libvpmu */
};

/* arch.c: helpers for the vendor files. */

/*
 * Can the domain's backends count event (code) (umask << 8 | event)? The
 * Intel reference-cycles event is served by hv guest cycles (TSC rate)
 * when nothing counts it natively: see vpmu_arch_event().
 */
bool vpmu_arch_can_count(struct vpmu_arch_pmu *p, uint16_t code);

/* The libvpmu event code that serves guest event (code). */
uint16_t vpmu_arch_event(struct vpmu_arch_pmu *p, uint16_t code);

/*
 * libvpmu event-select value for a guest event-select (evtsel) that is
 * effectively enabled: event (via vpmu_arch_event), umask, USR, OS,
 * EDGE, INT, EN, INV, CMASK. 0 if neither USR nor OS is set (the SDM
 * counts nothing then).
 */
uint64_t vpmu_arch_evsel(struct vpmu_arch_pmu *p, uint64_t evtsel);

/* Re-program every logical counter whose effective value changed. */
int vpmu_arch_refresh(struct vpmu_arch_pmu *p);

/*
 * Set guest register (*reg) of (p) to (val) and re-program the counters.
 * If libvpmu refuses (a backend cannot open the event now), the register
 * keeps its old value and -EPERM (#GP) is returned: a faulting WRMSR
 * changes nothing.
 */
int vpmu_arch_commit(struct vpmu_arch_pmu *p, uint64_t *reg, uint64_t val);

/* Read / write logical counter (idx) (48 bits). 0 or -EPERM. */
int vpmu_arch_ctr_read(struct vpmu_arch_pmu *p, unsigned int idx,
		       uint64_t *val);
int vpmu_arch_ctr_write(struct vpmu_arch_pmu *p, unsigned int idx,
			uint64_t val);

/* GENMASK(n - 1, 0). */
static inline uint64_t vpmu_arch_bits(unsigned int n)
{
	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

#endif /* VPMU_ARCH_PRIV_H */
