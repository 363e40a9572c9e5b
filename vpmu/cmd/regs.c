// SPDX-License-Identifier: MIT
/*
 * regs.c: the register commands PFM_WRITE_PMCS, PFM_WRITE_PMDS and
 * PFM_READ_PMDS (spec 3.1.2 - 3.1.4), and PFM_GETINFO_PMCS/PMDS (3.1.13,
 * 3.1.14). Each element names a register (and a set); processing stops at
 * the first bad element, which is flagged in reg_flags; earlier ones stay.
 */
#include "cmd_priv.h"

#include <errno.h>
#include <string.h>

#include "vpmu_mech.h"

#define REGFL_DEFINED                                                          \
	(PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM | PFM_REGFL_NO_EMUL64)

/* Flag (*flags) with (retfl) and return -EINVAL. */
static int bad(uint32_t *flags, uint32_t retfl)
{
	*flags |= retfl;
	return -EINVAL;
}

/* The register/set checks shared by all three commands. */
static int find_reg(struct vpmu_ctx *ctx, uint64_t impl, uint16_t num,
		    uint16_t set, uint32_t *flags, struct vpmu_set **s)
{
	if (num >= VPMU_NR_REGS || !(impl & VPMU_BIT(num)))
		return bad(flags, PFM_REG_RETFL_NOTAVAIL);
	*s = vpmu_set_find(ctx, set);
	if (!*s)
		return bad(flags, PFM_REG_RETFL_NOSET);
	return 0;
}

/* Is set (s) live on a cpu (its counters move)? */
static bool is_live(const struct vpmu_ctx *ctx, const struct vpmu_set *s)
{
	return ctx->cpu && ctx->active == s;
}

/*
 * WRITE_PMCS switches its counters at one point: the live counts are
 * collected once before the first element (each live counter under its
 * old event), and the counters the elements opened are rebased together
 * after the last one, so that PMCs written by one command count the same
 * window however long each backend takes to open or close its event.
 */
static int sync_live(struct vpmu_ctx *ctx)
{
	vpmu_ctx_sync(ctx);
	return 0;
}

static void rebase_opened(struct vpmu_ctx *ctx)
{
	if (ctx->cpu && ctx->active->fresh_mask)
		vpmu_ctx_rebase(ctx);
}

/*
 * One WRITE_PMCS element. The new state is built aside and committed only
 * once valid, so a refused element leaves the PMC as it was.
 */
static int write_pmc(struct vpmu_ctx *ctx, void *elem)
{
	struct pfarg_pmc *p             = elem;
	const struct vpmu_pmu_desc *pmu = ctx->dom->pmu;
	uint64_t impl                   = pmu->impl_pmds, old;
	struct vpmu_pmc pmc;
	struct vpmu_set *s;
	int ret;

	ret = find_reg(ctx, pmu->impl_pmcs, p->reg_num, p->reg_set,
		       &p->reg_flags, &s);
	if (ret)
		return ret;
	if ((p->reg_flags & ~REGFL_DEFINED) || (p->reg_reset_pmds[0] & ~impl) ||
	    (p->reg_smpl_pmds[0] & ~impl))
		return bad(&p->reg_flags, PFM_REG_RETFL_EINVAL);
	pmc = (struct vpmu_pmc){
		.flags      = p->reg_flags,
		.reset_pmds = p->reg_reset_pmds[0],
		.smpl_pmds  = p->reg_smpl_pmds[0],
		.eventid    = p->reg_smpl_eventid,
	};
	/* 3.1.13: reserved bits silently take their default value. */
	pmc.value = (p->reg_value & ~pmu->pmcs[p->reg_num].rsvd_mask) |
		    (pmu->pmcs[p->reg_num].def_value &
		     pmu->pmcs[p->reg_num].rsvd_mask);
	if (vpmu_pmc_bind(ctx->dom, &pmc, p->reg_num))
		return bad(&p->reg_flags, PFM_REG_RETFL_NOTAVAIL);
	/*
	 * A modifier the backend cannot honour (a ring filter on cycles
	 * from task-clock) is refused to perfmon2 callers, who get an error
	 * code. The architectural model cannot refuse an event its CPUID
	 * offers (that would be a #GP): it counts every ring there.
	 */
	if (ctx->owner != VPMU_OWNER_ARCH && pmc.be && pmc.be->ops->refusal &&
	    pmc.be->ops->refusal(pmc.be, &pmc.ev))
		return bad(&p->reg_flags, PFM_REG_RETFL_NOTAVAIL);
	/* A time event's reset periods above the maximum rate. */
	if (vpmu_is_counter(ctx, p->reg_num) &&
	    vpmu_thr_check_period(
		    ctx, &pmc,
		    (const uint64_t[]){s->pmd[p->reg_num].short_reset,
				       s->pmd[p->reg_num].long_reset},
		    2))
		return bad(&p->reg_flags, PFM_REG_RETFL_EINVAL);
	old                = vpmu_pmd_value(ctx, s, p->reg_num);
	s->pmc[p->reg_num] = pmc;
	vpmu_pmd_set(ctx, s, p->reg_num, old); /* NO_EMUL64 may change */
	if (vpmu_ctx_reopen_counter(ctx, s, p->reg_num)) {
		s->pmc[p->reg_num].be = NULL;
		return bad(&p->reg_flags, PFM_REG_RETFL_NOTAVAIL);
	}
	return 0;
}

