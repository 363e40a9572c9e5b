// SPDX-License-Identifier: MIT
/*
 * control.c: the state-changing commands of a context (spec 3.1.5-3.1.9):
 * LOAD, UNLOAD, START, STOP, RESTART, plus the per-thread scheduling hooks
 * the guest driver calls and the monitored thread's exit (3.3.6).
 */
#include "cmd_priv.h"

#include <errno.h>

#include "vpmu_mech.h"

/*
 * Loaded contexts of (ctx)'s owner on the same vCPU/thread as it. Slots
 * past ctx_end were never used: a session's LOAD need not look at them.
 */
static unsigned int nr_taken(struct vpmu_domain *d, const struct vpmu_ctx *ctx,
			     uint32_t load_pid)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < d->ctx_end; i++) {
		const struct vpmu_ctx *o = d->ctx[i];

		if (!o || o == ctx || o->state != VPMU_CTX_LOADED ||
		    o->owner != ctx->owner || o->load_pid != load_pid)
			continue;
		if ((o->flags ^ ctx->flags) & PFM_FL_SYSTEM_WIDE)
			continue;
		n++;
	}
	return n;
}

/*
 * 3.1.7: one context per thread and one vCPU-wide per vCPU for the guest;
 * host operators, outside the guest's perfmon2 view, may stack up to
 * VPMU_CPU_MAX_HOST vCPU-wide contexts on a vCPU.
 */
static unsigned int max_taken(const struct vpmu_ctx *ctx)
{
	_Static_assert(VPMU_CPU_MAX_HOST + 3 <= VPMU_CPU_MAX_CTX,
		       "guest vCPU-wide, thread and arch contexts fit too");
	if (ctx->owner == VPMU_OWNER_HOST && (ctx->flags & PFM_FL_SYSTEM_WIDE))
		return VPMU_CPU_MAX_HOST;
	return 1;
}

/* 3.1.7: where a load may go; sets (*cpu) for vCPU-wide contexts. */
static int check_target(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
			const struct pfarg_load *load, struct vpmu_cpu **cpu)
{
	struct vpmu_domain *d = ctx->dom;

	*cpu = NULL;
	if (ctx->flags & PFM_FL_SYSTEM_WIDE) {
		if (load->load_pid >= VPMU_MAX_CPUS || !d->cpus[load->load_pid])
			return -EINVAL;
		*cpu = d->cpus[load->load_pid];
		/* The guest loads only on the vCPU it runs on ("self"). */
		if (who->owner == VPMU_OWNER_GUEST && who->cpu != *cpu)
			return -EINVAL;
	} else {
		ctx->is_self = who->owner == VPMU_OWNER_GUEST &&
			       who->tid == load->load_pid;
		/* Table 3.2: no NOTIFY_BLOCK for self-monitoring. */
		if (ctx->is_self && (ctx->flags & PFM_FL_NOTIFY_BLOCK))
			return -EINVAL;
	}
	return nr_taken(d, ctx, load->load_pid) >= max_taken(ctx) ? -EBUSY : 0;
}

/*
 * 3.1.7: check the set list and the target, then start a new session:
 * empty queue (3.3.5), cleared switch records (3.1.12), unmasked and
 * stopped, the load set active (set_runs++, thresholds and timeout
 * reloaded). A vCPU-wide context goes onto its vCPU now.
 */
static int do_load(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		   const struct pfarg_load *load)
{
	struct vpmu_set *s;
	struct vpmu_cpu *cpu;
	unsigned int i;
	int ret;

	if (ctx->state != VPMU_CTX_UNLOADED)
		return -EBUSY;
	s = vpmu_set_find(ctx, load->load_set);
	if (load->reserved0 || !s || vpmu_sets_check_chain(ctx))
		return -EINVAL;
	ret = check_target(ctx, who, load, &cpu);
	if (ret)
		return ret;
	vpmu_msgq_reset(&ctx->q); /* 3.3.5 */
	for (i = 0; i < ctx->nr_sets; i++) {
		ctx->sets[i]->switch_pmds   = 0; /* 3.1.12 */
		ctx->sets[i]->pending_reset = 0;
	}
	ctx->is_active      = false;
	ctx->is_masked      = false;
	ctx->switch_pending = false;
	ctx->is_blocked     = false;
	ctx->ovfl_pending   = 0;
	ctx->enabled_ns     = 0;
	ctx->thr_count      = 0;
	ctx->load_pid       = load->load_pid;
	vpmu_set_activate(ctx, s, false);
	/* A backend that cannot open an event: "not at this time". */
	if (cpu && vpmu_cpu_attach(cpu, ctx))
		return -EBUSY;
	ctx->state = VPMU_CTX_LOADED;
	vpmu_thr_reset(ctx);
	return 0;
}

