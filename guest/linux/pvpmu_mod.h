/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvpmu_mod.h: the vpmu paravirtual perfmon2 driver for Linux (pvpmu.ko),
 * what its files share. README.md beside it describes the design.
 *
 * pvpmu_main.c   module init/exit, CPUID detection, per-CPU shared pages
 *                and notification vector, /dev/pvpmu
 * pvpmu_glue.c   the driver core's glue: its hypercalls (pvpmu/abi.h sections
 *                5 and 8) with request blocks in per-CPU slots
 * pvpmu_ctx.c    a context as a file: ioctl, read, poll, fasync, mmap,
 *                release
 * pvpmu_sched.c  per-thread contexts: preempt notifiers, task works,
 *                messages, PFM_FL_NOTIFY_BLOCK
 * pvpmu_perm.c   who may monitor a thread or a CPU (as perf and ptrace)
 * pvpmu_tasks.c  what host profiles need to name processes: the running
 *                thread in the shared page at each switch, names and
 *                executable mappings (PVPMU_HC_TASK) at exec and exit
 */
#ifndef PVPMU_MOD_H
#define PVPMU_MOD_H

#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/types.h>
#include <linux/wait.h>

#include <pvpmu/abi.h>

#define PVPMU_MSG_QUEUE   32         /* messages buffered per context */
#define PVPMU_ARG_MAX     (64 << 10) /* largest perfmonctl() argument */
#define PVPMU_DRAIN_BATCH 16         /* messages fetched per drain */

/* A context: the private data of one open /dev/pvpmu file. */
struct pvpmu_ctx {
	struct kref ref;   /* the file, and a registered notifier */
	struct mutex lock; /* serializes commands on this context */
	int hfd;           /* VMM handle, -1 before PFM_CREATE_CONTEXT */
	u32 flags;         /* PFM_FL_* */
	bool loaded;
	bool closed;  /* HC_CLOSE done: no hypercall may name hfd */
	int load_cpu; /* system-wide: its CPU; else -1 */
	u64 smpl_gpa, smpl_size;

	/* Per-thread: the monitored task and its scheduler hook. */
	struct task_struct *task; /* referenced while set */
	struct preempt_notifier pn;
	struct callback_head reg_work;   /* register in the task */
	struct callback_head unreg_work; /* unregister in the task */
	struct callback_head block_work; /* NOTIFY_BLOCK wait */
	atomic_t block_queued;
	bool self;       /* loaded by the monitored thread itself */
	bool registered; /* pn is on task's list */
	bool task_dead;  /* the task made its last switch */
	int sched_cpu;   /* CPU it is scheduled in on, or -1 */
	int last_cpu;    /* CPU of its latest SCHED_IN, or -1 */
	u64 sched_outs;
	raw_spinlock_t hc_lock; /* closed vs. hypercalls from the hooks */

	/* Messages (spec 3.3.2) and who is told about them. */
	spinlock_t mlock;
	union pfm_msg msgs[PVPMU_MSG_QUEUE];
	unsigned int head, count;
	u64 restarts;  /* PFM_RESTART count: NOTIFY_BLOCK waits on it */
	u64 block_seq; /* restarts at the last overflow message */
	wait_queue_head_t wq;
	struct fasync_struct *fasync;
	struct list_head node; /* on pvpmu_ctx_list */
};

/* pvpmu_main.c */
extern struct page **pvpmu_shared_pages; /* [nr_cpu_ids] */
void pvpmu_ctx_list_add(struct pvpmu_ctx *ctx);
void pvpmu_ctx_list_del(struct pvpmu_ctx *ctx);
/* Fetch every listed context's messages now (also the IRQ's work). */
void pvpmu_drain_all(void);

/* pvpmu_glue.c: each returns 0 or -PVPMU_E* (= -errno). */
int lx_hc_init(void);
void lx_hc_exit(void);
int lx_hc_pfm(int hfd, u32 cmd, int nargs, void *kbuf, u64 size,
	      u64 restart_arg);
int lx_hc_close_ctx(int hfd);
int lx_hc_msg(int hfd, union pfm_msg *msg);
int lx_hc_smpl(int hfd, u64 *gpa, u64 *size);
int lx_hc_vector(u32 vector);
int lx_hc_shared(struct page *pg); /* NULL: unregister */
int lx_hc_sched(int hfd, u32 op, u32 tid, u32 *counting);
int lx_hc_fmt_info(u32 index, struct pvpmu_hc_fmt_info *fi);
int lx_hc_task(struct pvpmu_hc_task *req);
/* Run lx_hc_pfm() on (cpu) (system-wide contexts): same result. */
int lx_hc_pfm_on(int cpu, int hfd, u32 cmd, int nargs, void *kbuf, u64 size,
		 u64 restart_arg);

/* pvpmu_ctx.c */
extern const struct file_operations pvpmu_fops;
void pvpmu_ctx_put(struct pvpmu_ctx *ctx); /* atomic context is fine */

/* pvpmu_sched.c */
/*
 * The per-thread context whose notifier is on current's list, or NULL
 * (current's own list: no lock); and count one of the driver's own
 * hypercalls that current's context counted (pvpmu_ioc_info.sched_outs).
 */
struct pvpmu_ctx *pvpmu_ctx_of_current(void);
void pvpmu_count_own_call(void);
int pvpmu_sched_attach(struct pvpmu_ctx *ctx, struct task_struct *task);
void pvpmu_sched_detach(struct pvpmu_ctx *ctx);
void pvpmu_sched_reap(struct pvpmu_ctx *ctx);
void pvpmu_sched_self_close(struct pvpmu_ctx *ctx);
int pvpmu_ctx_drain(struct pvpmu_ctx *ctx);
bool pvpmu_msg_pop(struct pvpmu_ctx *ctx, union pfm_msg *msg);
bool pvpmu_msg_ready(struct pvpmu_ctx *ctx);
void pvpmu_restarted(struct pvpmu_ctx *ctx);
/* The notification vector fired on (fired) CPUs: OVFL_NO_MSG's SIGIO. */
void pvpmu_ctx_notified(struct pvpmu_ctx *ctx, const struct cpumask *fired);

/* pvpmu_tasks.c: after the shared pages are registered; 0 or -errno. */
int pvpmu_tasks_start(void);
void pvpmu_tasks_stop(void);

/* pvpmu_perm.c: 0 or -EPERM. */
int pvpmu_may_monitor_task(struct task_struct *task);
int pvpmu_may_monitor_cpu(void);

#endif /* PVPMU_MOD_H */
