// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_tasks.c: what a host profile needs to name this guest's processes
 * and resolve their symbols (`vpmu report --sort comm,pid,dso,sym`).
 *
 * - At every context switch, the thread that runs next is written into
 *   its CPU's shared page (pid, tid). The VMM reads it when it takes a
 *   sample, so attribution costs no exit.
 * - At exec, the process's name and its executable file mappings are sent
 *   to the VMM (PVPMU_HC_TASK); at a rename, the new name; at the exit of
 *   the last thread, an EXIT. At load, the same for every process already
 *   running.
 *
 * The scheduler's and exec's tracepoints are not exported to modules one
 * by one, so they are found by name among the kernel's tracepoints. The
 * probes run with preemption off: the per-CPU path buffer is theirs, the
 * mmap lock is only tried (an exec'ing task holds no other reference to
 * its new mm, so the try succeeds), and d_path() does not sleep. A kernel
 * without tracepoints, or a VMM without PVPMU_HC_TASK, gets none of this
 * and the module works as before.
 */
#include <linux/binfmts.h>
#include <linux/dcache.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/io.h>

#include "pvpmu_mod.h"

#ifdef CONFIG_TRACEPOINTS

#define SCAN_MAX 4096 /* processes reported at load */

static char **path_bufs; /* [nr_cpu_ids], PVPMU_TASK_PATH_MAX each */
static bool started;

static struct pvpmu_shared_page *this_page(void)
{
	return page_address(pvpmu_shared_pages[smp_processor_id()]);
}

/*
 * One record. In the time of current, whose own context (pfstat's, say)
 * counts the call as it counts any exit: it goes with the driver's other
 * own calls in pvpmu_ioc_info.sched_outs.
 */
static int send(struct pvpmu_hc_task *req)
{
	int ret = lx_hc_task(req);

	if (ret != -PVPMU_ENOSYS && req->counted)
		pvpmu_count_own_call();
	return ret;
}

static void send_comm(struct task_struct *t, const char *comm, u32 flags)
{
	struct pvpmu_hc_task req = {
		.op    = PVPMU_TASK_COMM,
		.pid   = task_tgid_nr(t),
		.tid   = task_pid_nr(t),
		.flags = flags,
	};

	strscpy((char *)req.comm, comm, sizeof(req.comm));
	if (req.comm[0])
		send(&req);
}

/* One executable file mapping; preemption off (the path buffer). */
static void send_mmap(pid_t pid, struct vm_area_struct *vma)
{
	char *buf                = path_bufs[smp_processor_id()];
	struct pvpmu_hc_task req = {
		.op    = PVPMU_TASK_MMAP,
		.pid   = pid,
		.start = vma->vm_start,
		.len   = vma->vm_end - vma->vm_start,
		.pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT,
	};
	char *p = d_path(&vma->vm_file->f_path, buf, PVPMU_TASK_PATH_MAX);

	if (IS_ERR(p) || *p != '/')
		return; /* too long, or not reachable from the root */
	req.path_len = strlen(p);
	/* d_path() writes at the end: move it to the start (contiguous). */
	memmove(buf, p, req.path_len);
	req.path_gpa = virt_to_phys(buf);
	send(&req);
}

static void send_maps(pid_t pid, struct mm_struct *mm)
{
	struct vm_area_struct *vma;
	VMA_ITERATOR(vmi, mm, 0);

	for_each_vma(vmi, vma)
	{
		if ((vma->vm_flags & VM_EXEC) && vma->vm_file)
			send_mmap(pid, vma);
	}
}

static void probe_switch(void *data, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	struct pvpmu_shared_page *sp = this_page();

	WRITE_ONCE(sp->pid, task_tgid_nr(next));
	WRITE_ONCE(sp->tid, task_pid_nr(next));
}

static void probe_exec(void *data, struct task_struct *p, pid_t old_pid,
		       struct linux_binprm *bprm)
{
	struct mm_struct *mm = p->mm;

	send_comm(p, p->comm, PVPMU_TASK_EXEC);
	if (mm && mmap_read_trylock(mm)) {
		send_maps(task_tgid_nr(p), mm);
		mmap_read_unlock(mm);
	}
}

static void probe_rename(void *data, struct task_struct *t, const char *comm)
{
	send_comm(t, comm, 0);
}

