/* SPDX-License-Identifier: MIT */
/*
 * vpmu.h: libvpmu, the perfmon2 logical PMU (spec v0.6) kept in the host.
 * No KVM dependency: the VMM drives it.
 *
 * Objects
 *   domain   one per VM: limits, the context table, sampling-memory
 *            accounting, the backends, the notification callback and
 *            one mutex that serialises everything below it.
 *   cpu      one per vCPU; contexts are loaded (attached) on it.
 *   context  a perfmon2 context, named by an int handle (the spec's fd)
 *            valid only in its domain and only for its owner (guest or
 *            host operator; each sees only its own contexts).
 *
 * Index namespaces
 *   PMC n / PMD n  logical register indexes 0..63 (PFM_MAX_PMCS/PMDS); the
 *                  PMU description (vpmu_pmu.h) says which exist.
 *   counter i      counting PMC i controls counting PMD i (i < nr_counters).
 *   set id         0..65535, set0 always exists.
 *   cpu index      vCPU number, 0..nr_vcpus-1.
 *
 * Context state machine (spec 3.1, digest 4)
 *
 *     create --> UNLOADED --load--> LOADED(stopped) --start--> LOADED(active)
 *                   ^   <--unload--   |   ^ <--stop--             |    ^
 *                   |                 |   '-- restart --- MASKED <'    |
 *   destroy <-------'                  '------- (overflow notify) -----'
 *
 *   "masked" is a flag next to "active": a notification (or a format) masks
 *   monitoring until PFM_RESTART; STOP/START do not change it.
 *   A vCPU-wide context (PFM_FL_SYSTEM_WIDE) is on its vCPU from LOAD to
 *   UNLOAD. A per-thread context is attached to a guest thread by LOAD and
 *   is counted only between vpmu_ctx_sched_in() and vpmu_ctx_sched_out(),
 *   which the guest driver calls around that thread's time on a vCPU.
 *
 * Driving it (the VMM): this header is the whole API (it includes
 * vpmu_cmd.h, vpmu_arch.h and vpmu_format.h, the sampling-format interface
 * and registry); the rest of vpmu/ is private to libvpmu.
 *   vpmu_domain_create_hosted(cfg)   limits and the host callbacks
 *                                    (struct vpmu_host_ops); libvpmu
 *                                    builds its backends from them
 *   vpmu_cpu_create(d, i)            per vCPU
 *   after every exit, vCPU thread:   vpmu_cpu_account(cpu, run_ns, &gs)
 *                                    vpmu_cpu_snapshot(cpu, &snap)
 *   before KVM_RUN:                  vpmu_cpu_next_deadline(cpu) -> timer
 *   hypercalls / control socket:     vpmu_ctx_*(d, &caller, fd, pfarg...)
 *   guest context switch:            vpmu_ctx_sched_in/out(d, &caller, fd)
 *   trapped PMU MSRs:                vpmu_arch_*() (vpmu_arch.h)
 *   `vpmu events`:                   vpmu_domain_list_events(d, fn)
 *
 * Threading: every function takes the domain mutex (vCPU threads and the
 * operator thread may call concurrently). The notification callback runs
 * with that mutex held and must not call back into libvpmu.
 *
 * Errors: 0 or -errno. Vector commands stop at the first bad element, flag
 * it (PFM_REG_RETFL_* / PFM_SET_RETFL_*) and keep earlier elements applied.
 * Where the spec is silent, vpmu_cmd.h lists the decisions taken.
 */
#ifndef VPMU_H
#define VPMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <pvpmu/abi.h>

struct vpmu_domain;
struct vpmu_cpu;

/* Who issues a command. */
enum vpmu_owner {
	VPMU_OWNER_GUEST = 0, /* the guest (hypercalls) */
	VPMU_OWNER_HOST  = 1, /* a host operator (control socket) */
	/*
	 * An emulated architectural PMU (vpmu/arch/): one
	 * vCPU-wide context per vCPU, driven by trapped RDMSR/WRMSR. Its
	 * contexts live in their own handle slots (limits.arch_contexts),
	 * never count against max_contexts or host_contexts and overflow with
	 * hardware semantics: notified, never masked (vpmu_cmd.h).
	 */
	VPMU_OWNER_ARCH = 2,
};

