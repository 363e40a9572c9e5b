// SPDX-License-Identifier: MIT
/*
 * nway.c: the n-way multi-buffer sampling format (PVPMU_NWAY_SMPL_UUID), a
 * generalisation of the double-buffering format of spec §6.3.1.
 *
 * The buffer holds a pvpmu_nway_smpl_hdr with one descriptor per region,
 * then nr_regions (2..16) regions of region_size bytes. Samples have the
 * default format's layout (formats/entry.c). The aim is no blind spot: the
 * consumer drains full regions while sampling goes on in the others.
 *
 * Region life cycle (the state lives in the descriptor the guest reads):
 *
 *   FREE --(chosen as next)--> FILLING --(post-check: < max_sample_size
 *   left)--> FULL --(PFM_RESTART releases it)--> FREE
 *
 *  - A sample that leaves room for another maximal one: short reset, no
 *    notification (ctrl = RESET_OVFL_PMDS), as in the default format.
 *  - A region fills: overflows += 1, it becomes FULL (published with
 *    release ordering after its samples) and a notification is requested.
 *    If another region is FREE (searched in ring order after the full one)
 *    it becomes FILLING with the next seq and monitoring continues with a
 *    short reset: ctrl = NOTIFY_USER | RESET_OVFL_PMDS, no mask.
 *  - No region FREE: like the default format's full buffer, masked = +1,
 *    cur_region = NO_REGION, ctrl = VPMU_SMPL_CTRL_FULL (resets
 *    deferred to PFM_RESTART). Samples of the same overflow event that come
 *    after that are dropped and counted in `lost`.
 *    With PVPMU_NWAY_SMPL_CYCLE the filling region is instead emptied and
 *    refilled (its samples are added to `lost`, it gets a new seq, no
 *    notification), so monitoring never stops (spec §6.3.1 "cycle").
 *
 * Release: the buffer is read-only in the guest, so the consumer gives
 * regions back with PFM_RESTART and the restart argument: 0 releases the
 * FULL region with the lowest seq (one RESTART per notification, §3.1.9,
 * releases the regions in fill order); otherwise it is a bitmask of region
 * indexes, each of which must be FULL (else -EINVAL and nothing changes).
 * A release while all regions were full also restarts filling in the
 * oldest released region and asks for the long reset (ctrl =
 * RESET_OVFL_PMDS), which unmasks. An active restart with nothing FULL
 * fails with -EBUSY.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "formats_priv.h"

#define NWAY_HDR_SIZE sizeof(struct pvpmu_nway_smpl_hdr)
#define NWAY_FLAGS    (VPMU_SMPL_ENTRY_FLAGS | PVPMU_NWAY_SMPL_CYCLE)

static size_t nway_region_size(uint64_t buf_size, uint32_t nr)
{
	return ((buf_size - NWAY_HDR_SIZE) / nr) & ~(size_t)7;
}

static int nway_validate(uint32_t ctx_flags, uint16_t num_pmds, const void *arg)
{
	struct pvpmu_nway_smpl_arg a;

	(void)ctx_flags;
	memcpy(&a, arg, sizeof(a));
	if ((a.buf_flags & ~NWAY_FLAGS) ||
	    vpmu_smpl_entry_check_flags(a.buf_flags))
		return -EINVAL;
	if (a.nr_regions < PVPMU_NWAY_MIN_REGIONS ||
	    a.nr_regions > PVPMU_NWAY_MAX_REGIONS)
		return -EINVAL;
	if (num_pmds == 0 || num_pmds > VPMU_SMPL_MAX_PMDS)
		return -EINVAL;
	if (a.buf_size < NWAY_HDR_SIZE ||
	    vpmu_smpl_buf_roundup(a.buf_size) == 0)
		return -EINVAL;
	/* Every region must hold at least one maximal sample. */
	if (nway_region_size(a.buf_size, a.nr_regions) <
	    vpmu_smpl_max_sample_size(a.buf_flags, num_pmds))
		return -EINVAL;
	return 0;
}

