/* SPDX-License-Identifier: MIT */
/*
 * vmm_sandbox.h: the VMM's seccomp sandbox (docs/security.md).
 *
 * Once set up, each vCPU thread and the control thread restrict themselves
 * to the system calls their run-time paths make (vmm_sandbox_enter): KVM
 * ioctls (vCPU threads), perf events of the VMM's own threads (on any
 * CPU they run on, never CPU-wide or of other processes), reads and
 * writes of open fds,
 * memory without PROT_EXEC, futexes, clocks and timers, signals to the
 * VMM's own threads, and the control socket's accept/send/recv (control
 * thread). Opening or probing files fails with EACCES (library code copes).
 * Any other call is a violation: one line on stderr names the call and the
 * thread, and the process exits with VMM_STATUS_SANDBOX. The main thread
 * (which only waits for them, then removes the socket) and the console
 * input thread are not filtered. `vpmu run --no-sandbox` runs without it.
 */
#ifndef VMM_SANDBOX_H
#define VMM_SANDBOX_H

#include <sys/types.h>

/* Exit status of a VMM that made a forbidden system call: 128 + SIGSYS. */
#define VMM_STATUS_SANDBOX 159

/* Which allow-list a thread gets. */
enum vmm_sandbox_role {
	VMM_SANDBOX_VCPU,    /* a vCPU thread: KVM_RUN and its exits */
	VMM_SANDBOX_CONTROL, /* the control thread: operators' socket */
};

/*
 * Once per process, before the threads start: the SIGSYS handler that
 * reports a violation. 0 or -errno.
 *
 * Test hook: with VPMU_TEST_SANDBOX_VIOLATE=vcpu (or control) in the
 * environment, that role's thread makes a forbidden call (getppid) right
 * after entering the sandbox, so tests see a violation end the VMM. It
 * does nothing without the sandbox.
 */
int vmm_sandbox_init(void);

/*
 * Restrict the calling thread to (role)'s system calls, for good (its
 * later threads inherit the filter). Unblocks SIGSYS in the thread.
 * perf_event_open may name the calling thread (pid 0) or one of the
 * (nr_perf_tids) threads (perf_tids) (the VM's vCPU threads; zeros are
 * skipped), with cpu -1, no group and PERF_FLAG_FD_CLOEXEC, as the perf
 * backend opens events: the ids are fixed here, so every thread an
 * event may count must exist (and have its id) before the call.
 * 0, or -errno (seccomp unavailable: the caller refuses to run).
 */
int vmm_sandbox_enter(enum vmm_sandbox_role role, const pid_t *perf_tids,
		      unsigned int nr_perf_tids);

#endif /* VMM_SANDBOX_H */
