// SPDX-License-Identifier: MIT
/*
 * test_sandbox.c: the seccomp filters of vmm/sandbox in forked children
 * (no KVM): what a role allows passes, file opens fail with EACCES, and a
 * forbidden call ends the process with VMM_STATUS_SANDBOX and one line on
 * stderr naming the call and the thread's role. Also the test hook
 * (VPMU_TEST_SANDBOX_VIOLATE) that the KVM suite uses to end a real VMM.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
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
		if (vmm_sandbox_init() || vmm_sandbox_enter(role, NULL, 0))
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
