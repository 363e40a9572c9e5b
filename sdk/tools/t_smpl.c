// SPDX-License-Identifier: MIT
/*
 * t_smpl.c: the default-format cycle seen from the guest (image sdk_smpl):
 * sample every SMPL_PERIOD-th hypercall (hv_hypercalls overflows at the
 * very exit that makes it, so sample points are exact), fill the buffer,
 * get told (notification vector, then by polling pfm_read_msg), check the
 * masked buffer (count, overflows, sample contents, no counting while
 * masked), PFM_RESTART, and go again, SMPL_CYCLES times per mode.
 */
#include "check.h"

#include "pvpmu_hc.h"

#define SMPL_PERIOD 10
#define SMPL_CYCLES 3
#define SMPL_BUF    4096
#define MAX_CALLS   100000

static struct checker c = {.name = "sdk_smpl"};

extern const char __image_start[], __image_end[];

struct run {
	int fd;
	const void *buf;
	uint64_t size;
	unsigned int vcpu;
	int use_vector;
};

static int setup(struct run *r)
{
	struct {
		pfarg_ctx_t ctx;
		pfm_default_smpl_arg_t arg;
	} a = {
		.ctx = {.ctx_flags       = PFM_FL_SYSTEM_WIDE,
			.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID},
		.arg = {.buf_size = SMPL_BUF},
	};
	pfarg_pmc_t pmc = {.reg_num = 0, .reg_flags = PFM_REGFL_OVFL_NOTIFY};
	pfarg_pmd_t pmd = {.reg_num         = 0,
			   .reg_value       = -(uint64_t)SMPL_PERIOD,
			   .reg_short_reset = -(uint64_t)SMPL_PERIOD,
			   .reg_long_reset  = -(uint64_t)SMPL_PERIOD};
	pfarg_load_t ld = {.load_pid = r->vcpu};
	int ret;

	ret = pfm_create_context(&a.ctx, &a.arg, sizeof(a.arg));
	EXPECT(&c, "create with the default format", ret, 0);
	if (ret)
		return ret;
	r->fd = a.ctx.ctx_fd;
	EXPECT_TRUE(&c, "buffer size", a.ctx.ctx_smpl_buf_size >= SMPL_BUF);
	EXPECT(&c, "encode",
	       pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0), 0);
	EXPECT(&c, "write_pmcs", pfm_write_pmcs(r->fd, &pmc, 1), 0);
	EXPECT(&c, "write_pmds", pfm_write_pmds(r->fd, &pmd, 1), 0);
	EXPECT(&c, "smpl_buf", pfm_smpl_buf(r->fd, &r->buf, &r->size), 0);
	EXPECT(&c, "mapped size", r->size, a.ctx.ctx_smpl_buf_size);
	if (r->use_vector)
		EXPECT(&c, "vector", pvpmu_set_vector(TOOL_NOTIFY_VECTOR), 0);
	EXPECT(&c, "load", pfm_load_context(r->fd, &ld), 0);
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

	calls = fill(r, &msg);
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
	EXPECT(&c, "read_pmds masked", pfm_read_pmds(r->fd, &pmd, 1), 0);
	EXPECT(&c, "no counting while masked", pmd.reg_value, before);
	EXPECT(&c, "no samples while masked", h->hdr_count, n);
	EXPECT(&c, "one message per notification", pfm_read_msg(r->fd, &msg, 0),
	       -PVPMU_EAGAIN);
	EXPECT(&c, "restart", pfm_restart(r->fd), 0);
	EXPECT(&c, "header reset by restart", h->hdr_count, 0);
	uprintf("sdk_smpl: %s cycle %u: %llu samples after %u calls, "
		"restarted\n",
		r->use_vector ? "vector" : "polling", i, (unsigned long long)n,
		calls);
}

static void run_mode(unsigned int vcpu, int use_vector)
{
	struct run r = {.vcpu = vcpu, .use_vector = use_vector};
	unsigned int i;

	if (setup(&r)) {
		EXPECT(&c, "start", 1, 0);
		return;
	}
	for (i = 0; i < SMPL_CYCLES && !c.nr_failed; i++)
		cycle(&r, i);
	EXPECT(&c, "stop", pfm_stop(r.fd), 0);
	if (use_vector)
		EXPECT(&c, "vector off", pvpmu_set_vector(0), 0);
	EXPECT(&c, "close", pfm_close(r.fd), 0);
}

int user_main(unsigned int vcpu)
{
	if (vcpu)
		return 0;
	run_mode(vcpu, 1);
	run_mode(vcpu, 0);
	return check_done(&c);
}
