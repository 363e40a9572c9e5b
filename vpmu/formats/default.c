// SPDX-License-Identifier: MIT
/*
 * default.c: the perfmon2 default sampling format (spec §3.6, digest §9.6).
 *
 * One linear buffer: a pfm_default_smpl_hdr, then samples (formats/entry.c)
 * written one after the other until the buffer is full:
 *
 *  - a sample is written and the space left is still >= max_sample_size
 *    (§3.6.5 post-check): reset the overflowed PMDs to their short values,
 *    no notification (ctrl = RESET_OVFL_PMDS);
 *  - the space left drops below max_sample_size: the buffer is full,
 *    hdr_overflows += 1, no reset (deferred to PFM_RESTART), notification
 *    requested and monitoring masked (ctrl = VPMU_SMPL_CTRL_FULL).
 *    The core queues a message only if an overflowed PMC has OVFL_NOTIFY;
 *    otherwise the buffer has saturated. Either way it is stable;
 *  - a full buffer takes no more samples: later overflows of the same event
 *    (simultaneous overflows, §3.6.4) are lost and ask for mask + notify
 *    again, without counting another hdr_overflows;
 *  - PFM_RESTART resets hdr_count and hdr_cur_offs (old sample bytes stay);
 *    when masked it also asks for the long reset of the PMDs that caused the
 *    last sample and monitoring resumes; when active ("active restart") it
 *    only resets the header.
 *
 * The header is the format's whole state. Only the host writes the buffer,
 * so it can be trusted; the handler still re-checks every offset so that a
 * corrupt header can never make it write outside the buffer.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "formats_priv.h"

#define DFL_HDR_SIZE sizeof(struct pfm_default_smpl_hdr)

static int dfl_validate(uint32_t ctx_flags, uint16_t num_pmds, const void *arg)
{
	struct pfm_default_smpl_arg a;
	size_t min;

	(void)ctx_flags; /* per-thread and system-wide alike (§3.6) */
	memcpy(&a, arg, sizeof(a));
	if (a.pad0 || (a.buf_flags & ~VPMU_SMPL_ENTRY_FLAGS))
		return -EINVAL; /* reserved bits must be clear (§3.6.2) */
	if (vpmu_smpl_entry_check_flags(a.buf_flags))
		return -EINVAL;
	if (num_pmds == 0 || num_pmds > VPMU_SMPL_MAX_PMDS)
		return -EINVAL;
	/* "large enough to hold any meaningful information": one sample. */
	min = DFL_HDR_SIZE + vpmu_smpl_max_sample_size(a.buf_flags, num_pmds);
	if (a.buf_size < min || vpmu_smpl_buf_roundup(a.buf_size) == 0)
		return -EINVAL;
	return 0;
}

static int dfl_getsize(uint32_t ctx_flags, const void *arg, size_t *size)
{
	struct pfm_default_smpl_arg a;

	(void)ctx_flags;
	memcpy(&a, arg, sizeof(a));
	*size = vpmu_smpl_buf_roundup(a.buf_size);
	return *size ? 0 : -EINVAL;
}

static int dfl_init(struct vpmu_smpl_buf *buf, const void *arg)
{
	struct pfm_default_smpl_arg a;
	struct pfm_default_smpl_hdr *hdr = buf->base;

	memcpy(&a, arg, sizeof(a));
	if (!hdr || buf->size < DFL_HDR_SIZE)
		return -EINVAL;
	*hdr = (struct pfm_default_smpl_hdr){
		.hdr_count     = 0,
		.hdr_cur_offs  = DFL_HDR_SIZE,
		.hdr_overflows = 0,
		.hdr_buf_size  = buf->size,
		.hdr_version   = PFM_DEFAULT_SMPL_VERSION,
		.hdr_flags     = a.buf_flags,
	};
	return 0;
}

static int dfl_handler(struct vpmu_smpl_buf *buf,
		       const struct vpmu_smpl_ovfl_arg *arg,
		       uint32_t *ovfl_ctrl)
{
	struct pfm_default_smpl_hdr *hdr = buf->base;
	uint32_t flags                   = hdr->hdr_flags;
	size_t max  = vpmu_smpl_max_sample_size(flags, buf->num_pmds);
	size_t need = vpmu_smpl_sample_size(flags, arg);
	size_t cur  = hdr->hdr_cur_offs;

	/* Already full (or corrupt): no partial sample, the sample is lost. */
	if (cur < DFL_HDR_SIZE || cur > buf->size || buf->size - cur < max ||
	    buf->size - cur < need) {
		*ovfl_ctrl = VPMU_SMPL_CTRL_FULL;
		return 0;
	}
	vpmu_smpl_write_sample((char *)buf->base + cur, flags, arg, need);
	cur += need;
	/* A guest polling hdr_count must find the sample bytes in place. */
	atomic_thread_fence(memory_order_release);
	hdr->hdr_cur_offs = cur;
	hdr->hdr_count++;
	if (buf->size - cur >= max) {
		*ovfl_ctrl = VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
		return 0;
	}
	/* §3.6.5 post-check: the last sample that fits was just recorded. */
	hdr->hdr_overflows++;
	*ovfl_ctrl = VPMU_SMPL_CTRL_FULL;
	return 0;
}

static int dfl_restart(struct vpmu_smpl_buf *buf, bool is_active,
		       uint64_t restart_arg, uint32_t *ctrl)
{
	struct pfm_default_smpl_hdr *hdr = buf->base;

	(void)restart_arg;
	/* Only the header is reset; old samples are not cleared (§3.6.5). */
	hdr->hdr_count    = 0;
	hdr->hdr_cur_offs = DFL_HDR_SIZE;
	/* After a notification (or saturation): long reset, then resume. */
	*ctrl = is_active ? 0 : VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	return 0;
}

const struct vpmu_smpl_fmt vpmu_smpl_fmt_default = {
	.name       = "default",
	.uuid       = PFM_DEFAULT_SMPL_UUID,
	.arg_size   = sizeof(struct pfm_default_smpl_arg),
	.msgq_depth = 1,
	.flags      = 0, /* supports event sets (§3.6) */
	.validate   = dfl_validate,
	.getsize    = dfl_getsize,
	.init       = dfl_init,
	.handler    = dfl_handler,
	.restart    = dfl_restart,
	.exit       = NULL,
};
