// SPDX-License-Identifier: MIT
/*
 * smpl.c: the sampling and message commands: reading a context's messages
 * (spec 3.3.3), its sampling buffer (3.5.1), and a host operator's
 * sampling budget (throttle.c in mech/ applies it).
 */
#include "cmd_priv.h"

#include <errno.h>

#include "vpmu_mech.h"

/*
 * 3.3.3: whole messages from the head; as many as queued and fit (digest
 * 14.22 resolved towards "several per read"). Blocking is the guest
 * driver's business (PVPMU_HC_READ_MSG waits in the VMM).
 */
int vpmu_ctx_read_msgs(struct vpmu_domain *d, const struct vpmu_caller *who,
		       int fd, union pfm_msg *msgs, unsigned int max,
		       unsigned int *nr)
{
	struct vpmu_ctx *ctx;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, who, fd, &ctx);
	if (!ret && (!msgs || !nr))
		ret = -EFAULT;
	if (!ret && max == 0)
		ret = -EINVAL;
	if (!ret) {
		*nr = vpmu_msgq_pop(&ctx->q, msgs, max);
		ret = *nr ? 0 : -EAGAIN;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int vpmu_ctx_smpl_buf(struct vpmu_domain *d, const struct vpmu_caller *who,
		      int fd, void **base, size_t *size)
{
	struct vpmu_ctx *ctx;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, who, fd, &ctx);
	if (!ret) {
		*base = ctx->has_fmt ? ctx->smpl.base : NULL;
		*size = ctx->has_fmt ? ctx->smpl.size : 0;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int vpmu_ctx_set_budget(struct vpmu_domain *d, const struct vpmu_caller *who,
			int fd, unsigned int max_overhead_pct, bool freq_mode)
{
	struct vpmu_ctx *ctx;
	int ret;

	if (who->owner != VPMU_OWNER_HOST)
		return -EPERM;
	if (max_overhead_pct > 100)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, who, fd, &ctx);
	if (!ret) {
		ctx->thr.pct       = max_overhead_pct;
		ctx->thr.freq_mode = freq_mode;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}
