// SPDX-License-Identifier: MIT
/*
 * throttle.c: sampling limits per context, perf-like but per VM:
 * a hard maximum sample rate (vpmu_limits.max_smpl_rate) and a maximum
 * share of a vCPU's time spent on monitoring (max_overhead_pct, Linux's
 * perf_cpu_time_max_percent). The VMM charges what monitoring costs it
 * (vpmu_cpu_charge); every VPMU_THR_STEP_NS of the vCPU's time (run time
 * plus that cost) the controller
 * (vpmu_throttle_next, a pure function) turns cost / wall time into
 *   - a minimum run-time gap between two samples: an overflow inside it
 *     is not sampled but counted (nr_dropped), and the kick for a
 *     predicted overflow waits for the gap's end, so the sample taken then
 *     carries the periods it stands for (nr_missed of the sample);
 *   - or, for a host context in frequency mode, a longer period: the
 *     short reset is stretched by scale / VPMU_THR_SCALE_ONE;
 *   - and, for a context with time-switched sets, a longer effective
 *     switch interval (each switch is a kick): the set's timeout times
 *     mux / VPMU_THR_SCALE_ONE, never shorter than the timeout, which
 *     stays what getinfo_evtsets reports (3.1.10, 3.1.12).
 * Architectural PMU contexts (hardware semantics) are never throttled.
 */
#include "vpmu_mech.h"

#include <errno.h>

#define NS_PER_S  1000000000ULL
#define SCALE_MAX (VPMU_THR_SCALE_ONE * 1024U) /* period x 1024 at most */

/*
 * A sample (or a switch) costs C whatever its spacing, K of it inside
 * the run time, so the share of time it takes, C / (S + C) with S the
 * guest's time between two, reaches a target T at S = C (1 - T) / T, a
 * run time of S + K between two: over a window, cur x (cost (1 - T) + in
 * T) / (T run). One step lands on it, from above or from below. T is 99 %
 * of the budget, which stays a maximum through a window's noise. (A step
 * proportional to cost / budget alone under-corrects, more so at high
 * budgets; one that forgets that the run time holds the kick's kernel
 * part over-corrects when lowering; and a controller that only corrects
 * upwards ratchets below the budget with every noisy window: a 50 %
 * budget settled at 48.5-49 % as the VMM counts.) Within 97-100 % of the
 * budget it holds; downwards it at most halves per step.
 */
/* The cost that passed inside the run time, at most the run time. */
static uint64_t window_in_run(const struct vpmu_thr_window *w)
{
	return w->in_run_ns < w->run_ns ? w->in_run_ns : w->run_ns;
}

/*
 * The vCPU's time: run and cost, the cost that passed inside run time (a
 * kick's kernel exit and re-entry) counted once.
 */
static uint64_t window_wall(const struct vpmu_thr_window *w)
{
	return w->run_ns + w->cost_ns - window_in_run(w);
}

uint64_t vpmu_throttle_next(const struct vpmu_thr_window *w, uint64_t cur,
			    uint64_t floor, unsigned int max_pct)
{
	uint64_t in = window_in_run(w), wall = window_wall(w);
	unsigned __int128 use, budget, next, num, den;
	unsigned int target; /* in hundredths of a percent */

	if (!max_pct || !wall || !cur)
		return cur > floor ? cur : floor;
	if (max_pct >= 100) /* the whole time may go: nothing lengthened */
		return floor;
	target = 99 * max_pct;
	use    = (unsigned __int128)w->cost_ns * 100;
	budget = (unsigned __int128)wall * max_pct;
	num    = (unsigned __int128)cur *
	      ((unsigned __int128)w->cost_ns * (10000 - target) +
	       (unsigned __int128)in * target);
	den = (unsigned __int128)target * w->run_ns;
	if (use > budget) {
		next = den ? (num + den - 1) / den
			   : (unsigned __int128)cur * 1024;
		if (next <= cur)
			next = (unsigned __int128)cur + 1;
	} else if (use * 100 < budget * 97) {
		next = den ? num / den : cur;
		if (next < cur / 2)
			next = cur / 2;
	} else {
		next = cur;
	}
	if (next > UINT64_MAX)
		next = UINT64_MAX;
	return (uint64_t)next > floor ? (uint64_t)next : floor;
}

void vpmu_cpu_charge(struct vpmu_cpu *cpu, uint64_t ns)
{
	__atomic_add_fetch(&cpu->cost_ns, ns, __ATOMIC_RELAXED);
}

void vpmu_cpu_charge_in_run(struct vpmu_cpu *cpu, uint64_t ns)
{
	__atomic_add_fetch(&cpu->cost_ns, ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cpu->cost_in_run_ns, ns, __ATOMIC_RELAXED);
}

