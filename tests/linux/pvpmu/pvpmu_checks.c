// SPDX-License-Identifier: MIT
/*
 * pvpmu_checks.c: the checks of the paravirtual perfmon2 driver for Linux
 * (pvpmu.ko + libpvpmu), run in the Linux test guest after the init loaded
 * the module (tests/linux/init, `vpmutest=pvpmu`). A static program (musl)
 * built against the installed SDK (scripts/build-linux.sh). It prints one
 * line per check, "vpmu-test: NAME: PASS|FAIL|SKIP detail", like the init,
 * and exits with the number of failures.
 *
 *   pvpmu-checks            run every check (one CPU is enough)
 *   pvpmu-checks smp        the checks that need two CPUs or more
 *                           (per-thread contexts across CPUs)
 *   pvpmu-checks spec       the spec's descriptor semantics: permissions,
 *                           close, END, OVFL_NO_MSG, read/lseek, mmap,
 *                           formats, system-wide CPU rules (two CPUs)
 *   pvpmu-checks hc N       make N PVPMU_HC_NOP hypercalls from ring 3
 *                           (the workload pfstat measures)
 *   pvpmu-checks close-hold open a context, close it, let a child exit
 *                           holding one; after each step it prints a
 *                           line and waits for the host's answer, a line
 *                           on the console (its standard input), while
 *                           the host counts the VM's contexts
 *
 * Workload: NOP hypercalls from ring 3 (ioperm() grants the doorbells):
 * each is exactly one hv_hypercalls event (spec 3.2 counters; abi.h §5).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

enum result { PASS, FAIL, SKIP };

struct report {
	char text[300];
};

static void detail(struct report *r, const char *fmt, ...)
{
	size_t len = strlen(r->text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->text + len, sizeof(r->text) - len, fmt, ap);
	va_end(ap);
}

static enum result fail(struct report *r, const char *what, int err)
{
	detail(r, "%s: %s (%d)", what, pvpmu_strerror(err), err);
	return FAIL;
}

static void hc_nops(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		__asm__ __volatile__("outl %%eax, %%dx"
				     :
				     : "a"(0),
				       "d"((unsigned short)(PVPMU_PORT_HC_BASE +
							    PVPMU_HC_NOP))
				     : "memory");
}

/*
 * A context with hv_hypercalls in PMC/PMD 0 starting at (start), reset to
 * (start) after an overflow and to (long_reset) by PFM_RESTART (3.3.3).
 */
static int make_ctx_reset(pvpmu_u32 flags, pvpmu_u64 start,
			  pvpmu_u64 long_reset, pvpmu_u32 regfl, int *fd)
{
	pfarg_ctx_t ctx = {.ctx_flags = flags};
	pfarg_pmc_t pmc = {0};
	pfarg_pmd_t pmd = {0};
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return ret;
	*fd           = ctx.ctx_fd;
	ret           = pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0);
	pmc.reg_flags = regfl;
	pmc.reg_reset_pmds[0] = 0;
	if (!ret)
		ret = pfm_write_pmcs(*fd, &pmc, 1);
	pmd.reg_value       = start;
	pmd.reg_short_reset = start;
	pmd.reg_long_reset  = long_reset;
	if (!ret)
		ret = pfm_write_pmds(*fd, &pmd, 1);
	if (ret)
		pfm_close(*fd);
	return ret;
}

static int make_ctx(pvpmu_u32 flags, pvpmu_u64 start, pvpmu_u32 regfl, int *fd)
{
	return make_ctx_reset(flags, start, start, regfl, fd);
}

static int load_start(int fd, pid_t pid)
{
	pfarg_load_t load = {.load_pid = (pvpmu_u32)pid};
	int ret           = pfm_load_context(fd, &load);

	return ret ? ret : pfm_start(fd, 0);
}

