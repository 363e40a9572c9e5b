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
 * Driving it (the VMM)
 *   vpmu_domain_create(cfg)          limits, backends (preference order),
 *                                    notify and virtual-PMD callbacks
 *   vpmu_cpu_create(d, i)            per vCPU
 *   after every exit, vCPU thread:   vpmu_cpu_account(cpu, run_ns, &gs)
 *                                    vpmu_cpu_snapshot(cpu, &snap)
 *   before KVM_RUN:                  vpmu_cpu_next_deadline(cpu) -> timer
 *   hypercalls / control socket:     vpmu_ctx_*(d, &caller, fd, pfarg...)
 *   guest context switch:            vpmu_ctx_sched_in/out(d, &caller, fd)
 *
 * Threading: every function takes the domain mutex (vCPU threads and the
 * operator thread may call concurrently). The notification callback runs
 * with that mutex held and must not call back into libvpmu.
 *
 * Errors: 0 or -errno. Vector commands stop at the first bad element, flag
 * it (PFM_REG_RETFL_* / PFM_SET_RETFL_*) and keep earlier elements applied.
 *
 * Decisions where the spec is silent (digest 14), all documented here:
 *  - n <= 0 for a vector command: -EINVAL; n * element size above
 *    cf_arg_size_max, or a NULL array: -EFAULT (3.1, 4.4.2).
 *  - Single-struct commands (create, load, start, get/set_config) with a
 *    wrong nargs: -EFAULT, like LOAD and *_CONFIG in the spec.
 *  - Unknown format UUID: -EINVAL. Format arguments shorter than the
 *    format's arg_size: -EINVAL; longer than cf_arg_size_max: -E2BIG;
 *    longer than arg_size: the extra bytes must be zero (-EINVAL).
 *  - Limits: contexts per VM and sets per context give -ENOMEM (spec:
 *    "limited by memory"); sampling memory per VM gives -ENOMEM at create
 *    (4.4.3); a format needing a deeper queue than the host allows: -ENOMEM.
 *  - Wrong state: -EBUSY (START/STOP/RESTART/UNLOAD while unloaded, LOAD
 *    while loaded, set create/delete while loaded, RESTART while not masked
 *    without a format, a second vCPU-wide context of one owner on a vCPU,
 *    a second context for one guest thread).
 *  - LOAD of a vCPU-wide context: load_pid is the vCPU index; a guest caller
 *    must name the vCPU it calls from (-EINVAL otherwise), a host caller
 *    may name any vCPU. Bad load_set, broken EXPL_NEXT chain, NOTIFY_BLOCK
 *    on a self-monitoring per-thread load: -EINVAL.
 *  - START with an absent start_set: -EINVAL. set_runs counts LOAD and
 *    every change of active set (a START naming the active set, or no set,
 *    does not count). START without a set keeps the current active set,
 *    i.e. the load set after LOAD, else the last active set.
 *  - STOP while masked leaves the mask; START does not unmask.
 *  - RESTART with a format calls its restart; if it asks for neither mask
 *    nor reset the context is unmasked without resets.
 *  - Overflow without notification and without format: the overflowed PMD
 *    and its reg_reset_pmds get their short reset (wrap when 0).
 *  - Events counted past the wrap before the overflow is processed (skid,
 *    e.g. a long exit) are kept on top of a short reset, modulo the period
 *    (whole periods of skid are counted in vpmu_ctx_stats.nr_missed, not
 *    declared as overflows), so the next overflow stays in phase; a long
 *    reset (RESTART) or a deferred reset replaces the value.
 *  - msg_ovfl_pmds lists every PMD that overflowed in the event.
 *  - Queue full when a notification is due: the message is dropped and
 *    counted (vpmu_ctx_stats.nr_msg_lost); the context is masked anyway and
 *    the callback still runs, so monitoring never runs ahead of the tool.
 *  - Overflow switch: triggers of the outgoing set are not reset at the
 *    switch; they (and their reg_reset_pmds) get a short reset when the set
 *    next becomes active (long if that switch happens at RESTART) (3.7.7).
 *  - Randomization: one Carta/Park-Miller state per PMD per set, seeded on
 *    every WRITE_PMDS from reg_random_seed mod (2^31-1) (0 maps to 1);
 *    value = base + (next & reg_random_mask), base = short or long reset.
 *  - reg_last_reset_val before any reset: 0. READ_PMDS leaves the reset,
 *    mask and seed fields untouched.
 *  - Time: set timeouts and set_act_duration are vCPU run time; effective
 *    timeout = request rounded up to the domain's timer granularity.
 *  - SET_CONFIG is refused to guests (-EPERM): host limits are the host's.
 *    Values below one page: -EINVAL; cf_flags != 0: -EINVAL.
 *  - A backend that cannot open an event at LOAD or sched-in: -EBUSY
 *    ("cannot be executed at this time"); the context stays as it was.
 *  - Interrupt throttling (4.4.4, unfinished in the spec) is host policy:
 *    see vpmu_limits.min_kick_ns and max_ovfl_per_sec.
 *  - Zombies do not exist: destroy unloads first; a stale handle is -EBADF.
 *  - READ/WRITE while loaded are always allowed (the domain lock gives a
 *    consistent view), so those commands never return -EBUSY.
 *  - VPMU_OWNER_ARCH contexts (architectural PMU models) follow hardware
 *    on overflow rather than perfmon2: a PMC with PFM_REGFL_OVFL_NOTIFY
 *    notifies (ovfl_pmds set, no message with PFM_FL_OVFL_NO_MSG) but the
 *    context is never masked, and the overflowed PMDs get their short
 *    reset with the skid kept, i.e. a NO_EMUL64 counter simply wraps;
 *    max_ovfl_per_sec does not apply to them.
 */
