// SPDX-License-Identifier: MIT
/*
 * test_sandbox.c: the seccomp filters of vmm/sandbox in forked children
 * (no KVM): what a role allows passes, file opens fail with EACCES, and a
 * forbidden call ends the process with VMM_STATUS_SANDBOX and one line on
 * stderr naming the call and the thread's role; perf_event_open only on
 * the VMM's own threads (the caller and the ids it names), never
 * CPU-wide or on another process. Also the test hook
 * (VPMU_TEST_SANDBOX_VIOLATE) that the KVM suite uses to end a real VMM.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmm_sandbox.h"

struct child {
	int status;     /* exit status, or 128 + signal */
	char out[256];  /* what the child reported on its pipe */
	char err[1024]; /* its stderr */
};

/*
 * What run_child's child does before it enters the sandbox (start a
 * thread, say), and the thread ids it lets perf_event_open name.
 */
static void (*child_setup)(void);
static pid_t child_tids[4];
static unsigned int nr_child_tids;

static void drain(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
}

/* Run (fn) in a child that entered (role)'s sandbox; (fn) writes to (fd). */
static void run_child(struct child *c, enum vmm_sandbox_role role,
		      void (*fn)(int fd))
{
	int out[2], err[2], st;
	pid_t pid;

	cr_assert(eq(int, pipe(out), 0));
	cr_assert(eq(int, pipe(err), 0));
	pid = fork();
	cr_assert(ge(int, pid, 0));
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		dup2(err[1], STDERR_FILENO);
		if (child_setup)
			child_setup();
		if (vmm_sandbox_init() ||
		    vmm_sandbox_enter(role, child_tids, nr_child_tids))
			_exit(2);
		fn(out[1]);
		_exit(0);
	}
	close(out[1]);
	close(err[1]);
	drain(out[0], c->out, sizeof(c->out));
	drain(err[0], c->err, sizeof(c->err));
	close(out[0]);
	close(err[0]);
	cr_assert(eq(int, waitpid(pid, &st, 0), pid));
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void say(int fd, const char *what)
{
	if (write(fd, what, strlen(what)) < 0)
		_exit(3);
}

/* What both roles do all the time: clocks, memory, locks, kicks. */
static void allowed_calls(int fd)
{
	struct timespec ts;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	void *p;

	if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts))
		_exit(4);
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(5);
	memset(p, 1, 1 << 20);
	munmap(p, 1 << 20);
	free(malloc(4 << 20));
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	if (syscall(SYS_tgkill, getpid(), gettid(), 0))
		_exit(6);
	say(fd, "allowed;");
	if (open("/etc/hostname", O_RDONLY) < 0 && errno == EACCES)
		say(fd, "open-refused;");
	if (access("/", F_OK) < 0 && errno == EACCES)
		say(fd, "access-refused;");
}

static void then_socket(int fd)
{
	allowed_calls(fd);
	say(fd, "socket;");
	socket(AF_INET, SOCK_STREAM, 0); /* no role creates sockets */
	say(fd, "survived;");
}

Test(vmm_sandbox, vcpu_allows_its_calls_and_kills_on_others)
{
	struct child c;

	run_child(&c, VMM_SANDBOX_VCPU, then_socket);
	cr_expect(
		eq(str, c.out, "allowed;open-refused;access-refused;socket;"));
	cr_expect(eq(int, c.status, VMM_STATUS_SANDBOX), "stderr: %s", c.err);
	cr_expect(not(eq(ptr,
			 strstr(c.err, "vpmu: sandbox: forbidden system "
				       "call 41 "),
			 NULL)),
		  "%s", c.err);
	cr_expect(not(eq(ptr, strstr(c.err, "on the vcpu thread"), NULL)), "%s",
		  c.err);
}

static void kvm_run_ioctl(int fd)
{
	allowed_calls(fd);
	say(fd, "ioctl;");
	ioctl(-1, KVM_RUN, 0); /* allowed: fails with EBADF */
	say(fd, "kvm-ok;");
}