struct vpmu_caller {
	enum vpmu_owner owner;
	struct vpmu_cpu *cpu; /* vCPU the call comes from; NULL for host */
	uint32_t tid;         /* guest thread id of the caller (guest) */
	uint32_t gid;         /* guest group id of the caller (guest) */
};

/* Host limits (all per VM unless stated). */
struct vpmu_limits {
	/*
	 * Contexts per VM, by owner, each in handle slots of its own so
	 * that one owner never runs the other out (a guest
	 * holding every context locked host operators out).
	 * max_contexts: the guest's (>= 1); host_contexts: host operators'
	 * (0: none); arch_contexts: VPMU_OWNER_ARCH only (0).
	 */
	uint32_t max_contexts;
	uint32_t host_contexts;
	uint32_t arch_contexts;
	uint32_t max_sets;          /* sets per context, set0 included */
	uint32_t msgq_depth;        /* messages per context queue (>= 1) */
	uint32_t counter_width;     /* emulated hardware width, 8..64 bits */
	uint64_t arg_size_max;      /* bytes per vector argument (>= 4096) */
	uint64_t smpl_mem_max;      /* bytes of the guest's sampling buffers */
	uint64_t host_smpl_mem_max; /* bytes of host operators' buffers */
	uint64_t timer_gran_ns;     /* set-switch timeout granularity (> 0) */
	/*
	 * Host protection (spec 4.4.4, left open there). 0 disables each.
	 * min_kick_ns: vpmu_cpu_next_deadline() is never closer than this
	 * to the current run time, so a tiny period cannot storm the host
	 * with timer kicks (overflows then come later, as skid).
	 * max_ovfl_per_sec: overflow events per second of run time per
	 * context; one more masks the context (VPMU_NOTIFY_THROTTLED, no
	 * message) until PFM_RESTART.
	 */
	uint64_t min_kick_ns;
	uint64_t max_ovfl_per_sec;
	/*
	 * Sampling limits, per context, never for
	 * VPMU_OWNER_ARCH. 0 disables each (the library default; the VMM
	 * sets 100000 Hz and 25 %).
	 * max_smpl_rate: hard maximum of samples per second of run time.
	 * A period of a time event (hv_run_ns, hv_guest_cycles) shorter
	 * than 1 s / max_smpl_rate is refused at WRITE_PMDS / WRITE_PMCS
	 * (-EINVAL, PFM_REG_RETFL_EINVAL); at run time no two samples are
	 * taken closer than that (see max_overhead_pct for how).
	 * max_overhead_pct: share of a vCPU's time (guest run time plus
	 * the monitoring cost the VMM charges with vpmu_cpu_charge())
	 * monitoring may take, like Linux's perf_cpu_time_max_percent.
	 * Every VPMU_THR_STEP_NS of run time plus cost
	 * vpmu_throttle_next() turns the
	 * measured cost into a minimum gap between samples: an overflow
	 * inside the gap is not sampled (counted in nr_dropped) and no kick
	 * is asked for before the gap ends, so the next sample carries the
	 * periods it stood for (vpmu_smpl_ovfl_arg.nr_missed). A context in
	 * frequency mode (vpmu_ctx_set_budget) gets a longer period instead.
	 * The same controller lengthens the effective interval of
	 * time-switched sets (PFM_SETFL_TIME_SWITCH: a kick per switch),
	 * never below the set's timeout, which getinfo_evtsets still
	 * reports (vpmu_ctx_stats.switch_ns, nr_switch_stretched).
	 */
	uint64_t max_smpl_rate;
	uint32_t max_overhead_pct;
};

/* Run time between two steps of the throttle controller. */
#define VPMU_THR_STEP_NS 10000000ULL /* 10 ms */
/* Fixed-point one of the frequency-mode period scale. */
#define VPMU_THR_SCALE_ONE 1024U

/* What a notification is about. */
#define VPMU_NOTIFY_MSG       (1U << 0) /* a message was queued */
#define VPMU_NOTIFY_BLOCK     (1U << 1) /* the guest should block the thread */
#define VPMU_NOTIFY_LOST      (1U << 2) /* the queue was full: message dropped */
#define VPMU_NOTIFY_THROTTLED (1U << 3) /* masked: too many overflows */

