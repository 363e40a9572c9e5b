// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_perm.c: who may monitor what (spec 3.1.7: "Permission to access
 * the target is [implementation specific]; failure gives EPERM"). The
 * driver answers as Linux answers for perf_event_open() and ptrace:
 *
 *   - a thread may be monitored by whoever may read it through ptrace
 *     (PTRACE_MODE_READ_REALCREDS, what perf_event_open() asks for a
 *     task): a thread of the caller's own process; else the caller's
 *     real uid and gid equal the target's real, effective and saved ones
 *     and the target is dumpable, or the caller has CAP_SYS_PTRACE in the
 *     target's user namespace (and in its mm's, for a non-dumpable one);
 *     kernel threads never (they never return to user space, where the
 *     driver installs its scheduler hook);
 *   - a CPU (a system-wide context) by a caller with CAP_PERFMON or
 *     CAP_SYS_ADMIN (perfmon_capable(), perf's test for CPU-wide events
 *     at perf_event_paranoid >= 1).
 *
 * ptrace_may_access() and sysctl_perf_event_paranoid are not exported to
 * modules (Linux 6.1), so the credential rules of __ptrace_may_access()
 * (kernel/ptrace.c) are applied here and the CPU rule is that of the
 * default paranoia (2): security modules (Yama's ptrace_scope, SELinux)
 * are not consulted, and perf_event_paranoid <= 0 does not open
 * system-wide contexts to everyone. README.md and docs/security.md say so.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/uidgid.h>

#include "pvpmu_mod.h"

/* The caller's real ids against every id of (task), under RCU. */
static bool same_ids(const struct cred *cred, const struct cred *tcred)
{
	return uid_eq(cred->uid, tcred->euid) &&
	       uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) &&
	       gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) && gid_eq(cred->gid, tcred->gid);
}

int pvpmu_may_monitor_task(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	struct mm_struct *mm;
	bool ok;

	if (task->flags & PF_KTHREAD)
		return -EPERM;
	if (same_thread_group(task, current))
		return 0;
	rcu_read_lock();
	tcred = __task_cred(task);
	ok    = same_ids(cred, tcred) ||
	     ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (!ok)
		return -EPERM;
	/*
	 * Dumpability after the credentials, as __ptrace_may_access() reads
	 * them: a task that dropped privileges becomes non-dumpable first
	 * (commit_creds()).
	 */
	smp_rmb();
	task_lock(task);
	mm = task->mm;
	if (mm && get_dumpable(mm) != SUID_DUMP_USER &&
	    !ns_capable(mm->user_ns, CAP_SYS_PTRACE))
		ok = false;
	task_unlock(task);
	return ok ? 0 : -EPERM;
}

int pvpmu_may_monitor_cpu(void)
{
	return perfmon_capable() ? 0 : -EPERM;
}
