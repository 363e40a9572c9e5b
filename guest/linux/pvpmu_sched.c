// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_sched.c: per-thread contexts and messages.
 *
 * A per-thread context is counted by the VMM only between PVPMU_SCHED_IN
 * and PVPMU_SCHED_OUT on a vCPU, so the driver hangs a preempt notifier on
 * the monitored task (the kernel's scheduler hook for modules; vpmu-0003
 * lets the config turn it on). A notifier can only be added to or removed
 * from the running task's own list, so for another task both are task
 * works that run in it (at its next return to user space, or at its exit).
 * The notifier holds a reference on the context (and the module) until it
 * is off the list, or its task made its last switch (TASK_DEAD), after
 * which the context may be freed once an RCU grace period has passed.
 *
 * Messages: the notification interrupt's work item (or read/poll) fetches
 * them with PVPMU_HC_READ_MSG into a small queue per context, wakes
 * readers and pollers and sends SIGIO. An overflow message of a
 * PFM_FL_NOTIFY_BLOCK context queues a task work on the monitored thread
 * that waits, interruptibly, for the next PFM_RESTART (spec 3.3.5).
 */
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>

#include "pvpmu_mod.h"

static struct pvpmu_ctx *of_pn(struct preempt_notifier *pn)
{
	return container_of(pn, struct pvpmu_ctx, pn);
}

/* hc_lock held, preemption off: the task runs on (cpu) from now on. */
static void sched_in_locked(struct pvpmu_ctx *ctx, int cpu)
{
	struct pvpmu_shared_page *sp;

	if (ctx->closed || !ctx->loaded || ctx->sched_cpu >= 0)
		return;
	sp      = page_address(pvpmu_shared_pages[cpu]);
	sp->pid = task_tgid_vnr(current);
	sp->tid = task_pid_vnr(current);
	if (!lx_hc_sched(ctx->hfd, PVPMU_SCHED_IN, task_pid_vnr(current),
			 NULL)) {
		ctx->sched_cpu = cpu;
		ctx->last_cpu  = cpu;
	}
}

/*
 * Only the calls the context counted (started, not masked) are ours in its
 * counts: a switch-out between PFM_LOAD_CONTEXT and PFM_START is not.
 */
static void sched_out_locked(struct pvpmu_ctx *ctx)
{
	u32 counting = 0;

	if (ctx->closed || ctx->sched_cpu < 0)
		return;
	lx_hc_sched(ctx->hfd, PVPMU_SCHED_OUT, task_pid_vnr(current),
		    &counting);
	if (counting)
		ctx->sched_outs++;
	ctx->sched_cpu = -1;
}

static struct preempt_ops hook_ops;

struct pvpmu_ctx *pvpmu_ctx_of_current(void)
{
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &current->preempt_notifiers, link)
	{
		if (pn->ops == &hook_ops)
			return of_pn(pn);
	}
	return NULL;
}

void pvpmu_count_own_call(void)
{
	struct pvpmu_ctx *ctx = pvpmu_ctx_of_current();
	unsigned long flags;

	if (!ctx)
		return;
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->sched_outs++;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
}

static void hook_in(struct preempt_notifier *pn, int cpu)
{
	struct pvpmu_ctx *ctx = of_pn(pn);
	unsigned long flags;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	sched_in_locked(ctx, cpu);
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
}

/* Runs with the runqueue locked: hypercalls only, no wakeups, no frees. */
static void hook_out(struct preempt_notifier *pn, struct task_struct *next)
{
	struct pvpmu_ctx *ctx = of_pn(pn);
	unsigned long flags;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	sched_out_locked(ctx);
	if (READ_ONCE(current->__state) == TASK_DEAD) {
		/* The thread's last switch (spec 3.3.6: unload, END msg). */
		if (!ctx->closed && ctx->loaded)
			lx_hc_sched(ctx->hfd, PVPMU_SCHED_EXIT,
				    task_pid_vnr(current), NULL);
		ctx->loaded    = false;
		ctx->task_dead = true;
	}
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
}

static struct preempt_ops hook_ops = {
	.sched_in  = hook_in,
	.sched_out = hook_out,
};

/* In the monitored task: put the notifier on its list, count from now. */
static void do_register(struct pvpmu_ctx *ctx)
{
	unsigned long flags;
	bool drop = false;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	if (ctx->closed) {
		drop = true;
	} else {
		preempt_notifier_init(&ctx->pn, &hook_ops);
		preempt_notifier_register(&ctx->pn);
		ctx->registered = true;
		sched_in_locked(ctx, smp_processor_id());
	}
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (drop) {
		pvpmu_ctx_put(ctx);
		module_put(THIS_MODULE);
	}
}