static uint64_t cost_in_run_ns(struct vpmu_cpu *cpu)
{
	return __atomic_load_n(&cpu->cost_in_run_ns, __ATOMIC_RELAXED);
}

uint64_t vpmu_cpu_cost_ns(struct vpmu_cpu *cpu)
{
	return __atomic_load_n(&cpu->cost_ns, __ATOMIC_RELAXED);
}

static bool limited(const struct vpmu_ctx *ctx)
{
	return ctx->owner != VPMU_OWNER_ARCH;
}

/* The gap the hard maximum rate imposes, ns (0: none). */
static uint64_t rate_gap(const struct vpmu_ctx *ctx)
{
	uint64_t rate = ctx->dom->cfg.limits.max_smpl_rate;

	return limited(ctx) && rate ? (NS_PER_S + rate - 1) / rate : 0;
}

/* The operator's budget never exceeds the VM's. */
static unsigned int budget_pct(const struct vpmu_ctx *ctx)
{
	unsigned int dom = ctx->dom->cfg.limits.max_overhead_pct;

	if (!limited(ctx))
		return 0;
	if (ctx->thr.pct && (!dom || ctx->thr.pct < dom))
		return ctx->thr.pct;
	return dom;
}

/* The switch interval of (s) at the context's current scale. */
static uint64_t switch_interval(const struct vpmu_ctx *ctx,
				const struct vpmu_set *s)
{
	uint32_t mux = ctx->thr.mux;
	unsigned __int128 ns;

	if (!(s->flags & PFM_SETFL_TIME_SWITCH) || mux <= VPMU_THR_SCALE_ONE)
		return s->timeout_ns;
	ns = (unsigned __int128)s->timeout_ns * mux / VPMU_THR_SCALE_ONE;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

void vpmu_thr_switch_arm(struct vpmu_ctx *ctx, struct vpmu_set *s)
{
	s->switch_ns   = switch_interval(ctx, s);
	s->switch_left = s->switch_ns;
	ctx->st.switch_ns =
		(s->flags & PFM_SETFL_TIME_SWITCH) ? s->switch_ns : 0;
}

/*
 * The scale changed: the active set's running interval becomes the new
 * one, the time it already ran counted (its switch_ns stays at least
 * that, so that a switch after a stretch counts as one).
 */
static void switch_rescale(struct vpmu_ctx *ctx)
{
	struct vpmu_set *s = ctx->active;
	uint64_t ran, ns;

	if (!s || !(s->flags & PFM_SETFL_TIME_SWITCH))
		return;
	ran               = s->switch_ns - s->switch_left;
	ns                = switch_interval(ctx, s);
	s->switch_left    = ns > ran ? ns - ran : 0;
	s->switch_ns      = ns > ran ? ns : ran;
	ctx->st.switch_ns = ns;
}

static bool time_switched(const struct vpmu_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ctx->nr_sets; i++) {
		if (ctx->sets[i]->flags & PFM_SETFL_TIME_SWITCH)
			return true;
	}
	return false;
}

static void rebase(struct vpmu_ctx *ctx)
{
	struct vpmu_thr *t = &ctx->thr;

	t->step_run  = ctx->cpu ? ctx->cpu->run_ns : 0;
	t->step_cost = ctx->cpu ? vpmu_cpu_cost_ns(ctx->cpu) : 0;
	t->step_in   = ctx->cpu ? cost_in_run_ns(ctx->cpu) : 0;
	t->step_smpl = ctx->st.nr_samples;
}

void vpmu_thr_reset(struct vpmu_ctx *ctx)
{
	struct vpmu_thr *t = &ctx->thr;

	t->gap_ns  = rate_gap(ctx);
	t->last_ns = 0;
	t->held    = false;
	t->scale   = VPMU_THR_SCALE_ONE;
	t->mux     = VPMU_THR_SCALE_ONE;
	rebase(ctx);
	ctx->st.scale  = t->scale;
	ctx->st.gap_ns = t->gap_ns;
	if (ctx->active) /* LOAD armed it at the scale of before */
		vpmu_thr_switch_arm(ctx, ctx->active);
}

