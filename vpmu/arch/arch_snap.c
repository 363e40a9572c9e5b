// SPDX-License-Identifier: MIT
/*
 * arch_snap.c: the guest-visible registers of an architectural PMU model
 * in and out of a snapshot. The counters themselves are PMDs
 * of the model's ARCH context, saved with the domain (vpmu/cmd/snapshot_save.c,
 * snapshot_restore.c).
 */
#include "arch_priv.h"
#include "cmd/cmd_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

_Static_assert(VPMU_ARCH_MAX_CTRS == 8, "vpmu_arch_state holds 8 counters");

void vpmu_arch_save(const struct vpmu_arch_pmu *p, struct vpmu_arch_state *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->model, sizeof(st->model), "%s", p->ops->name);
	st->fd            = p->fd;
	st->nr_gp         = p->nr_gp;
	st->nr_fixed      = p->nr_fixed;
	st->fixed_ctrl    = p->fixed_ctrl;
	st->global_ctrl   = p->global_ctrl;
	st->global_status = p->global_status;
	st->perf_caps     = p->perf_caps;
	memcpy(st->evtsel, p->evtsel, sizeof(st->evtsel));
	memcpy(st->prog, p->prog, sizeof(st->prog));
}

int vpmu_arch_restore(struct vpmu_arch_pmu *p, const struct vpmu_arch_state *st)
{
	struct vpmu_domain *d = p->dom;
	struct vpmu_ctx *ctx;
	int ret;

	if (strncmp(st->model, p->ops->name, sizeof(st->model)) != 0 ||
	    st->nr_gp != p->nr_gp || st->nr_fixed != p->nr_fixed)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, &p->who, st->fd, &ctx);
	if (!ret && (ctx->cpu != p->who.cpu || ctx->state != VPMU_CTX_LOADED))
		ret = -EINVAL;
	pthread_mutex_unlock(&d->lock);
	if (ret)
		return -EINVAL;
	p->fd            = st->fd;
	p->fixed_ctrl    = st->fixed_ctrl;
	p->global_ctrl   = st->global_ctrl;
	p->global_status = st->global_status;
	p->perf_caps     = st->perf_caps;
	memcpy(p->evtsel, st->evtsel, sizeof(p->evtsel));
	memcpy(p->prog, st->prog, sizeof(p->prog));
	return 0;
}