static void reg_fn(struct callback_head *cb)
{
	do_register(container_of(cb, struct pvpmu_ctx, reg_work));
}

/* In the monitored task: take the notifier off its list, drop its ref. */
static void do_unregister(struct pvpmu_ctx *ctx)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	sched_out_locked(ctx);
	preempt_notifier_unregister(&ctx->pn);
	ctx->registered = false;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	pvpmu_ctx_put(ctx);
	module_put(THIS_MODULE);
}

static void unreg_fn(struct callback_head *cb)
{
	do_unregister(container_of(cb, struct pvpmu_ctx, unreg_work));
}

int pvpmu_sched_attach(struct pvpmu_ctx *ctx, struct task_struct *task)
{
	ctx->task = task; /* the caller's reference */
	kref_get(&ctx->ref);
	__module_get(THIS_MODULE);
	if (task == current) {
		do_register(ctx);
		return 0;
	}
	init_task_work(&ctx->reg_work, reg_fn);
	if (task_work_add(task, &ctx->reg_work, TWA_RESUME)) {
		pvpmu_ctx_put(ctx);
		module_put(THIS_MODULE);
		return -ESRCH; /* exiting */
	}
	return 0;
}

/*
 * The context's file is gone (closed already set): get the notifier off
 * the task, in the task. Sleeps.
 */
void pvpmu_sched_detach(struct pvpmu_ctx *ctx)
{
	unsigned long flags;
	bool reg, dead;

	for (;;) {
		raw_spin_lock_irqsave(&ctx->hc_lock, flags);
		reg  = ctx->registered;
		dead = ctx->task_dead;
		raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
		if (!reg)
			return; /* never registered, or a pending reg_fn drops
				 */
		if (dead) {
			/* Its last switch is over after a grace period. */
			synchronize_rcu();
			pvpmu_ctx_put(ctx);
			module_put(THIS_MODULE);
			return;
		}
		if (ctx->task == current) {
			do_unregister(ctx);
			return;
		}
		init_task_work(&ctx->unreg_work, unreg_fn);
		if (!task_work_add(ctx->task, &ctx->unreg_work, TWA_RESUME))
			return;
		msleep(10); /* exiting: wait for its last switch */
	}
}

/*
 * The monitored thread exited and made its last switch (spec 3.3.6: the
 * context is unloaded, END queued): let go of it, so that the context may
 * be loaded onto another thread. ctx->lock held; sleeps.
 */
void pvpmu_sched_reap(struct pvpmu_ctx *ctx)
{
	struct task_struct *task;
	unsigned long flags;
	bool reg;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	if (!ctx->task || !ctx->task_dead) {
		raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
		return;
	}
	reg             = ctx->registered;
	task            = ctx->task;
	ctx->registered = false;
	ctx->task       = NULL;
	ctx->task_dead  = false;
	ctx->sched_cpu  = -1;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (reg) {
		/* Its last switch is over after a grace period. */
		synchronize_rcu();
		pvpmu_ctx_put(ctx); /* the notifier's; the file holds one */
		module_put(THIS_MODULE);
	}
	put_task_struct(task);
}

/*
 * Spec 3.1.15, Fig. 3.10: the self-monitoring thread closes its
 * descriptor (current is the monitored thread). Another process may still
 * hold the file: the context is unloaded and detached from this thread,
 * so that the others may load it elsewhere. ctx->lock held.
 */
void pvpmu_sched_self_close(struct pvpmu_ctx *ctx)
{
	struct task_struct *task = ctx->task;
	unsigned long flags;
	bool loaded, reg;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	loaded = ctx->loaded && !ctx->closed;
	reg    = ctx->registered;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (loaded)
		lx_hc_pfm(ctx->hfd, PFM_UNLOAD_CONTEXT, 0, NULL, 0, 0);
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->loaded    = false;
	ctx->sched_cpu = -1; /* unloaded: no SCHED_OUT follows */
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (reg)
		do_unregister(ctx);
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->task = NULL;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	put_task_struct(task);
}

/* --- messages --- */