Test(vmm_sandbox, vcpu_may_use_kvm_ioctls)
{
	struct child c;

	run_child(&c, VMM_SANDBOX_VCPU, kvm_run_ioctl);
	cr_expect(eq(int, c.status, 0), "stderr: %s", c.err);
	cr_expect(eq(str, c.out,
		     "allowed;open-refused;access-refused;ioctl;kvm-ok;"));
}

Test(vmm_sandbox, control_thread_may_not_run_a_vcpu)
{
	struct child c;

	run_child(&c, VMM_SANDBOX_CONTROL, kvm_run_ioctl);
	cr_expect(eq(int, c.status, VMM_STATUS_SANDBOX), "stderr: %s", c.err);
	cr_expect(eq(str, c.out, "allowed;open-refused;access-refused;ioctl;"));
	cr_expect(not(eq(ptr, strstr(c.err, "on the control thread"), NULL)),
		  "%s", c.err);
}

static void accept_bad_fd(int fd)
{
	allowed_calls(fd);
	/* accept of a bad fd: allowed, fails with EBADF. */
	if (accept4(-1, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EBADF)
		say(fd, "accept;");
}

Test(vmm_sandbox, control_thread_may_accept)
{
	struct child c;

	run_child(&c, VMM_SANDBOX_CONTROL, accept_bad_fd);
	cr_expect(eq(int, c.status, 0), "stderr: %s", c.err);
	cr_expect(
		eq(str, c.out, "allowed;open-refused;access-refused;accept;"));
}

Test(vmm_sandbox, vcpu_may_not_accept)
{
	struct child c;

	run_child(&c, VMM_SANDBOX_VCPU, accept_bad_fd);
	cr_expect(eq(int, c.status, VMM_STATUS_SANDBOX), "stderr: %s", c.err);
}

static void exec_memory(int fd)
{
	say(fd, "mmap;");
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
	     0);
	say(fd, "survived;");
}

Test(vmm_sandbox, executable_memory_is_forbidden)
{
	struct child c;

	run_child(&c, VMM_SANDBOX_VCPU, exec_memory);
	cr_expect(eq(str, c.out, "mmap;"));
	cr_expect(eq(int, c.status, VMM_STATUS_SANDBOX), "stderr: %s", c.err);
}

static void nothing(int fd)
{
	say(fd, "entered;");
}

Test(vmm_sandbox, test_hook_violates_in_its_role_only)
{
	struct child c;

	setenv("VPMU_TEST_SANDBOX_VIOLATE", "vcpu", 1);
	run_child(&c, VMM_SANDBOX_VCPU, nothing);
	cr_expect(eq(int, c.status, VMM_STATUS_SANDBOX), "stderr: %s", c.err);
	cr_expect(eq(str, c.out, ""), "died on entering");
	run_child(&c, VMM_SANDBOX_CONTROL, nothing);
	cr_expect(eq(int, c.status, 0), "stderr: %s", c.err);
	cr_expect(eq(str, c.out, "entered;"));
	unsetenv("VPMU_TEST_SANDBOX_VIOLATE");
}

/*
 * perf_event_open: the perf backend opens each event on one thread of the
 * VMM (pid 0 for its probes, a vCPU thread's id for events), on any CPU
 * (cpu -1), without a group, with PERF_FLAG_FD_CLOEXEC. A CPU-wide event
 * or one on another process would let a taken-over thread watch the rest
 * of the host: the filter must refuse them, and only them.
 */
#define CPU_ANY_ZX 0xffffffffUL /* cpu -1 as an int left zero-extended */
#define CPU_ANY_SX (~0UL)       /* and sign-extended: both mean -1 */

/* 0 if a task-clock event on (pid, cpu) opens, else the errno. */
static int open_task_clock(unsigned long pid, unsigned long cpu)
{
	struct perf_event_attr attr = {
		.size     = sizeof(attr),
		.type     = PERF_TYPE_SOFTWARE,
		.config   = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
	};
	long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1L,
			  (unsigned long)PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* A thread of the child that sleeps: a "vCPU thread" events may name. */
static atomic_int sibling_tid;

static void *sibling(void *arg)
{
	(void)arg;
	atomic_store(&sibling_tid, (int)gettid());
	for (;;)
		pause();
	return NULL;
}

static void start_sibling(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, sibling, NULL))
		_exit(7);
	while (!atomic_load(&sibling_tid))
		sched_yield();
	child_tids[0] = gettid();
	child_tids[1] = (pid_t)atomic_load(&sibling_tid);
	child_tids[2] = 0; /* a vCPU without a thread: skipped */
	nr_child_tids = 3;
}

