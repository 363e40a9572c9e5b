// SPDX-License-Identifier: MIT
/*
 * context.c: the context lifecycle commands (spec 3.1.1, 3.1.15):
 * PFM_CREATE_CONTEXT, closing a context, and its statistics. What a
 * context is made of and how it is freed is in mech/context.c.
 */
#include "cmd_priv.h"

#include <errno.h>

#include "vpmu_mech.h"

#define CTX_FL_DEFINED                                                         \
	(PFM_FL_NOTIFY_BLOCK | PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG)

/* 3.1.1 ctx_flags: "It is only possible to set bits that are defined." */
static int check_flags(struct vpmu_domain *d, const struct vpmu_caller *who,
		       uint32_t flags)
{
	bool sys     = (flags & PFM_FL_SYSTEM_WIDE) != 0;
	uint32_t gid = sys ? d->sys_gid : d->thread_gid;

	if (flags & ~CTX_FL_DEFINED)
		return -EINVAL;
	/* Table 3.2: NOTIFY_BLOCK is invalid for system-wide contexts. */
	if (sys && (flags & PFM_FL_NOTIFY_BLOCK))
		return -EINVAL;
	/* 3.1.16, 4.2: group restrictions apply to the guest. */
	if (who->owner == VPMU_OWNER_GUEST && gid != PFM_GROUP_ANY &&
	    who->gid != gid)
		return -EPERM;
	return 0;
}

int vpmu_ctx_create(struct vpmu_domain *d, const struct vpmu_caller *who,
		    struct pfarg_ctx *pc, int n, const void *fmt_arg,
		    size_t fmt_arg_size)
{
	struct vpmu_ctx *ctx;
	int ret;

	if (!pc || n != 1 || !who)
		return -EFAULT;
	pthread_mutex_lock(&d->lock);
	ret = check_flags(d, who, pc->ctx_flags);
	if (!ret && fmt_arg_size > d->cfg.limits.arg_size_max)
		ret = -E2BIG; /* 3.5.3 */
	if (!ret)
		ret = vpmu_ctx_new(d, who->owner, pc->ctx_flags, &ctx);
	if (ret)
		goto out_unlock;
	ret = vpmu_ctx_setup_format(ctx, pc, fmt_arg, fmt_arg_size);
	if (ret) {
		vpmu_ctx_free(ctx);
		goto out_unlock;
	}
	pc->ctx_fd            = ctx->handle;
	pc->ctx_smpl_buf_size = ctx->has_fmt ? ctx->smpl.size : 0;
out_unlock:
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int vpmu_ctx_destroy(struct vpmu_domain *d, const struct vpmu_caller *who,
		     int fd)
{
	struct vpmu_ctx *ctx;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, who, fd, &ctx);
	if (!ret) {
		if (ctx->state == VPMU_CTX_LOADED)
			vpmu_ctx_do_unload(ctx);
		vpmu_ctx_free(ctx);
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int vpmu_ctx_stats(struct vpmu_domain *d, const struct vpmu_caller *who, int fd,
		   struct vpmu_ctx_stats *st)
{
	struct vpmu_ctx *ctx;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, who, fd, &ctx);
	if (!ret)
		*st = ctx->st;
	pthread_mutex_unlock(&d->lock);
	return ret;
}
