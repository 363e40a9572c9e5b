// SPDX-License-Identifier: MIT
/*
 * overflow.c: what happens on a 64-bit overflow (spec 3.4.3, 3.5.14, 3.7.6,
 * 3.7.7): the sampling format's handler or the format-less rules, masking,
 * messages and notification, short resets, overflow-based set switching;
 * and PFM_RESTART's side (3.1.9, 3.5.15).
 */
#include "vpmu_mech.h"

#include <errno.h>
#include <string.h>

/* The combined outcome of one overflow event (all PMDs overflowed). */
struct ovfl_ctl {
	bool notify;    /* queue a message / raise the notification */
	bool mask;      /* mask monitoring until RESTART */
	bool block;     /* the format asked to block the thread */
	uint64_t reset; /* PMDs to short-reset now */
};

static bool may_block(const struct vpmu_ctx *ctx)
{
	/* Table 3.2: only non-self per-thread contexts block. */
	return (ctx->flags & PFM_FL_NOTIFY_BLOCK) &&
	       !(ctx->flags & PFM_FL_SYSTEM_WIDE) && !ctx->is_self;
}

/* Format-less rules (3.1.9, 3.4.3): notify and mask, or short reset. */
static void ovfl_plain(struct vpmu_ctx *ctx, struct vpmu_set *s, uint64_t ovfl,
		       struct ovfl_ctl *c)
{
	unsigned int i;

	for (i = 0; i < VPMU_NR_REGS; i++) {
		if ((ovfl & VPMU_BIT(i)) &&
		    (s->pmc[i].flags & PFM_REGFL_OVFL_NOTIFY))
			c->notify = true;
	}
	/* Architectural PMU models: hardware wraps and never masks (vpmu.h). */
	if (ctx->owner == VPMU_OWNER_ARCH) {
		c->reset = ovfl;
		return;
	}
	c->mask  = c->notify;
	c->block = c->notify && may_block(ctx);
	c->reset = c->notify ? 0 : ovfl;
}

/*
 * The period of counting PMD (i) after its short reset (stretched in
 * frequency mode), 0 for a period of 2^64.
 */
static uint64_t next_period(const struct vpmu_ctx *ctx,
			    const struct vpmu_set *s, unsigned int i)
{
	uint64_t p = 0 - s->pmd[i].short_reset;
	unsigned __int128 q;

	if (!s->pmd[i].short_reset)
		return 0;
	if (ctx->thr.freq_mode && ctx->thr.scale > VPMU_THR_SCALE_ONE) {
		q = (unsigned __int128)p * ctx->thr.scale / VPMU_THR_SCALE_ONE;
		p = q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
	}
	return p;
}

/*
 * Whole periods that elapsed after the one that overflowed
 * before the overflow was seen: the skid (the value past the wrap) in
 * units of the next period. short_reset() keeps the same remainder.
 */
static uint64_t missed_of(const struct vpmu_ctx *ctx, const struct vpmu_set *s,
			  unsigned int i)
{
	uint64_t p = next_period(ctx, s, i);

	if (!p || !vpmu_is_counter(ctx, i))
		return 0;
	return vpmu_pmd_value(ctx, s, i) / p;
}

static void fill_arg(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i,
		     struct vpmu_smpl_ovfl_arg *a)
{
	const struct vpmu_guest_state *gs = &ctx->cpu->gs;
	uint64_t want                     = s->pmc[i].smpl_pmds;
	unsigned int j, k = 0;

	a->ovfl_pmd       = (uint16_t)i;
	a->active_set     = s->id;
	a->cpu            = (uint16_t)ctx->cpu->index;
	a->ovfl_notify    = (s->pmc[i].flags & PFM_REGFL_OVFL_NOTIFY) != 0;
	a->ip             = gs->ip;
	a->pid            = gs->pid;
	a->tid            = gs->tid;
	a->pmd_last_reset = s->pmd[i].last_reset;
	a->pmd_value      = vpmu_pmd_value(ctx, s, i);
	a->pmd_eventid    = s->pmc[i].eventid;
	a->tstamp         = ctx->cpu->run_ns;
	a->nr_missed      = missed_of(ctx, s, i);
	a->smpl_pmds[0]   = want;
	for (j = 0; want; j++, want >>= 1) {
		if (!(want & 1))
			continue;
		if (ctx->dom->pmu->pmds[j].kind == VPMU_REG_VIRT)
			a->smpl_pmds_values[k++] =
				vpmu_vpmd_read(ctx, ctx->dom->pmu->pmds[j].idx);
		else
			a->smpl_pmds_values[k++] = vpmu_pmd_value(ctx, s, j);
	}
}

/*
 * 3.5.14: the handler runs once per overflowed PMD in increasing index
 * with one tstamp, and stops at the first error. Masking wins over reset.
 */