struct vpmu_notify {
	int handle;            /* context */
	enum vpmu_owner owner; /* whose context */
	uint32_t cpu_index;    /* vCPU of the overflow, or UINT32_MAX */
	uint32_t msg_type;     /* PFM_MSG_OVFL, PFM_MSG_END, 0 (throttled) */
	uint32_t flags;        /* VPMU_NOTIFY_* */
	uint32_t load_pid;     /* guest thread / vCPU the context is on */
	uint64_t ovfl_pmds;    /* PMDs that overflowed (PFM_MSG_OVFL) */
};

/*
 * Called when a context must be notified (overflow, end): the VMM raises the
 * guest's interrupt or wakes the operator. Runs with the domain lock held.
 */
typedef void (*vpmu_notify_fn_t)(void *opaque, const struct vpmu_notify *n);

/*
 * Statistics the VMM keeps per vCPU and libvpmu reads through
 * vpmu_host_ops.hv_stat: they back the hv events (vpmu/backends/hv.c says
 * which event counts which statistic) and the virtual PMDs. All are
 * cumulative since the vCPU was created.
 */
enum vpmu_hv_stat {
	VPMU_HV_STAT_EXITS = 0,   /* VM exits that reached the VMM */
	VPMU_HV_STAT_HYPERCALLS,  /* doorbell hypercalls */
	VPMU_HV_STAT_MSR_READS,   /* trapped RDMSR */
	VPMU_HV_STAT_MSR_WRITES,  /* trapped WRMSR */
	VPMU_HV_STAT_PIO,         /* port I/O exits */
	VPMU_HV_STAT_MMIO,        /* MMIO exits */
	VPMU_HV_STAT_IRQS,        /* interrupts injected */
	VPMU_HV_STAT_HALTS,       /* HLT exits */
	VPMU_HV_STAT_HALTED_NS,   /* time blocked in HLT, ns */
	VPMU_HV_STAT_STEAL_NS,    /* runnable but not running (host), ns */
	VPMU_HV_STAT_CPU_NS,      /* CPU time of the vCPU thread, ns */
	VPMU_HV_STAT_EXIT_REASON, /* first of VPMU_HV_EXIT_REASONS: exits of
				     KVM exit reason r are stat
				     VPMU_HV_STAT_EXIT_REASON + r */
};

#define VPMU_HV_EXIT_REASONS 64 /* KVM_EXIT_* reasons 0..63 */
#define VPMU_HV_NR_STATS     (VPMU_HV_STAT_EXIT_REASON + VPMU_HV_EXIT_REASONS)

/*
 * What the VMM provides to libvpmu, one set per VM. Every op gets the
 * (opaque) of struct vpmu_host_config first and, where it has one, a vCPU
 * index. Ops run with the domain lock held, on whatever thread called
 * libvpmu (a vCPU thread, the control thread): they must be cheap, must
 * not block on a vCPU and must not call back into libvpmu.
 *
 * The VMM does not arm anything on libvpmu's behalf through these ops:
 * it asks vpmu_cpu_next_deadline() before each KVM_RUN and arms its own
 * timer, and perf overflows signal the vCPU thread with (kick_signo) of
 * the config, whose handler only has to kick the vCPU out of KVM_RUN.
 */
struct vpmu_host_ops {
	/*
	 * The KVM vCPU fd of vCPU (cpu), or -1 if there is none (the kvmstat
	 * backend creates the vCPU's statistics file from it; not kept).
	 */
	int (*vcpu_fd)(void *opaque, uint32_t cpu);
	/*
	 * Host thread id of vCPU (cpu)'s thread, or 0 while it has none (the
	 * perf backend opens its events on that thread; -ESRCH until then).
	 */
	pid_t (*vcpu_tid)(void *opaque, uint32_t cpu);
	/*
	 * Value of statistic (stat) (enum vpmu_hv_stat, < VPMU_HV_NR_STATS)
	 * of vCPU (cpu); 0 for a statistic the VMM does not keep. The VMM
	 * counts an exit before it calls vpmu_cpu_account(), so exit-count
	 * events overflow at the very exit (skid 0).
	 */
	uint64_t (*hv_stat)(void *opaque, uint32_t cpu, unsigned int stat);
	/*
	 * A context must be notified (overflow, end): raise the guest's
	 * interrupt or wake the operator. May be NULL.
	 */
	vpmu_notify_fn_t notify;
};