static int read_pmd0(int fd, pvpmu_u64 *v)
{
	pfarg_pmd_t pmd = {0};
	int ret         = pfm_read_pmds(fd, &pmd, 1);

	*v = pmd.reg_value;
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * A child that closes its copy of the context descriptor (ctx_fd), so that
 * the parent's close destroys the context, waits for a byte on (go), makes
 * (n) hypercalls, then (with a (done_fd)) spins in ring 3 for 300 ms and
 * writes a byte there; exits.
 */
static pid_t spawn_worker(int ctx_fd, int go[2], unsigned int n, int done_fd)
{
	pid_t pid = fork();
	uint64_t t0;
	char c;

	if (pid)
		return pid;
	close(ctx_fd);
	close(go[1]);
	if (read(go[0], &c, 1) != 1)
		_exit(2);
	hc_nops(n);
	if (done_fd >= 0) {
		t0 = now_ns();
		while (now_ns() - t0 < 300000000ULL)
			;
		if (write(done_fd, "d", 1) != 1)
			_exit(3);
	}
	_exit(0);
}

/* The scheduler state letter of (pid) ('R' running, 'S' sleeping). */
static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	p                  = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

/* --- checks --- */

static enum result check_device(struct report *r)
{
	struct stat st;

	if (stat(PVPMU_DEV_PATH, &st))
		return fail(r, PVPMU_DEV_PATH, -errno);
	detail(r, "%s is a character device %u:%u", PVPMU_DEV_PATH,
	       major(st.st_rdev), minor(st.st_rdev));
	return S_ISCHR(st.st_mode) ? PASS : FAIL;
}

/* spec 3.1.17 */
static enum result check_config(struct report *r)
{
	pfarg_config_t cfg = {0};
	int ret            = pfm_get_config(&cfg);

	if (ret)
		return fail(r, "PFM_GET_CONFIG", ret);
	detail(r, "perfmon2 %u.%u pmcs=0x%" PRIx64 " width=%u",
	       PFM_VERSION_MAJOR(cfg.cf_version),
	       PFM_VERSION_MINOR(cfg.cf_version), (uint64_t)cfg.cf_impl_pmcs[0],
	       cfg.cf_counter_width);
	return cfg.cf_impl_pmcs[0] ? PASS : FAIL;
}

/*
 * Run argv[0] with its standard output into (buf) (NUL-terminated, at
 * most size - 1 bytes); its wait status in *status. 0 or -errno.
 */
static int run_capture(char *const argv[], char *buf, size_t size, int *status)
{
	size_t len = 0;
	ssize_t got;
	int pfd[2];
	pid_t pid;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (len < size - 1 &&
	       (got = read(pfd[0], buf + len, size - 1 - len)) > 0)
		len += (size_t)got;
	buf[len] = 0;
	close(pfd[0]);
	waitpid(pid, status, 0);
	return 0;
}

/*
 * Run pfstat on `pvpmu-checks hc N`: count - the driver's own hypercalls
 * (sched-outs, and the process records of the exec and exit) == N.
 */
static enum result check_pfstat_exact(struct report *r)
{
	const unsigned int n     = 1000;
	unsigned long long count = 0, outs = 0;
	char buf[2048] = {0}, arg[16], *p;
	char *argv[] = {"/bin/pfstat",       "-v", "-e", "hv_hypercalls", "--",
			"/bin/pvpmu-checks", "hc", arg,  (char *)0};
	int status, ret;

	snprintf(arg, sizeof(arg), "%u", n);
	ret = run_capture(argv, buf, sizeof(buf), &status);
	if (ret)
		return fail(r, "pipe", ret);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		detail(r, "pfstat status 0x%x: %s", status, buf);
		return FAIL;
	}
	p = strstr(buf, "hv_hypercalls");
	while (p && p > buf && p[-1] == ' ')
		p--;
	while (p && p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p)
		count = strtoull(p, 0, 10);
	p = strstr(buf, "driver hypercalls");
	while (p && p > buf && p[-1] == ' ')
		p--;
	while (p && p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (p)
		outs = strtoull(p, 0, 10);
	detail(r, "hv_hypercalls=%llu sched_outs=%llu expected=%u+sched_outs",
	       count, outs, n);
	return count == n + outs ? PASS : FAIL;
}

/* The shared page answers like PFM_READ_PMDS (abi.h §3 shared page). */
static pvpmu_u64 sched_outs(int fd);

static enum result check_fast_read(struct report *r)
{
	pfarg_pmd_t fast = {0};
	pvpmu_u64 slow = 0, o0 = 0, o1 = 0;
	unsigned int tries = 0;
	int fd, ret;

	ret = make_ctx(0, 0, 0, &fd);
	if (ret)
		return fail(r, "context", ret);
	ret = load_start(fd, getpid());
	hc_nops(100);
	/*
	 * The READ_PMDS hypercall itself is one more hypercall. A preemption
	 * around the two reads adds the driver's PVPMU_SCHED_OUT, before or
	 * after READ_PMDS (the sched-out count cannot tell): such a window is
	 * taken again, up to 5 times.
	 */
	while (!ret && tries++ < 5) {
		o0  = sched_outs(fd);
		ret = pvpmu_read_fast(0, fd, &fast, 1);
		if (!ret)
			ret = read_pmd0(fd, &slow);
		o1 = sched_outs(fd);
		if (o1 == o0)
			break;
	}
	pfm_close(fd);
	if (ret)
		return fail(r, "read", ret);
	detail(r,
	       "fast=%" PRIu64 " pfm_read_pmds=%" PRIu64
	       " (its own call +1; try %u, sched-outs in the window %" PRIu64
	       ")",
	       (uint64_t)fast.reg_value, (uint64_t)slow, tries,
	       (uint64_t)(o1 - o0));
	return fast.reg_value >= 100 && o1 == o0 && slow == fast.reg_value + 1
		       ? PASS
		       : FAIL;
}

/* spec 3.3.4: poll()/select() report the context readable on overflow. */
static enum result ovfl_wait(struct report *r, int use_sigio);

static enum result check_poll(struct report *r)
{
	return ovfl_wait(r, 0);
}

static volatile sig_atomic_t got_sigio;

static void on_sigio(int sig)
{
	(void)sig;
	got_sigio = 1;
}

static enum result check_sigio(struct report *r)
{
	return ovfl_wait(r, 1);
}

static enum result ovfl_wait(struct report *r, int use_sigio)
{
	int go[2], fd, ret, status, waited = 0;
	struct pollfd p;
	pfm_msg_t msg;
	pid_t pid;

	ret = make_ctx(0, (pvpmu_u64)-10, PFM_REGFL_OVFL_NOTIFY, &fd);
	if (ret)
		return fail(r, "context", ret);
	if (use_sigio) {
		signal(SIGIO, on_sigio);
		got_sigio = 0;
		fcntl(fd, F_SETOWN, getpid());
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
	}
	if (pipe(go))
		return fail(r, "pipe", -errno);
	pid = spawn_worker(fd, go, 20, -1);
	close(go[0]);
	ret = load_start(fd, pid);
	if (write(go[1], "g", 1) != 1)
		ret = -errno;
	close(go[1]);
	if (!ret && use_sigio) {
		while (!got_sigio && waited < 500) {
			usleep(10000);
			waited++;
		}
		detail(r, "SIGIO %s after ~%d ms; ",
		       got_sigio ? "arrived" : "never came", waited * 10);
	} else if (!ret) {
		p   = (struct pollfd){.fd = fd, .events = POLLIN};
		ret = poll(&p, 1, 5000) == 1 ? 0 : -PVPMU_ETIMEDOUT;
		detail(r, "poll: %s; ", ret ? "timed out" : "POLLIN");
	}
	if (!ret)
		ret = pfm_read_msg(fd, &msg, 0);
	waitpid(pid, &status, 0);
	pfm_close(fd);
	if (ret)
		return fail(r, "message", ret);
	detail(r, "msg_type=%u ovfl_pmds=0x%" PRIx64, msg.msg_type,
	       (uint64_t)msg.pfm_ovfl_msg.msg_ovfl_pmds[0]);
	if (use_sigio && !got_sigio)
		return FAIL;
	return msg.msg_type == PFM_MSG_OVFL &&
			       msg.pfm_ovfl_msg.msg_ovfl_pmds[0] == 1
		       ? PASS
		       : FAIL;
}

/* spec 3.3.5: PFM_FL_NOTIFY_BLOCK holds the monitored thread. */
static enum result check_notify_block(struct report *r)
{
	int go[2], done[2], fd, ret, status, held, resumed;
	char state = '?';
	struct pollfd p;
	pfm_msg_t msg;
	pid_t pid;

	/*
	 * Long reset 0: after RESTART the worker's remaining hypercalls do
	 * not overflow (and block it) again.
	 */
	ret = make_ctx_reset(PFM_FL_NOTIFY_BLOCK, (pvpmu_u64)-10, 0,
			     PFM_REGFL_OVFL_NOTIFY, &fd);
	if (ret)
		return fail(r, "context", ret);
	if (pipe(go) || pipe(done))
		return fail(r, "pipe", -errno);
	pid = spawn_worker(fd, go, 20, done[1]);
	close(go[0]);
	close(done[1]);
	ret = load_start(fd, pid);
	if (write(go[1], "g", 1) != 1)
		ret = -errno;
	close(go[1]);
	if (!ret)
		ret = pfm_read_msg(fd, &msg, 5000000000ULL);
	/* Blocked in the driver (S), where it would spin (R) otherwise. */
	if (!ret) {
		usleep(100000);
		state = proc_state(pid);
	}
	p    = (struct pollfd){.fd = done[0], .events = POLLIN};
	held = !ret && state == 'S' && poll(&p, 1, 0) == 0;
	if (!ret)
		ret = pfm_restart(fd);
	resumed = !ret && poll(&p, 1, 5000) == 1;
	pfm_close(fd); /* destroys the context: a still blocked worker goes */
	if (!resumed)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (ret)
		return fail(r, "notify/restart", ret);
	detail(r,
	       "after the overflow: state %c (%s); resumed after RESTART: %s",
	       state, held ? "blocked" : "not blocked", resumed ? "yes" : "no");
	return held && resumed ? PASS : FAIL;
}

/* A forked child sharing the descriptor keeps the context (3.1.9 close). */
static enum result check_fork_shares(struct report *r)
{
	int fd, ret, status;
	pid_t pid;

	ret = make_ctx(0, 1234, 0, &fd);
	if (ret)
		return fail(r, "context", ret);
	pid = fork();
	if (pid == 0) {
		pvpmu_u64 v = 0;

		usleep(200000); /* the parent closes meanwhile */
		ret = read_pmd0(fd, &v);
		_exit(ret ? 1 : v == 1234 ? 0 : 2);
	}
	pfm_close(fd);
	waitpid(pid, &status, 0);
	detail(r, "child read after the parent closed: status %d",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? PASS : FAIL;
}

/*
 * pfrecord samples /bin/pvpmu-hot (hot.c: 8 units of hot_work() to 1 of
 * cold_work() a round) with the default sampling format (spec 3.6) on a
 * per-thread context (spec 3.1.7): among the functions of the program
 * (user mode), hot_work must lead its flat profile, ahead of cold_work,
 * out of at least PFRECORD_MIN samples. How much of the time goes to the
 * guest kernel ([kernel]) depends on the host: most of it where guest
 * ring 0 is emulated (PVM), little on hardware; it is printed, not judged.
 */
#define PFRECORD_MIN 20

/* The sample count of the row (name) of pfrecord's profile (p), or 0. */
static unsigned long long profile_row(const char *p, const char *name)
{
	unsigned long long n;
	char row[64];
	int used;

	while (p && sscanf(p, " %llu %*s %63s%n", &n, row, &used) == 2) {
		if (!strcmp(row, name))
			return n;
		p = strchr(p + used, '\n');
	}
	return 0;
}

/* The first row of (p) that is a function of the program, not [...]. */
static unsigned long long first_user_row(const char *p, char *name, size_t len)
{
	unsigned long long n;
	char row[64];
	int used;

	while (p && sscanf(p, " %llu %*s %63s%n", &n, row, &used) == 2) {
		if (row[0] != '[') {
			snprintf(name, len, "%s", row);
			return n;
		}
		p = strchr(p + used, '\n');
	}
	return 0;
}

static enum result check_pfrecord(struct report *r)
{
	static const char head[] = "function\n";
	char buf[4096] = {0}, name[64] = "", *p, *rows;
	unsigned long long samples = 0, top, hot, cold, kernel;
	char *argv[] = {"/bin/pfrecord",  "-c",     "100000", "--",
			"/bin/pvpmu-hot", (char *)0};
	int status, ret;

	ret = run_capture(argv, buf, sizeof(buf), &status);
	if (ret)
		return fail(r, "pipe", ret);
	p = strstr(buf, "pfrecord: ");
	if (p)
		samples = strtoull(p + strlen("pfrecord: "), 0, 10);
	rows = strstr(buf, head);
	if (rows)
		rows += strlen(head);
	top    = first_user_row(rows, name, sizeof(name));
	hot    = profile_row(rows, "hot_work");
	cold   = profile_row(rows, "cold_work");
	kernel = profile_row(rows, "[kernel]");
	detail(r,
	       "status 0x%x, %llu samples; user mode led by %s (%llu); "
	       "hot_work %llu, cold_work %llu, [kernel] %llu",
	       status, samples, name, top, hot, cold, kernel);
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    samples < PFRECORD_MIN || strcmp(name, "hot_work") || hot <= cold) {
		detail(r, ": %.200s", rows ? rows : buf);
		return FAIL;
	}
	return PASS;
}

/* The sampling buffer maps read-only; a ring-3 write faults. */
static enum result check_smpl_readonly(struct report *r)
{
	static const pvpmu_u8 uuid[16] = PFM_DEFAULT_SMPL_UUID;
	pfm_default_smpl_arg_t arg     = {.buf_size = 8192};
	pfarg_ctx_t ctx                = {0};
	const void *buf;
	pvpmu_u64 size;
	int ret, status;
	void *w;
	pid_t pid;

	memcpy(ctx.ctx_smpl_buf_id, uuid, sizeof(uuid));
	ret = pfm_create_context(&ctx, &arg, sizeof(arg));
	if (ret)
		return fail(r, "PFM_CREATE_CONTEXT", ret);
	ret = pfm_smpl_buf(ctx.ctx_fd, &buf, &size);
	if (ret) {
		pfm_close(ctx.ctx_fd);
		return fail(r, "mmap", ret);
	}
	w = mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED, ctx.ctx_fd, 0);
	detail(r, "buffer %" PRIu64 " bytes, version 0x%x; writable mmap: %s; ",
	       (uint64_t)size,
	       ((const pfm_default_smpl_hdr_t *)buf)->hdr_version,
	       w == MAP_FAILED ? strerror(errno) : "allowed");
	pid = fork();
	if (pid == 0) {
		*(volatile char *)buf = 1;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	pfm_close(ctx.ctx_fd);
	detail(r, "write: %s",
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no fault");
	return w == MAP_FAILED && WIFSIGNALED(status) &&
			       WTERMSIG(status) == SIGSEGV
		       ? PASS
		       : FAIL;
}

/* The driver's PVPMU_SCHED_OUT hypercalls for (fd)'s thread so far. */
static pvpmu_u64 sched_outs(int fd)
{
	struct pvpmu_ioc_info info = {.size = sizeof(info)};

	return ioctl(fd, PVPMU_IOC_INFO, &info) ? ~0ULL : info.sched_outs;
}

#define EMUL64_TRIES 5

/*
 * spec 3.2: 64-bit counts across the emulated width's wrap. The count is
 * exact only in a window where the driver made no SCHED_OUT hypercall
 * for the thread (each is an hv_hypercalls event of the context): such a
 * window is retried, up to EMUL64_TRIES times.
 */
static enum result check_emul64(struct report *r)
{
	pfarg_config_t cfg = {0};
	pvpmu_u64 start, v = 0, o0 = 0, o1 = 0;
	int fd, ret, tries = 0;

	ret = pfm_get_config(&cfg);
	if (ret)
		return fail(r, "PFM_GET_CONFIG", ret);
	if (!cfg.cf_counter_width || cfg.cf_counter_width >= 64) {
		detail(r, "counter width %u", cfg.cf_counter_width);
		return SKIP;
	}
	start = (1ULL << cfg.cf_counter_width) - 5;
	do {
		ret = make_ctx(0, start, 0, &fd);
		if (ret)
			return fail(r, "context", ret);
		ret = pfm_load_context(
			fd, &(pfarg_load_t){.load_pid = (pvpmu_u32)getpid()});
		o0 = sched_outs(fd);
		if (!ret)
			ret = pfm_start(fd, 0);
		hc_nops(10);
		if (!ret)
			ret = pfm_stop(fd);
		o1 = sched_outs(fd);
		if (!ret)
			ret = read_pmd0(fd, &v);
		pfm_close(fd);
		if (ret)
			return fail(r, "count", ret);
	} while (o1 != o0 && ++tries < EMUL64_TRIES);
	detail(r,
	       "width %u: start 0x%" PRIx64 " after 10 calls 0x%" PRIx64
	       " (try %d, driver sched-outs in the window %" PRIu64 ")",
	       cfg.cf_counter_width, (uint64_t)start, (uint64_t)v, tries + 1,
	       (uint64_t)(o1 - o0));
	/* 10 NOPs + the STOP hypercall, counted before it stops. */
	return o1 == o0 && v == start + 11 ? PASS : FAIL;
}

/* --- per-thread contexts across CPUs (pvpmu-checks smp) --- */

#define MIGRATE_BATCHES 8
#define MIGRATE_CALLS   500
#define MIGRATE_TRIES   5
#define NOISE_WAIT_MS   5000

/*
 * The other thread of the monitored process: NOP hypercalls, unmonitored,
 * until told to stop. It is never joined (this kernel has no futex): the
 * check's process ends it at its exit.
 */
struct noise {
	pid_t tid;
	int cpu;             /* the CPU of its latest hypercall */
	unsigned long calls; /* hypercalls made */
	int stop, stopped;
};

static void *noise_fn(void *p)
{
	struct noise *z = p;

	__atomic_store_n(&z->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&z->stop, __ATOMIC_ACQUIRE)) {
		hc_nops(1);
		__atomic_store_n(&z->cpu, sched_getcpu(), __ATOMIC_RELAXED);
		__atomic_add_fetch(&z->calls, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&z->stopped, 1, __ATOMIC_RELEASE);
	return NULL;
}

static unsigned long noise_calls(struct noise *z)
{
	return __atomic_load_n(&z->calls, __ATOMIC_ACQUIRE);
}

static int pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set) ? -errno : 0;
}

