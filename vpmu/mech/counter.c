// SPDX-License-Identifier: MIT
/*
 * counter.c: 64-bit counter emulation over the domain's hardware width
 * (spec 2.2.1, 3.1.3, 3.4.1; Fig. 3.3), reset values and randomization
 * (spec 3.1.3, 3.4.2) with Carta's Park-Miller generator (spec ref. [1]).
 */
#include "vpmu_mech.h"

#include <string.h>

static bool is_counter(const struct vpmu_domain *d, unsigned int i)
{
	return i < d->pmu->nr_counters &&
	       d->pmu->pmds[i].kind == VPMU_REG_COUNTER;
}

bool vpmu_is_counter(const struct vpmu_ctx *ctx, unsigned int i)
{
	return is_counter(ctx->dom, i);
}

static bool no_emul64(const struct vpmu_set *s, unsigned int i)
{
	return (s->pmc[i].flags & PFM_REGFL_NO_EMUL64) != 0;
}

/* The value READ_PMDS returns (3.1.4): sw + hw, or hw alone w/o emulation. */
uint64_t vpmu_pmd_value(const struct vpmu_ctx *ctx, const struct vpmu_set *s,
			unsigned int i)
{
	const struct vpmu_pmd *pmd = &s->pmd[i];

	if (!vpmu_is_counter(ctx, i))
		return pmd->sw;
	if (no_emul64(s, i))
		return pmd->hw;
	return pmd->sw | pmd->hw;
}

/* Split (v) into the software and hardware parts (3.1.3 "Write"). */
static void split(const struct vpmu_domain *d, struct vpmu_set *s,
		  unsigned int i, uint64_t v)
{
	struct vpmu_pmd *pmd = &s->pmd[i];

	if (!is_counter(d, i)) {
		pmd->sw = v;
		return;
	}
	pmd->hw = v & d->width_mask;
	pmd->sw = no_emul64(s, i) ? 0 : v & ~d->width_mask;
}

void vpmu_pmd_set(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i,
		  uint64_t v)
{
	split(ctx->dom, s, i, v);
}

/*
 * Add (delta) events to counting PMD (i). Narrow wraps carry into the
 * software part and are counted as folds; returns true on a perfmon2
 * overflow: the carry out of bit 63, or out of the hardware width with
 * PFM_REGFL_NO_EMUL64 (6.2.1). Events beyond one wrap are interrupt skid.
 */
bool vpmu_pmd_add(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i,
		  uint64_t delta)
{
	struct vpmu_pmd *pmd = &s->pmd[i];
	uint64_t mask        = ctx->dom->width_mask;
	uint64_t old, val;

	if (no_emul64(s, i)) {
		bool ovfl = delta > mask - pmd->hw;

		pmd->hw = (pmd->hw + delta) & mask;
		return ovfl;
	}
	if (mask != ~0ULL) {
		uint32_t w = ctx->dom->cfg.limits.counter_width;

		ctx->st.nr_folds +=
			(delta >> w) + ((pmd->hw + (delta & mask)) >> w);
	}
	old     = pmd->sw | pmd->hw;
	val     = old + delta;
	pmd->hw = val & mask;
	pmd->sw = val & ~mask;
	return val < old;
}

/* Events left before counting PMD (i) overflows (UINT64_MAX for 2^64). */
uint64_t vpmu_pmd_to_ovfl(const struct vpmu_ctx *ctx, const struct vpmu_set *s,
			  unsigned int i)
{
	uint64_t left;

	if (no_emul64(s, i))
		left = (ctx->dom->width_mask - s->pmd[i].hw) + 1;
	else
		left = 0 - (s->pmd[i].sw | s->pmd[i].hw);
	return left ? left : UINT64_MAX;
}

/*
 * Carta's implementation of the Park-Miller "minimal standard" generator
 * (16807 * x mod 2^31 - 1) without division. The series depends only on
 * the seed (3.4.2).
 */
uint32_t vpmu_prng_next(uint32_t *state)
{
	uint32_t lo, hi;

	lo = 16807 * (*state & 0xffff);
	hi = 16807 * (*state >> 16);
	lo += (hi & 0x7fff) << 16;
	lo += hi >> 15;
	if (lo > 0x7fffffff)
		lo -= 0x7fffffff;
	*state = lo;
	return lo;
}

/*
 * The do-nothing defaults of a new set (3.1.1, 3.1.2, 3.1.3), made once
 * per domain: a set is made for every context and every set a session
 * asks for, and copying 64 registers' defaults is cheaper than working
 * them out again each time.
 */
void vpmu_set_blank_init(struct vpmu_domain *d)
{
	struct vpmu_set *s = &d->blank_set;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < VPMU_NR_REGS; i++) {
		s->pmc[i].value = d->pmu->pmcs[i].def_value;
		split(d, s, i, d->pmu->pmds[i].def_value);
		vpmu_pmd_seed(&s->pmd[i], 0);
	}
}

/* Any 32-bit seed is valid (3.1.3): reduce it into 1 .. 2^31 - 2. */
void vpmu_pmd_seed(struct vpmu_pmd *pmd, uint32_t seed)
{
	pmd->random_seed = seed;
	pmd->prng        = seed % 0x7fffffffU;
	if (pmd->prng == 0)
		pmd->prng = 1;
}

/*
 * Reload PMD (i) with its short or long reset value, randomized when its
 * PMC has PFM_REGFL_RANDOM (3.4.2: value = base + (random & mask)).
 */
static void reset_one(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i,
		      bool is_long)
{
	struct vpmu_pmd *pmd = &s->pmd[i];
	uint64_t v           = is_long ? pmd->long_reset : pmd->short_reset;

	if (ctx->dom->pmu->pmds[i].kind == VPMU_REG_VIRT)
		return;
	if (vpmu_is_counter(ctx, i) && (s->pmc[i].flags & PFM_REGFL_RANDOM))
		v += vpmu_prng_next(&pmd->prng) & pmd->random_mask;
	vpmu_pmd_set(ctx, s, i, v);
	pmd->last_reset = vpmu_pmd_value(ctx, s, i);
}

/*
 * Reset the PMDs of (ovfl) and the reg_reset_pmds of their PMCs, each with
 * its own short or long value (3.1.2, 3.1.9 steps 1-2).
 */
void vpmu_reset_pmds(struct vpmu_ctx *ctx, struct vpmu_set *s, uint64_t ovfl,
		     bool is_long)
{
	uint64_t others = 0;
	unsigned int i;

	for (i = 0; i < VPMU_NR_REGS; i++) {
		if (!(ovfl & VPMU_BIT(i)))
			continue;
		reset_one(ctx, s, i, is_long);
		if (vpmu_is_counter(ctx, i))
			others |= s->pmc[i].reset_pmds;
	}
	others &= ~ovfl;
	for (i = 0; i < VPMU_NR_REGS; i++) {
		if (others & VPMU_BIT(i))
			reset_one(ctx, s, i, is_long);
	}
}
