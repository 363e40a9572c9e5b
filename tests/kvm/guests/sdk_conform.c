// SPDX-License-Identifier: MIT
/*
 * sdk_conform.c: the perfmon2 behaviours a conformance check found missing,
 * end to end, from ring 3
 * through libpvpmu (image sdk_conform; tests/kvm/test_sdk.c runs it with 2
 * vCPUs, and with --format-dir for the run-time format):
 *   3.5.2   pfm_getinfo_formats() lists UUID and name of every format,
 *           built-in and run-time; the "last-n" format (formats/lastn/)
 *           is used when the VMM loaded it (VM name "fmts");
 *   3.3.7   PFM_FL_OVFL_NO_MSG: the notification vector fires, no message;
 *   3.1.7   a vCPU-wide context is loaded only from the vCPU it names
 *           (EINVAL from vCPU 0 for vCPU 1);
 *   3.1.8   a vCPU-wide context is unloaded only from its vCPU (EBUSY from
 *           vCPU 0 for vCPU 1's context);
 *   3.1.9   PFM_FL_NOTIFY_BLOCK: vCPU 1's thread (tid 77, monitored by
 *           vCPU 0) makes no user-level progress from the notification to
 *           PFM_RESTART, then runs on.
 */
#include "check.h"
#include "lastn.h"
#include "pvpmu_hc.h"

#define PERIOD      5
#define MON_TID     77
#define WAIT_NS     2000000000ULL /* 2 s for a message */
#define FROZEN_SPIN 20000000ULL   /* ~10-20 ms of ring-3 spinning */

static struct checker c  = {.name = "sdk_conform"};
static struct checker c1 = {.name = "sdk_conform vcpu 1"};

/* vCPU 0 <-> vCPU 1. */
enum phase { P_IDLE, P_SYS_LOAD, P_SYS_UNLOAD, P_THREAD, P_DONE };
static volatile int phase, sys_fd = -1, thr_fd = -1, ack;
static volatile uint64_t progress;

static int is_named(const char *want)
{
	const char *n = (const char *)user_boot_info()->name;

	while (*want && *n == *want) {
		n++;
		want++;
	}
	return !*want && !*n;
}

static void nops(unsigned int n)
{
	while (n--)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
}

/* A context counting hv_hypercalls in PMD 0 with period PERIOD. */
static int counter_ctx(pfarg_ctx_t *ctx, const void *arg, pvpmu_u64 size,
		       unsigned int reg_flags)
{
	pfarg_pmc_t pmc = {.reg_flags = reg_flags};
	pfarg_pmd_t pmd = {.reg_value       = 0 - PERIOD,
			   .reg_short_reset = 0 - PERIOD,
			   .reg_long_reset  = 0 - PERIOD};
	int ret         = pfm_create_context(ctx, arg, size);

	EXPECT(&c, "create", ret, 0);
	if (ret)
		return -1;
	EXPECT(&c, "encode",
	       pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0), 0);
	EXPECT(&c, "write_pmcs", pfm_write_pmcs(ctx->ctx_fd, &pmc, 1), 0);
	EXPECT(&c, "write_pmds", pfm_write_pmds(ctx->ctx_fd, &pmd, 1), 0);
	return ctx->ctx_fd;
}

