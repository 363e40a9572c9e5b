// SPDX-License-Identifier: MIT
/*
 * lookup.c: what every context command starts with: the handle lookup and
 * the argument checks and run of a vector command (spec 3.1, 4.4.2).
 */
#include "cmd_priv.h"

#include <errno.h>

/*
 * Handles are (generation << 16 | slot), positive ints, so a stale handle of
 * a destroyed context does not reach the context reusing its slot.
 */
int vpmu_ctx_lookup(struct vpmu_domain *d, const struct vpmu_caller *who,
		    int fd, struct vpmu_ctx **out)
{
	struct vpmu_ctx *ctx;
	uint32_t slot;

	if (fd < 0 || !who)
		return -EBADF;
	slot = (uint32_t)fd & 0xffff;
	if (slot >= vpmu_nr_slots(d))
		return -EBADF;
	ctx = d->ctx[slot];
	if (!ctx || ctx->handle != fd || ctx->owner != who->owner)
		return -EBADF;
	*out = ctx;
	return 0;
}

/* spec 3.1: n > 0; 4.4.2: the vector's bytes within cf_arg_size_max. */
int vpmu_check_vec(struct vpmu_domain *d, const void *arr, int n, size_t elem)
{
	if (n <= 0)
		return -EINVAL;
	if (!arr || (uint64_t)n * elem > d->cfg.limits.arg_size_max)
		return -EFAULT;
	return 0;
}

int vpmu_ctx_vec_run(struct vpmu_domain *d, const struct vpmu_caller *who,
		     int fd, const struct vpmu_vec_cmd *cmd)
{
	unsigned char *arr   = cmd->arr;
	struct vpmu_ctx *ctx = NULL;
	int i, ret;

	pthread_mutex_lock(&d->lock);
	ret = vpmu_ctx_lookup(d, who, fd, &ctx);
	if (!ret)
		ret = vpmu_check_vec(d, cmd->arr, cmd->n, cmd->elem);
	if (!ret && cmd->prep)
		ret = cmd->prep(ctx);
	for (i = 0; !ret && i < cmd->n; i++)
		ret = cmd->one(ctx, arr + (size_t)i * cmd->elem);
	if (ctx && cmd->done)
		cmd->done(ctx);
	pthread_mutex_unlock(&d->lock);
	return ret;
}