/* Pin the noise thread to (cpu); wait until it makes its calls there. */
static int noise_move(struct noise *z, int cpu)
{
	unsigned long c0;
	int ret = pin(z->tid, cpu), ms;

	if (ret)
		return ret;
	c0 = noise_calls(z);
	for (ms = 0; ms < NOISE_WAIT_MS; ms++) {
		if (noise_calls(z) >= c0 + 2 &&
		    __atomic_load_n(&z->cpu, __ATOMIC_RELAXED) == cpu)
			return 0;
		usleep(1000);
	}
	return -PVPMU_ETIMEDOUT;
}

/* One counting window of check_smp_migrate. */
struct window {
	pvpmu_u64 count;
	pvpmu_u64 o0, o0s, o1s, o1; /* sched_outs around START and STOP */
	unsigned long noise;        /* the other thread's calls meanwhile */
	unsigned int on_cpu[2];     /* batches run on CPU 0 and CPU 1 */
	unsigned int off_cpu;       /* batches not on the CPU pinned to */
};

static int migrate_window(struct noise *z, pid_t tid, struct window *w)
{
	unsigned long c0;
	unsigned int b;
	int fd, ret, cpu;

	memset(w, 0, sizeof(*w));
	ret = make_ctx(0, 0, 0, &fd);
	if (ret)
		return ret;
	ret = pfm_load_context(fd, &(pfarg_load_t){.load_pid = (pvpmu_u32)tid});
	w->o0 = sched_outs(fd);
	if (!ret)
		ret = pfm_start(fd, 0);
	w->o0s = sched_outs(fd);
	for (b = 0; !ret && b < MIGRATE_BATCHES; b++) {
		/* The thread starts on CPU 0: the first batch runs on 1. */
		cpu = (int)((b + 1) % 2);
		ret = noise_move(z, 1 - cpu);
		if (!ret)
			ret = pin(tid, cpu);
		if (ret)
			break;
		if (sched_getcpu() == cpu)
			w->on_cpu[cpu]++;
		else
			w->off_cpu++;
		c0 = noise_calls(z);
		hc_nops(MIGRATE_CALLS);
		w->noise += noise_calls(z) - c0;
	}
	w->o1s = sched_outs(fd);
	if (!ret)
		ret = pfm_stop(fd);
	w->o1 = sched_outs(fd);
	if (!ret)
		ret = read_pmd0(fd, &w->count);
	pfm_close(fd);
	return ret;
}

