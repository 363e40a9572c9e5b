/* SPDX-License-Identifier: MIT */
/*
 * vpmu_cmd.h: the perfmon2 commands of libvpmu (spec 3.1), part of the
 * libvpmu API: include <vpmu/vpmu.h>, which includes this. Every command
 * takes the domain (d), the caller (who) and, for context commands, the
 * handle (fd) from pfarg_ctx.ctx_fd. A handle that is not a live context
 * of (d) owned by who->owner gives -EBADF. Per-command errors follow the
 * spec.
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
#ifndef VPMU_CMD_H
#define VPMU_CMD_H

/*
 * The sampling budget of host context (fd) (an operator's
 * request): (max_overhead_pct) (0: the domain's; never above it) and
 * (freq_mode): when the budget bites, lengthen the period (scale the
 * short reset, reported in vpmu_ctx_stats.scale and in each sample's
 * last_reset_val) instead of dropping samples. Errors: -EBADF, -EPERM
 * (not a host context), -EINVAL (pct > 100).
 */
int vpmu_ctx_set_budget(struct vpmu_domain *d, const struct vpmu_caller *who,
			int fd, unsigned int max_overhead_pct, bool freq_mode);

/*
 * PFM_CREATE_CONTEXT (3.1.1). (ctx) IN/OUT, (n) must be 1. (fmt_arg),
 * (fmt_arg_size): the format arguments that follow pfarg_ctx. On success
 * ctx->ctx_fd is the handle and ctx_smpl_buf_size the buffer size.
 * Errors: -EFAULT, -EINVAL (flags, UUID, format), -E2BIG, -ENOMEM, -EPERM
 * (group restriction).
 */
int vpmu_ctx_create(struct vpmu_domain *d, const struct vpmu_caller *who,
		    struct pfarg_ctx *ctx, int n, const void *fmt_arg,
		    size_t fmt_arg_size);

/*
 * Destroy context (fd) (close(), 3.1.15): unload if loaded, run the
 * format's exit, free and uncharge its buffer. The handle is dead after.
 */
int vpmu_ctx_destroy(struct vpmu_domain *d, const struct vpmu_caller *who,
		     int fd);

/* PFM_WRITE_PMCS (3.1.2). Errors: -EBADF, -EFAULT, -EINVAL + RETFL. */
int vpmu_ctx_write_pmcs(struct vpmu_domain *d, const struct vpmu_caller *who,
			int fd, struct pfarg_pmc *pmcs, int n);

/* PFM_WRITE_PMDS (3.1.3). Errors: -EBADF, -EFAULT, -EINVAL + RETFL. */
int vpmu_ctx_write_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
			int fd, struct pfarg_pmd *pmds, int n);

/* PFM_READ_PMDS (3.1.4). Errors: -EBADF, -EFAULT, -EINVAL + RETFL. */
int vpmu_ctx_read_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
		       int fd, struct pfarg_pmd *pmds, int n);

/*
 * PFM_START (3.1.5): (start) may be NULL with (n) 0, else (n) is 1.
 * Errors: -EBADF, -EBUSY (unloaded), -EFAULT, -EINVAL (no such set).
 */
int vpmu_ctx_start(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		   const struct pfarg_start *start, int n);

/* PFM_STOP (3.1.6). Errors: -EBADF, -EBUSY (unloaded). */
int vpmu_ctx_stop(struct vpmu_domain *d, const struct vpmu_caller *who, int fd);

/*
 * PFM_LOAD_CONTEXT (3.1.7), (n) must be 1. A vCPU-wide context is bound to
 * vCPU load->load_pid; a per-thread one to guest thread load_pid (then
 * counted only while scheduled in). Errors: -EBADF, -EFAULT, -EINVAL,
 * -EBUSY (loaded, target taken, or a backend cannot open an event).
 */
int vpmu_ctx_load(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		  const struct pfarg_load *load, int n);

/*
 * PFM_UNLOAD_CONTEXT (3.1.8). A guest detaches a vCPU-wide context only
 * from the vCPU it is bound to (who->cpu); a host caller from anywhere.
 * Errors: -EBADF, -EBUSY (not loaded, or a guest on another vCPU).
 */
int vpmu_ctx_unload(struct vpmu_domain *d, const struct vpmu_caller *who,
		    int fd);

/*
 * PFM_RESTART (3.1.9). (restart_arg) is passed to the format's restart
 * (0 when none). Errors: -EBADF, -EBUSY (unloaded, or not masked and no
 * format).
 */
int vpmu_ctx_restart(struct vpmu_domain *d, const struct vpmu_caller *who,
		     int fd, uint64_t restart_arg);

/* PFM_CREATE_EVTSETS (3.1.10). Errors: -EBADF, -EFAULT, -EINVAL, -EBUSY,
 * -ENOMEM (sets limit). */