/* A VM's libvpmu domain as the VMM creates it. */
struct vpmu_host_config {
	struct vpmu_limits limits;
	const struct vpmu_host_ops *ops; /* kept by pointer */
	void *opaque;                    /* first argument of every op */
	uint64_t tsc_khz; /* host TSC rate (hv_guest_cycles); 0 refuses it */
	int kick_signo;   /* perf overflow signal to the vCPU thread; 0: none */
};

/* Deadline meaning "no idea when" (vpmu_cpu_next_deadline()). */
#define VPMU_NO_DEADLINE UINT64_MAX

/* Guest state at an exit, recorded in samples. */
struct vpmu_guest_state {
	uint64_t ip; /* guest RIP */
	int32_t pid; /* guest pid from the shared page, 0 if unknown */
	int32_t tid; /* guest tid from the shared page, 0 if unknown */
};

/* Per-context counters of unusual events. */
struct vpmu_ctx_stats {
	uint64_t nr_ovfl;           /* 64-bit overflows processed */
	uint64_t nr_notify;         /* notifications */
	uint64_t nr_msg_lost;       /* messages dropped on a full queue */
	uint64_t nr_fmt_errors;     /* format handler errors */
	uint64_t nr_folds;          /* narrow hardware wraps folded */
	uint64_t nr_switches;       /* set switches */
	uint64_t nr_backend_errors; /* backend open/read failures */
	uint64_t nr_throttled;      /* masked by max_ovfl_per_sec */
	uint64_t nr_missed;         /* periods lost to skid >= a period */
	/*
	 * Samples not taken because of max_smpl_rate or
	 * max_overhead_pct: overflows inside the throttle gap, and the
	 * periods that elapsed while the gap held the kick back.
	 */
	uint64_t nr_dropped;
	uint64_t nr_samples; /* overflows sampled (format or notify) */
	uint32_t scale;      /* frequency mode: period x scale / 1024 */
	uint64_t gap_ns;     /* current minimum run time between samples */
	/*
	 * The effective interval of the active set's time-based
	 * switching (0: not time-switched): its timeout, lengthened by the
	 * overhead budget; and the time switches that came later than the
	 * set's timeout because of it.
	 */
	uint64_t switch_ns;
	uint64_t nr_switch_stretched;
};

/* What the VMM publishes in the per-vCPU shared page (abi.h). */
#define VPMU_SNAP_SETS 16
struct vpmu_snapshot {
	int fd;              /* guest context on the cpu, or -1 */
	uint16_t active_set; /* its active set */
	bool active;         /* started and not masked */
	uint64_t pmd_mask;   /* PMDs of the active set: counting + virtual */
	uint64_t pmds[PFM_MAX_PMDS];     /* 64-bit values now */
	uint16_t pmd_code[PFM_MAX_PMDS]; /* event code of counting PMD i */
	unsigned int nr_sets;            /* entries used in sets[] */
	struct {
		uint16_t id;
		uint64_t runs;       /* set_runs */
		uint64_t enabled_ns; /* run time monitoring was on since LOAD */
		uint64_t running_ns; /* set_act_duration */
	} sets[VPMU_SNAP_SETS];      /* first sets by id */
	uint64_t run_ns;             /* cpu run time of the snapshot */
	uint64_t nr_dropped;         /* its vpmu_ctx_stats */
	uint64_t nr_missed;
	uint64_t switch_ns; /* effective time-switch interval, 0 = none */
};

/* Fill (*l) with the defaults (64 contexts, 16 sets, 4 MiB, 48 bits...). */
void vpmu_limits_default(struct vpmu_limits *l);

/*
 * Create the domain of a VM from (cfg) (copied; cfg->ops is kept by
 * pointer and must outlive the domain). libvpmu builds and owns the
 * domain's backends, in preference order: hv (exact, from the VMM's
 * statistics and the vCPU run time), kvmstat (KVM's per-vCPU binary
 * statistics, through vcpu_fd) and perf (host perf_event on the vCPU
 * thread, through vcpu_tid). Returns 0 and sets (*out), -EINVAL for bad
 * limits or a NULL op (only notify may be NULL), -ENOMEM.
 */