#ifndef VPMU_H
#define VPMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pvpmu/abi.h>

struct vpmu_domain;
struct vpmu_cpu;
struct vpmu_backend;
struct vpmu_pmu_desc;

/* Who issues a command. */
enum vpmu_owner {
	VPMU_OWNER_GUEST = 0, /* the guest (hypercalls) */
	VPMU_OWNER_HOST  = 1, /* a host operator (control socket) */
	/*
	 * An emulated architectural PMU (vpmu/arch/, issue 6): one
	 * vCPU-wide context per vCPU, driven by trapped RDMSR/WRMSR. Its
	 * contexts live in their own handle slots (limits.arch_contexts),
	 * never count against max_contexts and overflow with hardware
	 * semantics: notified, never masked (see below).
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
	uint32_t max_contexts;  /* contexts per VM (guest + host) */
	uint32_t arch_contexts; /* extra slots, VPMU_OWNER_ARCH only (0) */
	uint32_t max_sets;      /* sets per context, set0 included */
	uint32_t msgq_depth;    /* messages per context queue (>= 1) */
	uint32_t counter_width; /* emulated hardware width, 8..64 bits */
	uint64_t arg_size_max;  /* bytes per vector argument (>= 4096) */
	uint64_t smpl_mem_max;  /* bytes of sampling buffers per VM */
	uint64_t timer_gran_ns; /* set-switch timeout granularity (> 0) */
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
};

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
 * Value of virtual PMD (vpmd, a VPMU_VPMD_* id) for vCPU (cpu_index): a
 * monotonic hypervisor resource (exits, steal time...). Lock held.
 */
typedef uint64_t (*vpmu_vpmd_fn_t)(void *opaque, uint32_t cpu_index,
				   unsigned int vpmd);

struct vpmu_domain_config {
	struct vpmu_limits limits;
	const struct vpmu_backend *backends; /* preference order */
	unsigned int nr_backends;
	const struct vpmu_pmu_desc *pmu; /* NULL: vpmu_pmu_default */
	vpmu_notify_fn_t notify;         /* may be NULL */
	void *notify_opaque;
	vpmu_vpmd_fn_t vpmd_read; /* may be NULL: reads 0 */
	void *vpmd_opaque;
};

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
};

/* Fill (*l) with the defaults (64 contexts, 16 sets, 4 MiB, 48 bits...). */
void vpmu_limits_default(struct vpmu_limits *l);

/*
 * Create a domain from (cfg) (copied; the backends array must outlive the
 * domain). Returns 0 and sets (*out), -EINVAL for bad limits, -ENOMEM.
 */
int vpmu_domain_create(const struct vpmu_domain_config *cfg,
		       struct vpmu_domain **out);

/* Destroy (d): all contexts (formats exit, buffers freed) and cpus. */
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

/* Bytes of sampling memory charged in (d). */
uint64_t vpmu_domain_smpl_mem(struct vpmu_domain *d);

#include "vpmu_cmd.h"

#endif /* VPMU_H */