/*
 * spec 3.1.1, 3.1.7: a per-thread context monitors one thread wherever it
 * runs. The thread counts MIGRATE_CALLS NOP hypercalls per batch and moves
 * between CPU 0 and CPU 1 (sched_setaffinity) between batches, while the
 * other thread of its process makes NOP hypercalls on the other CPU,
 * unmonitored. The count is exact: the batches, the STOP hypercall, and
 * the driver's PVPMU_SCHED_OUT hypercall at each switch-out of the thread
 * in the window (pvpmu_ioc_info.sched_outs, as pfstat documents). A window
 * with a switch-out between reading sched_outs and START or STOP (counted
 * or not, the reads cannot tell) is retried, up to MIGRATE_TRIES times.
 */
static enum result check_smp_migrate(struct report *r)
{
	const pid_t tid = (pid_t)syscall(SYS_gettid);
	const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct noise *z = calloc(1, sizeof(*z));
	struct window w = {0};
	int ret, tries, ms;
	pvpmu_u64 expect = 0;
	pthread_t th;

	if (ncpu < 2) {
		detail(r, "%ld CPU online: needs 2", ncpu);
		return SKIP;
	}
	if (!z)
		return fail(r, "calloc", -ENOMEM);
	ret = pin(tid, 0);
	if (ret)
		return fail(r, "sched_setaffinity", ret);
	if (pthread_create(&th, NULL, noise_fn, z))
		return fail(r, "pthread_create", -EAGAIN);
	for (ms = 0; !__atomic_load_n(&z->tid, __ATOMIC_ACQUIRE); ms++) {
		if (ms == NOISE_WAIT_MS)
			return fail(r, "the other thread", -PVPMU_ETIMEDOUT);
		usleep(1000);
	}
	ret = noise_move(z, 1);
	for (tries = 1; !ret; tries++) {
		ret = migrate_window(z, tid, &w);
		if (ret || (w.o0 == w.o0s && w.o1s == w.o1) ||
		    tries == MIGRATE_TRIES)
			break;
	}
	__atomic_store_n(&z->stop, 1, __ATOMIC_RELEASE);
	for (ms = 0; ms < NOISE_WAIT_MS &&
		     !__atomic_load_n(&z->stopped, __ATOMIC_ACQUIRE);
	     ms++)
		usleep(1000);
	if (ret)
		return fail(r, "migrate", ret);
	expect = (pvpmu_u64)MIGRATE_BATCHES * MIGRATE_CALLS + 1 +
		 (w.o1s - w.o0s);
	detail(r,
	       "hv_hypercalls=%" PRIu64 " expected=%u*%u+1(STOP)+%" PRIu64
	       "(sched_outs)=%" PRIu64
	       "; batches on cpu0=%u cpu1=%u elsewhere=%u; other thread: %lu "
	       "calls during the batches (try %d)",
	       (uint64_t)w.count, MIGRATE_BATCHES, MIGRATE_CALLS,
	       (uint64_t)(w.o1s - w.o0s), (uint64_t)expect, w.on_cpu[0],
	       w.on_cpu[1], w.off_cpu, w.noise, tries);
	return w.o0 == w.o0s && w.o1s == w.o1 && w.count == expect &&
			       w.on_cpu[0] && w.on_cpu[1] && !w.off_cpu &&
			       w.noise > 0
		       ? PASS
		       : FAIL;
}