int vpmu_domain_create_hosted(const struct vpmu_host_config *cfg,
			      struct vpmu_domain **out);

/*
 * Destroy (d): all contexts (formats exit, buffers freed), cpus and the
 * backends libvpmu built for it. NULL is allowed.
 */
void vpmu_domain_destroy(struct vpmu_domain *d);

/*
 * Create the cpu object of vCPU (index) in (d). Returns 0 and sets (*out),
 * -EEXIST if it exists, -EINVAL if (index) >= 4096, -ENOMEM. Owned by (d).
 */
int vpmu_cpu_create(struct vpmu_domain *d, uint32_t index,
		    struct vpmu_cpu **out);

/* The cpu object of vCPU (index), or NULL. */
struct vpmu_cpu *vpmu_cpu_get(struct vpmu_domain *d, uint32_t index);

/*
 * Account (run_ns_delta) ns of guest run time on (cpu), called by the vCPU
 * thread after every exit with (gs) describing the guest (copied; NULL
 * keeps the previous one; samples taken by commands between exits use it):
 * reads the backend deltas of the active set of every context on (cpu),
 * folds them into the 64-bit counters, processes overflows (resets,
 * randomization, formats, messages, notifications, overflow switches) and
 * time switches. Returns 0, or the first backend error (the others are
 * still processed).
 */
int vpmu_cpu_account(struct vpmu_cpu *cpu, uint64_t run_ns_delta,
		     const struct vpmu_guest_state *gs);

/*
 * The vCPU run time (ns, same clock as vpmu_cpu_run_ns()) at which
 * vpmu_cpu_account() must run next (set timeout, or a predictable counter
 * overflow), or VPMU_NO_DEADLINE. The VMM arms a host timer for it.
 */
uint64_t vpmu_cpu_next_deadline(struct vpmu_cpu *cpu);

/*
 * Charge (ns) of monitoring cost to (cpu): time the VMM spent
 * for the PMU on this vCPU's behalf (kick handling, accounting, sample
 * writing), measured by the VMM. The throttle controller compares it with
 * the run time (vpmu_limits.max_overhead_pct).
 */
void vpmu_cpu_charge(struct vpmu_cpu *cpu, uint64_t ns);
/*
 * The same for a cost that passed inside the run time already accounted
 * (vpmu_cpu_account): the kernel's exit and re-entry of a kick, inside
 * KVM_RUN. It is cost, and the controller does not count it as run too.
 */
void vpmu_cpu_charge_in_run(struct vpmu_cpu *cpu, uint64_t ns);

/* Monitoring cost charged to (cpu) so far, ns. */
uint64_t vpmu_cpu_cost_ns(struct vpmu_cpu *cpu);

/*
 * A window of a vCPU's time as the throttle controller sees it: its run
 * time (KVM_RUN), the monitoring cost charged in it, and the part of that
 * cost which passed inside the run time (a kick's kernel exit and
 * re-entry), counted once.
 */
struct vpmu_thr_window {
	uint64_t run_ns, cost_ns, in_run_ns;
};

/*
 * The throttle controller, a pure function. A spacing (cur) between
 * samples or switches, in run time (a period in events, a gap in ns:
 * larger is cheaper), is turned into the next one so that cost / (run +
 * cost, the part inside run once) lands on 99 % of (max_pct) percent,
 * each sample's cost taken as the same at any spacing:
 *   - over budget: the spacing that lands there, at least cur + 1;
 *   - under 97 % of it: the same, at most halved per step;
 *   - otherwise unchanged;
 * never below (floor). max_pct 0 or an empty window: max(cur, floor);
 * max_pct 100 or more: floor.
 */
uint64_t vpmu_throttle_next(const struct vpmu_thr_window *w, uint64_t cur,
			    uint64_t floor, unsigned int max_pct);

/* Accumulated guest run time of (cpu) in ns. */
uint64_t vpmu_cpu_run_ns(struct vpmu_cpu *cpu);