/*
 * The shape of every command below: under the domain lock, (find) looks
 * context (fd) up and checks its kind or state, then (body) runs on it
 * with the caller (who) and the command's own argument (arg).
 */
typedef int (*ctx_find_fn)(struct vpmu_domain *d, const struct vpmu_caller *who,
			   int fd, struct vpmu_ctx **out);
typedef int (*ctx_body_fn)(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
			   const void *arg);

static int ctx_run(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		   ctx_find_fn find, ctx_body_fn body, const void *arg)
{
	struct vpmu_ctx *ctx;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = find(d, who, fd, &ctx);
	if (!ret)
		ret = body(ctx, who, arg);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* The argument array of LOAD and START, and how many elements it has. */
struct ctx_args {
	const void *arr;
	int n;
};

static int load(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		const void *arg)
{
	const struct ctx_args *a = arg;

	if (!a->arr || a->n != 1)
		return -EFAULT;
	return do_load(ctx, who, a->arr);
}

int vpmu_ctx_load(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		  const struct pfarg_load *load_arg, int n)
{
	struct ctx_args a = {.arr = load_arg, .n = n};

	return ctx_run(d, who, fd, vpmu_ctx_lookup, load, &a);
}

/* Look (fd) up and require it loaded: the prologue of most commands. */
static int loaded_ctx(struct vpmu_domain *d, const struct vpmu_caller *who,
		      int fd, struct vpmu_ctx **out)
{
	int ret = vpmu_ctx_lookup(d, who, fd, out);

	if (!ret && (*out)->state != VPMU_CTX_LOADED)
		ret = -EBUSY;
	return ret;
}

static int unload(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		  const void *arg)
{
	(void)arg;
	/*
	 * 3.1.8: "To detach a system-wide context, the calling thread must be
	 * running on the CPU core the context is bound to": a guest UNLOAD
	 * from another vCPU cannot be executed at this time. A host operator
	 * runs on no vCPU and may unload its contexts from anywhere.
	 */
	if ((ctx->flags & PFM_FL_SYSTEM_WIDE) &&
	    who->owner == VPMU_OWNER_GUEST && who->cpu != ctx->cpu)
		return -EBUSY;
	return vpmu_ctx_do_unload(ctx);
}

int vpmu_ctx_unload(struct vpmu_domain *d, const struct vpmu_caller *who,
		    int fd)
{
	return ctx_run(d, who, fd, loaded_ctx, unload, NULL);
}

/* 3.1.5: activate; an explicit start_set becomes the active set. */
static int do_start(struct vpmu_ctx *ctx, const struct pfarg_start *start)
{
	struct vpmu_set *s = ctx->active;

	if (start) {
		if (start->reserved0 || start->reserved1)
			return -EINVAL;
		s = vpmu_set_find(ctx, start->start_set);
		if (!s)
			return -EINVAL;
	}
	vpmu_ctx_sync(ctx);
	if (s != ctx->active)
		vpmu_ctx_switch(ctx, s, false);
	ctx->is_active = true;
	if (ctx->cpu)
		vpmu_ctx_rearm(ctx);
	return 0;
}

static int start(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		 const void *arg)
{
	const struct ctx_args *a = arg;

	(void)who;
	if (a->arr ? a->n != 1 : a->n != 0)
		return -EFAULT;
	if (ctx->state != VPMU_CTX_LOADED)
		return -EBUSY;
	return do_start(ctx, a->arr);
}

int vpmu_ctx_start(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		   const struct pfarg_start *start_arg, int n)
{
	struct ctx_args a = {.arr = start_arg, .n = n};

	return ctx_run(d, who, fd, vpmu_ctx_lookup, start, &a);
}

/*
 * 3.1.6: collect what was counted while active, then stop counting and
 * switching. The mask, if any, stays (vpmu.h).
 */
static int stop(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		const void *arg)
{
	(void)who;
	(void)arg;
	vpmu_ctx_sync(ctx);
	ctx->is_active = false;
	if (ctx->cpu)
		vpmu_ctx_rearm(ctx);
	return 0;
}

int vpmu_ctx_stop(struct vpmu_domain *d, const struct vpmu_caller *who, int fd)
{
	return ctx_run(d, who, fd, loaded_ctx, stop, NULL);
}

static int restart(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		   const void *arg)
{
	(void)who;
	vpmu_ctx_sync(ctx);
	return vpmu_ctx_do_restart(ctx, *(const uint64_t *)arg);
}

int vpmu_ctx_restart(struct vpmu_domain *d, const struct vpmu_caller *who,
		     int fd, uint64_t restart_arg)
{
	return ctx_run(d, who, fd, loaded_ctx, restart, &restart_arg);
}

/* Another per-thread context of this owner is scheduled in on (cpu)? */
static bool cpu_has_thread_ctx(const struct vpmu_cpu *cpu,
			       const struct vpmu_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < VPMU_CPU_MAX_CTX; i++) {
		const struct vpmu_ctx *o = cpu->ctx[i];

		if (o && o->owner == ctx->owner &&
		    !(o->flags & PFM_FL_SYSTEM_WIDE))
			return true;
	}
	return false;
}