int vpmu_ctx_create_evtsets(struct vpmu_domain *d,
			    const struct vpmu_caller *who, int fd,
			    struct pfarg_setdesc *sets, int n);

/* PFM_DELETE_EVTSETS (3.1.11). Errors: -EBADF, -EFAULT, -EINVAL, -EBUSY. */
int vpmu_ctx_delete_evtsets(struct vpmu_domain *d,
			    const struct vpmu_caller *who, int fd,
			    struct pfarg_setdesc *sets, int n);

/* PFM_GETINFO_EVTSETS (3.1.12). Errors: -EBADF, -EFAULT, -EINVAL. */
int vpmu_ctx_getinfo_evtsets(struct vpmu_domain *d,
			     const struct vpmu_caller *who, int fd,
			     struct pfarg_setinfo *info, int n);

/* PFM_GETINFO_PMCS (3.1.13), no context. Errors: -EFAULT, -EINVAL. */
int vpmu_getinfo_pmcs(struct vpmu_domain *d, const struct vpmu_caller *who,
		      struct pfarg_pmcinfo *pmcs, int n);

/* PFM_GETINFO_PMDS (3.1.14), no context. Errors: -EFAULT, -EINVAL. */
int vpmu_getinfo_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
		      struct pfarg_pmdinfo *pmds, int n);

/* PFM_SET_CONFIG (3.1.16), (n) 1. Errors: -EFAULT, -EPERM, -EINVAL. */
int vpmu_set_config(struct vpmu_domain *d, const struct vpmu_caller *who,
		    struct pfarg_config *cfg, int n);

/* PFM_GET_CONFIG (3.1.17), (n) 1. Errors: -EFAULT. */
int vpmu_get_config(struct vpmu_domain *d, const struct vpmu_caller *who,
		    struct pfarg_config *cfg, int n);

/*
 * read() on the context (3.3.3), never blocking: copy up to (max) queued
 * messages into (msgs) and store their number in (*nr). Returns 0, -EBADF,
 * -EFAULT (NULL), -EINVAL (max 0), -EAGAIN if the queue is empty.
 */
int vpmu_ctx_read_msgs(struct vpmu_domain *d, const struct vpmu_caller *who,
		       int fd, union pfm_msg *msgs, unsigned int max,
		       unsigned int *nr);

/*
 * Schedule per-thread context (fd) in on who->cpu: its guest thread starts
 * running there. Errors: -EBADF, -EINVAL (vCPU-wide, or no cpu), -EBUSY
 * (not loaded, already in, who->cpu has a per-thread context of that owner
 * in, or a backend cannot open an event).
 */
int vpmu_ctx_sched_in(struct vpmu_domain *d, const struct vpmu_caller *who,
		      int fd);

/*
 * Schedule per-thread context (fd) out of the vCPU it is on: its last
 * counts are folded in and its events closed; it stays loaded. (counting),
 * unless NULL, says whether the context was counting (started and not
 * masked), so that the exit which carried this call is in its counts.
 * Errors: -EBADF, -EINVAL (vCPU-wide), -EBUSY (not loaded or not
 * scheduled in).
 */
int vpmu_ctx_sched_out(struct vpmu_domain *d, const struct vpmu_caller *who,
		       int fd, bool *counting);

/*
 * The monitored guest thread of per-thread context (fd) exited (3.3.6):
 * unload and queue PFM_MSG_END (then notify). Errors: -EBADF, -EBUSY.
 */
int vpmu_ctx_thread_exit(struct vpmu_domain *d, const struct vpmu_caller *who,
			 int fd);

/*
 * Is guest thread (tid) blocked (3.1.9, 3.4.3)? A notification of a
 * PFM_FL_NOTIFY_BLOCK per-thread context of the guest, loaded on (tid) by
 * another thread, blocks it until PFM_RESTART (or UNLOAD, or close); the
 * guest kernel keeps the thread from user level meanwhile. (tid) 0 means
 * the thread whose context is scheduled in on who->cpu. Returns 1
 * (blocked), 0 (not blocked, or no such context), -EINVAL (not a guest
 * caller).
 */
int vpmu_thread_blocked(struct vpmu_domain *d, const struct vpmu_caller *who,
			uint32_t tid);

/*
 * The sampling buffer of (fd) for mapping into the guest: (*base) and
 * (*size), or NULL/0 if the context has no buffer. Errors: -EBADF.
 */
int vpmu_ctx_smpl_buf(struct vpmu_domain *d, const struct vpmu_caller *who,
		      int fd, void **base, size_t *size);

/* Copy the statistics of (fd) into (*st). Errors: -EBADF. */
int vpmu_ctx_stats(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		   struct vpmu_ctx_stats *st);

#endif /* VPMU_CMD_H */