static int nway_getsize(uint32_t ctx_flags, const void *arg, size_t *size)
{
	struct pvpmu_nway_smpl_arg a;

	(void)ctx_flags;
	memcpy(&a, arg, sizeof(a));
	*size = vpmu_smpl_buf_roundup(a.buf_size);
	return *size ? 0 : -EINVAL;
}

/*
 * Publish a region state to the guest, which polls it: everything written
 * before (samples, count, cur_offs) is visible once it sees the state.
 */
static void nway_set_state(struct pvpmu_nway_region *r, uint32_t state)
{
	__atomic_store_n(&r->state, state, __ATOMIC_RELEASE);
}

/* Make region (i) the FILLING one, empty, with the next seq. */
static void nway_start_region(struct pvpmu_nway_smpl_hdr *hdr, uint32_t i)
{
	struct pvpmu_nway_region *r = &hdr->regions[i];

	r->count    = 0;
	r->cur_offs = r->offs;
	r->seq      = hdr->next_seq++;
	nway_set_state(r, PVPMU_NWAY_REGION_FILLING);
	hdr->cur_region = i;
}

static int nway_init(struct vpmu_smpl_buf *buf, const void *arg)
{
	struct pvpmu_nway_smpl_arg a;
	struct pvpmu_nway_smpl_hdr *hdr = buf->base;
	uint32_t i;

	memcpy(&a, arg, sizeof(a));
	if (!hdr || buf->size < NWAY_HDR_SIZE ||
	    a.nr_regions < PVPMU_NWAY_MIN_REGIONS ||
	    a.nr_regions > PVPMU_NWAY_MAX_REGIONS)
		return -EINVAL;
	memset(hdr, 0, NWAY_HDR_SIZE);
	hdr->buf_size    = buf->size;
	hdr->region_size = nway_region_size(buf->size, a.nr_regions);
	hdr->next_seq    = 1;
	hdr->version     = PVPMU_NWAY_SMPL_VERSION;
	hdr->flags       = a.buf_flags;
	hdr->nr_regions  = a.nr_regions;
	for (i = 0; i < a.nr_regions; i++) {
		hdr->regions[i].offs     = NWAY_HDR_SIZE + i * hdr->region_size;
		hdr->regions[i].cur_offs = hdr->regions[i].offs;
	}
	nway_start_region(hdr, 0);
	return 0;
}

/* First FREE region in ring order after (i), or NO_REGION. */
static uint32_t nway_next_free(const struct pvpmu_nway_smpl_hdr *hdr,
			       uint32_t i)
{
	uint32_t k, j;

	for (k = 1; k <= hdr->nr_regions; k++) {
		j = (i + k) % hdr->nr_regions;
		if (hdr->regions[j].state == PVPMU_NWAY_REGION_FREE)
			return j;
	}
	return PVPMU_NWAY_NO_REGION;
}

/* The FILLING region (cur) has no room for a maximal sample any more. */
static uint32_t nway_region_filled(struct pvpmu_nway_smpl_hdr *hdr,
				   uint32_t cur)
{
	struct pvpmu_nway_region *r = &hdr->regions[cur];
	uint32_t next               = nway_next_free(hdr, cur);

	if (next == PVPMU_NWAY_NO_REGION &&
	    (hdr->flags & PVPMU_NWAY_SMPL_CYCLE)) {
		hdr->lost += r->count;
		nway_start_region(hdr, cur);
		return VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	}
	hdr->overflows++;
	nway_set_state(r, PVPMU_NWAY_REGION_FULL);
	if (next != PVPMU_NWAY_NO_REGION) {
		nway_start_region(hdr, next);
		return VPMU_SMPL_CTRL_NOTIFY_USER |
		       VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	}
	hdr->masked++;
	hdr->cur_region = PVPMU_NWAY_NO_REGION;
	return VPMU_SMPL_CTRL_FULL;
}