/* 3.5.2 and the run-time "last-n" format. */
static void formats(void)
{
	static const pvpmu_u8 lastn_uuid[16] = LASTN_SMPL_UUID;
	pfm_format_info_t f[16];
	int i, k, n, lastn = -1, dfl = -1;

	n = pfm_getinfo_formats(f, 16);
	EXPECT_TRUE(&c, "3.5.2: formats listed", n >= 2);
	EXPECT(&c, "count only", pfm_getinfo_formats(0, 0), n);
	for (i = 0; i < n && i < 16; i++) {
		uprintf("sdk_conform: format %s (%s)\n", (char *)f[i].name,
			(f[i].flags & PVPMU_FMT_BUILTIN) ? "built-in"
							 : "run-time");
		for (k = 0; k < 16 && f[i].uuid[k] == lastn_uuid[k]; k++)
			;
		if (k == 16)
			lastn = i;
		if (f[i].name[0] == 'd' && (f[i].flags & PVPMU_FMT_BUILTIN))
			dfl = i;
	}
	EXPECT_TRUE(&c, "3.6: the default format is listed", dfl == 0);
	if (!is_named("fmts"))
		return;
	EXPECT_TRUE(&c, "the run-time format is listed", lastn >= 2);
	if (lastn < 0)
		return;
	EXPECT(&c, "run-time flag", f[lastn].flags & PVPMU_FMT_BUILTIN, 0);
	EXPECT(&c, "its argument size", f[lastn].arg_size,
	       sizeof(struct lastn_arg));
	{
		struct lastn_arg a = {.n = 4, .nr_pmds = 1};
		pfarg_ctx_t ctx    = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
		pfarg_load_t ld    = {.load_pid = 0};
		const void *buf    = 0;
		pvpmu_u64 size     = 0;
		const struct lastn_hdr *h;
		int fd;

		for (k = 0; k < 16; k++)
			ctx.ctx_smpl_buf_id[k] = lastn_uuid[k];
		fd = counter_ctx(&ctx, &a, sizeof(a), 0);
		if (fd < 0)
			return;
		EXPECT(&c, "smpl_buf", pfm_smpl_buf(fd, &buf, &size), 0);
		EXPECT(&c, "load", pfm_load_context(fd, &ld), 0);
		EXPECT(&c, "start", pfm_start(fd, 0), 0);
		nops(6 * PERIOD);
		EXPECT(&c, "stop", pfm_stop(fd), 0);
		h = buf;
		if (h) {
			EXPECT(&c, "last-n version", h->version, LASTN_VERSION);
			EXPECT_TRUE(&c, "last-n sampled every period",
				    h->total[0] >= 6);
			uprintf("sdk_conform: last-n: %llu samples, kept %u\n",
				(unsigned long long)h->total[0], h->n);
		}
		EXPECT(&c, "close", pfm_close(fd), 0);
	}
}

/* 3.3.7, Table 3.2: OVFL_NO_MSG still notifies; only the message goes. */
static void no_msg(void)
{
	pfarg_ctx_t ctx = {.ctx_flags =
				   PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG};
	pfarg_load_t ld = {.load_pid = 0};
	uint64_t before = user_notify_count(0);
	pfm_msg_t msg;
	int fd;

	EXPECT(&c, "vector", pvpmu_set_vector(TOOL_NOTIFY_VECTOR), 0);
	fd = counter_ctx(&ctx, 0, 0, PFM_REGFL_OVFL_NOTIFY);
	if (fd < 0)
		return;
	EXPECT(&c, "load", pfm_load_context(fd, &ld), 0);
	EXPECT(&c, "start", pfm_start(fd, 0), 0);
	nops(2 * PERIOD);
	tool_sink = tool_spin(100000);
	EXPECT(&c, "3.3.7: the vector fired", user_notify_count(0) - before, 1);
	EXPECT(&c, "3.3.7: no message", pfm_read_msg(fd, &msg, 0),
	       -PVPMU_EAGAIN);
	EXPECT(&c, "restart still needed", pfm_restart(fd), 0);
	EXPECT(&c, "close", pfm_close(fd), 0);
	EXPECT(&c, "vector off", pvpmu_set_vector(0), 0);
	uprintf("sdk_conform: OVFL_NO_MSG notified without a message\n");
}

static void wait_ack(int want)
{
	while (__atomic_load_n(&ack, __ATOMIC_ACQUIRE) != want)
		tool_sink = tool_spin(1000);
}

static void go(int p)
{
	__atomic_store_n(&phase, p, __ATOMIC_RELEASE);
}

/* 3.1.7: "load_pid must be the calling thread": not vCPU 1 from vCPU 0. */
static void load_elsewhere(void)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_load_t ld = {.load_pid = 1};

	EXPECT(&c, "create", pfm_create_context(&ctx, 0, 0), 0);
	EXPECT(&c, "3.1.7: load for another vCPU",
	       pfm_load_context(ctx.ctx_fd, &ld), -PVPMU_EINVAL);
	EXPECT(&c, "close", pfm_close(ctx.ctx_fd), 0);
	uprintf("sdk_conform: vCPU-wide load refused for another vCPU\n");
}

/* 3.1.8: vCPU 1's vCPU-wide context cannot be unloaded from vCPU 0. */
static void unload_elsewhere(void)
{
	go(P_SYS_LOAD);
	wait_ack(P_SYS_LOAD);
	EXPECT(&c, "3.1.8: unload from another vCPU",
	       pfm_unload_context(sys_fd), -PVPMU_EBUSY);
	go(P_SYS_UNLOAD);
	wait_ack(P_SYS_UNLOAD);
	uprintf("sdk_conform: vCPU-wide unload refused off its vCPU\n");
}