/* Bad user pointers give EFAULT (never an oops). */
static enum result check_efault(struct report *r)
{
	struct pvpmu_ioc_pfm req = {.size     = sizeof(req),
				    .cmd      = PFM_GETINFO_PMCS,
				    .nargs    = 1,
				    .arg      = 0x10,
				    .arg_size = sizeof(pfarg_pmcinfo_t)};
	int fd                   = open(PVPMU_DEV_PATH, O_RDWR), e1, e2;

	if (fd < 0)
		return fail(r, "open", -errno);
	e1 = ioctl(fd, PVPMU_IOC_PFM, &req) < 0 ? errno : 0;
	e2 = ioctl(fd, PVPMU_IOC_PFM, (void *)0x10) < 0 ? errno : 0;
	close(fd);
	detail(r, "bad argument: %s; bad request: %s", strerror(e1),
	       strerror(e2));
	return e1 == EFAULT && e2 == EFAULT ? PASS : FAIL;
}

/* --- the spec's descriptor semantics (pvpmu-checks spec) --- */

#define NOBODY_ID 1000 /* an unprivileged user and group of the guest */

/*
 * Run (fn) in a child turned into user NOBODY_ID (no capabilities): its
 * exit status, or -1 if it did not exit.
 */
static int as_user(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgid(NOBODY_ID) || setuid(NOBODY_ID))
			_exit(120);
		_exit(fn(arg));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* An errno for a report: "ok" for 0. */
static const char *errstr(int e)
{
	return e ? strerror(e) : "ok";
}

/* The errno of a perfmon2 call as an exit status: 0, or 1..119. */
static int err_status(int ret)
{
	return ret >= 0 ? 0 : -ret < 120 ? -ret : 119;
}

/* What an unprivileged user got, in memory shared with the check. */
struct perm_res {
	int root, self, cpu; /* errno of each LOAD, 0 on success */
};

/*
 * As user NOBODY_ID: LOAD a NOTIFY_BLOCK context (which could hold the
 * thread) onto the root process that forked it, a context onto itself
 * (without NOTIFY_BLOCK: a thread cannot block itself, Table 3.2), and a
 * system-wide context onto CPU 0.
 */
static int perm_as_user(void *arg)
{
	struct perm_res *res = arg;
	pfarg_load_t ld      = {.load_pid = (pvpmu_u32)getppid()};
	int fd, ret;

	ret = make_ctx(PFM_FL_NOTIFY_BLOCK, 0, 0, &fd);
	if (ret)
		return 1;
	res->root = err_status(pfm_load_context(fd, &ld));
	pfm_close(fd);
	ret = make_ctx(0, 0, 0, &fd);
	if (ret)
		return 2;
	ld.load_pid = (pvpmu_u32)getpid();
	res->self   = err_status(pfm_load_context(fd, &ld));
	pfm_close(fd);
	ret = pin(0, 0);
	if (!ret)
		ret = make_ctx(PFM_FL_SYSTEM_WIDE, 0, 0, &fd);
	if (ret)
		return 3;
	ld.load_pid = 0;
	res->cpu    = err_status(pfm_load_context(fd, &ld));
	pfm_close(fd);
	return 0;
}

/*
 * spec 3.1.7 (permission on the target: EPERM): an unprivileged user may
 * not load a context onto a root process, nor a system-wide one onto a
 * CPU, but may onto itself.
 */
static enum result check_perm_load(struct report *r)
{
	struct perm_res *res;
	int st;