static void probe_exit(void *data, struct task_struct *p)
{
	struct pvpmu_hc_task req = {.op  = PVPMU_TASK_EXIT,
				    .pid = task_tgid_nr(p)};

	/* Threads exit one by one: the process ends with the last. */
	if (!atomic_read(&p->signal->live))
		send(&req);
}

static const struct {
	const char *name;
	void *probe;
} probes[] = {
	{"sched_switch", probe_switch},
	{"sched_process_exec", probe_exec},
	{"task_rename", probe_rename},
	{"sched_process_exit", probe_exit},
};

static struct tracepoint *found[ARRAY_SIZE(probes)];

static void find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		if (!strcmp(tp->name, probes[i].name))
			found[i] = tp;
	}
}

/* Every process running now: its name and, if it has one, its maps. */
static void scan_running(void)
{
	struct task_struct *p, *t;
	pid_t *pids;
	unsigned int n = 0, i;

	pids = kmalloc_array(SCAN_MAX, sizeof(*pids), GFP_KERNEL);
	if (!pids)
		return;
	rcu_read_lock();
	for_each_process(p)
	{
		if (n < SCAN_MAX)
			pids[n++] = task_tgid_nr(p);
	}
	rcu_read_unlock();
	for (i = 0; i < n; i++) {
		struct mm_struct *mm;

		rcu_read_lock();
		t = pid_task(find_vpid(pids[i]), PIDTYPE_PID);
		if (t)
			get_task_struct(t);
		rcu_read_unlock();
		if (!t)
			continue;
		send_comm(t, t->comm, 0);
		mm = get_task_mm(t);
		if (mm) {
			mmap_read_lock(mm);
			get_cpu();
			send_maps(pids[i], mm);
			put_cpu();
			mmap_read_unlock(mm);
			mmput(mm);
		}
		put_task_struct(t);
	}
	kfree(pids);
}

static void free_bufs(void)
{
	unsigned int cpu;

	if (!path_bufs)
		return;
	for_each_possible_cpu(cpu) kfree(path_bufs[cpu]);
	kfree(path_bufs);
	path_bufs = NULL;
}

int pvpmu_tasks_start(void)
{
	struct pvpmu_hc_task first = {.op  = PVPMU_TASK_COMM,
				      .pid = task_tgid_nr(current),
				      .tid = task_pid_nr(current)};
	unsigned int cpu, i;
	int ret;

	/* The loader's own name, first: an older VMM answers ENOSYS. */
	strscpy((char *)first.comm, current->comm, sizeof(first.comm));
	if (send(&first) == -PVPMU_ENOSYS) {
		pr_info("pvpmu: the VMM takes no process records\n");
		return 0;
	}
	path_bufs = kcalloc(nr_cpu_ids, sizeof(*path_bufs), GFP_KERNEL);
	if (!path_bufs)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
	{
		path_bufs[cpu] = kmalloc(PVPMU_TASK_PATH_MAX, GFP_KERNEL);
		if (!path_bufs[cpu]) {
			free_bufs();
			return -ENOMEM;
		}
	}
	for_each_kernel_tracepoint(find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		if (!found[i]) {
			pr_info("pvpmu: no tracepoint %s: no process records\n",
				probes[i].name);
			free_bufs();
			return 0;
		}
	}
	for (i = 0; i < ARRAY_SIZE(probes); i++) {
		ret = tracepoint_probe_register(found[i], probes[i].probe,
						NULL);
		if (ret) {
			while (i--)
				tracepoint_probe_unregister(
					found[i], probes[i].probe, NULL);
			tracepoint_synchronize_unregister();
			free_bufs();
			return ret;
		}
	}
	started = true;
	scan_running();
	return 0;
}

void pvpmu_tasks_stop(void)
{
	unsigned int i;

	if (!started)
		return;
	for (i = 0; i < ARRAY_SIZE(probes); i++)
		tracepoint_probe_unregister(found[i], probes[i].probe, NULL);
	tracepoint_synchronize_unregister();
	started = false;
	free_bufs();
}

#else /* !CONFIG_TRACEPOINTS */

int pvpmu_tasks_start(void)
{
	pr_info("pvpmu: kernel without tracepoints: no process records\n");
	return 0;
}

void pvpmu_tasks_stop(void)
{
}

#endif
