// SPDX-License-Identifier: MIT
/*
 * events.c: the backend side of counting PMCs: choosing a backend for an
 * event when a PMC is written, opening the events of the active set while a
 * context is on a vCPU, collecting their deltas, arming predicted overflows,
 * and the virtual PMDs.
 */
#include "vpmu_mech.h"

#include <errno.h>

/*
 * Decode counting PMC (i) and pick the first backend that can count its
 * event. A disabled PMC (EN clear) counts nothing and needs none. Returns
 * -ENOENT when no backend can count the event (3.1.2 NOTAVAIL).
 */
struct vpmu_event vpmu_evsel_event(uint64_t v)
{
	return (struct vpmu_event){
		.code  = (uint16_t)(v & 0xffff),
		.cmask = (uint8_t)(v >> VPMU_EVSEL_CMASK_SHIFT),
		.usr   = (v & VPMU_EVSEL_USR) != 0,
		.os    = (v & VPMU_EVSEL_OS) != 0,
		.edge  = (v & VPMU_EVSEL_EDGE) != 0,
		.inv   = (v & VPMU_EVSEL_INV) != 0,
	};
}

int vpmu_pmc_bind(struct vpmu_domain *d, struct vpmu_pmc *pmc, unsigned int i)
{
	uint64_t v = pmc->value;
	unsigned int b;

	(void)i;
	pmc->be = NULL;
	if (!(v & VPMU_EVSEL_EN))
		return 0;
	pmc->ev = vpmu_evsel_event(v);
	for (b = 0; b < d->cfg.nr_backends; b++) {
		const struct vpmu_backend *be = &d->cfg.backends[b];

		if (be->ops->describe(be, pmc->ev.code, NULL) == 0) {
			pmc->be = be;
			return 0;
		}
	}
	return -ENOENT;
}

static int open_counter(struct vpmu_ctx *ctx, struct vpmu_set *s,
			unsigned int i)
{
	struct vpmu_bevent *e = &s->bev[i];
	int ret;

	*e = (struct vpmu_bevent){.be = s->pmc[i].be, .ev = s->pmc[i].ev};
	e->ev.cpu_index = ctx->cpu->index;
	ret             = e->be->ops->open(e, ctx->cpu->run_ns);
	if (ret)
		return ret;
	s->open_mask |= VPMU_BIT(i);
	s->fresh_mask |= VPMU_BIT(i);
	s->armed_at[i] = VPMU_NO_DEADLINE;
	return 0;
}

static void close_counter(struct vpmu_set *s, unsigned int i)
{
	if (!(s->open_mask & VPMU_BIT(i)))
		return;
	s->bev[i].be->ops->close(&s->bev[i]);
	s->open_mask &= ~VPMU_BIT(i);
	s->fresh_mask &= ~VPMU_BIT(i);
}

/*
 * Restart the counters opened since the last rebase from this one point
 * (backends with rebase()), then arm them. Opening an event can cost host
 * time (perf_event_open(2) on the vCPU thread), which the events opened
 * first would count and the later ones not: the counters one command or
 * attach starts count the same window.
 */
void vpmu_ctx_rebase(struct vpmu_ctx *ctx)
{
	struct vpmu_set *s = ctx->active;
	uint64_t left      = s->fresh_mask & s->open_mask;
	unsigned int i;

	s->fresh_mask = 0;
	for (i = 0; left; i++, left >>= 1) {
		if ((left & 1) && s->bev[i].be->ops->rebase &&
		    s->bev[i].be->ops->rebase(&s->bev[i], ctx->cpu->run_ns))
			ctx->st.nr_backend_errors++;
	}
	vpmu_ctx_rearm(ctx);
}

void vpmu_ctx_close_events(struct vpmu_ctx *ctx)
{
	struct vpmu_set *s = ctx->active;
	unsigned int i;

	for (i = 0; s && s->open_mask; i++)
		close_counter(s, i);
}