int vpmu_ctx_write_pmcs(struct vpmu_domain *d, const struct vpmu_caller *who,
			int fd, struct pfarg_pmc *pmcs, int n)
{
	const struct vpmu_vec_cmd cmd = {pmcs,      n,         sizeof(*pmcs),
					 sync_live, write_pmc, rebase_opened};

	return vpmu_ctx_vec_run(d, who, fd, &cmd);
}

/*
 * One WRITE_PMDS element (3.1.3): detached, reg_value is the value loaded
 * at attach; attached, it replaces the live value. The switch threshold
 * restarts and the PRNG is re-seeded on every write (vpmu.h).
 */
static int write_pmd(struct vpmu_ctx *ctx, void *elem)
{
	struct pfarg_pmd *p             = elem;
	const struct vpmu_pmu_desc *pmu = ctx->dom->pmu;
	struct vpmu_pmd *pmd;
	struct vpmu_set *s;
	int ret;

	ret = find_reg(ctx, pmu->impl_pmds, p->reg_num, p->reg_set,
		       &p->reg_flags, &s);
	if (ret)
		return ret;
	/* 3.1.3: no input flags; 3.2.2: virtual PMDs are read-only. */
	if (p->reg_flags || p->reg_reserved ||
	    pmu->pmds[p->reg_num].kind == VPMU_REG_VIRT)
		return bad(&p->reg_flags, PFM_REG_RETFL_EINVAL);
	/* A sampling period above the maximum rate (vpmu.h). */
	if (vpmu_is_counter(ctx, p->reg_num) &&
	    vpmu_thr_check_period(ctx, &s->pmc[p->reg_num],
				  (const uint64_t[]){p->reg_value,
						     p->reg_short_reset,
						     p->reg_long_reset},
				  3))
		return bad(&p->reg_flags, PFM_REG_RETFL_EINVAL);
	if (is_live(ctx, s))
		vpmu_ctx_sync(ctx);
	pmd = &s->pmd[p->reg_num];
	vpmu_pmd_set(ctx, s, p->reg_num, p->reg_value);
	pmd->long_reset   = p->reg_long_reset;
	pmd->short_reset  = p->reg_short_reset;
	pmd->ovflsw_thres = p->reg_ovflsw_thres;
	pmd->ovflsw_left  = p->reg_ovflsw_thres;
	pmd->random_mask  = p->reg_random_mask;
	vpmu_pmd_seed(pmd, p->reg_random_seed);
	if (is_live(ctx, s))
		vpmu_ctx_rearm(ctx);
	return 0;
}

int vpmu_ctx_write_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
			int fd, struct pfarg_pmd *pmds, int n)
{
	const struct vpmu_vec_cmd cmd = {pmds, n,         sizeof(*pmds),
					 NULL, write_pmd, NULL};

	return vpmu_ctx_vec_run(d, who, fd, &cmd);
}