	res = mmap(0, sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return fail(r, "mmap", -errno);
	*res = (struct perm_res){-1, -1, -1};
	st   = as_user(perm_as_user, res);
	detail(r,
	       "user %d (status %d): load onto root pid %d: %s; onto itself: "
	       "%s; system-wide onto CPU 0: %s",
	       NOBODY_ID, st, (int)getpid(), errstr(res->root),
	       errstr(res->self), errstr(res->cpu));
	st = st == 0 && res->root == EPERM && res->self == 0 &&
	     res->cpu == EPERM;
	munmap(res, sizeof(*res));
	return st ? PASS : FAIL;
}

/*
 * spec 3.1.15, Fig. 3.10: the self-monitoring process closes its
 * descriptor while a forked child still holds it: the context becomes
 * unloaded and the child may load it onto itself.
 */
static enum result check_close_self(struct report *r)
{
	int go[2], fd, ret, status;
	pid_t pid;
	char c;

	ret = make_ctx(0, 0, 0, &fd);
	if (ret)
		return fail(r, "context", ret);
	ret = load_start(fd, getpid());
	if (ret) {
		pfm_close(fd);
		return fail(r, "load on self", ret);
	}
	if (pipe(go))
		return fail(r, "pipe", -errno);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(119);
		_exit(err_status(pfm_load_context(
			fd, &(pfarg_load_t){.load_pid = (pvpmu_u32)getpid()})));
	}
	close(go[0]);
	pfm_close(fd);
	if (write(go[1], "g", 1) != 1)
		return fail(r, "pipe", -errno);
	close(go[1]);
	waitpid(pid, &status, 0);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 119;
	detail(r, "the child's LOAD onto itself after the parent closed: %s",
	       errstr(status));
	return status == 0 ? PASS : FAIL;
}

/*
 * spec 3.3.6: the monitored thread exits, the context is unloaded and
 * PFM_MSG_END queued; it may then be loaded onto another thread.
 */
static enum result check_end_reload(struct report *r)
{
	int go[2], fd, ret, status, reload = -1;
	pfm_msg_t msg = {0};
	pid_t pid;

	ret = make_ctx(0, 0, 0, &fd);
	if (ret)
		return fail(r, "context", ret);
	if (pipe(go))
		return fail(r, "pipe", -errno);
	pid = spawn_worker(fd, go, 10, -1);
	close(go[0]);
	ret = load_start(fd, pid);
	if (write(go[1], "g", 1) != 1 && !ret)
		ret = -errno;
	close(go[1]);
	waitpid(pid, &status, 0);
	if (!ret)
		ret = pfm_read_msg(fd, &msg, 5000000000ULL);
	if (!ret)
		reload = pfm_load_context(
			fd, &(pfarg_load_t){.load_pid = (pvpmu_u32)getpid()});
	pfm_close(fd);
	if (ret)
		return fail(r, "END message", ret);
	detail(r, "msg_type %u (END %u); LOAD onto another thread: %s",
	       msg.msg_type, PFM_MSG_END, pvpmu_strerror(reload));
	return msg.msg_type == PFM_MSG_END && reload == 0 ? PASS : FAIL;
}

/*
 * A child that closes its copy of (ctx_fd), waits for a byte on (go),
 * makes (n) hypercalls, and exits only once (go) is closed: its exit
 * (PFM_MSG_END) comes after whatever the parent checks meanwhile.
 */
static pid_t spawn_holder(int ctx_fd, int go[2], unsigned int n)
{
	pid_t pid = fork();
	char c;

	if (pid)
		return pid;
	close(ctx_fd);
	close(go[1]);
	if (read(go[0], &c, 1) != 1)
		_exit(2);
	hc_nops(n);
	while (read(go[0], &c, 1) > 0)
		;
	_exit(0);
}

/*
 * spec 3.3.7, 3.4.3: with PFM_FL_OVFL_NO_MSG an overflow queues no
 * message, but O_ASYNC still delivers SIGIO; a RESTART is still needed.
 */
static enum result check_nomsg_sigio(struct report *r)
{
	int go[2], fd, ret, status, waited = 0, rd = 0;
	pfm_msg_t msg;
	pid_t pid;

	ret = make_ctx(PFM_FL_OVFL_NO_MSG, (pvpmu_u64)-10,
		       PFM_REGFL_OVFL_NOTIFY, &fd);
	if (ret)
		return fail(r, "context", ret);
	signal(SIGIO, on_sigio);
	got_sigio = 0;
	fcntl(fd, F_SETOWN, getpid());
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
	if (pipe(go))
		return fail(r, "pipe", -errno);
	pid = spawn_holder(fd, go, 20);
	close(go[0]);
	ret = load_start(fd, pid);
	if (write(go[1], "g", 1) != 1 && !ret)
		ret = -errno;
	while (!ret && !got_sigio && waited < 500) {
		usleep(10000);
		waited++;
	}
	if (!ret)
		rd = pfm_read_msg(fd, &msg, 0);
	if (!ret && got_sigio)
		ret = pfm_restart(fd);
	close(go[1]);
	waitpid(pid, &status, 0);
	pfm_close(fd);
	if (ret)
		return fail(r, "load/restart", ret);
	detail(r, "SIGIO %s after ~%d ms; read: %s",
	       got_sigio ? "arrived" : "never came", waited * 10,
	       pvpmu_strerror(rd));
	return got_sigio && rd == -PVPMU_EAGAIN ? PASS : FAIL;
}

/*
 * spec 3.3.3: a read whose size is not a multiple of the message size is
 * EINVAL (a multiple, with nothing queued and O_NONBLOCK: EAGAIN); lseek()
 * is not supported (ESPIPE).
 */
static enum result check_read_lseek(struct report *r)
{
	char buf[2 * sizeof(pfm_msg_t) + 1];
	int fd, ret, e_odd, e_two, e_seek;

	ret = make_ctx(0, 0, 0, &fd);
	if (ret)
		return fail(r, "context", ret);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	e_odd  = read(fd, buf, sizeof(pfm_msg_t) + 1) < 0 ? errno : 0;
	e_two  = read(fd, buf, 2 * sizeof(pfm_msg_t)) < 0 ? errno : 0;
	e_seek = lseek(fd, 0, SEEK_CUR) < 0 ? errno : 0;
	pfm_close(fd);
	detail(r, "read of %zu bytes: %s; of %zu: %s; lseek: %s",
	       sizeof(pfm_msg_t) + 1, errstr(e_odd), 2 * sizeof(pfm_msg_t),
	       errstr(e_two), errstr(e_seek));
	return e_odd == EINVAL && e_two == EAGAIN && e_seek == ESPIPE ? PASS
								      : FAIL;
}