static void ovfl_fmt(struct vpmu_ctx *ctx, struct vpmu_set *s, uint64_t ovfl,
		     struct ovfl_ctl *c)
{
	struct vpmu_smpl_ovfl_arg a;
	bool wants_notify = false, has_notify = false;
	unsigned int i;

	for (i = 0; i < VPMU_NR_REGS; i++) {
		uint32_t ctl = 0;

		if (!(ovfl & VPMU_BIT(i)))
			continue;
		fill_arg(ctx, s, i, &a);
		if (ctx->smpl.fmt->handler(&ctx->smpl, &a, &ctl)) {
			ctx->st.nr_fmt_errors++;
			break;
		}
		has_notify |= a.ovfl_notify;
		wants_notify |= (ctl & VPMU_SMPL_CTRL_NOTIFY_USER) != 0;
		c->mask |= (ctl & VPMU_SMPL_CTRL_MASK_MONITORING) != 0;
		c->block |= (ctl & VPMU_SMPL_CTRL_BLOCK_THREAD) != 0;
		if (ctl & VPMU_SMPL_CTRL_RESET_OVFL_PMDS)
			c->reset |= VPMU_BIT(i);
	}
	/* 3.6.5: no message unless an overflowed PMC asked: "saturated". */
	c->notify = wants_notify && has_notify;
	c->block  = c->block && c->notify && may_block(ctx);
	if (c->mask)
		c->reset = 0;
}

/*
 * Short-reset (reset) at the overflow. Events counted after the wrap and
 * before this runs (skid, now the counter's value) are kept on top of the
 * reset value so that counts are not lost (vpmu.h). Skid of a whole period
 * or more would carry the counter past 2^64 again, silently: keep it
 * modulo the period and count the periods missed.
 */
static void short_reset(struct vpmu_ctx *ctx, struct vpmu_set *s,
			uint64_t reset)
{
	uint64_t skid[VPMU_MAX_COUNTERS] = {0}, period;
	unsigned int i, nr = ctx->dom->pmu->nr_counters;

	for (i = 0; i < nr; i++) {
		if (reset & VPMU_BIT(i))
			skid[i] = vpmu_pmd_value(ctx, s, i);
	}
	vpmu_reset_pmds(ctx, s, reset, false);
	for (i = 0; i < nr; i++) {
		if (reset & VPMU_BIT(i))
			vpmu_thr_stretch(ctx, s, i); /* frequency mode */
		if (!skid[i])
			continue;
		period = vpmu_pmd_to_ovfl(ctx, s, i);
		if (skid[i] >= period) {
			/* The throttle's, or preemption's. */
			if (ctx->thr.held)
				ctx->st.nr_dropped += skid[i] / period;
			else
				ctx->st.nr_missed += skid[i] / period;
			skid[i] %= period;
		}
		vpmu_pmd_set(ctx, s, i, vpmu_pmd_value(ctx, s, i) + skid[i]);
	}
}

/* Count trigger overflows of an OVFL_SWITCH set; the PMDs that hit 0. */
static uint64_t count_triggers(struct vpmu_set *s, uint64_t ovfl)
{
	uint64_t hit = 0;
	unsigned int i;

	if (!(s->flags & PFM_SETFL_OVFL_SWITCH))
		return 0;
	for (i = 0; i < VPMU_NR_REGS; i++) {
		struct vpmu_pmd *p = &s->pmd[i];

		if (!(ovfl & VPMU_BIT(i)) || !p->ovflsw_thres ||
		    !p->ovflsw_left)
			continue;
		if (--p->ovflsw_left == 0)
			hit |= VPMU_BIT(i);
	}
	return hit;
}

/*
 * 4.4.4 (policy): count overflow events per second of run time; past the
 * limit mask until RESTART and tell the VMM, without a message.
 */
static void throttle(struct vpmu_ctx *ctx)
{
	uint64_t max = ctx->dom->cfg.limits.max_ovfl_per_sec;
	uint64_t now = ctx->cpu->run_ns;

	/*
	 * Architectural PMU contexts never mask (hardware has no
	 * throttle; their PMIs are bounded by VM entries).
	 */
	if (!max || ctx->owner == VPMU_OWNER_ARCH)
		return;
	if (now - ctx->thr_start >= 1000000000ULL) {
		ctx->thr_start = now;
		ctx->thr_count = 0;
	}
	if (++ctx->thr_count <= max || ctx->is_masked)
		return;
	ctx->is_masked = true;
	ctx->st.nr_throttled++;
	vpmu_ctx_notify(ctx, 0, 0, VPMU_NOTIFY_THROTTLED);
}

