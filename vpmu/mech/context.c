// SPDX-License-Identifier: MIT
/*
 * context.c: the life of a perfmon2 context (spec 3.1.1, 3.1.8, 3.1.15)
 * and its placement on vCPUs: the handle table slot, the message queue,
 * the sampling format and buffer (charged to the domain), attach/detach to
 * a cpu, and the unload. The commands that drive it are in cmd/.
 */
#include "vpmu_mech.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Fold in what the backends counted since the last exit (commands). */
void vpmu_ctx_sync(struct vpmu_ctx *ctx)
{
	uint64_t ovfl;

	if (!ctx->cpu)
		return;
	if (vpmu_ctx_collect(ctx, &ovfl))
		ctx->st.nr_backend_errors++;
	if (ovfl)
		vpmu_ctx_overflow(ctx, ovfl);
}

/* Put (ctx) on (cpu) and open its active set's events there. */
int vpmu_cpu_attach(struct vpmu_cpu *cpu, struct vpmu_ctx *ctx)
{
	unsigned int i;
	int ret;

	for (i = 0; i < VPMU_CPU_MAX_CTX && cpu->ctx[i]; i++)
		;
	if (i == VPMU_CPU_MAX_CTX)
		return -EBUSY;
	ctx->cpu = cpu;
	ret      = vpmu_ctx_open_events(ctx);
	if (ret) {
		ctx->cpu = NULL;
		return ret;
	}
	cpu->ctx[i] = ctx;
	return 0;
}

/* Close (ctx)'s events and take it off (cpu), without collecting. */
static void unhook(struct vpmu_cpu *cpu, struct vpmu_ctx *ctx)
{
	unsigned int i;

	vpmu_ctx_close_events(ctx);
	for (i = 0; i < VPMU_CPU_MAX_CTX; i++) {
		if (cpu->ctx[i] == ctx)
			cpu->ctx[i] = NULL;
	}
	ctx->cpu = NULL;
}

/* Take (ctx) off (cpu): last deltas, virtual PMD snapshot, close. */
void vpmu_cpu_detach(struct vpmu_cpu *cpu, struct vpmu_ctx *ctx)
{
	vpmu_ctx_sync(ctx);
	vpmu_ctx_snap_vpmds(ctx);
	unhook(cpu, ctx);
}

/* 3.1.8: implicit STOP, state saved, the queue is not drained. */
int vpmu_ctx_do_unload(struct vpmu_ctx *ctx)
{
	if (ctx->state != VPMU_CTX_LOADED)
		return -EBUSY;
	if (ctx->cpu)
		vpmu_cpu_detach(ctx->cpu, ctx);
	ctx->is_active  = false;
	ctx->is_blocked = false; /* a detached context blocks nobody */
	ctx->state      = VPMU_CTX_UNLOADED;
	return 0;
}

static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		if (*b++)
			return false;
	}
	return true;
}

/*
 * Sampling memory is charged to its owner's budget: host
 * operators' buffers to host_smpl_mem_max, the guest's (and any other
 * owner's) to smpl_mem_max.
 */
static uint64_t *smpl_charge(struct vpmu_ctx *ctx, uint64_t *max)
{
	struct vpmu_domain *d = ctx->dom;
	bool host             = ctx->owner == VPMU_OWNER_HOST;

	if (max)
		*max = host ? d->cfg.limits.host_smpl_mem_max
			    : d->cfg.limits.smpl_mem_max;
	return &d->smpl_used[host];
}