/* READ_PMDS collects the live counts once, before the first element. */
static int sync_all(struct vpmu_ctx *ctx)
{
	vpmu_ctx_sync(ctx);
	return 0;
}

/* One READ_PMDS element (3.1.4); reset/mask/seed fields untouched. */
static int read_pmd(struct vpmu_ctx *ctx, void *elem)
{
	struct pfarg_pmd *p             = elem;
	const struct vpmu_pmu_desc *pmu = ctx->dom->pmu;
	const struct vpmu_reg_desc *rd;
	struct vpmu_set *s;
	int ret;

	ret = find_reg(ctx, pmu->impl_pmds, p->reg_num, p->reg_set,
		       &p->reg_flags, &s);
	if (ret)
		return ret;
	if (p->reg_flags)
		return bad(&p->reg_flags, PFM_REG_RETFL_EINVAL);
	rd = &pmu->pmds[p->reg_num];
	if (rd->kind == VPMU_REG_VIRT) {
		p->reg_value          = vpmu_vpmd_read(ctx, rd->idx);
		p->reg_last_reset_val = 0;
		p->reg_ovflsw_thres   = 0;
		return 0;
	}
	p->reg_value          = vpmu_pmd_value(ctx, s, p->reg_num);
	p->reg_last_reset_val = s->pmd[p->reg_num].last_reset;
	/* 3.1.4: overflows left, for counters of OVFL_SWITCH sets only. */
	p->reg_ovflsw_thres = (vpmu_is_counter(ctx, p->reg_num) &&
			       (s->flags & PFM_SETFL_OVFL_SWITCH))
				      ? s->pmd[p->reg_num].ovflsw_left
				      : 0;
	return 0;
}

int vpmu_ctx_read_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
		       int fd, struct pfarg_pmd *pmds, int n)
{
	const struct vpmu_vec_cmd cmd = {pmds,     n,        sizeof(*pmds),
					 sync_all, read_pmd, NULL};

	return vpmu_ctx_vec_run(d, who, fd, &cmd);
}

/*
 * Fill the (n) info elements at (arr) (pfarg_pmcinfo and pfarg_pmdinfo share
 * one layout) from (tab)/(impl). 3.1.13: "there are no input flags"; an
 * unimplemented register is reported with PFM_REG_RETFL_EINVAL (not
 * NOTAVAIL, digest 14.27). Stops at the first bad element.
 */
static int getinfo(struct vpmu_domain *d, const struct vpmu_reg_desc *tab,
		   uint64_t impl, void *arr, int n)
{
	struct pfarg_pmcinfo p;
	int i, ret;

	_Static_assert(sizeof(struct pfarg_pmcinfo) ==
			       sizeof(struct pfarg_pmdinfo),
		       "one layout");
	pthread_mutex_lock(&d->lock);
	ret = vpmu_check_vec(d, arr, n, sizeof(p));
	for (i = 0; !ret && i < n; i++) {
		unsigned char *slot = (unsigned char *)arr + i * sizeof(p);

		memcpy(&p, slot, sizeof(p));
		if (p.reg_flags != 0 || p.reg_num >= VPMU_NR_REGS ||
		    !(impl & VPMU_BIT(p.reg_num))) {
			p.reg_flags = PFM_REG_RETFL_EINVAL;
			ret         = -EINVAL;
		} else {
			p.reg_type      = tab[p.reg_num].type;
			p.reg_def_value = tab[p.reg_num].def_value;
			p.reg_rsvd_mask = tab[p.reg_num].rsvd_mask;
			p.reg_index     = tab[p.reg_num].index;
		}
		memcpy(slot, &p, sizeof(p));
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

int vpmu_getinfo_pmcs(struct vpmu_domain *d, const struct vpmu_caller *who,
		      struct pfarg_pmcinfo *pmcs, int n)
{
	(void)who;
	return getinfo(d, d->pmu->pmcs, d->pmu->impl_pmcs, pmcs, n);
}

int vpmu_getinfo_pmds(struct vpmu_domain *d, const struct vpmu_caller *who,
		      struct pfarg_pmdinfo *pmds, int n)
{
	(void)who;
	return getinfo(d, d->pmu->pmds, d->pmu->impl_pmds, pmds, n);
}
