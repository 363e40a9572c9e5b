/* SPDX-License-Identifier: MIT */
/*
 * vpmu_priv.h: struct layouts shared inside libvpmu. Only vpmu/ includes it.
 * The functions over them are in vpmu_mech.h (the mechanisms) and
 * cmd/cmd_priv.h (the command layer's handle lookup and vector run).
 *
 * Counter values: a counting PMD keeps its 64-bit value as the emulated
 * hardware part (hw, the low `width` bits) plus the software part (sw, the
 * upper bits, spec Fig. 3.3). Backend deltas are added to hw; a carry out of
 * hw folds into sw (a narrow wrap, invisible); a carry out of sw is the
 * perfmon2 overflow. With PFM_REGFL_NO_EMUL64 sw stays 0 and the overflow is
 * the narrow wrap.
 */
#ifndef VPMU_PRIV_H
#define VPMU_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <vpmu/vpmu.h>

#include "vpmu_core.h"
#include "vpmu_backend.h"
#include "vpmu_pmu.h"
#include "vpmu_smpl.h"

#define VPMU_NR_REGS      64 /* PFM_MAX_PMCS == PFM_MAX_PMDS */
#define VPMU_MAX_COUNTERS 16 /* counting pairs a PMU description may have */
#define VPMU_CPU_MAX_CTX  8  /* contexts on one vCPU at once */
/*
 * Host operators' vCPU-wide contexts loaded on one vCPU at once (e.g.
 * `vpmu serve` beside `vpmu stat`, `record` and `top`). With the guest's
 * vCPU-wide and scheduled-in thread contexts and the architectural PMU's
 * they fit in VPMU_CPU_MAX_CTX.
 */
#define VPMU_CPU_MAX_HOST 4
#define VPMU_MAX_CPUS     4096
#define VPMU_PAGE_SIZE    4096ULL

#define VPMU_BIT(n) (1ULL << (n))

struct vpmu_pmc {
	uint64_t value;                /* as written, reserved bits forced */
	uint32_t flags;                /* PFM_REGFL_* */
	uint64_t reset_pmds;           /* reg_reset_pmds */
	uint64_t smpl_pmds;            /* reg_smpl_pmds */
	uint64_t eventid;              /* reg_smpl_eventid */
	const struct vpmu_backend *be; /* counting backend; NULL: disabled */
	struct vpmu_event ev;          /* decoded event */
};

struct vpmu_pmd {
	uint64_t hw; /* low width bits (counting PMDs) */
	uint64_t sw; /* upper bits; whole value for non-counters */
	uint64_t long_reset;
	uint64_t short_reset;
	uint64_t last_reset; /* reg_last_reset_val */
	uint64_t ovflsw_thres;
	uint64_t ovflsw_left; /* overflows left before the switch */
	uint64_t random_mask;
	uint32_t random_seed;
	uint32_t prng; /* Carta PRNG state */
};

struct vpmu_set {
	uint16_t id;
	uint16_t id_next;       /* explicit next (PFM_SETFL_EXPL_NEXT) */
	uint32_t flags;         /* PFM_SETFL_* */
	uint64_t timeout_ns;    /* effective timeout */
	uint64_t timeout_left;  /* remainder while loaded */
	uint64_t runs;          /* set_runs */
	uint64_t act_ns;        /* set_act_duration */
	uint64_t switch_pmds;   /* triggers of the last switch out */
	uint64_t pending_reset; /* PMDs to reset when next activated */
	/*
	 * The switch interval of this activation, timeout_ns
	 * lengthened by the overhead budget, and its remainder: the switch
	 * happens when switch_left runs out (timeout_left is what
	 * getinfo_evtsets reports, 3.1.12).
	 */
	uint64_t switch_ns;
	uint64_t switch_left;
	struct vpmu_pmc pmc[VPMU_NR_REGS];
	struct vpmu_pmd pmd[VPMU_NR_REGS];
	struct vpmu_bevent bev[VPMU_MAX_COUNTERS]; /* open while on a cpu */
	uint64_t open_mask;  /* counters with an open bevent */
	uint64_t fresh_mask; /* opened, not yet rebased (vpmu_ctx_rebase) */
	uint64_t armed_at[VPMU_MAX_COUNTERS]; /* run ns of predicted ovfl */
};

enum vpmu_ctx_state {
	VPMU_CTX_UNLOADED = 0,
	VPMU_CTX_LOADED,
};