/* 3.1.1, 3.5.3, 3.5.10-12: find, check and instantiate the format. */
int vpmu_ctx_setup_format(struct vpmu_ctx *ctx, const struct pfarg_ctx *pc,
			  const void *arg, size_t arg_size)
{
	struct vpmu_domain *d = ctx->dom;
	const struct vpmu_smpl_fmt *fmt;
	struct vpmu_smpl_create_arg ca = {0};
	uint64_t max, *used = smpl_charge(ctx, &max);
	int ret;

	if (vpmu_smpl_uuid_is_null(pc->ctx_smpl_buf_id))
		return 0;
	/* A run-time format is referenced from here until the context dies. */
	ret = vpmu_smpl_fmt_find(pc->ctx_smpl_buf_id, &fmt);
	if (ret)
		return ret;
	if (arg_size < fmt->arg_size || (fmt->arg_size && !arg))
		ret = -EINVAL;
	else if (arg_size > fmt->arg_size &&
		 !all_zero((const char *)arg + fmt->arg_size,
			   arg_size - fmt->arg_size))
		ret = -EINVAL;
	else if (fmt->msgq_depth > d->cfg.limits.msgq_depth)
		ret = -ENOMEM;
	if (ret)
		goto out_put;
	ca.ctx_flags = pc->ctx_flags;
	ca.num_pmds  = (uint16_t)__builtin_popcountll(d->pmu->impl_pmds);
	ca.arg       = arg;
	ca.size_max  = max > *used ? max - *used : 0;
	ret          = vpmu_smpl_create(fmt, &ca, &ctx->smpl);
	if (ret)
		goto out_put;
	ctx->has_fmt = true;
	*used += ctx->smpl.size;
	return 0;

out_put:
	vpmu_smpl_fmt_put(fmt);
	return ret;
}

/*
 * Release everything (ctx) owns and its handle slot (3.1.15, 3.5.13: the
 * format's exit runs before its buffer is freed, then it is uncharged).
 */
void vpmu_ctx_free(struct vpmu_ctx *ctx)
{
	struct vpmu_domain *d = ctx->dom;

	/* No last collection: nothing may notify while tearing down. */
	if (ctx->cpu)
		unhook(ctx->cpu, ctx);
	if (ctx->has_fmt) {
		const struct vpmu_smpl_fmt *fmt = ctx->smpl.fmt;

		*smpl_charge(ctx, NULL) -= ctx->smpl.size;
		vpmu_smpl_destroy(&ctx->smpl);
		vpmu_smpl_fmt_put(fmt); /* 3.5.9: now it may go away */
	}
	vpmu_msgq_free(&ctx->q);
	vpmu_set_free_all(ctx);
	d->ctx[ctx->handle & 0xffff] = NULL;
	d->nr_ctx--;
	free(ctx);
}

/*
 * Lowest free handle slot of the domain for (owner), in the owner's own
 * range (vpmu_nr_slots()): guest, then host, then architectural PMU
 * contexts. A guest holding all of its slots leaves the host's free.
 */
static int find_slot(struct vpmu_domain *d, enum vpmu_owner owner,
		     uint32_t *slot)
{
	const struct vpmu_limits *l = &d->cfg.limits;
	uint32_t i = 0, end = l->max_contexts;

	if (owner == VPMU_OWNER_HOST) {
		i   = l->max_contexts;
		end = i + l->host_contexts;
	} else if (owner == VPMU_OWNER_ARCH) {
		i   = l->max_contexts + l->host_contexts;
		end = vpmu_nr_slots(d);
	}
	for (; i < end; i++) {
		if (!d->ctx[i]) {
			*slot = i;
			return 0;
		}
	}
	return -ENOMEM; /* contexts per VM: "limited by memory" (3.1.1) */
}

/*
 * The format is set up by the caller, which frees on failure
 * (vpmu_mech.h).
 */
int vpmu_ctx_new(struct vpmu_domain *d, enum vpmu_owner owner, uint32_t flags,
		 struct vpmu_ctx **out)
{
	struct vpmu_ctx *ctx;
	struct vpmu_set *s0;
	uint32_t slot;
	int ret;

	ret = find_slot(d, owner, &slot);
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->dom   = d;
	ctx->owner = owner;
	ctx->flags = flags;
	ret        = vpmu_msgq_init(&ctx->q, d->cfg.limits.msgq_depth);
	if (ret)
		goto out_free;
	ret = vpmu_set_add(ctx, 0, &s0); /* 3.1.1: set0 always exists */
	if (ret)
		goto out_free_q;
	ctx->active  = s0;
	d->gen       = (d->gen + 1) & 0x7fff;
	ctx->handle  = (int)((d->gen << 16) | slot);
	d->ctx[slot] = ctx;
	if (slot >= d->ctx_end)
		d->ctx_end = slot + 1;
	d->nr_ctx++;
	*out = ctx;
	return 0;

out_free_q:
	vpmu_msgq_free(&ctx->q);
out_free:
	free(ctx);
	return ret;
}