/* Look (fd) up and require a per-thread context: sched_in/out, exit. */
static int thread_ctx(struct vpmu_domain *d, const struct vpmu_caller *who,
		      int fd, struct vpmu_ctx **out)
{
	int ret = vpmu_ctx_lookup(d, who, fd, out);

	if (!ret && ((*out)->flags & PFM_FL_SYSTEM_WIDE))
		ret = -EINVAL;
	return ret;
}

/*
 * The guest thread of a loaded per-thread context starts running on
 * who->cpu: open its active set's events there. Its timeouts and counts
 * advance only from now on (3.7.6 "not wall-clock").
 */
static int sched_in(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		    const void *arg)
{
	(void)arg;
	if (!who->cpu)
		return -EINVAL;
	if (ctx->state != VPMU_CTX_LOADED || ctx->cpu ||
	    cpu_has_thread_ctx(who->cpu, ctx))
		return -EBUSY;
	if (vpmu_cpu_attach(who->cpu, ctx))
		return -EBUSY; /* no room on the vCPU, or a backend refused */
	return 0;
}

int vpmu_ctx_sched_in(struct vpmu_domain *d, const struct vpmu_caller *who,
		      int fd)
{
	return ctx_run(d, who, fd, thread_ctx, sched_in, NULL);
}

/* The thread leaves the vCPU: fold its last counts, close its events. */
static int sched_out(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		     const void *arg)
{
	bool *counting = (bool *)arg;

	(void)who;
	if (ctx->state != VPMU_CTX_LOADED || !ctx->cpu)
		return -EBUSY;
	if (counting)
		*counting = ctx->is_active && !ctx->is_masked;
	vpmu_cpu_detach(ctx->cpu, ctx);
	return 0;
}

int vpmu_ctx_sched_out(struct vpmu_domain *d, const struct vpmu_caller *who,
		       int fd, bool *counting)
{
	return ctx_run(d, who, fd, thread_ctx, sched_out, counting);
}

/* 3.3.6: save, detach, then append PFM_MSG_END (non-self per-thread). */
static int thread_exit(struct vpmu_ctx *ctx, const struct vpmu_caller *who,
		       const void *arg)
{
	int ret = vpmu_ctx_do_unload(ctx);

	(void)who;
	(void)arg;
	if (!ret && !ctx->is_self)
		vpmu_ctx_notify(ctx, PFM_MSG_END, 0, 0);
	return ret;
}

int vpmu_ctx_thread_exit(struct vpmu_domain *d, const struct vpmu_caller *who,
			 int fd)
{
	return ctx_run(d, who, fd, thread_ctx, thread_exit, NULL);
}

/* Does (ctx), a guest per-thread context, stand for thread (tid)/(cpu)? */
static bool is_thread_of(const struct vpmu_ctx *ctx, uint32_t tid,
			 const struct vpmu_cpu *cpu)
{
	if (!ctx || ctx->owner != VPMU_OWNER_GUEST ||
	    ctx->state != VPMU_CTX_LOADED || (ctx->flags & PFM_FL_SYSTEM_WIDE))
		return false;
	return tid ? ctx->load_pid == tid : cpu && ctx->cpu == cpu;
}

int vpmu_thread_blocked(struct vpmu_domain *d, const struct vpmu_caller *who,
			uint32_t tid)
{
	bool blocked = false;
	uint32_t i;

	if (!who || who->owner != VPMU_OWNER_GUEST)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->ctx_end && !blocked; i++) {
		if (is_thread_of(d->ctx[i], tid, who->cpu))
			blocked = d->ctx[i]->is_blocked;
	}
	pthread_mutex_unlock(&d->lock);
	return blocked;
}