static void own_threads(int fd)
{
	char line[128];
	unsigned long tid = (unsigned long)gettid();
	unsigned long sib = (unsigned long)atomic_load(&sibling_tid);

	snprintf(line, sizeof(line), "%d %d %d %d %d %d;",
		 open_task_clock(0, CPU_ANY_ZX), open_task_clock(0, CPU_ANY_SX),
		 open_task_clock(tid, CPU_ANY_ZX),
		 open_task_clock(tid, CPU_ANY_SX),
		 open_task_clock(sib, CPU_ANY_ZX),
		 open_task_clock(sib, CPU_ANY_SX));
	say(fd, line);
}

Test(vmm_sandbox, perf_events_of_own_threads_still_open)
{
	/* Without a filter: what the kernel itself answers (errno or 0). */
	int host = open_task_clock(0, CPU_ANY_SX);
	enum vmm_sandbox_role role;
	char want[128];
	struct child c;

	if (host)
		cr_log_warn("the kernel refuses task-clock here without any "
			    "filter (%s): checking the filter answers alike",
			    strerror(host));
	snprintf(want, sizeof(want), "%d %d %d %d %d %d;", host, host, host,
		 host, host, host);
	child_setup = start_sibling;
	for (role = VMM_SANDBOX_VCPU; role <= VMM_SANDBOX_CONTROL; role++) {
		run_child(&c, role, own_threads);
		cr_expect(eq(int, c.status, 0), "role %d, stderr: %s", role,
			  c.err);
		cr_expect(eq(str, c.out, want), "role %d", role);
	}
}

static unsigned long target_pid, target_cpu;

static void open_target(int fd)
{
	say(fd, "perf;");
	open_task_clock(target_pid, target_cpu);
	say(fd, "survived;");
}

/* (pid, cpu) ends a child of either role as a violation. */
static void expect_refused(unsigned long pid, unsigned long cpu)
{
	enum vmm_sandbox_role role;
	char call[64];
	struct child c;

	snprintf(call, sizeof(call), "forbidden system call %d ",
		 SYS_perf_event_open);
	target_pid  = pid;
	target_cpu  = cpu;
	child_setup = start_sibling; /* the own threads stay allowed */
	for (role = VMM_SANDBOX_VCPU; role <= VMM_SANDBOX_CONTROL; role++) {
		run_child(&c, role, open_target);
		cr_expect(eq(str, c.out, "perf;"), "role %d, pid %ld cpu %ld",
			  role, (long)pid, (long)cpu);
		cr_expect(eq(int, c.status, VMM_STATUS_SANDBOX),
			  "role %d, pid %ld cpu %ld, stderr: %s", role,
			  (long)pid, (long)cpu, c.err);
		cr_expect(not(eq(ptr, strstr(c.err, call), NULL)), "%s", c.err);
	}
}

Test(vmm_sandbox, cpu_wide_perf_events_are_refused)
{
	/* Every task on CPU 0, as a sampling event would read them. */
	expect_refused(~0UL, 0);
	expect_refused(0xffffffffUL, 0);
	/* Even the own thread, restricted to one CPU: not how vpmu opens. */
	expect_refused(0, 0);
}

Test(vmm_sandbox, perf_events_of_other_processes_are_refused)
{
	/* This test process: the child's parent, same uid, so the kernel
	 * alone would let it. */
	expect_refused((unsigned long)getpid(), CPU_ANY_SX);
	expect_refused((unsigned long)getpid(), CPU_ANY_ZX);
	/* Its id with a stray upper half: the kernel reads only the int. */
	expect_refused((1UL << 32) | (unsigned long)getpid(), CPU_ANY_SX);
}
