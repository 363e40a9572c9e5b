// SPDX-License-Identifier: MIT
/*
 * sdk_nway.c: the n-way multi-buffer format seen from the guest (image
 * sdk_nway): sample every NWAY_PERIOD-th hypercall into NWAY_REGIONS
 * regions; each region that fills is notified (vector) while sampling goes
 * on in the next one, never masked; the guest drains FULL regions oldest
 * first with the SDK's n-way iterator and gives each back with PFM_RESTART
 * (restart argument: the region's bit, or 0 for the oldest). Over several
 * laps of the ring, no sample may be lost: every period of the sampling
 * PMD is a sample drained or in flight, or one the VMM's throttle did not
 * take or a sample carried as missed (both counted on the shared page;
 * how many depends on how fast the host runs the VMM, so it is printed,
 * not asserted).
 */
#include "check.h"

#include "pvpmu_core.h"
#include "pvpmu_hc.h"

#define NWAY_PERIOD  10
#define NWAY_REGIONS 4
#define NWAY_BUF     8192
#define NWAY_DRAINS  12 /* three laps of the ring */
#define MAX_CALLS    200000

static struct checker c = {.name = "sdk_nway"};
static struct pvpmu_shared_page page __attribute__((aligned(4096)));

extern const char __image_start[], __image_end[];

static int setup(unsigned int vcpu, const void **buf, uint64_t *size)
{
	struct {
		pfarg_ctx_t ctx;
		struct pvpmu_nway_smpl_arg arg;
	} a = {
		.ctx = {.ctx_flags       = PFM_FL_SYSTEM_WIDE,
			.ctx_smpl_buf_id = PVPMU_NWAY_SMPL_UUID},
		.arg = {.buf_size = NWAY_BUF, .nr_regions = NWAY_REGIONS},
	};
	pfarg_pmc_t pmc[2] = {
		{.reg_num = 0, .reg_flags = PFM_REGFL_OVFL_NOTIFY},
		{.reg_num = 1}, /* every hypercall, to account for samples */
	};
	pfarg_pmd_t pmd = {.reg_num         = 0,
			   .reg_value       = -(uint64_t)NWAY_PERIOD,
			   .reg_short_reset = -(uint64_t)NWAY_PERIOD,
			   .reg_long_reset  = -(uint64_t)NWAY_PERIOD};
	pfarg_load_t ld = {.load_pid = vcpu};

	EXPECT(&c, "create with the n-way format",
	       pfm_create_context(&a.ctx, &a.arg, sizeof(a.arg)), 0);
	EXPECT(&c, "encode",
	       pvpmu_event_encode("hv_hypercalls", &pmc[0].reg_value, 0), 0);
	pmc[1].reg_value = pmc[0].reg_value;
	EXPECT(&c, "write_pmcs", pfm_write_pmcs(a.ctx.ctx_fd, pmc, 2), 0);
	EXPECT(&c, "write_pmds", pfm_write_pmds(a.ctx.ctx_fd, &pmd, 1), 0);
	EXPECT(&c, "smpl_buf", pfm_smpl_buf(a.ctx.ctx_fd, buf, size), 0);
	EXPECT(&c, "vector", pvpmu_set_vector(TOOL_NOTIFY_VECTOR), 0);
	EXPECT(&c, "load", pfm_load_context(a.ctx.ctx_fd, &ld), 0);
	EXPECT(&c, "start", pfm_start(a.ctx.ctx_fd, 0), 0);
	return a.ctx.ctx_fd;
}

