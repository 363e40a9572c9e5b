// SPDX-License-Identifier: MIT
/*
 * sandbox_filter.c: the allow-lists, one table of rules for both roles,
 * built into a libseccomp filter whose default action is SCMP_ACT_TRAP
 * (sandbox_trap.c reports and exits).
 *
 * Derived from the run-time code paths, not from a trace:
 *   vCPU thread: KVM_RUN and every KVM ioctl an exit handler makes (regs,
 *     events, interrupts, memslots of sampling buffers, MSR lists, stats
 *     fds), libvpmu's backends (perf_event_open as the perf backend calls
 *     it, on the VMM's own threads only; its ioctls, fcntl for
 *     overflow signals, read/pread of counters and KVM stats), timers of
 *     vPMU deadlines, kicks of other vCPUs (tgkill), console and log
 *     writes (stdio may fstat and TCGETS first), the control thread's
 *     eventfd, malloc and sampling buffers (mmap without PROT_EXEC).
 *   control thread: the same minus KVM ioctls other than KVM_GET_STATS_FD
 *     (operators' kvmstat events), plus poll, accept4, getsockopt
 *     (SO_PEERCRED) and send/recv on operators' sockets.
 * File opens and access checks are refused with EACCES instead: library
 * code (perf's paranoid and PMU probes) reads optional files lazily and
 * copes with failure; no run-time path needs a new file.
 */
#include "sandbox_priv.h"

#include <errno.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define VCPU    (1U << VMM_SANDBOX_VCPU)
#define CONTROL (1U << VMM_SANDBOX_CONTROL)
#define BOTH    (VCPU | CONTROL)

#define PERF_IOC_TYPE '$' /* PERF_EVENT_IOC_* */

enum cond {
	ANY,      /* any arguments */
	NO_EXEC,  /* mmap/mprotect: prot (arg 2) without PROT_EXEC */
	OWN_TGID, /* tgkill: only threads of this process (arg 0) */
	IOC_TYPE, /* ioctl: request (arg 1) of type (val) */
	IOC_EQ,   /* ioctl: request (arg 1) == (val) */
	PERF_OWN, /* perf_event_open: own threads, any CPU (perf_rules) */
	REFUSE,   /* not allowed, but answered EACCES instead of a kill */
};

struct rule {
	int nr;
	unsigned int roles;
	enum cond cond;
	unsigned long val;
};

static const struct rule rules[] = {
	/* fds the thread already has: guest console, log, eventfd, perf. */
	{SCMP_SYS(read), BOTH, ANY, 0},
	{SCMP_SYS(write), BOTH, ANY, 0},
	{SCMP_SYS(pread64), BOTH, ANY, 0},
	{SCMP_SYS(readv), BOTH, ANY, 0},
	{SCMP_SYS(writev), BOTH, ANY, 0},
	{SCMP_SYS(lseek), BOTH, ANY, 0},
	/* Disks (vmm/disk): a vCPU serves the virtio-blk queue it notified. */
	{SCMP_SYS(preadv), VCPU, ANY, 0},
	{SCMP_SYS(pwritev), VCPU, ANY, 0},
	{SCMP_SYS(pwrite64), VCPU, ANY, 0},
	{SCMP_SYS(fdatasync), VCPU, ANY, 0},
	{SCMP_SYS(close), BOTH, ANY, 0},
	{SCMP_SYS(fstat), BOTH, ANY, 0},
	{SCMP_SYS(newfstatat), BOTH, ANY, 0},
	{SCMP_SYS(fcntl), BOTH, ANY, 0},
	{SCMP_SYS(poll), BOTH, ANY, 0},
	{SCMP_SYS(ppoll), BOTH, ANY, 0},
	/* ioctls: KVM (vCPU), perf events, isatty(). */
	{SCMP_SYS(ioctl), VCPU, IOC_TYPE, KVMIO},
	{SCMP_SYS(ioctl), CONTROL, IOC_EQ, KVM_GET_STATS_FD},
	{SCMP_SYS(ioctl), BOTH, IOC_TYPE, PERF_IOC_TYPE},
	{SCMP_SYS(ioctl), BOTH, IOC_EQ, TCGETS},
	{SCMP_SYS(perf_event_open), BOTH, PERF_OWN, 0},
	/* Memory: malloc, sampling buffers; never executable. */
	{SCMP_SYS(brk), BOTH, ANY, 0},
	{SCMP_SYS(mmap), BOTH, NO_EXEC, 0},
	{SCMP_SYS(mprotect), BOTH, NO_EXEC, 0},
	{SCMP_SYS(munmap), BOTH, ANY, 0},
	{SCMP_SYS(mremap), BOTH, ANY, 0},
	{SCMP_SYS(madvise), BOTH, ANY, 0},
	/* Locks, clocks, vPMU deadline timers. */
	{SCMP_SYS(futex), BOTH, ANY, 0},
	{SCMP_SYS(sched_yield), BOTH, ANY, 0},
	{SCMP_SYS(nanosleep), BOTH, ANY, 0},
	{SCMP_SYS(clock_nanosleep), BOTH, ANY, 0},
	{SCMP_SYS(clock_gettime), BOTH, ANY, 0},
	{SCMP_SYS(clock_getres), BOTH, ANY, 0},
	{SCMP_SYS(gettimeofday), BOTH, ANY, 0},
	{SCMP_SYS(timer_settime), BOTH, ANY, 0},
	{SCMP_SYS(timer_gettime), BOTH, ANY, 0},
	{SCMP_SYS(timer_delete), BOTH, ANY, 0},
	{SCMP_SYS(getrandom), BOTH, ANY, 0},
	/* Signals: kicks to the VMM's own threads, handler returns. */
	{SCMP_SYS(tgkill), BOTH, OWN_TGID, 0},
	{SCMP_SYS(rt_sigreturn), BOTH, ANY, 0},
	{SCMP_SYS(rt_sigprocmask), BOTH, ANY, 0},
	/* The sanitizers' runtime swaps a thread's alternate signal stack. */
	{SCMP_SYS(sigaltstack), BOTH, ANY, 0},
	{SCMP_SYS(restart_syscall), BOTH, ANY, 0},
	{SCMP_SYS(getpid), BOTH, ANY, 0},
	{SCMP_SYS(gettid), BOTH, ANY, 0},
	{SCMP_SYS(exit), BOTH, ANY, 0},
	{SCMP_SYS(exit_group), BOTH, ANY, 0},
	/* Operators' connections (the listening socket exists already). */
	{SCMP_SYS(accept), CONTROL, ANY, 0},
	{SCMP_SYS(accept4), CONTROL, ANY, 0},
	{SCMP_SYS(getsockopt), CONTROL, ANY, 0},
	{SCMP_SYS(sendto), CONTROL, ANY, 0},
	{SCMP_SYS(sendmsg), CONTROL, ANY, 0},
	{SCMP_SYS(recvfrom), CONTROL, ANY, 0},
	{SCMP_SYS(recvmsg), CONTROL, ANY, 0},
	{SCMP_SYS(shutdown), CONTROL, ANY, 0},
	/* Lazily probed files: refused, not fatal. */
	{SCMP_SYS(open), BOTH, REFUSE, 0},
	{SCMP_SYS(openat), BOTH, REFUSE, 0},
	{SCMP_SYS(access), BOTH, REFUSE, 0},
	{SCMP_SYS(faccessat), BOTH, REFUSE, 0},
	{SCMP_SYS(faccessat2), BOTH, REFUSE, 0},
};

