// SPDX-License-Identifier: MIT
/*
 * account.c: the per-exit work of a vCPU (the host side of the PMU
 * interrupt, spec 3.5.14) and the next timer deadline: backend deltas are
 * folded into the 64-bit counters, overflows processed, run time charged to
 * the active set (set_act_duration) and time-based switching done (3.7.6),
 * all measured in the vCPU's guest run time; and the snapshot of the guest
 * context on a vCPU. The entry points that lock are in cmd/cpu.c.
 */
#include "vpmu_mech.h"

#include <errno.h>
#include <string.h>

/* Monitoring is on (not stopped, not masked): time runs for the set. */
static bool time_runs(const struct vpmu_ctx *ctx)
{
	return ctx->is_active && !ctx->is_masked;
}

static bool armed_passed(const struct vpmu_ctx *ctx)
{
	const struct vpmu_set *s = ctx->active;
	uint64_t left            = s->open_mask;
	unsigned int i;

	for (i = 0; left; i++, left >>= 1) {
		if ((left & 1) && s->armed_at[i] <= ctx->cpu->run_ns)
			return true;
	}
	return false;
}

static int ctx_account(struct vpmu_ctx *ctx, uint64_t dns)
{
	struct vpmu_set *s = ctx->active;
	uint64_t ovfl;
	int ret;

	ret = vpmu_ctx_collect(ctx, &ovfl);
	if (ret)
		ctx->st.nr_backend_errors++;
	if (time_runs(ctx)) {
		ctx->enabled_ns += dns;
		s->act_ns += dns;
		if (s->flags & PFM_SETFL_TIME_SWITCH) {
			s->timeout_left -=
				dns < s->timeout_left ? dns : s->timeout_left;
			s->switch_left -=
				dns < s->switch_left ? dns : s->switch_left;
		}
	}
	if (ovfl)
		vpmu_ctx_overflow(ctx, ovfl);
	vpmu_thr_step(ctx); /* rate and overhead limits */
	/*
	 * 3.7.6: switch when the timeout ran out, unless the overflow above
	 * switched already or masked (the timeout then waits for RESTART).
	 * At the effective interval, which the overhead budget
	 * may have made longer than the timeout.
	 */
	if (ctx->active == s && time_runs(ctx) &&
	    (s->flags & PFM_SETFL_TIME_SWITCH) && s->switch_left == 0) {
		if (s->switch_ns > s->timeout_ns)
			ctx->st.nr_switch_stretched++;
		vpmu_ctx_switch(ctx, vpmu_set_next(ctx, s), false);
	}
	/*
	 * A prediction stays valid while counting is continuous; re-arm
	 * only after a discontinuity (overflow, switch) or a missed one.
	 */
	if (ovfl || ctx->active != s || armed_passed(ctx))
		vpmu_ctx_rearm(ctx);
	return ret;
}

int vpmu_cpu_fold(struct vpmu_cpu *cpu, uint64_t run_ns_delta,
		  const struct vpmu_guest_state *gs)
{
	unsigned int i;
	int ret, first = 0;

	cpu->run_ns += run_ns_delta;
	if (gs)
		cpu->gs = *gs;
	for (i = 0; i < VPMU_CPU_MAX_CTX; i++) {
		if (!cpu->ctx[i])
			continue;
		ret   = ctx_account(cpu->ctx[i], run_ns_delta);
		first = first ? first : ret;
	}
	return first;
}

static uint64_t ctx_deadline(struct vpmu_ctx *ctx)
{
	const struct vpmu_set *s = ctx->active;
	uint64_t when = VPMU_NO_DEADLINE, left = s->open_mask, ovfl = when;
	unsigned int i;

	if (!time_runs(ctx))
		return VPMU_NO_DEADLINE;
	if (s->flags & PFM_SETFL_TIME_SWITCH)
		when = ctx->cpu->run_ns + s->switch_left;
	for (i = 0; left; i++, left >>= 1) {
		if ((left & 1) && s->armed_at[i] < ovfl)
			ovfl = s->armed_at[i];
	}
	/* No kick for a sample inside the throttle gap. */
	if (ovfl != VPMU_NO_DEADLINE)
		ovfl = vpmu_thr_deadline(ctx, ovfl);
	return ovfl < when ? ovfl : when;
}

uint64_t vpmu_cpu_deadline(struct vpmu_cpu *cpu)
{
	uint64_t when = VPMU_NO_DEADLINE, t, soonest;
	unsigned int i;

	for (i = 0; i < VPMU_CPU_MAX_CTX; i++) {
		if (!cpu->ctx[i])
			continue;
		t    = ctx_deadline(cpu->ctx[i]);
		when = t < when ? t : when;
	}
	/* Host protection: no kick closer than min_kick_ns (vpmu.h). */
	soonest = cpu->run_ns + cpu->dom->cfg.limits.min_kick_ns;
	if (when != VPMU_NO_DEADLINE && when < soonest)
		when = soonest;
	return when;
}

/* The guest context counted on (cpu): vCPU-wide first, else per-thread. */
static struct vpmu_ctx *guest_ctx(struct vpmu_cpu *cpu)
{
	struct vpmu_ctx *found = NULL;
	unsigned int i;

	for (i = 0; i < VPMU_CPU_MAX_CTX; i++) {
		struct vpmu_ctx *c = cpu->ctx[i];

		if (!c || c->owner != VPMU_OWNER_GUEST)
			continue;
		if (c->flags & PFM_FL_SYSTEM_WIDE)
			return c;
		found = c;
	}
	return found;
}

static void snap_pmds(struct vpmu_ctx *ctx, struct vpmu_snapshot *snap)
{
	const struct vpmu_pmu_desc *pmu = ctx->dom->pmu;
	const struct vpmu_set *s        = ctx->active;
	unsigned int i;

	for (i = 0; i < VPMU_NR_REGS; i++) {
		if (pmu->pmds[i].kind == VPMU_REG_VIRT) {
			snap->pmd_mask |= VPMU_BIT(i);
			snap->pmds[i] = vpmu_vpmd_read(ctx, pmu->pmds[i].idx);
		} else if (i < pmu->nr_counters && s->pmc[i].be) {
			snap->pmd_mask |= VPMU_BIT(i);
			snap->pmd_code[i] = s->pmc[i].ev.code;
			snap->pmds[i]     = vpmu_pmd_value(ctx, s, i);
		}
	}
}

int vpmu_cpu_fill_snapshot(struct vpmu_cpu *cpu, struct vpmu_snapshot *snap)
{
	struct vpmu_ctx *ctx;
	unsigned int i;

	memset(snap, 0, sizeof(*snap));
	snap->fd     = -1;
	snap->run_ns = cpu->run_ns;
	ctx          = guest_ctx(cpu);
	if (!ctx)
		return -ENOENT;
	snap->fd         = ctx->handle;
	snap->active_set = ctx->active->id;
	snap->active     = time_runs(ctx);
	snap_pmds(ctx, snap);
	for (i = 0; i < ctx->nr_sets && i < VPMU_SNAP_SETS; i++) {
		snap->sets[i].id         = ctx->sets[i]->id;
		snap->sets[i].runs       = ctx->sets[i]->runs;
		snap->sets[i].enabled_ns = ctx->enabled_ns;
		snap->sets[i].running_ns = ctx->sets[i]->act_ns;
	}
	snap->nr_sets    = i;
	snap->nr_dropped = ctx->st.nr_dropped;
	snap->nr_missed  = ctx->st.nr_missed;
	snap->switch_ns  = ctx->st.switch_ns;
	return 0;
}