/* Drain the oldest FULL region; returns its samples. */
static uint64_t drain(int fd, const void *buf, uint64_t size, unsigned int nr,
		      uint64_t *last_seq)
{
	const struct pvpmu_nway_smpl_hdr *h = buf;
	unsigned int order[PVPMU_NWAY_MAX_REGIONS];
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	uint64_t n = 0, bad = 0;
	int full;

	full = pvpmu_nway_full(buf, size, order, PVPMU_NWAY_MAX_REGIONS);
	EXPECT_TRUE(&c, "a FULL region after the notification", full >= 1);
	if (full < 1)
		return 0;
	EXPECT_TRUE(&c, "regions drained in seq order",
		    h->regions[order[0]].seq > *last_seq);
	*last_seq = h->regions[order[0]].seq;
	EXPECT(&c, "iter", pvpmu_nway_iter_init(&it, buf, size, order[0], 0, 0),
	       0);
	while (pvpmu_smpl_iter_next(&it, &s) == 1) {
		n++;
		if (s.entry.ovfl_pmd != 0 ||
		    s.entry.ip < (uintptr_t)__image_start ||
		    s.entry.ip >= (uintptr_t)__image_end)
			bad++;
	}
	EXPECT(&c, "well-formed samples", bad, 0);
	EXPECT(&c, "samples counted by the region", n,
	       h->regions[order[0]].count);
	/* Give it back: by its bit, or every other time as "the oldest". */
	EXPECT(&c, "release",
	       pvpmu_restart_arg(fd, nr % 2 ? 1ULL << order[0] : 0), 0);
	EXPECT(&c, "released", h->regions[order[0]].state,
	       PVPMU_NWAY_REGION_FREE);
	return n;
}

int user_main(unsigned int vcpu)
{
	const struct pvpmu_nway_smpl_hdr *h;
	uint64_t size, irqs, seen = 0, seq = 0, ovfl, throttled, missed;
	unsigned int calls = 0, drains = 0;
	const void *buf;
	pfarg_pmd_t pmd = {.reg_num = 1};
	pfm_msg_t msg;
	int fd;

	if (vcpu)
		return 0;
	EXPECT(&c, "shared page", pvpmu_shared_attach(&page), 0);
	fd   = setup(vcpu, &buf, &size);
	h    = buf;
	irqs = user_notify_count(vcpu);
	EXPECT(&c, "regions", h->nr_regions, NWAY_REGIONS);
	while (drains < NWAY_DRAINS && calls < MAX_CALLS && !c.nr_failed) {
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
		calls++;
		if (user_notify_count(vcpu) == irqs)
			continue;
		irqs = user_notify_count(vcpu);
		while (pfm_read_msg(fd, &msg, 0) == 0) {
			EXPECT(&c, "overflow message", msg.msg_type,
			       PFM_MSG_OVFL);
			seen += drain(fd, buf, size, drains++, &seq);
		}
	}
	EXPECT(&c, "drained", drains, NWAY_DRAINS);
	EXPECT(&c, "stop", pfm_stop(fd), 0);
	EXPECT(&c, "never masked", h->masked, 0);
	EXPECT(&c, "nothing lost", h->lost, 0);
	/* Every NWAY_PERIOD-th call was sampled; the rest are in flight. */
	ovfl = 0;
	for (unsigned int i = 0; i < h->nr_regions; i++)
		ovfl += h->regions[i].state != PVPMU_NWAY_REGION_FREE
				? h->regions[i].count
				: 0;
	/* All hypercalls while started (the SDK's too), STOP included. */
	EXPECT(&c, "read_pmds", pfm_read_pmds(fd, &pmd, 1), 0);
	/* The page is published at exits: read_pmds's shows the totals. */
	throttled = __atomic_load_n(&page.nr_throttled, __ATOMIC_RELAXED);
	missed    = __atomic_load_n(&page.nr_missed, __ATOMIC_RELAXED);
	EXPECT(&c, "every sample accounted for",
	       seen + ovfl + throttled + missed, pmd.reg_value / NWAY_PERIOD);
	uprintf("sdk_nway: %llu hypercalls (%u NOPs), %llu samples drained "
		"from %u regions, %llu in flight, %llu throttled, %llu "
		"missed, never masked\n",
		(unsigned long long)pmd.reg_value, calls,
		(unsigned long long)seen, drains, (unsigned long long)ovfl,
		(unsigned long long)throttled, (unsigned long long)missed);
	EXPECT(&c, "vector off", pvpmu_set_vector(0), 0);
	EXPECT(&c, "close", pfm_close(fd), 0);
	EXPECT(&c, "shared page off", pvpmu_shared_attach(0), 0);
	return check_done(&c);
}