/* Mark (cpu) as running the guest idle loop (PFM_SETFL_EXCL_IDLE). */
void vpmu_cpu_set_idle(struct vpmu_cpu *cpu, bool idle);

/*
 * Snapshot the guest-owned context counted on (cpu) (vCPU-wide first, else
 * the scheduled-in per-thread one) into (*snap). Cheap, no allocation; the
 * VMM calls it after vpmu_cpu_account(). Returns 0, or -ENOENT (snap->fd is
 * then -1) when no guest context is on (cpu).
 */
int vpmu_cpu_snapshot(struct vpmu_cpu *cpu, struct vpmu_snapshot *snap);

/*
 * Snapshot (vpmu/cmd/snapshot_save.c and snapshot_restore.c, layout in
 * docs/snapshot-format.md). vpmu_domain_save() writes every guest and
 * architectural context of (d) (registers, 64-bit counter values, reset values
 * and PRNG state, sets with their run counts and remaining timeouts, message
 * queues, sampling buffers) and every cpu's guest run time into a malloc'd blob
 * (*data, *len) for the caller to free. Host (operator) contexts are not saved;
 * (*dropped), if not NULL, says how many were left out. Call it with every
 * vCPU paused. Returns 0, -ENOTSUP (a run-time format keeps host-private
 * state) or -ENOMEM.
 *
 * vpmu_domain_restore() replaces the guest and architectural contexts of
 * (d), a domain of the same logical PMU, width and context limits whose
 * cpus exist, with those of the blob; loaded contexts re-open their events
 * at their cpu's restored run time, so counting continues from the saved
 * values. The blob is parsed and checked completely before (d) changes;
 * -EINVAL with a message in (err) for a bad or incompatible blob, -ENOMEM.
 */
#define VPMU_SNAP_STATE_VERSION 2
int vpmu_domain_save(struct vpmu_domain *d, void **data, size_t *len,
		     unsigned int *dropped);
int vpmu_domain_restore(struct vpmu_domain *d, const void *data, size_t len,
			char *err, size_t errlen);

/* Bytes of sampling memory charged in (d). */
uint64_t vpmu_domain_smpl_mem(struct vpmu_domain *d);

/* One event as `vpmu events` lists it. */
struct vpmu_event_avail {
	uint16_t code;
	const char *name;    /* "cycles", "kvmstat:exits", "hv_exits"... */
	const char *desc;    /* one line, may be NULL */
	const char *backend; /* backend counting it, or that would */
	bool available;      /* a backend of the list can count it here */
	const char *reason;  /* why not; NULL when available */
};

/* Called once per event; a non-zero return stops the walk with it. */
typedef int (*vpmu_event_avail_fn_t)(void *opaque,
				     const struct vpmu_event_avail *ev);

/*
 * Call (fn) for every event the backends of (d) can offer: the catalogue
 * (pvpmu/catalog.h) in its order, with every KVM statistic the kvmstat
 * backend discovered in place of its family entry, each saying which
 * backend counts it or why none can. The strings live as long as (d).
 * Runs under the domain lock, so (fn) must not call libvpmu; probes perf
 * events (opens them once) on the calling thread. Returns 0 or (fn)'s
 * value.
 */
int vpmu_domain_list_events(struct vpmu_domain *d, vpmu_event_avail_fn_t fn,
			    void *opaque);

/*
 * Why no backend of (d) can count (code), e.g. a raw host PMU event on a
 * host without a PMU: a string that lives as long as (d), or NULL when
 * (code) can be counted. Probes like vpmu_domain_list_events().
 */
const char *vpmu_domain_event_unavailable(struct vpmu_domain *d, uint16_t code);

/*
 * Why (d) refuses a counting PMC whose event select is (evsel): the code
 * cannot be counted (vpmu_domain_event_unavailable()), or its backend
 * cannot honour a modifier (a ring filter where cycles are the vCPU
 * thread's CPU time). NULL when it can be counted as asked.
 */
const char *vpmu_domain_evsel_refusal(struct vpmu_domain *d, uint64_t evsel);

#include "vpmu_cmd.h"
#include "vpmu_arch.h"
#include "vpmu_format.h"

#endif /* VPMU_H */