/* Open the events of the active set on ctx->cpu; all or nothing. */
int vpmu_ctx_open_events(struct vpmu_ctx *ctx)
{
	struct vpmu_set *s = ctx->active;
	unsigned int i;
	int ret;

	for (i = 0; i < ctx->dom->pmu->nr_counters; i++) {
		if (!s->pmc[i].be)
			continue;
		ret = open_counter(ctx, s, i);
		if (ret) {
			vpmu_ctx_close_events(ctx);
			return ret;
		}
	}
	vpmu_ctx_rebase(ctx);
	return 0;
}

/* Re-program counter (i) of (s) after a PMC write, if it is live. */
int vpmu_ctx_reopen_counter(struct vpmu_ctx *ctx, struct vpmu_set *s,
			    unsigned int i)
{
	int ret = 0;

	if (!ctx->cpu || s != ctx->active)
		return 0;
	close_counter(s, i);
	if (s->pmc[i].be)
		ret = open_counter(ctx, s, i);
	vpmu_ctx_rearm(ctx);
	return ret;
}

/* Events are collected only while active, unmasked and not excluded. */
static bool is_counting(const struct vpmu_ctx *ctx)
{
	const struct vpmu_set *s = ctx->active;

	if (!ctx->is_active || ctx->is_masked)
		return false;
	return !(ctx->cpu->is_idle && (s->flags & PFM_SETFL_EXCL_IDLE) &&
		 (ctx->flags & PFM_FL_SYSTEM_WIDE));
}

/*
 * Read the deltas of the open counters up to ctx->cpu->run_ns. When not
 * counting they are read and dropped: inactive or masked counters are
 * frozen (3.1.9, 3.7.1). Stores the PMDs that overflowed in (*ovfl).
 */
int vpmu_ctx_collect(struct vpmu_ctx *ctx, uint64_t *ovfl)
{
	struct vpmu_set *s = ctx->active;
	bool counting      = is_counting(ctx);
	uint64_t delta, left = s->open_mask;
	int ret, first       = 0;
	unsigned int i;

	*ovfl = 0;
	for (i = 0; left; i++, left >>= 1) {
		if (!(left & 1))
			continue;
		ret = s->bev[i].be->ops->read(&s->bev[i], ctx->cpu->run_ns,
					      &delta);
		if (ret) {
			first = first ? first : ret;
			continue;
		}
		if (counting && delta && vpmu_pmd_add(ctx, s, i, delta))
			*ovfl |= VPMU_BIT(i);
	}
	return first;
}

/* Ask the backends when the open counters will overflow (3.5.14 step 1). */
void vpmu_ctx_rearm(struct vpmu_ctx *ctx)
{
	struct vpmu_set *s = ctx->active;
	bool counting      = is_counting(ctx);
	uint64_t left      = s->open_mask, in_ns;
	unsigned int i;

	for (i = 0; left; i++, left >>= 1) {
		struct vpmu_bevent *e = &s->bev[i];

		if (!(left & 1))
			continue;
		s->armed_at[i] = VPMU_NO_DEADLINE;
		if (!counting || !e->be->ops->arm)
			continue;
		if (e->be->ops->arm(e, vpmu_pmd_to_ovfl(ctx, s, i), &in_ns))
			continue;
		if (in_ns != VPMU_NO_DEADLINE &&
		    in_ns < VPMU_NO_DEADLINE - ctx->cpu->run_ns)
			s->armed_at[i] = ctx->cpu->run_ns + in_ns;
	}
}

/* Current value of virtual PMD (id): live on a cpu, else as last seen. */
uint64_t vpmu_vpmd_read(struct vpmu_ctx *ctx, unsigned int id)
{
	struct vpmu_domain *d = ctx->dom;

	if (!ctx->cpu)
		return id < 8 ? ctx->vpmd[id] : 0;
	if (id == VPMU_VPMD_RUN_NS)
		return ctx->cpu->run_ns;
	if (!d->cfg.vpmd_read)
		return 0;
	return d->cfg.vpmd_read(d->cfg.vpmd_opaque, ctx->cpu->index, id);
}

/* Remember the virtual PMDs before leaving the cpu (3.1.8). */
void vpmu_ctx_snap_vpmds(struct vpmu_ctx *ctx)
{
	unsigned int id;

	for (id = 0; id < 8; id++)
		ctx->vpmd[id] = vpmu_vpmd_read(ctx, id);
}
