// SPDX-License-Identifier: MIT
/*
 * test_nway.c: the n-way multi-buffer format (pvpmu/abi.h 7.2,
 * formats/nway.c), after the double-buffering format of spec §6.3.1:
 * monitoring continues while full regions wait for the consumer; only
 * when every region is full does it mask and notify like the default
 * format (§3.6.5); regions come back through PFM_RESTART (§3.1.9,
 * §3.5.15); lost samples are counted.
 */
#include <errno.h>

#include "fmt_test.h"

#define NHDR         704 /* sizeof(struct pvpmu_nway_smpl_hdr) */
#define ENTRY        40
#define RESET        VPMU_SMPL_CTRL_RESET_OVFL_PMDS
#define NOTIFY_RESET (VPMU_SMPL_CTRL_NOTIFY_USER | RESET)
#define MASKED                                                                 \
	(VPMU_SMPL_CTRL_NOTIFY_USER | VPMU_SMPL_CTRL_BLOCK_THREAD |            \
	 VPMU_SMPL_CTRL_MASK_MONITORING)

static const struct vpmu_smpl_fmt *nw = &vpmu_smpl_fmt_nway;

static int validate(uint64_t size, uint32_t flags, uint32_t nr)
{
	struct pvpmu_nway_smpl_arg a = {
		.buf_size = size, .buf_flags = flags, .nr_regions = nr};

	return nw->validate(0, FT_NUM_PMDS, &a);
}

static struct pvpmu_nway_smpl_hdr *mkbuf(struct vpmu_smpl_buf *b, uint32_t nr,
					 uint32_t flags)
{
	struct pvpmu_nway_smpl_arg a = {.buf_size   = 4 * ft_page(),
					.buf_flags  = flags,
					.nr_regions = nr};

	ft_create(nw, &a, FT_NUM_PMDS, b);
	return b->base;
}

static uint64_t tick;

static uint32_t ovfl(struct vpmu_smpl_buf *b)
{
	struct vpmu_smpl_ovfl_arg a = ft_ovfl(2, 0x1, ++tick);
	uint32_t ctrl               = 0;

	cr_assert(eq(int, nw->handler(b, &a, &ctrl), 0));
	return ctrl;
}

/* Samples recorded by the last fill_region(). */
static uint64_t filled;

/* Overflow until the filling region changes state; returns the ctrl. */
static uint32_t fill_region(struct vpmu_smpl_buf *b)
{
	struct pvpmu_nway_smpl_hdr *h = b->base;
	uint32_t cur                  = h->cur_region, ctrl;
	uint64_t seq                  = h->regions[cur].seq;

	filled = 0;
	do {
		ctrl = ovfl(b);
		filled++;
	} while (ctrl == RESET && h->regions[cur].seq == seq);
	return ctrl;
}

static int restart(struct vpmu_smpl_buf *b, bool active, uint64_t arg,
		   uint32_t *ctrl)
{
	*ctrl = 0xff;
	return nw->restart(b, active, arg, ctrl);
}

Test(vpmu_smpl_nway, validate_checks_regions_flags_and_size)
{
	cr_assert(eq(int, validate(8192, 0, 2), 0));
	cr_assert(eq(int, validate(65536, 0, 16), 0));
	cr_assert(eq(int, validate(8192, 0, 1), -EINVAL));
	cr_assert(eq(int, validate(65536, 0, 17), -EINVAL));
	cr_assert(eq(int, validate(8192, 1U << 5, 2), -EINVAL));
	cr_assert(eq(int, validate(8192, PFM_DFL_SMPL_IIP_HDR, 2), 0));
	cr_assert(eq(int, validate(8192, PVPMU_NWAY_SMPL_CYCLE, 2), 0));
	/* Each region must hold one maximal sample (§3.6.5 sizing). */
	cr_assert(eq(int, validate(NHDR + 2 * (ENTRY + 64), 0, 2), 0));
	cr_assert(
		eq(int, validate(NHDR + 2 * (ENTRY + 64) - 8, 0, 2), -EINVAL));
	cr_assert(eq(int, validate(100, 0, 2), -EINVAL));
}