static bool push(struct pvpmu_ctx *ctx, const union pfm_msg *m)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&ctx->mlock, flags);
	ok = ctx->count < PVPMU_MSG_QUEUE;
	if (ok) {
		ctx->msgs[(ctx->head + ctx->count) % PVPMU_MSG_QUEUE] = *m;
		ctx->count++;
		if (m->msg_type == PFM_MSG_OVFL)
			ctx->block_seq = ctx->restarts;
	}
	spin_unlock_irqrestore(&ctx->mlock, flags);
	return ok;
}

bool pvpmu_msg_pop(struct pvpmu_ctx *ctx, union pfm_msg *msg)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&ctx->mlock, flags);
	ok = ctx->count > 0;
	if (ok) {
		*msg      = ctx->msgs[ctx->head];
		ctx->head = (ctx->head + 1) % PVPMU_MSG_QUEUE;
		ctx->count--;
	}
	spin_unlock_irqrestore(&ctx->mlock, flags);
	return ok;
}

bool pvpmu_msg_ready(struct pvpmu_ctx *ctx)
{
	return READ_ONCE(ctx->count) > 0 || READ_ONCE(ctx->closed);
}

static bool restart_seen(struct pvpmu_ctx *ctx)
{
	return READ_ONCE(ctx->restarts) != READ_ONCE(ctx->block_seq) ||
	       READ_ONCE(ctx->closed);
}

/* In the monitored thread, before it returns to user space. */
static void block_fn(struct callback_head *cb)
{
	struct pvpmu_ctx *ctx = container_of(cb, struct pvpmu_ctx, block_work);

	wait_event_interruptible(ctx->wq, restart_seen(ctx));
	atomic_set(&ctx->block_queued, 0);
	pvpmu_ctx_put(ctx);
}

static void queue_block(struct pvpmu_ctx *ctx)
{
	struct task_struct *task;
	unsigned long flags;

	/* ctx->task changes under hc_lock (reap, self-close): pin it. */
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	task = ctx->task_dead ? NULL : ctx->task;
	if (task)
		get_task_struct(task);
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (!task)
		return;
	if (!atomic_cmpxchg(&ctx->block_queued, 0, 1)) {
		kref_get(&ctx->ref);
		init_task_work(&ctx->block_work, block_fn);
		if (task_work_add(task, &ctx->block_work, TWA_RESUME)) {
			atomic_set(&ctx->block_queued, 0);
			pvpmu_ctx_put(ctx); /* not the last: the file's */
		}
	}
	put_task_struct(task);
}

int pvpmu_ctx_drain(struct pvpmu_ctx *ctx)
{
	union pfm_msg m;
	unsigned long flags;
	bool ovfl = false;
	int n     = 0;

	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	while (!ctx->closed && ctx->hfd >= 0 && n < PVPMU_DRAIN_BATCH &&
	       READ_ONCE(ctx->count) < PVPMU_MSG_QUEUE &&
	       !lx_hc_msg(ctx->hfd, &m)) {
		push(ctx, &m);
		ovfl |= m.msg_type == PFM_MSG_OVFL;
		n++;
	}
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (!n)
		return 0;
	wake_up_interruptible_poll(&ctx->wq, EPOLLIN | EPOLLRDNORM);
	kill_fasync(&ctx->fasync, SIGIO, POLL_IN);
	if (ovfl && (ctx->flags & PFM_FL_NOTIFY_BLOCK))
		queue_block(ctx);
	return n;
}

/*
 * Spec 3.3.7, 3.4.3: with PFM_FL_OVFL_NO_MSG an overflow queues no
 * message, yet the owner still gets its signal. The VMM raises the vector
 * on the vCPU the context is loaded on (a thread's: where it was switched
 * in), and this is the only trace of such a notification: every
 * OVFL_NO_MSG context loaded on a CPU whose vector fired gets SIGIO.
 */
void pvpmu_ctx_notified(struct pvpmu_ctx *ctx, const struct cpumask *fired)
{
	int cpu;

	if (!(ctx->flags & PFM_FL_OVFL_NO_MSG) || !READ_ONCE(ctx->loaded))
		return;
	cpu = READ_ONCE(ctx->load_cpu);
	if (cpu < 0)
		cpu = READ_ONCE(ctx->last_cpu);
	if (cpu >= 0 && cpumask_test_cpu(cpu, fired))
		kill_fasync(&ctx->fasync, SIGIO, POLL_IN);
}

void pvpmu_restarted(struct pvpmu_ctx *ctx)
{
	unsigned long flags;

	spin_lock_irqsave(&ctx->mlock, flags);
	ctx->restarts++;
	spin_unlock_irqrestore(&ctx->mlock, flags);
	wake_up_interruptible_all(&ctx->wq);
}