static int nway_handler(struct vpmu_smpl_buf *buf,
			const struct vpmu_smpl_ovfl_arg *arg,
			uint32_t *ovfl_ctrl)
{
	struct pvpmu_nway_smpl_hdr *hdr = buf->base;
	uint32_t cur                    = hdr->cur_region;
	size_t max  = vpmu_smpl_max_sample_size(hdr->flags, buf->num_pmds);
	size_t need = vpmu_smpl_sample_size(hdr->flags, arg);
	struct pvpmu_nway_region *r;
	size_t end;

	if (cur >= hdr->nr_regions) {
		/* All regions FULL: this overflow's sample has nowhere to go.
		 */
		hdr->lost++;
		*ovfl_ctrl = VPMU_SMPL_CTRL_FULL;
		return 0;
	}
	r   = &hdr->regions[cur];
	end = r->offs + hdr->region_size;
	if (r->cur_offs > end || end - r->cur_offs < need) {
		hdr->lost++; /* cannot happen while num_pmds is right */
		*ovfl_ctrl = nway_region_filled(hdr, cur);
		return 0;
	}
	vpmu_smpl_write_sample((char *)buf->base + r->cur_offs, hdr->flags, arg,
			       need);
	atomic_thread_fence(memory_order_release);
	r->cur_offs += need;
	r->count++;
	if (end - r->cur_offs >= max)
		*ovfl_ctrl = VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	else
		*ovfl_ctrl = nway_region_filled(hdr, cur);
	return 0;
}

/* Regions to release for (restart_arg), as a bitmask; 0 if none. */
static int nway_release_mask(const struct pvpmu_nway_smpl_hdr *hdr,
			     uint64_t restart_arg, uint64_t *mask)
{
	uint64_t best = 0;
	uint32_t i;

	*mask = 0;
	for (i = 0; i < hdr->nr_regions; i++) {
		if (hdr->regions[i].state != PVPMU_NWAY_REGION_FULL)
			continue;
		if (restart_arg == PVPMU_NWAY_RELEASE_OLDEST) {
			if (!*mask || hdr->regions[i].seq < best) {
				best  = hdr->regions[i].seq;
				*mask = 1ULL << i;
			}
		} else if (restart_arg & (1ULL << i)) {
			*mask |= 1ULL << i;
		}
	}
	/* Every region named must exist and be FULL. */
	if (restart_arg != PVPMU_NWAY_RELEASE_OLDEST && *mask != restart_arg)
		return -EINVAL;
	return 0;
}

static int nway_restart(struct vpmu_smpl_buf *buf, bool is_active,
			uint64_t restart_arg, uint32_t *ctrl)
{
	struct pvpmu_nway_smpl_hdr *hdr = buf->base;
	uint32_t i, oldest = PVPMU_NWAY_NO_REGION;
	uint64_t mask;
	int ret;

	ret = nway_release_mask(hdr, restart_arg, &mask);
	if (ret)
		return ret;
	if (!mask && is_active)
		return -EBUSY; /* nothing was handed to the consumer */
	for (i = 0; i < hdr->nr_regions; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		if (oldest == PVPMU_NWAY_NO_REGION ||
		    hdr->regions[i].seq < hdr->regions[oldest].seq)
			oldest = i;
		nway_set_state(&hdr->regions[i], PVPMU_NWAY_REGION_FREE);
	}
	if (hdr->cur_region >= hdr->nr_regions && oldest < hdr->nr_regions)
		nway_start_region(hdr, oldest);
	/* Masked: the PMDs behind the last notification get their long reset.
	 */
	*ctrl = is_active ? 0 : VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	return 0;
}

const struct vpmu_smpl_fmt vpmu_smpl_fmt_nway = {
	.name       = "n-way",
	.uuid       = PVPMU_NWAY_SMPL_UUID,
	.arg_size   = sizeof(struct pvpmu_nway_smpl_arg),
	.msgq_depth = PVPMU_NWAY_MAX_REGIONS, /* one per FULL region */
	.flags      = 0,
	.validate   = nway_validate,
	.getsize    = nway_getsize,
	.init       = nway_init,
	.handler    = nway_handler,
	.restart    = nway_restart,
	.exit       = NULL,
};
