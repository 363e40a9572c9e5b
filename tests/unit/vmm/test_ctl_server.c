// SPDX-License-Identifier: MIT
/*
 * test_ctl_server.c: the control thread under clients that misbehave,
 * without KVM: a real control server (vmm_control_start) of a
 * VM that never runs, on a real unix socket in a temporary runtime
 * directory, driven by in-process clients. The thread must never wait on
 * one client: one that pipelines requests without reading its replies
 * does not delay another's request and still gets every reply once it
 * reads; connections that hold a slot with half a frame, or with nothing,
 * or by not reading, are closed after their timeout so new clients are
 * served. Waits are bounded; no timing is asserted beyond generous bounds.
 * The control thread runs sandboxed, so these paths also check its
 * seccomp allow-list (vmm/sandbox); a client of another uid is refused
 * without the check leaving it (geteuid is not on the list).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_priv.h"
#include "vm_config.h"
#include "vmm_sandbox.h"

#include "vpmu_common.h"

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;
static char dir[64];

static void setup_with(uint64_t frame_ns, uint64_t stall_ns)
{
	struct vmm_config cfg;

	snprintf(dir, sizeof(dir), "/tmp/vpmu-ctl-test-XXXXXX");
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	setenv(VMM_RUNTIME_ENV, dir, 1);
	vmm_config_defaults(&cfg);
	snprintf(vm.name, sizeof(vm.name), "ctl-test");
	uuid_generate(vm.uuid);
	vm.nr_vcpus = 1;
	vm.vcpus    = &vcpu;
	vcpu.vm     = &vm;
	vcpu.fd     = -1;
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	cr_assert(eq(int, vmm_control_init(&vm, &cfg), 0));
	/*
	 * The control thread runs in its seccomp sandbox, as in the VMM: a
	 * system call its allow-list misses ends this test with status 159.
	 */
	vm.sandbox = true;
	cr_assert(eq(int, vmm_sandbox_init(), 0));
	vmm_ctl(&vm)->frame_timeout_ns = frame_ns;
	vmm_ctl(&vm)->stall_timeout_ns = stall_ns;
	cr_assert(eq(int, vmm_control_start(&vm), 0));
}

static void setup(void)
{
	/* Long enough never to fire during a test that does not want it. */
	setup_with(VMM_CTL_FRAME_TIMEOUT_NS, VMM_CTL_STALL_TIMEOUT_NS);
}

static void teardown(void)
{
	char path[128];

	vmm_control_free(&vm);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	cr_expect(eq(int, system(path), 0));
}

TestSuite(vmm_ctl_server, .init = setup, .fini = teardown, .timeout = 60);

static int connect_vm(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd                = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(ge(int, fd, 0));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s",
		 vmm_ctl(&vm)->entry.socket);
	cr_assert(eq(int, connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0),
		  "connect %s: %s", sa.sun_path, strerror(errno));
	return fd;
}

/* A hello request frame with (id): header + JSON, into (buf). */
static size_t hello_frame(unsigned char *buf, size_t cap, int id)
{
	int n = snprintf((char *)buf + 4, cap - 4,
			 "{\"v\":1,\"id\":%d,\"cmd\":\"hello\"}", id);

	buf[0] = buf[1] = 0;
	buf[2]          = (unsigned char)(n >> 8);
	buf[3]          = (unsigned char)n;
	return (size_t)n + 4;
}

static bool send_all(int fd, const void *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n <= 0)
			return false;
		p = (const char *)p + n;
		len -= (size_t)n;
	}
	return true;
}

/* Ask hello as request (id) on (fd) and wait (ms) for its reply. */
static int hello(int fd, int id, int ms)
{
	unsigned char f[128];
	struct json_object *rep, *v;
	int ret;

	if (!send_all(fd, f, hello_frame(f, sizeof(f), id)))
		return -EPIPE;
	ret = vmm_ctl_recv(fd, &rep, ms);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(rep, "ok", &v) ||
	    !json_object_get_boolean(v))
		ret = -EBUSY;
	else if (!json_object_object_get_ex(rep, "id", &v) ||
		 json_object_get_int(v) != id)
		ret = -EPROTO;
	json_object_put(rep);
	return ret;
}