struct vpmu_msgq {
	union pfm_msg *msgs;
	uint32_t depth;
	uint32_t head;
	uint32_t count;
};

/*
 * A context's sampling throttle (mech/throttle.c). Samples are at
 * least (gap_ns) of run time apart; in frequency mode the period is
 * stretched by scale / VPMU_THR_SCALE_ONE instead.
 */
struct vpmu_thr {
	uint64_t gap_ns;    /* minimum run ns between samples, 0 none */
	uint64_t last_ns;   /* run ns of the last sample */
	uint64_t step_run;  /* run ns at the last controller step */
	uint64_t step_cost; /* cpu cost ns at the last controller step */
	uint64_t step_in;   /* of it inside run time, at the same step */
	uint64_t step_smpl; /* nr_samples at the last controller step */
	uint32_t scale;     /* frequency mode period scale (>= ONE) */
	uint32_t pct;       /* operator budget, 0: the domain's */
	uint32_t mux;       /* set switch interval scale (>= ONE; 0: ONE) */
	bool freq_mode;     /* stretch the period rather than drop */
	bool held;          /* the gap held a kick back since last sample */
};

struct vpmu_ctx {
	struct vpmu_domain *dom;
	int handle;
	enum vpmu_owner owner;
	uint32_t flags; /* PFM_FL_* */
	enum vpmu_ctx_state state;
	bool is_active;         /* started */
	bool is_masked;         /* masked until RESTART */
	bool is_self;           /* loaded by the monitored thread */
	bool switch_pending;    /* overflow switch deferred to RESTART */
	bool is_blocked;        /* its thread is blocked until RESTART */
	uint32_t load_pid;      /* guest tid or vCPU index */
	struct vpmu_cpu *cpu;   /* cpu it is counted on, or NULL */
	struct vpmu_set **sets; /* sorted by id */
	unsigned int nr_sets;
	struct vpmu_set *active; /* active (or last active) set */
	uint64_t ovfl_pending;   /* overflowed PMDs awaiting RESTART */
	struct vpmu_msgq q;
	bool has_fmt;
	struct vpmu_smpl_buf smpl;
	uint64_t vpmd[8];    /* virtual PMD values when off cpu */
	uint64_t enabled_ns; /* run time active and unmasked since LOAD */
	uint64_t thr_start;  /* run ns the throttle window began */
	uint64_t thr_count;  /* overflow events in the window */
	struct vpmu_thr thr; /* rate and overhead limits */
	struct vpmu_ctx_stats st;
};

struct vpmu_cpu {
	struct vpmu_domain *dom;
	uint32_t index;
	uint64_t run_ns;
	uint64_t cost_ns; /* monitoring cost charged (vpmu_cpu_charge) */
	/* Of it, what passed inside run time (vpmu_cpu_charge_in_run). */
	uint64_t cost_in_run_ns;
	bool is_idle;
	struct vpmu_ctx *ctx[VPMU_CPU_MAX_CTX]; /* contexts counted here */
	struct vpmu_guest_state gs; /* guest state at the last exit */
};

struct vpmu_domain {
	pthread_mutex_t lock;
	struct vpmu_domain_config cfg;
	const struct vpmu_pmu_desc *pmu;
	uint64_t width_mask; /* (1 << width) - 1 */
	uint32_t sys_gid, thread_gid;
	struct vpmu_ctx **ctx; /* handle table, vpmu_nr_slots() slots */
	uint32_t ctx_end;      /* one past the highest slot ever used */
	uint32_t nr_ctx;
	uint32_t gen;              /* handle generation */
	uint64_t smpl_used[2];     /* sampling bytes charged: guest, host */
	struct vpmu_cpu **cpus;    /* VPMU_MAX_CPUS slots, lazily */
	uint32_t cpus_end;         /* one past the highest slot created */
	struct vpmu_set blank_set; /* what a new set starts as */
};

/*
 * Handle slots: [0, max_contexts) for guest contexts, then host_contexts
 * slots for host operators, then arch_contexts slots for
 * VPMU_OWNER_ARCH.
 */
static inline uint32_t vpmu_nr_slots(const struct vpmu_domain *d)
{
	return d->cfg.limits.max_contexts + d->cfg.limits.host_contexts +
	       d->cfg.limits.arch_contexts;
}

#endif /* VPMU_PRIV_H */