/* Is the overflow of (ovfl) a sample (a format, or a PMC notifies)? */
static bool is_sample(const struct vpmu_ctx *ctx, const struct vpmu_set *s,
		      uint64_t ovfl)
{
	unsigned int i;

	if (ctx->has_fmt)
		return true;
	for (i = 0; i < VPMU_NR_REGS; i++) {
		if ((ovfl & VPMU_BIT(i)) &&
		    (s->pmc[i].flags & PFM_REGFL_OVFL_NOTIFY))
			return true;
	}
	return false;
}

/*
 * A sample inside the throttle gap is not taken: counted in
 * nr_dropped, the PMDs short-reset (skid kept) so that counting goes on.
 */
static bool drop_sample(struct vpmu_ctx *ctx, struct vpmu_set *s, uint64_t ovfl,
			bool sample)
{
	uint64_t n = (uint64_t)__builtin_popcountll(ovfl);

	if (!sample || !vpmu_thr_drops(ctx))
		return false;
	ctx->st.nr_ovfl += n;
	ctx->st.nr_dropped += n;
	ctx->thr.held = true; /* its skid periods are the throttle's too */
	short_reset(ctx, s, ovfl);
	return true;
}

/* Process one overflow event of the active set: PMDs (ovfl) wrapped. */
void vpmu_ctx_overflow(struct vpmu_ctx *ctx, uint64_t ovfl)
{
	struct vpmu_set *s = ctx->active;
	struct ovfl_ctl c  = {0};
	bool sample        = is_sample(ctx, s, ovfl);
	uint64_t trig;

	if (drop_sample(ctx, s, ovfl, sample))
		return;
	ctx->st.nr_ovfl += (uint64_t)__builtin_popcountll(ovfl);
	if (ctx->has_fmt)
		ovfl_fmt(ctx, s, ovfl, &c);
	else
		ovfl_plain(ctx, s, ovfl, &c);
	ctx->ovfl_pending = ovfl & ~c.reset;
	trig              = count_triggers(s, ovfl);
	if (trig)
		s->switch_pmds = trig;
	if (c.mask) {
		ctx->is_masked = true;
		/* 3.7.7: a switch is deferred to RESTART while masked. */
		ctx->switch_pending |= trig != 0;
	} else if (trig) {
		/* Reset when this set next becomes active (vpmu.h). */
		s->pending_reset |= c.reset;
		c.reset = 0;
	}
	if (c.reset)
		short_reset(ctx, s, c.reset);
	/* 3.1.9: a blocked thread stays blocked until PFM_RESTART. */
	if (c.notify && c.block)
		ctx->is_blocked = true;
	if (c.notify)
		vpmu_ctx_notify(ctx, PFM_MSG_OVFL, ovfl,
				c.block ? VPMU_NOTIFY_BLOCK : 0);
	if (!c.mask && trig)
		vpmu_ctx_switch(ctx, vpmu_set_next(ctx, s), false);
	if (sample)
		vpmu_thr_sampled(ctx);
	throttle(ctx);
}

/*
 * PFM_RESTART on a loaded context (3.1.9, 3.5.15): the format decides,
 * else unmask with long resets of the PMDs that overflowed; a deferred
 * overflow switch happens now, with long resets in the new set (3.7.7).
 */
int vpmu_ctx_do_restart(struct vpmu_ctx *ctx, uint64_t restart_arg)
{
	bool is_active = !ctx->is_masked, reset = true;
	const struct vpmu_smpl_fmt *fmt = ctx->has_fmt ? ctx->smpl.fmt : NULL;
	uint32_t ctl                    = 0;
	int ret;

	if (fmt && fmt->restart) {
		ret = fmt->restart(&ctx->smpl, is_active, restart_arg, &ctl);
		if (ret)
			return ret;
		/*
		 * 3.1.9: "if the monitored thread had been blocked, it is
		 * awoken" (block_thread is ignored at restart, 3.5.15).
		 */
		ctx->is_blocked = false;
		if (ctl & VPMU_SMPL_CTRL_MASK_MONITORING) {
			ctx->is_masked = true;
			return 0;
		}
		reset = (ctl & VPMU_SMPL_CTRL_RESET_OVFL_PMDS) != 0;
	} else if (is_active) {
		return fmt ? 0 : -EBUSY;
	}
	ctx->is_blocked = false; /* 3.1.9: the blocked thread is awoken */
	if (reset && ctx->ovfl_pending)
		vpmu_reset_pmds(ctx, ctx->active, ctx->ovfl_pending, true);
	if (reset)
		ctx->ovfl_pending = 0;
	ctx->is_masked = false;
	if (ctx->switch_pending) {
		ctx->switch_pending = false;
		vpmu_ctx_switch(ctx, vpmu_set_next(ctx, ctx->active), true);
	}
	if (ctx->cpu)
		vpmu_ctx_rearm(ctx);
	return 0;
}