/* mmap of (fd)'s sampling buffer: 0 or the errno. */
static int map_err(int fd, size_t len, int prot, int flags, void **out)
{
	void *p = mmap(0, len, prot, flags, fd, 0);

	*out = p == MAP_FAILED ? NULL : p;
	return p == MAP_FAILED ? errno : 0;
}

/*
 * spec 3.5.4: the buffer is mapped read-only, shared, whole
 * (ctx_smpl_buf_size), once per process: MAP_PRIVATE, another size,
 * PROT_EXEC and a second mapping are refused; after munmap() it maps
 * again.
 */
static enum result check_smpl_mmap(struct report *r)
{
	static const pvpmu_u8 uuid[16] = PFM_DEFAULT_SMPL_UUID;
	pfm_default_smpl_arg_t arg     = {.buf_size = 8192};
	pfarg_ctx_t ctx                = {0};
	int e_priv, e_size, e_exec, e_ok, e_twice, e_again, e_mprot = 0;
	void *p, *q = NULL, *x;
	size_t len, bad;
	int ret;

	memcpy(ctx.ctx_smpl_buf_id, uuid, sizeof(uuid));
	ret = pfm_create_context(&ctx, &arg, sizeof(arg));
	if (ret)
		return fail(r, "PFM_CREATE_CONTEXT", ret);
	len    = (ctx.ctx_smpl_buf_size + 4095) & ~(size_t)4095;
	bad    = len > 4096 ? len - 4096 : len + 4096;
	e_priv = map_err(ctx.ctx_fd, len, PROT_READ, MAP_PRIVATE, &x);
	if (x)
		munmap(x, len);
	e_size = map_err(ctx.ctx_fd, bad, PROT_READ, MAP_SHARED, &x);
	if (x)
		munmap(x, bad);
	e_exec =
		map_err(ctx.ctx_fd, len, PROT_READ | PROT_EXEC, MAP_SHARED, &x);
	if (x)
		munmap(x, len);
	e_ok = map_err(ctx.ctx_fd, len, PROT_READ, MAP_SHARED, &p);
	if (p)
		e_mprot = mprotect(p, len, PROT_READ | PROT_EXEC) ? errno : 0;
	e_twice = map_err(ctx.ctx_fd, len, PROT_READ, MAP_SHARED, &x);
	if (x)
		munmap(x, len);
	if (p)
		munmap(p, len);
	e_again = map_err(ctx.ctx_fd, len, PROT_READ, MAP_SHARED, &q);
	if (q)
		munmap(q, len);
	pfm_close(ctx.ctx_fd);
	detail(r,
	       "MAP_PRIVATE: %s; %zu of %zu bytes: %s; PROT_EXEC: %s; "
	       "valid: %s; mprotect(PROT_EXEC): %s; second: %s; after "
	       "munmap: %s",
	       errstr(e_priv), bad, len, errstr(e_size), errstr(e_exec),
	       errstr(e_ok), errstr(e_mprot), errstr(e_twice), errstr(e_again));
	return e_priv && e_size && e_exec && !e_ok && e_mprot && e_twice &&
			       !e_again
		       ? PASS
		       : FAIL;
}

static int formats_as_user(void *arg)
{
	static const pvpmu_u8 dfl[16] = PFM_DEFAULT_SMPL_UUID;
	pfm_format_info_t f[16];
	int n = pfm_getinfo_formats(f, 16), i, found = 0;

	if (n < 0)
		return err_status(n);
	for (i = 0; i < n && i < 16; i++)
		found |= !memcmp(f[i].uuid, dfl, 16) &&
			 !strcmp((const char *)f[i].name, "default");
	*(int *)arg = n;
	return found ? 0 : 119;
}

/*
 * spec 3.5.2: the list of formats (UUID and name) is there for any user:
 * pfm_getinfo_formats() as an unprivileged user lists the default format.
 */
static enum result check_formats(struct report *r)
{
	int n = 0, st = as_user(formats_as_user, &n);

	detail(r, "pfm_getinfo_formats() as user %d: %s%s", NOBODY_ID,
	       st == 119 ? "no default format" : errstr(st),
	       st == 0 ? ", lists the default format" : "");
	return st == 0 ? PASS : FAIL;
}

/*
 * spec 3.1.7, 3.1.8: a system-wide context is loaded onto the CPU the
 * caller runs on (another: EINVAL) and unloaded from its CPU only (from
 * another: EBUSY). Needs 2 CPUs.
 */
static enum result check_syswide_cpu(struct report *r)
{
	const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int fd, ret, l_other = 0, l_here = 0, u_other = 0, u_here = 0;

	if (ncpu < 2) {
		detail(r, "%ld CPU online: needs 2", ncpu);
		return SKIP;
	}
	ret = make_ctx(PFM_FL_SYSTEM_WIDE, 0, 0, &fd);
	if (ret)
		return fail(r, "context", ret);
	ret = pin(0, 1);
	if (!ret)
		l_other = pfm_load_context(fd, &(pfarg_load_t){.load_pid = 0});
	if (!ret && !l_other)
		pfm_unload_context(fd); /* the old driver loaded it */
	if (!ret)
		ret = pin(0, 0);
	if (!ret)
		l_here = pfm_load_context(fd, &(pfarg_load_t){.load_pid = 0});
	if (!ret)
		ret = pin(0, 1);
	if (!ret)
		u_other = pfm_unload_context(fd);
	if (!ret)
		ret = pin(0, 0);
	if (!ret && u_other)
		u_here = pfm_unload_context(fd);
	pfm_close(fd);
	if (ret)
		return fail(r, "sched_setaffinity", ret);
	detail(r,
	       "LOAD for CPU 0 from CPU 1: %s; from CPU 0: %s; UNLOAD from "
	       "CPU 1: %s; from CPU 0: %s",
	       pvpmu_strerror(l_other), pvpmu_strerror(l_here),
	       pvpmu_strerror(u_other), pvpmu_strerror(u_here));
	return l_other == -PVPMU_EINVAL && !l_here && u_other == -PVPMU_EBUSY &&
			       !u_here
		       ? PASS
		       : FAIL;
}

struct check {
	const char *name;
	enum result (*run)(struct report *r);
};