void vpmu_thr_step(struct vpmu_ctx *ctx)
{
	struct vpmu_thr *t   = &ctx->thr;
	struct vpmu_cpu *cpu = ctx->cpu;
	uint64_t wall, smpl_w, cur, floor = rate_gap(ctx);
	struct vpmu_thr_window w;
	unsigned int pct = budget_pct(ctx);

	if (!cpu || !limited(ctx))
		return;
	if (cpu->run_ns < t->step_run || vpmu_cpu_cost_ns(cpu) < t->step_cost ||
	    cost_in_run_ns(cpu) < t->step_in)
		return rebase(ctx); /* another vCPU (per-thread context) */
	w.run_ns    = cpu->run_ns - t->step_run;
	w.cost_ns   = vpmu_cpu_cost_ns(cpu) - t->step_cost;
	w.in_run_ns = cost_in_run_ns(cpu) - t->step_in;
	wall        = window_wall(&w);
	/*
	 * A step per VPMU_THR_STEP_NS of the vCPU's time, run and cost:
	 * over budget, run time alone comes slowly (at 50 kHz under a
	 * costly kick, 10 ms of run took 300 ms), and the cost of that
	 * first window showed in the budget for seconds.
	 */
	if (wall < VPMU_THR_STEP_NS)
		return;
	smpl_w = ctx->st.nr_samples - t->step_smpl;
	if (t->freq_mode) {
		cur = vpmu_throttle_next(&w, t->scale, VPMU_THR_SCALE_ONE, pct);
		t->scale  = cur < SCALE_MAX ? (uint32_t)cur : SCALE_MAX;
		t->gap_ns = floor;
	} else {
		/* Over budget without a gap yet: start from what was seen. */
		cur = pct ? t->gap_ns : 0;
		if (pct && smpl_w && cur < w.run_ns / smpl_w &&
		    (unsigned __int128)w.cost_ns * 100 >
			    (unsigned __int128)wall * pct)
			cur = w.run_ns / smpl_w;
		t->gap_ns = vpmu_throttle_next(&w, cur, floor, pct);
	}
	/* The same measure lengthens (or relaxes) time-based switching. */
	if (time_switched(ctx)) {
		cur = vpmu_throttle_next(&w, t->mux, VPMU_THR_SCALE_ONE, pct);
		t->mux = cur < SCALE_MAX ? (uint32_t)cur : SCALE_MAX;
		switch_rescale(ctx);
	}
	ctx->st.scale  = t->scale;
	ctx->st.gap_ns = t->gap_ns;
	rebase(ctx);
}

bool vpmu_thr_drops(struct vpmu_ctx *ctx)
{
	const struct vpmu_thr *t = &ctx->thr;

	return t->gap_ns && t->last_ns && ctx->cpu &&
	       ctx->cpu->run_ns < t->last_ns + t->gap_ns;
}

void vpmu_thr_sampled(struct vpmu_ctx *ctx)
{
	ctx->thr.last_ns = ctx->cpu ? ctx->cpu->run_ns : 0;
	ctx->thr.held    = false;
	ctx->st.nr_samples++;
}

uint64_t vpmu_thr_deadline(struct vpmu_ctx *ctx, uint64_t when)
{
	struct vpmu_thr *t = &ctx->thr;

	if (!t->gap_ns || !t->last_ns || when >= t->last_ns + t->gap_ns)
		return when;
	t->held = true;
	return t->last_ns + t->gap_ns;
}

void vpmu_thr_stretch(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i)
{
	uint64_t period = vpmu_pmd_to_ovfl(ctx, s, i), extra;
	unsigned __int128 e;

	if (!ctx->thr.freq_mode || ctx->thr.scale <= VPMU_THR_SCALE_ONE ||
	    period == UINT64_MAX)
		return;
	e = (unsigned __int128)period * (ctx->thr.scale - VPMU_THR_SCALE_ONE) /
	    VPMU_THR_SCALE_ONE;
	extra = e > UINT64_MAX - period ? UINT64_MAX - period : (uint64_t)e;
	vpmu_pmd_set(ctx, s, i, vpmu_pmd_value(ctx, s, i) - extra);
	s->pmd[i].last_reset = vpmu_pmd_value(ctx, s, i);
}

/* Nanoseconds of (period) events of (code), or 0 for other events. */
static uint64_t period_ns(const struct vpmu_ctx *ctx, uint16_t code,
			  uint64_t period)
{
	uint64_t khz = ctx->dom->cfg.tsc_khz;

	if (code == PVPMU_EV_HV_RUN_NS)
		return period;
	if (code == PVPMU_EV_HV_GUEST_CYCLES && khz)
		return (uint64_t)((unsigned __int128)period * 1000000 / khz);
	return 0;
}

int vpmu_thr_check_period(const struct vpmu_ctx *ctx,
			  const struct vpmu_pmc *pmc, const uint64_t *vals,
			  unsigned int n)
{
	uint64_t gap = rate_gap(ctx), ns;
	unsigned int k;

	if (!gap || !pmc->be)
		return 0;
	for (k = 0; k < n; k++) {
		if (!vals[k])
			continue; /* a period of 2^64 */
		ns = period_ns(ctx, pmc->ev.code, 0 - vals[k]);
		if (ns && ns < gap)
			return -EINVAL;
	}
	return 0;
}