Test(vpmu_smpl_nway, init_lays_out_regions)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 3, 0);
	uint64_t rs                   = (4 * ft_page() - NHDR) / 3 / 8 * 8;
	uint32_t i;

	cr_assert(eq(u64, h->buf_size, 4 * ft_page()));
	cr_assert(eq(u64, h->region_size, rs));
	cr_assert(eq(u32, h->nr_regions, 3));
	cr_assert(eq(u32, h->version, PVPMU_NWAY_SMPL_VERSION));
	cr_assert(eq(u32, h->cur_region, 0));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FILLING));
	cr_assert(eq(u64, h->regions[0].seq, 1));
	for (i = 0; i < 3; i++) {
		cr_assert(eq(u64, h->regions[i].offs, NHDR + i * rs));
		cr_assert(eq(u64, h->regions[i].cur_offs, NHDR + i * rs));
		cr_assert(le(u64, h->regions[i].offs + rs, b.size));
	}
	cr_assert(eq(u32, h->regions[1].state, PVPMU_NWAY_REGION_FREE));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, samples_have_default_layout)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 2, 0);
	const char *s                 = (const char *)h + NHDR;

	cr_assert(eq(u32, ovfl(&b), RESET));
	cr_assert(eq(u64, h->regions[0].count, 1));
	cr_assert(eq(u64, h->regions[0].cur_offs, NHDR + ENTRY + 8));
	cr_assert(eq(u16, ft_u16(s, 8), 2)); /* ovfl_pmd */
	cr_assert(eq(u64, ft_u64(s, 24), tick));
	cr_assert(eq(u64, ft_u64(s, 40), tick)); /* PMD0 = 1000 * 0 + tick */
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, full_region_notifies_and_monitoring_continues)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 3, 0);

	/* Region 0 fills: notification, short reset, no mask. */
	cr_assert(eq(u32, fill_region(&b), NOTIFY_RESET));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FULL));
	cr_assert(lt(u64,
		     h->region_size -
			     (h->regions[0].cur_offs - h->regions[0].offs),
		     ENTRY + 64));
	cr_assert(eq(u64, h->overflows, 1));
	cr_assert(eq(u32, h->cur_region, 1));
	cr_assert(eq(u32, h->regions[1].state, PVPMU_NWAY_REGION_FILLING));
	cr_assert(eq(u64, h->regions[1].seq, 2));
	/* The next sample lands at the start of region 1. */
	cr_assert(eq(u32, ovfl(&b), RESET));
	cr_assert(eq(u64, ft_u64(h, h->regions[1].offs + 24), tick));
	cr_assert(eq(u64, h->regions[1].count, 1));
	cr_assert(eq(u64, h->masked, 0));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, region_full_uses_the_post_check)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 2, PFM_DFL_SMPL_IIP_HDR);
	struct vpmu_smpl_ovfl_arg a   = ft_ovfl(2, 0, 1); /* 8-byte samples */
	uint64_t max = 8 + 8 * FT_NUM_PMDS, k = (h->region_size - max) / 8;
	uint32_t ctrl;
	uint64_t i;

	/* After k samples exactly max_sample_size is left: not full. */
	for (i = 0; i < k; i++) {
		ctrl = 0;
		cr_assert(eq(int, nw->handler(&b, &a, &ctrl), 0));
		cr_assert(eq(u32, ctrl, RESET));
	}
	cr_assert(
		eq(u64,
		   h->regions[0].offs + h->region_size - h->regions[0].cur_offs,
		   max));
	cr_assert(eq(int, nw->handler(&b, &a, &ctrl), 0));
	cr_assert(eq(u32, ctrl, NOTIFY_RESET));
	cr_assert(eq(u64, h->regions[0].count, k + 1));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, consumer_drains_while_sampling_goes_on)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 2, 0);
	uint32_t ctrl, round;

	/* Ten region fills with one RESTART per notification: never masked. */
	for (round = 0; round < 10; round++) {
		uint32_t full = h->cur_region;

		cr_assert(eq(u32, fill_region(&b), NOTIFY_RESET));
		cr_assert(eq(u32, h->regions[full].state,
			     PVPMU_NWAY_REGION_FULL));
		/* Active restart, argument 0: release the oldest FULL one. */
		cr_assert(eq(int, restart(&b, true, 0, &ctrl), 0));
		cr_assert(eq(u32, ctrl, 0));
		cr_assert(eq(u32, h->regions[full].state,
			     PVPMU_NWAY_REGION_FREE));
	}
	cr_assert(eq(u64, h->overflows, 10));
	cr_assert(eq(u64, h->masked, 0));
	cr_assert(eq(u64, h->lost, 0));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, all_full_masks_like_default_and_counts_lost)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 2, 0);
	uint64_t count0;
	uint32_t ctrl;

	cr_assert(eq(u32, fill_region(&b), NOTIFY_RESET));
	/* The last FREE region fills: mask + notify, resets deferred. */
	cr_assert(eq(u32, fill_region(&b), MASKED));
	cr_assert(eq(u32, h->cur_region, PVPMU_NWAY_NO_REGION));
	cr_assert(eq(u64, h->masked, 1));
	cr_assert(eq(u64, h->overflows, 2));
	/* A simultaneous overflow after that is lost, not written. */
	count0 = h->regions[0].count + h->regions[1].count;
	cr_assert(eq(u32, ovfl(&b), MASKED));
	cr_assert(eq(u64, h->lost, 1));
	cr_assert(eq(u64, h->regions[0].count + h->regions[1].count, count0));
	/* Masked RESTART: the oldest region comes back and fills again,
	 * with the long reset (§3.5.15) and no mask. */
	cr_assert(eq(int, restart(&b, false, 0, &ctrl), 0));
	cr_assert(eq(u32, ctrl, RESET));
	cr_assert(eq(u32, h->cur_region, 0));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FILLING));
	cr_assert(eq(u64, h->regions[0].seq, 3));
	cr_assert(eq(u64, h->regions[0].count, 0));
	cr_assert(eq(u32, h->regions[1].state, PVPMU_NWAY_REGION_FULL));
	cr_assert(eq(u32, ovfl(&b), RESET));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, release_by_bitmask)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 4, 0);
	uint32_t ctrl;

	fill_region(&b);
	fill_region(&b);
	fill_region(&b); /* regions 0..2 FULL, 3 FILLING */
	cr_assert(eq(u32, h->cur_region, 3));
	/* Naming a region that is not FULL: -EINVAL, nothing released. */
	cr_assert(eq(int, restart(&b, true, 1ULL << 3 | 1ULL << 1, &ctrl),
		     -EINVAL));
	cr_assert(eq(int, restart(&b, true, 1ULL << 9, &ctrl), -EINVAL));
	cr_assert(eq(u32, h->regions[1].state, PVPMU_NWAY_REGION_FULL));
	/* Out of order: region 1 drained first. */
	cr_assert(eq(int, restart(&b, true, 1ULL << 1, &ctrl), 0));
	cr_assert(eq(u32, h->regions[1].state, PVPMU_NWAY_REGION_FREE));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FULL));
	cr_assert(eq(u32, h->regions[2].state, PVPMU_NWAY_REGION_FULL));
	/* Region 3 fills: the next FREE in ring order is region 1. */
	cr_assert(eq(u32, fill_region(&b), NOTIFY_RESET));
	cr_assert(eq(u32, h->cur_region, 1));
	/* Two at once. */
	cr_assert(eq(int, restart(&b, true, 0x5, &ctrl), 0));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FREE));
	cr_assert(eq(u32, h->regions[2].state, PVPMU_NWAY_REGION_FREE));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, oldest_is_lowest_seq)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 3, 0);
	uint32_t ctrl;

	fill_region(&b);                                    /* 0 FULL seq 1 */
	cr_assert(eq(int, restart(&b, true, 0, &ctrl), 0)); /* 0 FREE */
	fill_region(&b); /* 1 FULL seq 2, 2 FILLING */
	fill_region(&b); /* 2 FULL seq 3, 0 FILLING seq 4 */
	cr_assert(eq(u32, h->cur_region, 0));
	cr_assert(eq(int, restart(&b, true, 0, &ctrl), 0));
	cr_assert(eq(u32, h->regions[1].state, PVPMU_NWAY_REGION_FREE));
	cr_assert(eq(u32, h->regions[2].state, PVPMU_NWAY_REGION_FULL));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, active_restart_with_nothing_full_is_ebusy)
{
	struct vpmu_smpl_buf b;
	uint32_t ctrl;

	mkbuf(&b, 2, 0);
	ovfl(&b);
	cr_assert(eq(int, restart(&b, true, 0, &ctrl), -EBUSY));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, cycle_mode_never_masks_and_counts_lost)
{
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h = mkbuf(&b, 2, PVPMU_NWAY_SMPL_CYCLE);
	uint32_t i;

	cr_assert(eq(u32, fill_region(&b), NOTIFY_RESET)); /* 0 FULL */
	/* §6.3.1 "cycle in the half owned by the format". */
	for (i = 0; i < 3; i++) {
		uint64_t before = h->lost;

		cr_assert(eq(u32, fill_region(&b), RESET));
		/* Everything recorded in region 1 since it restarted. */
		cr_assert(eq(u64, h->lost, before + filled));
		cr_assert(eq(u32, h->cur_region, 1));
		cr_assert(eq(u64, h->regions[1].count, 0));
	}
	cr_assert(eq(u64, h->masked, 0));
	cr_assert(eq(u64, h->overflows, 1));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FULL));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_nway, oversized_sample_never_leaves_its_region)
{
	struct pvpmu_nway_smpl_arg a = {.buf_size   = 4 * ft_page(),
					.nr_regions = 16};
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h;
	/* A core bug: 64 values recorded on a PMU said to have 1 PMD. */
	struct vpmu_smpl_ovfl_arg big = ft_ovfl(0, ~0ULL, 1);
	uint64_t before;
	uint32_t ctrl, i;

	ft_create(nw, &a, 1, &b);
	h = b.base;
	for (i = 0; i < 64; i++) {
		uint32_t cur = h->cur_region;

		if (cur >= h->nr_regions)
			break;
		before = h->lost;
		ctrl   = 0;
		cr_assert(eq(int, nw->handler(&b, &big, &ctrl), 0));
		/* Written only if it fits; otherwise lost, region closed. */
		cr_assert(le(u64, h->regions[cur].cur_offs,
			     h->regions[cur].offs + h->region_size));
		if (h->lost != before)
			cr_assert(not(eq(u32, h->regions[cur].state,
					 PVPMU_NWAY_REGION_FILLING)));
	}
	cr_assert(lt(u64, 0, h->lost));
	vpmu_smpl_destroy(&b);
}