static const struct check checks[] = {
	{"pvpmu-device", check_device},
	{"pvpmu-config", check_config},
	{"pvpmu-efault", check_efault},
	{"pvpmu-pfstat-exact", check_pfstat_exact},
	{"pvpmu-fast-read", check_fast_read},
	{"pvpmu-poll", check_poll},
	{"pvpmu-sigio", check_sigio},
	{"pvpmu-notify-block", check_notify_block},
	{"pvpmu-fork-shares", check_fork_shares},
	{"pvpmu-smpl-readonly", check_smpl_readonly},
	{"pvpmu-emul64", check_emul64},
	{"pvpmu-pfrecord", check_pfrecord},
};

/*
 * `pvpmu-checks spec`: the spec's descriptor semantics, permissions and
 * format list, in a guest with two CPUs (pvpmu-syswide-cpu needs them).
 */
static const struct check spec_checks[] = {
	{"pvpmu-perm-load", check_perm_load},
	{"pvpmu-close-self", check_close_self},
	{"pvpmu-end-reload", check_end_reload},
	{"pvpmu-nomsg-sigio", check_nomsg_sigio},
	{"pvpmu-read-lseek", check_read_lseek},
	{"pvpmu-smpl-mmap", check_smpl_mmap},
	{"pvpmu-formats", check_formats},
	{"pvpmu-syswide-cpu", check_syswide_cpu},
};

/* `pvpmu-checks smp`: in a guest with two CPUs or more. */
static const struct check smp_checks[] = {
	{"pvpmu-smp-migrate", check_smp_migrate},
};

/*
 * How long close-hold waits for the host's answer to a step. The init
 * kills the program after 180 s (tests/linux/init/checks_pvpmu.c), so
 * the four steps fit with room to spare.
 */
#define CLOSE_WAIT_SECS 40

/* A system-wide context loaded on CPU 0: the host lists it while loaded. */
static int open_loaded(int *fd)
{
	int ret = make_ctx(PFM_FL_SYSTEM_WIDE, 0, 0, fd);

	if (!ret)
		ret = pfm_load_context(*fd, &(pfarg_load_t){.load_pid = 0});
	if (ret)
		fprintf(stderr, "pvpmu-close: context: %s\n",
			pvpmu_strerror(ret));
	return ret;
}

/*
 * Announce a step on the console and wait for the host's answer: a line
 * on standard input (the console; the host test writes it to the VM's
 * console input once `vpmu list` showed the step). 0, or -1 after
 * CLOSE_WAIT_SECS without one.
 */
static int step(const char *what)
{
	uint64_t end    = now_ns() + CLOSE_WAIT_SECS * 1000000000ULL, t;
	struct pollfd p = {.fd = 0, .events = POLLIN};
	char c          = 0;

	printf("pvpmu-close: %s; waiting for the host\n", what);
	while (c != '\n' && (t = now_ns()) < end) {
		if (poll(&p, 1, (int)((end - t) / 1000000) + 1) == 1 &&
		    read(0, &c, 1) != 1)
			break;
	}
	if (c == '\n')
		return 0;
	printf("pvpmu-close: %s: no answer from the host in %d s\n", what,
	       CLOSE_WAIT_SECS);
	return -1;
}

/*
 * spec 3.1.9 close, 3.3.6: close destroys the context, and so does the
 * exit of the last process holding its descriptor. The host test counts
 * the VM's guest contexts at each step: 1, 0, 1, 0.
 */
static int close_hold(void)
{
	int fd, status;
	pid_t pid;

	if (open_loaded(&fd))
		return 1;
	if (step("context open"))
		return 1;
	pfm_close(fd);
	if (step("context closed"))
		return 1;
	pid = fork();
	if (pid == 0) {
		if (open_loaded(&fd))
			_exit(1);
		_exit(step("child holds a context") ? 1 : 0); /* not closed */
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return 1;
	return step("child exited") ? 1 : 0;
}

/*
 * Each check runs in a child of its own that sends its result and report
 * through a pipe: a check that hangs is killed after CHECK_SECS and
 * reported as a failure (this kernel has no POSIX timers for alarm()).
 * Killing it closes its context descriptors, which wakes any worker of it
 * still blocked in the driver.
 */
#define CHECK_SECS 60

static enum result run_check(enum result (*run)(struct report *r),
			     struct report *r)
{
	int pfd[2], status;
	struct pollfd p;
	enum result res;
	ssize_t got = 0;
	pid_t pid;

	if (pipe(pfd))
		return fail(r, "pipe", -errno);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		res = run(r);
		if (write(pfd[1], &res, sizeof(res)) != sizeof(res) ||
		    write(pfd[1], r, sizeof(*r)) != sizeof(*r))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return fail(r, "fork", -errno);
	}
	p = (struct pollfd){.fd = pfd[0], .events = POLLIN};
	if (poll(&p, 1, CHECK_SECS * 1000) == 1)
		got = read(pfd[0], &res, sizeof(res));
	if (got == sizeof(res) && read(pfd[0], r, sizeof(*r)) != sizeof(*r))
		got = 0;
	if (got != sizeof(res))
		kill(pid, SIGKILL);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (got == sizeof(res))
		return res;
	memset(r, 0, sizeof(*r));
	detail(r,
	       "still running after %d s (killed), or ended without a "
	       "result (status 0x%x)",
	       CHECK_SECS, status);
	return FAIL;
}

static unsigned int run_table(const struct check *table, unsigned int n)
{
	static const char *const names[] = {"PASS", "FAIL", "SKIP"};
	unsigned int i, failed = 0;
	struct report r;
	enum result res;

	for (i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		res = run_check(table[i].run, &r);
		printf("vpmu-test: %s: %s %s\n", table[i].name, names[res],
		       r.text);
		failed += res == FAIL;
	}
	return failed;
}

int main(int argc, char **argv)
{
	if (ioperm(PVPMU_PORT_HC_BASE, PVPMU_HC_MAX, 1)) {
		fprintf(stderr, "pvpmu-checks: ioperm: %s\n", strerror(errno));
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "hc")) {
		hc_nops((unsigned int)strtoul(argv[2], 0, 0));
		return 0;
	}
	setvbuf(stdout, 0, _IONBF, 0);
	if (argc == 2 && !strcmp(argv[1], "close-hold"))
		return close_hold();
	if (argc == 2 && !strcmp(argv[1], "spec"))
		return (int)run_table(spec_checks,
				      sizeof(spec_checks) /
					      sizeof(spec_checks[0]));
	if (argc == 2 && !strcmp(argv[1], "smp"))
		return (int)run_table(
			smp_checks, sizeof(smp_checks) / sizeof(smp_checks[0]));
	return (int)run_table(checks, sizeof(checks) / sizeof(checks[0]));
}