/* A client that pipelines (n) requests and reads nothing. */
struct pipeliner {
	int fd, n;
	pthread_t t;
	int sent;
};

static void *pipeline(void *arg)
{
	struct pipeliner *p = arg;
	unsigned char f[128];

	for (p->sent = 0; p->sent < p->n; p->sent++) {
		if (!send_all(p->fd, f, hello_frame(f, sizeof(f), p->sent)))
			break;
	}
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec  = ms / 1000,
			      .tv_nsec = (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

Test(vmm_ctl_server, pipelining_client_does_not_delay_others)
{
	struct pipeliner a = {.fd = connect_vm(), .n = 1000};
	struct json_object *rep, *v;
	int b, i, ret;

	cr_assert(eq(int, pthread_create(&a.t, NULL, pipeline, &a), 0));
	sleep_ms(200); /* the server is busy with a's requests by now */
	b = connect_vm();
	/* The old server sat 2 s in one blocked send to a: well above this. */
	cr_expect(eq(int, hello(b, 7, 1500), 0),
		  "another client's request waited on the pipelining one");
	close(b);
	pthread_join(a.t, NULL);
	cr_expect(eq(int, a.sent, 1000));
	/* a was not given up on: every reply comes, in order. */
	for (i = 0; i < 1000; i++) {
		ret = vmm_ctl_recv(a.fd, &rep, 5000);
		cr_assert(eq(int, ret, 0), "reply %d: %s", i, strerror(-ret));
		cr_assert(json_object_object_get_ex(rep, "id", &v));
		cr_assert(eq(int, json_object_get_int(v), i));
		json_object_put(rep);
	}
	close(a.fd);
	cr_expect(eq(u64, atomic_load(&vmm_ctl(&vm)->nr_dropped), 0));
}

/* Read until EOF (bounded): true if the server closed the connection. */
static bool closed_by_server(int fd, int ms)
{
	struct json_object *rep;
	int ret;

	while ((ret = vmm_ctl_recv(fd, &rep, ms)) == 0)
		json_object_put(rep);
	return ret == -ECONNRESET;
}

static void short_frame_timeout(void)
{
	setup_with(300000000ULL, VMM_CTL_STALL_TIMEOUT_NS);
}

Test(vmm_ctl_server, half_sent_frames_are_dropped, .init = short_frame_timeout)
{
	static const unsigned char half[] = {0, 0, 0, 40, '{', '"'};
	int idle[VMM_CTL_CLIENTS_MAX], fd = -1, i, tries, ret = -1;

	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		idle[i] = connect_vm();
		/* Half a header for some, half a body for the others. */
		cr_assert(send_all(idle[i], half, i % 2 ? 2 : sizeof(half)));
	}
	/* Every slot is held: a new client is refused until they expire. */
	for (tries = 0; tries < 100 && ret; tries++) {
		fd  = connect_vm();
		ret = hello(fd, 1, 2000);
		if (ret) {
			close(fd);
			sleep_ms(100);
		}
	}
	cr_expect(eq(int, ret, 0), "no slot came free: %s", strerror(-ret));
	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		cr_expect(closed_by_server(idle[i], 5000), "client %d kept", i);
		close(idle[i]);
	}
	/* The served client is not idle: it keeps its connection. */
	sleep_ms(600);
	cr_expect(eq(int, hello(fd, 2, 2000), 0));
	close(fd);
	cr_expect(ge(u64, atomic_load(&vmm_ctl(&vm)->nr_dropped),
		     VMM_CTL_CLIENTS_MAX));
}

Test(vmm_ctl_server, silent_connection_is_dropped, .init = short_frame_timeout)
{
	int fd = connect_vm();

	cr_expect(closed_by_server(fd, 5000));
	close(fd);
	cr_expect(eq(u64, atomic_load(&vmm_ctl(&vm)->nr_dropped), 1));
}

static void short_stall_timeout(void)
{
	setup_with(VMM_CTL_FRAME_TIMEOUT_NS, 300000000ULL);
}

