// SPDX-License-Identifier: MIT
/*
 * sdk_smpl.c: the default-format cycle seen from the guest (image sdk_smpl):
 * sample every SMPL_PERIOD-th hypercall (hv_hypercalls overflows at the
 * very exit that makes it, so sample points are exact), fill the buffer,
 * get told (notification vector, then by polling pfm_read_msg), check the
 * masked buffer (count, overflows, sample contents, no counting while
 * masked), PFM_RESTART, and go again, SMPL_CYCLES times per mode.
 *
 * With two vCPUs or more, a third mode is the classic perfmon2 monitor:
 * vCPU 1 runs the workload under its own vCPU-wide context, vCPU 0 waits
 * for each overflow message in pfm_read_msg() (halted in the VMM, not
 * spinning), parses the buffer and restarts vCPU 1's context.
 */
#include "check.h"
#include "smpl_setup.h"

#include "pvpmu_hc.h"

#define SMPL_PERIOD 10
#define SMPL_CYCLES 3
#define SMPL_BUF    4096
#define MAX_CALLS   100000

static struct checker c  = {.name = "sdk_smpl"};
static struct checker c1 = {.name = "sdk_smpl vcpu 1"};

extern const char __image_start[], __image_end[];

enum mode { M_VECTOR, M_POLL, M_REMOTE };

static const char *const mode_names[] = {"vector", "polling", "remote"};

struct run {
	int fd;
	const void *buf;
	uint64_t size;
	unsigned int vcpu;
	int use_vector;
	enum mode mode;
	struct checker *ck; /* of the vCPU that runs setup() */
};

/* Remote mode: vCPU 1 publishes its context; vCPU 0 says when to stop. */
static volatile int remote_fd = -1, remote_done;
static const void *volatile remote_buf;
static volatile uint64_t remote_size;

static int setup(struct run *r)
{
	struct smpl_ctx a;
	pfarg_pmc_t pmc = {.reg_num = 0, .reg_flags = PFM_REGFL_OVFL_NOTIFY};
	pfarg_pmd_t pmd = smpl_pmd0(SMPL_PERIOD);
	pfarg_load_t ld = {.load_pid = r->vcpu};
	int ret;

	ret = smpl_create_context(&a, SMPL_BUF);
	EXPECT(r->ck, "create with the default format", ret, 0);
	if (ret)
		return ret;
	r->fd = a.ctx.ctx_fd;
	EXPECT_TRUE(r->ck, "buffer size", a.ctx.ctx_smpl_buf_size >= SMPL_BUF);
	EXPECT(r->ck, "encode",
	       pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0), 0);
	EXPECT(r->ck, "write_pmcs", pfm_write_pmcs(r->fd, &pmc, 1), 0);
	EXPECT(r->ck, "write_pmds", pfm_write_pmds(r->fd, &pmd, 1), 0);
	EXPECT(r->ck, "smpl_buf", pfm_smpl_buf(r->fd, &r->buf, &r->size), 0);
	EXPECT(r->ck, "mapped size", r->size, a.ctx.ctx_smpl_buf_size);
	if (r->use_vector)
		EXPECT(r->ck, "vector", pvpmu_set_vector(TOOL_NOTIFY_VECTOR),
		       0);
	EXPECT(r->ck, "load", pfm_load_context(r->fd, &ld), 0);
	return pfm_start(r->fd, 0);
}

/* Hypercalls until told the buffer is full; returns how many. */
static unsigned int fill(struct run *r, pfm_msg_t *msg)
{
	uint64_t irqs = user_notify_count(r->vcpu);
	unsigned int n;

	for (n = 1; n <= MAX_CALLS; n++) {
		if (r->use_vector) {
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
			if (user_notify_count(r->vcpu) == irqs)
				continue;
			EXPECT(&c, "one notification",
			       user_notify_count(r->vcpu), irqs + 1);
			EXPECT(&c, "read_msg after the vector",
			       pfm_read_msg(r->fd, msg, 0), 0);
			return n;
		}
		/* Polling: pfm_read_msg is the hypercall that samples. */
		if (pfm_read_msg(r->fd, msg, 0) == 0)
			return n;
	}
	return 0;
}

/* Check the masked, full buffer; returns the number of samples. */
static uint64_t check_buffer(struct run *r, unsigned int cycle)
{
	const struct pfm_default_smpl_hdr *h = r->buf;
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	uint64_t n = 0, bad = 0, prev = 0;
	int ret;

	EXPECT(&c, "hdr_overflows", h->hdr_overflows, cycle + 1);
	EXPECT(&c, "iter", pvpmu_smpl_iter_init(&it, r->buf, r->size, 0, 0), 0);
	while ((ret = pvpmu_smpl_iter_next(&it, &s)) == 1) {
		n++;
		if (s.entry.ovfl_pmd != 0 || s.entry.cpu != r->vcpu ||
		    s.entry.ip < (uintptr_t)__image_start ||
		    s.entry.ip >= (uintptr_t)__image_end ||
		    s.entry.tstamp <= prev)
			bad++;
		prev = s.entry.tstamp;
	}
	EXPECT(&c, "iteration ends cleanly", ret, 0);
	EXPECT(&c, "samples counted by the header", n, h->hdr_count);
	EXPECT(&c, "well-formed samples", bad, 0);
	/* Full: less than a maximal sample of room left (spec 3.6.5). */
	EXPECT_TRUE(&c, "buffer full",
		    r->size - h->hdr_cur_offs < 40 + 8 * PFM_MAX_PMDS);
	return n;
}