/*
 * The low 32 bits of an argument the kernel reads as an int (pid, cpu,
 * group_fd): the kernel ignores the upper half, and callers leave it
 * either zero or sign-extended (an int passed to variadic syscall() is
 * not widened), so a full 64-bit comparison would miss -1 one way or
 * the other, and a value with a stray upper half would slip past a
 * check the kernel then reads as the plain int.
 */
#define INT_ARG(n, v)                                                          \
	SCMP_CMP((n), SCMP_CMP_MASKED_EQ, 0xffffffffULL,                       \
		 (scmp_datum_t)(uint32_t)(v))

/*
 * perf_event_open only as the perf backend (vpmu/backends/perf.c) calls
 * it: pid 0 (the calling thread: the probes) or one of (tids) (the VM's
 * vCPU threads, which operators' and other vCPUs' contexts count), cpu
 * -1 (the thread on whatever CPU it runs), no group, flags
 * PERF_FLAG_FD_CLOEXEC. A CPU-wide event (pid -1, cpu >= 0) or another
 * process's thread, which would read what other programs on the host
 * do, is a violation. The attr is a pointer and cannot be checked; its
 * inherit bit could only reach threads these threads create, and
 * creating threads is not allowed.
 */
static int perf_rules(scmp_filter_ctx ctx, int nr, const pid_t *tids,
		      unsigned int nr_tids)
{
	unsigned int i;
	int ret;

	for (i = 0, ret = 0; !ret && i <= nr_tids; i++) {
		pid_t pid = i ? tids[i - 1] : 0;

		/* A vCPU without a thread has nothing to count. */
		if (i && !pid)
			continue;
		ret = seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, nr, 4, INT_ARG(1, pid),
			INT_ARG(2, -1), INT_ARG(3, -1),
			SCMP_A4(SCMP_CMP_EQ, PERF_FLAG_FD_CLOEXEC, 0));
	}
	return ret;
}

static int add_rule(scmp_filter_ctx ctx, const struct rule *r)
{
	switch (r->cond) {
	case ANY:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 0);
	case NO_EXEC:
		return seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, r->nr, 1,
			SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	case OWN_TGID:
		return seccomp_rule_add(
			ctx, SCMP_ACT_ALLOW, r->nr, 1,
			SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0));
	case IOC_TYPE:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 1,
					SCMP_A1(SCMP_CMP_MASKED_EQ, 0xff00,
						(scmp_datum_t)r->val << 8));
	case IOC_EQ:
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 1,
					SCMP_A1(SCMP_CMP_EQ, r->val, 0));
	case REFUSE:
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), r->nr, 0);
	case PERF_OWN:
		break; /* perf_rules: it needs the thread ids */
	}
	return -EINVAL;
}

int vmm_sandbox_enter(enum vmm_sandbox_role role, const pid_t *perf_tids,
		      unsigned int nr_perf_tids)
{
	unsigned int bit = 1U << role, i;
	scmp_filter_ctx ctx;
	sigset_t sys;
	int ret = 0;

	if ((unsigned int)role > VMM_SANDBOX_CONTROL)
		return -EINVAL;
	ctx = seccomp_init(SCMP_ACT_TRAP);
	if (!ctx)
		return -ENOMEM;
	for (i = 0; !ret && i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (!(rules[i].roles & bit))
			continue;
		if (rules[i].cond == PERF_OWN)
			ret = perf_rules(ctx, rules[i].nr, perf_tids,
					 nr_perf_tids);
		else
			ret = add_rule(ctx, &rules[i]);
	}
	/* The report needs SIGSYS, whatever the thread blocked. */
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	if (!ret)
		ret = -pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	if (ret)
		return ret;
	vmm_sandbox_role_name = vmm_sandbox_roles[role];
	if (vmm_sandbox_hook(role))
		getppid(); /* test hook: a call no role allows */
	return 0;
}
