// SPDX-License-Identifier: MIT
/*
 * sets.c: the event set commands (spec 3.1.10-3.1.12):
 * PFM_CREATE_EVTSETS, PFM_DELETE_EVTSETS and PFM_GETINFO_EVTSETS, each a
 * vector run with per-element error flags. The sets themselves are in
 * mech/sets.c.
 */
#include "cmd_priv.h"

#include <errno.h>

#include "vpmu_mech.h"

#define NS_PER_SEC 1000000000ULL
#define SETFL_DEFINED                                                          \
	(PFM_SETFL_OVFL_SWITCH | PFM_SETFL_TIME_SWITCH | PFM_SETFL_EXPL_NEXT | \
	 PFM_SETFL_EXCL_IDLE)

/* Effective timeout: the request rounded up to the granularity (3.1.10). */
static int set_timeout(struct vpmu_ctx *ctx, struct pfarg_setdesc *sd,
		       uint64_t *out)
{
	uint64_t gran = ctx->dom->cfg.limits.timer_gran_ns, ns;

	*out = 0;
	if (!(sd->set_flags & PFM_SETFL_TIME_SWITCH))
		return 0;
	if (sd->set_timeout.tv_nsec >= NS_PER_SEC ||
	    sd->set_timeout.tv_sec > 1000000000ULL)
		return -EINVAL;
	ns = sd->set_timeout.tv_sec * NS_PER_SEC + sd->set_timeout.tv_nsec;
	if (ns == 0)
		return -EINVAL;
	ns                      = (ns + gran - 1) / gran * gran;
	*out                    = ns;
	sd->set_timeout.tv_sec  = ns / NS_PER_SEC;
	sd->set_timeout.tv_nsec = ns % NS_PER_SEC;
	return 0;
}

/*
 * 3.1.10: only defined flags; one switching method; no set but set0 with
 * a PFM_FMTFL_NOSET format. (EXCL_IDLE on a per-thread context is
 * accepted and ignored, as the spec says.)
 */
static int check_setdesc(const struct vpmu_ctx *ctx,
			 const struct pfarg_setdesc *sd)
{
	uint32_t f = sd->set_flags;

	if (f & ~SETFL_DEFINED)
		return -EINVAL;
	/* 3.7.6: only one switching method per set. */
	if ((f & PFM_SETFL_OVFL_SWITCH) && (f & PFM_SETFL_TIME_SWITCH))
		return -EINVAL;
	if (sd->set_id != 0 && ctx->has_fmt &&
	    (ctx->smpl.fmt->flags & VPMU_SMPL_FMTFL_NOSET))
		return -EINVAL;
	return 0;
}

/* 3.1.10, 3.1.11: sets are created and deleted only while detached. */
static int unloaded(struct vpmu_ctx *ctx)
{
	return ctx->state != VPMU_CTX_UNLOADED ? -EBUSY : 0;
}

/*
 * Create or modify one set (3.1.10 "If the set already exists, its
 * properties are modified"). Nothing changes if the element is invalid.
 */
static int create_one(struct vpmu_ctx *ctx, void *elem)
{
	struct pfarg_setdesc *sd = elem;
	struct vpmu_set *s;
	uint64_t timeout;
	int ret;

	ret = check_setdesc(ctx, sd);
	if (!ret)
		ret = set_timeout(ctx, sd, &timeout);
	if (ret) {
		sd->set_flags |= PFM_SET_RETFL_EINVAL;
		return ret;
	}
	s = vpmu_set_find(ctx, sd->set_id);
	if (!s) {
		ret = vpmu_set_add(ctx, sd->set_id, &s);
		if (ret)
			return ret;
	}
	s->flags        = sd->set_flags;
	s->id_next      = sd->set_id_next;
	s->timeout_ns   = timeout;
	s->timeout_left = timeout;
	s->switch_ns    = timeout;
	s->switch_left  = timeout;
	return 0;
}

int vpmu_ctx_create_evtsets(struct vpmu_domain *d,
			    const struct vpmu_caller *who, int fd,
			    struct pfarg_setdesc *sets, int n)
{
	const struct vpmu_vec_cmd cmd = {sets,     n,          sizeof(*sets),
					 unloaded, create_one, NULL};

	return vpmu_ctx_vec_run(d, who, fd, &cmd);
}

static int delete_one(struct vpmu_ctx *ctx, void *elem)
{
	struct pfarg_setdesc *sd = elem;
	struct vpmu_set *s;

	/* 3.1.11: no input flags; set0 cannot be deleted. */
	if (sd->set_flags != 0 || sd->set_id == 0) {
		sd->set_flags |= PFM_SET_RETFL_EINVAL;
		return -EINVAL;
	}
	s = vpmu_set_find(ctx, sd->set_id);
	if (!s) {
		sd->set_flags |= PFM_SET_RETFL_NOSET;
		return -EINVAL;
	}
	vpmu_set_remove(ctx, s);
	return 0;
}

int vpmu_ctx_delete_evtsets(struct vpmu_domain *d,
			    const struct vpmu_caller *who, int fd,
			    struct pfarg_setdesc *sets, int n)
{
	const struct vpmu_vec_cmd cmd = {sets,     n,          sizeof(*sets),
					 unloaded, delete_one, NULL};

	return vpmu_ctx_vec_run(d, who, fd, &cmd);
}

static void ns_to_ts(uint64_t ns, struct pfarg_timespec *ts)
{
	ts->tv_sec  = ns / NS_PER_SEC;
	ts->tv_nsec = ns % NS_PER_SEC;
}

/*
 * 3.1.12. set_id_next reports the set actually switched to (explicit or
 * by order); set_timeout the remainder (0 unless time-switched).
 */
static int info_one(struct vpmu_ctx *ctx, void *elem)
{
	struct pfarg_setinfo *si = elem;
	struct vpmu_set *s, *next;

	if (si->set_flags != 0) {
		si->set_flags = PFM_SET_RETFL_EINVAL;
		return -EINVAL;
	}
	s = vpmu_set_find(ctx, si->set_id);
	if (!s) {
		si->set_flags = PFM_SET_RETFL_NOSET;
		return -EINVAL;
	}
	next                   = vpmu_set_next(ctx, s);
	si->set_id_next        = next ? next->id : s->id_next;
	si->set_flags          = s->flags;
	si->set_switch_pmds[0] = s->switch_pmds;
	si->set_runs           = s->runs;
	ns_to_ts((s->flags & PFM_SETFL_TIME_SWITCH) ? s->timeout_left : 0,
		 &si->set_timeout);
	ns_to_ts(s->act_ns, &si->set_act_duration);
	return 0;
}

int vpmu_ctx_getinfo_evtsets(struct vpmu_domain *d,
			     const struct vpmu_caller *who, int fd,
			     struct pfarg_setinfo *info, int n)
{
	const struct vpmu_vec_cmd cmd = {info, n,        sizeof(*info),
					 NULL, info_one, NULL};

	return vpmu_ctx_vec_run(d, who, fd, &cmd);
}