/* One notification of the blocking context: vCPU 1 must stand still. */
static void blocked_cycle(int fd, unsigned int i)
{
	uint64_t p1, p2;
	pfm_msg_t msg;

	EXPECT(&c, "overflow message", pfm_read_msg(fd, &msg, WAIT_NS), 0);
	p1        = __atomic_load_n(&progress, __ATOMIC_ACQUIRE);
	tool_sink = tool_spin(FROZEN_SPIN);
	p2        = __atomic_load_n(&progress, __ATOMIC_ACQUIRE);
	EXPECT(&c, "3.1.9: no user-level progress while blocked", p2, p1);
	EXPECT(&c, "the kernel held it", user_blocked_count(1), i + 1);
	if (i == 1)
		EXPECT(&c, "stop", pfm_stop(fd), 0);
	EXPECT(&c, "restart", pfm_restart(fd), 0);
	while (__atomic_load_n(&progress, __ATOMIC_ACQUIRE) == p2)
		tool_sink = tool_spin(1000);
	uprintf("sdk_conform: blocked cycle %u: frozen at %llu, runs again "
		"after RESTART\n",
		i, (unsigned long long)p2);
}

static void blocking(void)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_NOTIFY_BLOCK};
	pfarg_load_t ld = {.load_pid = MON_TID};
	unsigned int i;
	int fd;

	fd = counter_ctx(&ctx, 0, 0, PFM_REGFL_OVFL_NOTIFY);
	if (fd < 0)
		return;
	EXPECT(&c, "load on thread 77", pfm_load_context(fd, &ld), 0);
	EXPECT(&c, "start", pfm_start(fd, 0), 0);
	thr_fd = fd;
	go(P_THREAD);
	for (i = 0; i < 2 && !c.nr_failed; i++)
		blocked_cycle(fd, i);
	go(P_DONE);
	wait_ack(P_DONE);
	EXPECT(&c, "close", pfm_close(fd), 0);
}

/* vCPU 1: a vCPU-wide context for 3.1.8, then the monitored thread. */
static int worker(unsigned int vcpu)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_load_t ld = {.load_pid = vcpu};

	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != P_SYS_LOAD)
		tool_sink = tool_spin(1000);
	EXPECT(&c1, "create", pfm_create_context(&ctx, 0, 0), 0);
	EXPECT(&c1, "load here", pfm_load_context(ctx.ctx_fd, &ld), 0);
	sys_fd = ctx.ctx_fd;
	__atomic_store_n(&ack, P_SYS_LOAD, __ATOMIC_RELEASE);
	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != P_SYS_UNLOAD)
		tool_sink = tool_spin(1000);
	EXPECT(&c1, "3.1.8: unload on its vCPU", pfm_unload_context(ctx.ctx_fd),
	       0);
	EXPECT(&c1, "close", pfm_close(ctx.ctx_fd), 0);
	__atomic_store_n(&ack, P_SYS_UNLOAD, __ATOMIC_RELEASE);

	/* The monitored thread: the kernel blocks it on the vector. */
	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != P_THREAD)
		tool_sink = tool_spin(1000);
	EXPECT(&c1, "vector", pvpmu_set_vector(TOOL_NOTIFY_VECTOR), 0);
	EXPECT(&c1, "sched in", pvpmu_sched(thr_fd, PVPMU_SCHED_IN, MON_TID),
	       0);
	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != P_DONE) {
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
		__atomic_add_fetch(&progress, 1, __ATOMIC_RELEASE);
	}
	EXPECT(&c1, "sched out", pvpmu_sched(thr_fd, PVPMU_SCHED_OUT, MON_TID),
	       0);
	EXPECT(&c1, "vector off", pvpmu_set_vector(0), 0);
	__atomic_store_n(&ack, P_DONE, __ATOMIC_RELEASE);
	return c1.nr_failed ? check_done(&c1) : 0;
}

int user_main(unsigned int vcpu)
{
	if (vcpu == 1)
		return worker(vcpu);
	if (vcpu)
		return 0;
	formats();
	no_msg();
	if (user_boot_info()->nr_vcpus >= 2) {
		load_elsewhere();
		unload_elsewhere();
		blocking();
	} else {
		uprintf("sdk_conform: 1 vCPU: 3.1.8 and 3.1.9 need 2\n");
	}
	return check_done(&c);
}