static void cycle(struct run *r, unsigned int i)
{
	const struct pfm_default_smpl_hdr *h = r->buf;
	pfarg_pmd_t pmd                      = {.reg_num = 0};
	uint64_t before, n;
	pfm_msg_t msg;
	unsigned int calls, k;

	if (r->mode == M_REMOTE) {
		/* Halted in the VMM until vCPU 1 fills the buffer. */
		EXPECT(&c, "read_msg waits for the other vCPU",
		       pfm_read_msg(r->fd, &msg, 5000000000ULL), 0);
		calls = 1;
	} else {
		calls = fill(r, &msg);
	}
	EXPECT_TRUE(&c, "buffer filled", calls > 0);
	if (!calls)
		return;
	EXPECT(&c, "overflow message", msg.msg_type, PFM_MSG_OVFL);
	EXPECT(&c, "PMD0 overflowed", msg.pfm_ovfl_msg.msg_ovfl_pmds[0], 1);
	n = check_buffer(r, i);
	/* Masked: hypercalls are not counted, the buffer does not move. */
	EXPECT(&c, "read_pmds masked", pfm_read_pmds(r->fd, &pmd, 1), 0);
	before = pmd.reg_value;
	for (k = 0; k < 3 * SMPL_PERIOD; k++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	if (r->mode == M_REMOTE)
		tool_sink = tool_spin(10000000); /* vCPU 1 keeps calling */
	EXPECT(&c, "read_pmds masked", pfm_read_pmds(r->fd, &pmd, 1), 0);
	EXPECT(&c, "no counting while masked", pmd.reg_value, before);
	EXPECT(&c, "no samples while masked", h->hdr_count, n);
	EXPECT(&c, "one message per notification", pfm_read_msg(r->fd, &msg, 0),
	       -PVPMU_EAGAIN);
	EXPECT(&c, "restart", pfm_restart(r->fd), 0);
	/* In remote mode vCPU 1 may have sampled again already. */
	if (r->mode == M_REMOTE)
		EXPECT_TRUE(&c, "header reset by restart", h->hdr_count < n);
	else
		EXPECT(&c, "header reset by restart", h->hdr_count, 0);
	if (r->mode == M_REMOTE)
		uprintf("sdk_smpl: remote cycle %u: %llu samples of vcpu 1, "
			"restarted from vcpu 0\n",
			i, (unsigned long long)n);
	else
		uprintf("sdk_smpl: %s cycle %u: %llu samples after %u calls, "
			"restarted\n",
			mode_names[r->mode], i, (unsigned long long)n, calls);
}

static void run_mode(unsigned int vcpu, enum mode mode)
{
	struct run r = {.vcpu       = vcpu,
			.use_vector = mode == M_VECTOR,
			.mode       = mode,
			.ck         = &c};
	unsigned int i;

	if (setup(&r)) {
		EXPECT(&c, "start", 1, 0);
		return;
	}
	for (i = 0; i < SMPL_CYCLES && !c.nr_failed; i++)
		cycle(&r, i);
	EXPECT(&c, "stop", pfm_stop(r.fd), 0);
	if (r.use_vector)
		EXPECT(&c, "vector off", pvpmu_set_vector(0), 0);
	EXPECT(&c, "close", pfm_close(r.fd), 0);
}

/* vCPU 1 of the remote mode: monitored, makes hypercalls until told. */
static int monitored(unsigned int vcpu)
{
	struct run r = {.vcpu = vcpu, .mode = M_REMOTE, .ck = &c1};

	if (setup(&r))
		return 1;
	remote_buf  = r.buf;
	remote_size = r.size;
	__atomic_store_n(&remote_fd, r.fd, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&remote_done, __ATOMIC_ACQUIRE))
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	EXPECT(&c1, "stop on vcpu 1", pfm_stop(r.fd), 0);
	EXPECT(&c1, "close on vcpu 1", pfm_close(r.fd), 0);
	return c1.nr_failed ? check_done(&c1) : 0;
}

/* vCPU 0 of the remote mode: the monitoring tool. */
static void monitor(unsigned int vcpu)
{
	struct run r = {.vcpu = 1, .mode = M_REMOTE};
	unsigned int i;

	(void)vcpu;
	while (__atomic_load_n(&remote_fd, __ATOMIC_ACQUIRE) < 0)
		tool_sink = tool_spin(1000);
	r.fd   = remote_fd;
	r.buf  = remote_buf;
	r.size = remote_size;
	for (i = 0; i < SMPL_CYCLES && !c.nr_failed; i++)
		cycle(&r, i);
	__atomic_store_n(&remote_done, 1, __ATOMIC_RELEASE);
}

int user_main(unsigned int vcpu)
{
	if (vcpu == 1)
		return monitored(vcpu);
	if (vcpu)
		return 0;
	run_mode(vcpu, M_VECTOR);
	run_mode(vcpu, M_POLL);
	if (user_boot_info()->nr_vcpus >= 2)
		monitor(vcpu);
	return check_done(&c);
}
