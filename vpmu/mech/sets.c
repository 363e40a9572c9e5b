// SPDX-License-Identifier: MIT
/*
 * sets.c: event sets (spec 3.7): the ordered list of a context, explicit
 * next chains, activation and switching. The three set commands
 * (3.1.10-3.1.12) are in cmd/sets.c.
 */
#include "vpmu_mech.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Binary search: the list is kept sorted by id (3.7.5). */
struct vpmu_set *vpmu_set_find(const struct vpmu_ctx *ctx, uint16_t id)
{
	unsigned int lo = 0, hi = ctx->nr_sets;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (ctx->sets[mid]->id == id)
			return ctx->sets[mid];
		if (ctx->sets[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Create set (id) in order; -ENOMEM past the per-context set limit. */
int vpmu_set_add(struct vpmu_ctx *ctx, uint16_t id, struct vpmu_set **out)
{
	struct vpmu_set **arr, *s;
	unsigned int pos;

	if (ctx->nr_sets >= ctx->dom->cfg.limits.max_sets)
		return -ENOMEM;
	arr = realloc(ctx->sets, (ctx->nr_sets + 1) * sizeof(*arr));
	if (!arr)
		return -ENOMEM;
	ctx->sets = arr;
	s         = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s    = ctx->dom->blank_set; /* 3.1.1-3.1.3: the defaults */
	s->id = id;
	for (pos = 0; pos < ctx->nr_sets && arr[pos]->id < id; pos++)
		;
	memmove(&arr[pos + 1], &arr[pos], (ctx->nr_sets - pos) * sizeof(*arr));
	arr[pos] = s;
	ctx->nr_sets++;
	*out = s;
	return 0;
}

/*
 * Unlink and free (s). The context is detached, so nothing is open; the
 * last-active pointer falls back to set0, which cannot be deleted.
 */
void vpmu_set_remove(struct vpmu_ctx *ctx, struct vpmu_set *s)
{
	unsigned int pos;

	for (pos = 0; ctx->sets[pos] != s; pos++)
		;
	memmove(&ctx->sets[pos], &ctx->sets[pos + 1],
		(ctx->nr_sets - pos - 1) * sizeof(*ctx->sets));
	ctx->nr_sets--;
	if (ctx->active == s)
		ctx->active = ctx->sets[0];
	free(s);
}

void vpmu_set_free_all(struct vpmu_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_sets; i++)
		free(ctx->sets[i]);
	free(ctx->sets);
	ctx->sets    = NULL;
	ctx->nr_sets = 0;
	ctx->active  = NULL;
}

/* 3.7.5: the explicit next, else the next higher id, round robin. */
struct vpmu_set *vpmu_set_next(const struct vpmu_ctx *ctx,
			       const struct vpmu_set *s)
{
	unsigned int pos;

	if (s->flags & PFM_SETFL_EXPL_NEXT)
		return vpmu_set_find(ctx, s->id_next);
	for (pos = 0; ctx->sets[pos] != s; pos++)
		;
	return ctx->sets[(pos + 1) % ctx->nr_sets];
}

/* 3.1.7: every explicit next must exist at LOAD. */
int vpmu_sets_check_chain(const struct vpmu_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_sets; i++) {
		if (!vpmu_set_next(ctx, ctx->sets[i]))
			return -EINVAL;
	}
	return 0;
}

/*
 * Make (s) the active set (3.7.6, 3.7.7): count the run, reload the switch
 * thresholds and the timeout, and apply the resets left pending when the
 * set was switched out by an overflow (short, or long at RESTART).
 */
void vpmu_set_activate(struct vpmu_ctx *ctx, struct vpmu_set *s,
		       bool long_reset)
{
	unsigned int i;

	ctx->active = s;
	s->runs++;
	s->timeout_left = s->timeout_ns;
	vpmu_thr_switch_arm(ctx, s); /* the effective interval */
	/* Only counting PMDs are triggers (3.1.3). */
	for (i = 0; i < ctx->dom->pmu->nr_counters; i++)
		s->pmd[i].ovflsw_left = s->pmd[i].ovflsw_thres;
	if (s->pending_reset) {
		vpmu_reset_pmds(ctx, s, s->pending_reset, long_reset);
		s->pending_reset = 0;
	}
}

void vpmu_ctx_switch(struct vpmu_ctx *ctx, struct vpmu_set *next,
		     bool long_reset)
{
	bool on_cpu = ctx->cpu != NULL;

	if (on_cpu)
		vpmu_ctx_close_events(ctx);
	vpmu_set_activate(ctx, next, long_reset);
	if (on_cpu && vpmu_ctx_open_events(ctx))
		ctx->st.nr_backend_errors++;
	ctx->st.nr_switches++;
}