Test(vmm_ctl_server, client_that_never_reads_is_dropped,
     .init = short_stall_timeout)
{
	/* Far more replies than the socket and the queue's mark hold. */
	struct pipeliner a = {.fd = connect_vm(), .n = 20000};
	int b, got = 0;
	struct json_object *rep;

	cr_assert(eq(int, pthread_create(&a.t, NULL, pipeline, &a), 0));
	b = connect_vm();
	cr_expect(eq(int, hello(b, 1, 1500), 0), "the others are served");
	pthread_join(a.t, NULL); /* ends when the server closes a */
	cr_expect(lt(int, a.sent, a.n), "a was closed before it sent all");
	while (vmm_ctl_recv(a.fd, &rep, 5000) == 0) {
		json_object_put(rep);
		got++;
	}
	cr_expect(lt(int, got, a.n), "%d replies, then EOF", got);
	close(a.fd);
	cr_expect(eq(u64, atomic_load(&vmm_ctl(&vm)->nr_dropped), 1));
	cr_expect(eq(int, hello(b, 2, 1500), 0), "b is still served");
	close(b);
}

/*
 * In a child of uid 65534: 1 if the server answered "permission denied"
 * (SO_PEERCRED: neither the VMM's uid nor root), else why not.
 */
static int refused_as_nobody(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct json_object *rep, *err;
	int fd, ret = 12;

	if (setgid(65534) || setuid(65534))
		return 10;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s",
		 vmm_ctl(&vm)->entry.socket);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return 11;
	if (!vmm_ctl_recv(fd, &rep, 5000)) {
		if (json_object_object_get_ex(rep, "error", &err) &&
		    strstr(json_object_get_string(err), "permission denied"))
			ret = 1;
		json_object_put(rep);
	}
	close(fd);
	return ret;
}

/* The peer check of the sandboxed control thread, for another uid. */
Test(vmm_ctl_server, other_uid_is_refused_in_the_sandbox)
{
	pid_t pid;
	int st, fd;

	if (geteuid() != 0)
		cr_skip_test("needs root to act as another uid");
	cr_assert(eq(int, chmod(dir, 0755), 0));
	cr_assert(eq(int, chmod(vmm_ctl(&vm)->entry.socket, 0666), 0));
	pid = fork();
	cr_assert(ge(int, pid, 0));
	if (pid == 0)
		_exit(refused_as_nobody());
	cr_assert(eq(int, waitpid(pid, &st, 0), pid));
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	cr_expect(eq(int, st, 1), "refused_as_nobody: %d", st);
	/* Still serving (a forbidden call would have ended this process). */
	fd = connect_vm();
	cr_expect(eq(int, hello(fd, 1, 2000), 0));
	close(fd);
}

/* voluntary_ctxt_switches of thread (tid) of this process. */
static long voluntary_switches(int tid)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "re");
	cr_assert(not(eq(ptr, f, NULL)), "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
			break;
	}
	fclose(f);
	return v;
}

/*
 * An idle control thread, with a client connected that has been
 * answered, sleeps: over 1 s it neither returns from poll (the test hook
 * nr_wakeups) nor blocks again (the kernel's count of its voluntary
 * context switches), and a request still wakes it exactly as needed.
 */
Test(vmm_ctl_server, idle_control_thread_makes_no_wakeups)
{
	uint64_t w0, w1;
	long v0, v1;
	int fd = connect_vm(), tid;

	cr_assert(eq(int, hello(fd, 1, 5000), 0));
	sleep_ms(50); /* the reply is out: the thread is back in poll */
	tid = atomic_load(&vmm_ctl(&vm)->tid);
	cr_assert(lt(int, 0, tid));
	w0 = vmm_ctl(&vm)->nr_wakeups;
	v0 = voluntary_switches(tid);
	sleep_ms(1000);
	w1 = vmm_ctl(&vm)->nr_wakeups;
	v1 = voluntary_switches(tid);
	cr_expect(eq(u64, w1 - w0, 0), "%llu wake-ups in 1 s idle",
		  (unsigned long long)(w1 - w0));
	cr_expect(eq(i64, v1 - v0, 0), "%ld voluntary switches in 1 s idle",
		  v1 - v0);
	/* Still served: one request is at least one wake-up. */
	cr_assert(eq(int, hello(fd, 2, 5000), 0));
	cr_expect(lt(u64, w1, vmm_ctl(&vm)->nr_wakeups));
	close(fd);
}
