// SPDX-License-Identifier: MIT
/*
 * snapshot_restore.c: a domain's logical PMU back from the blob that
 * snapshot_save.c wrote (vpmu_domain_restore in vpmu.h). Every context is
 * built off the handle table and checked whole (sizes, ranges, formats,
 * cpus) before any is installed, so a bad blob leaves the domain as it
 * was. The layout is in docs/snapshot-format.md, "VPMU section".
 */
#include "cmd_priv.h"
#include "snap_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu_mech.h"

struct snap_err {
	char *buf;
	size_t len;
};

__attribute__((format(printf, 2, 3))) static int refuse(struct snap_err *e,
							const char *fmt, ...)
{
	va_list ap;

	if (e->buf && e->len) {
		va_start(ap, fmt);
		vsnprintf(e->buf, e->len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A context built off the handle table until everything is valid. */
struct snap_ctx {
	struct vpmu_ctx *ctx;
	uint32_t slot;
	uint32_t cpu_index;
	uint16_t active_id;
};

static void free_built(struct vpmu_ctx *c)
{
	if (!c)
		return;
	if (c->has_fmt) {
		c->dom->smpl_used[c->owner == VPMU_OWNER_HOST] -= c->smpl.size;
		vpmu_smpl_buf_free(&c->smpl);
		vpmu_smpl_fmt_put(c->smpl.fmt);
	}
	vpmu_msgq_free(&c->q);
	vpmu_set_free_all(c);
	free(c);
}

static int get_set(struct vpmu_domain *d, struct snap_rd *r, struct vpmu_ctx *c,
		   int handle, struct snap_err *e)
{
	const struct vpmu_pmu_desc *pmu = d->pmu;
	struct vpmu_set *s;
	uint16_t id = snap_get_u16(r);
	unsigned int i;
	int ret;

	if (r->bad)
		return refuse(e, "context %#x: truncated set", handle);
	if (c->nr_sets && c->sets[c->nr_sets - 1]->id >= id)
		return refuse(e, "context %#x: sets out of order at %u", handle,
			      id);
	ret = vpmu_set_add(c, id, &s); /* the count was checked */
	if (ret)
		return ret;
	s->id_next       = snap_get_u16(r);
	s->flags         = snap_get_u32(r);
	s->timeout_ns    = snap_get_u64(r);
	s->timeout_left  = snap_get_u64(r);
	s->switch_ns     = s->timeout_ns; /* the budget starts over */
	s->switch_left   = s->timeout_left;
	s->runs          = snap_get_u64(r);
	s->act_ns        = snap_get_u64(r);
	s->switch_pmds   = snap_get_u64(r);
	s->pending_reset = snap_get_u64(r);
	for (i = 0; i < VPMU_NR_REGS; i++) {
		struct vpmu_pmc *p = &s->pmc[i];

		p->value      = snap_get_u64(r);
		p->flags      = snap_get_u32(r);
		p->reset_pmds = snap_get_u64(r);
		p->smpl_pmds  = snap_get_u64(r);
		p->eventid    = snap_get_u64(r);
		if (r->bad)
			break;
		if (!(pmu->impl_pmcs & VPMU_BIT(i))) {
			if (p->value)
				return refuse(e,
					      "context %#x set %u: PMC%u not "
					      "implemented by %s",
					      handle, id, i, pmu->name);
			continue;
		}
		if (p->value & pmu->pmcs[i].rsvd_mask)
			return refuse(e,
				      "context %#x set %u: PMC%u has reserved "
				      "bits set",
				      handle, id, i);
		if (vpmu_pmc_bind(d, p, i))
			return refuse(e,
				      "context %#x set %u: PMC%u event %#llx "
				      "cannot be counted on this host",
				      handle, id, i,
				      (unsigned long long)(p->value & 0xffff));
	}
	for (i = 0; i < VPMU_NR_REGS; i++) {
		struct vpmu_pmd *p = &s->pmd[i];

		p->hw           = snap_get_u64(r);
		p->sw           = snap_get_u64(r);
		p->long_reset   = snap_get_u64(r);
		p->short_reset  = snap_get_u64(r);
		p->last_reset   = snap_get_u64(r);
		p->ovflsw_thres = snap_get_u64(r);
		p->ovflsw_left  = snap_get_u64(r);
		p->random_mask  = snap_get_u64(r);
		p->random_seed  = snap_get_u32(r);
		p->prng         = snap_get_u32(r);
		if (!r->bad && i < pmu->nr_counters && (p->hw & ~d->width_mask))
			return refuse(e,
				      "context %#x set %u: PMD%u exceeds the "
				      "%u-bit counter width",
				      handle, id, i,
				      d->cfg.limits.counter_width);
	}
	if (r->bad)
		return refuse(e, "context %#x set %u: truncated", handle, id);
	return 0;
}

static int get_fmt(struct vpmu_domain *d, struct snap_rd *r, struct vpmu_ctx *c,
		   struct snap_err *e)
{
	const struct vpmu_smpl_fmt *fmt;
	uint8_t uuid[16];
	uint64_t size, max, *used;
	const void *bytes;
	bool host = c->owner == VPMU_OWNER_HOST;

	snap_get(r, uuid, sizeof(uuid));
	c->smpl.ctx_flags = snap_get_u32(r);
	c->smpl.num_pmds  = snap_get_u16(r);
	size              = snap_get_u64(r);
	if (r->bad)
		return refuse(e, "context %#x: truncated sampling buffer",
			      c->handle);
	if (!size || size % VPMU_PAGE_SIZE || size > r->len - r->off)
		return refuse(e, "context %#x: bad sampling buffer size %llu",
			      c->handle, (unsigned long long)size);
	max  = host ? d->cfg.limits.host_smpl_mem_max
		    : d->cfg.limits.smpl_mem_max;
	used = &d->smpl_used[host];
	if (size > max - (*used < max ? *used : max))
		return refuse(e,
			      "context %#x: sampling buffer of %llu bytes is "
			      "over this VM's limit",
			      c->handle, (unsigned long long)size);
	if (vpmu_smpl_fmt_find(uuid, &fmt))
		return refuse(e,
			      "context %#x: its sampling format is not "
			      "registered here",
			      c->handle);
	if (vpmu_smpl_buf_alloc(&c->smpl, size)) {
		vpmu_smpl_fmt_put(fmt);
		return -ENOMEM;
	}
	bytes = snap_get_ptr(r, size);
	memcpy(c->smpl.base, bytes, size);
	c->smpl.fmt = fmt;
	c->has_fmt  = true;
	*used += size;
	return 0;
}

static bool slot_in_range(const struct vpmu_domain *d, enum vpmu_owner o,
			  uint32_t slot)
{
	const struct vpmu_limits *l = &d->cfg.limits;

	if (o == VPMU_OWNER_GUEST)
		return slot < l->max_contexts;
	if (o == VPMU_OWNER_ARCH)
		return slot >= l->max_contexts + l->host_contexts &&
		       slot < vpmu_nr_slots(d);
	return false;
}

static int get_ctx(struct vpmu_domain *d, struct snap_rd *r,
		   struct snap_ctx *out, struct snap_err *e)
{
	struct vpmu_ctx *c;
	uint32_t i, nr, handle, owner;
	int ret;

	handle = snap_get_u32(r);
	owner  = snap_get_u32(r);
	if (r->bad)
		return refuse(e, "truncated context");
	out->slot = handle & 0xffff;
	if ((owner != VPMU_OWNER_GUEST && owner != VPMU_OWNER_ARCH) ||
	    (int)handle < 0 || !slot_in_range(d, owner, out->slot))
		return refuse(e, "context %#x: bad owner %u or handle slot",
			      handle, owner);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	out->ctx          = c;
	c->dom            = d;
	c->handle         = (int)handle;
	c->owner          = owner;
	c->flags          = snap_get_u32(r);
	c->state          = snap_get_u32(r);
	c->is_active      = snap_get_u8(r);
	c->is_masked      = snap_get_u8(r);
	c->is_self        = snap_get_u8(r);
	c->switch_pending = snap_get_u8(r);
	c->is_blocked     = snap_get_u8(r);
	c->load_pid       = snap_get_u32(r);
	out->cpu_index    = snap_get_u32(r);
	out->active_id    = snap_get_u16(r);
	c->ovfl_pending   = snap_get_u64(r);
	for (i = 0; i < 8; i++)
		c->vpmd[i] = snap_get_u64(r);
	c->enabled_ns = snap_get_u64(r);
	c->thr_start  = snap_get_u64(r);
	c->thr_count  = snap_get_u64(r);
	snap_get(r, &c->st, sizeof(c->st));
	if (r->bad)
		return refuse(e, "context %#x: truncated", handle);
	if (c->state != VPMU_CTX_UNLOADED && c->state != VPMU_CTX_LOADED)
		return refuse(e, "context %#x: bad state %u", handle,
			      (unsigned int)c->state);
	if (out->cpu_index != SNAP_NO_CPU &&
	    (c->state != VPMU_CTX_LOADED || out->cpu_index >= VPMU_MAX_CPUS ||
	     !d->cpus[out->cpu_index]))
		return refuse(e,
			      "context %#x: loaded on vCPU %u, which this VM "
			      "does not have",
			      handle, out->cpu_index);
	ret = vpmu_msgq_init(&c->q, d->cfg.limits.msgq_depth);
	if (ret)
		return ret;
	nr = snap_get_u32(r);
	if (nr > c->q.depth)
		return refuse(e, "context %#x: %u messages, queue depth %u",
			      handle, nr, c->q.depth);
	for (i = 0; i < nr; i++)
		snap_get(r, &c->q.msgs[i], sizeof(union pfm_msg));
	c->q.count = nr;
	if (snap_get_u8(r)) {
		ret = get_fmt(d, r, c, e);
		if (ret)
			return ret;
	}
	nr = snap_get_u32(r);
	if (r->bad || nr == 0 || nr > d->cfg.limits.max_sets)
		return refuse(e, "context %#x: bad set count %u", handle, nr);
	for (i = 0; i < nr; i++) {
		ret = get_set(d, r, c, (int)handle, e);
		if (ret)
			return ret;
	}
	c->active = vpmu_set_find(c, out->active_id);
	if (!vpmu_set_find(c, 0) || !c->active)
		return refuse(e, "context %#x: set0 or active set %u missing",
			      handle, out->active_id);
	/* The interval in force (the guest's shared page). */
	c->st.switch_ns = (c->active->flags & PFM_SETFL_TIME_SWITCH)
				  ? c->active->switch_ns
				  : 0;
	return 0;
}

struct snap_hdr {
	uint32_t nr_cpus;
	uint32_t nr_ctx;
	uint32_t gen;
};

static int get_header(struct vpmu_domain *d, struct snap_rd *r,
		      struct snap_hdr *h, struct snap_err *e)
{
	const struct vpmu_limits *l = &d->cfg.limits;
	char name[SNAP_NAME_LEN];
	uint32_t v[4];

	if (snap_get_u32(r) != SNAP_MAGIC)
		return refuse(e, "not a libvpmu state blob");
	v[0] = snap_get_u32(r);
	if (v[0] != VPMU_SNAP_STATE_VERSION)
		return refuse(e, "libvpmu state version %u, expected %u", v[0],
			      VPMU_SNAP_STATE_VERSION);
	snap_get(r, name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	if (strcmp(name, d->pmu->name) != 0)
		return refuse(e, "logical PMU \"%s\", this VM has \"%s\"", name,
			      d->pmu->name);
	v[0] = snap_get_u32(r);
	v[1] = snap_get_u32(r);
	v[2] = snap_get_u32(r);
	v[3] = snap_get_u32(r);
	if (v[0] != l->counter_width)
		return refuse(e, "counter width %u, this VM emulates %u", v[0],
			      l->counter_width);
	if (v[1] != l->max_contexts || v[2] != l->host_contexts ||
	    v[3] != l->arch_contexts)
		return refuse(e,
			      "context limits %u/%u/%u differ from this VM's "
			      "%u/%u/%u",
			      v[1], v[2], v[3], l->max_contexts,
			      l->host_contexts, l->arch_contexts);
	h->gen     = snap_get_u32(r);
	h->nr_cpus = snap_get_u32(r);
	if (r->bad)
		return refuse(e, "truncated header");
	return 0;
}

static int get_cpus(struct vpmu_domain *d, struct snap_rd *r,
		    const struct snap_hdr *h, uint64_t *run_ns, uint8_t *idle,
		    struct snap_err *e)
{
	uint32_t i, idx;

	if (h->nr_cpus > VPMU_MAX_CPUS)
		return refuse(e, "%u vCPUs", h->nr_cpus);
	for (i = 0; i < h->nr_cpus; i++) {
		idx = snap_get_u32(r);
		if (r->bad)
			return refuse(e, "truncated vCPU list");
		if (idx >= d->cpus_end || !d->cpus[idx])
			return refuse(e, "vCPU %u: this VM does not have it",
				      idx);
		run_ns[idx] = snap_get_u64(r);
		idle[idx]   = snap_get_u8(r);
	}
	return r->bad ? refuse(e, "truncated vCPU list") : 0;
}

/* Everything parsed and valid: swap the contexts in and load them. */
static int install(struct vpmu_domain *d, struct snap_ctx *sc, uint32_t nr,
		   const uint64_t *run_ns, const uint8_t *idle,
		   const struct snap_hdr *h, struct snap_err *e)
{
	uint32_t i;
	int ret;

	for (i = 0; i < vpmu_nr_slots(d); i++) {
		struct vpmu_ctx *c = d->ctx[i];

		if (c && c->owner != VPMU_OWNER_HOST)
			vpmu_ctx_free(c);
	}
	for (i = 0; i < d->cpus_end; i++) { /* none above: NULL */
		if (d->cpus[i] && run_ns[i] != UINT64_MAX) {
			d->cpus[i]->run_ns  = run_ns[i];
			d->cpus[i]->is_idle = idle[i];
		}
	}
	d->gen = h->gen;
	for (i = 0; i < nr; i++) {
		d->ctx[sc[i].slot] = sc[i].ctx;
		if (sc[i].slot >= d->ctx_end)
			d->ctx_end = sc[i].slot + 1;
		d->nr_ctx++;
		sc[i].ctx = NULL;
	}
	/*
	 * The table owns them now. Opening events is the one step that can
	 * still fail (a backend refusing on this host): the caller then
	 * throws the domain away, its VM never runs.
	 */
	for (i = 0; i < nr; i++) {
		struct vpmu_ctx *c = d->ctx[sc[i].slot];

		if (sc[i].cpu_index == SNAP_NO_CPU)
			continue;
		ret = vpmu_cpu_attach(d->cpus[sc[i].cpu_index], c);
		if (ret)
			return refuse(e,
				      "context %#x: its events cannot be "
				      "opened on vCPU %u (%d)",
				      c->handle, sc[i].cpu_index, ret);
	}
	return 0;
}

int vpmu_domain_restore(struct vpmu_domain *d, const void *data, size_t len,
			char *err, size_t errlen)
{
	struct snap_rd r    = {.p = data, .len = len};
	struct snap_err e   = {.buf = err, .len = errlen};
	struct snap_ctx *sc = NULL;
	struct snap_hdr h   = {0};
	uint64_t *run_ns    = NULL;
	uint8_t *idle       = NULL;
	uint32_t i, nr = 0, nr_cpus;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!data)
		return refuse(&e, "no state");
	pthread_mutex_lock(&d->lock);
	/* Per vCPU the domain has (up to cpus_end), not VPMU_MAX_CPUS. */
	nr_cpus = d->cpus_end ? d->cpus_end : 1;
	run_ns  = malloc(nr_cpus * sizeof(*run_ns));
	idle    = calloc(nr_cpus, 1);
	ret     = run_ns && idle ? 0 : -ENOMEM;
	if (ret)
		goto out;
	memset(run_ns, 0xff, nr_cpus * sizeof(*run_ns));
	ret = get_header(d, &r, &h, &e);
	if (!ret)
		ret = get_cpus(d, &r, &h, run_ns, idle, &e);
	if (ret)
		goto out;
	h.nr_ctx = snap_get_u32(&r);
	if (r.bad || h.nr_ctx > vpmu_nr_slots(d)) {
		ret = refuse(&e, "bad context count %u", h.nr_ctx);
		goto out;
	}
	sc = calloc(h.nr_ctx ? h.nr_ctx : 1, sizeof(*sc));
	if (!sc) {
		ret = -ENOMEM;
		goto out;
	}
	for (nr = 0; nr < h.nr_ctx; nr++) {
		ret = get_ctx(d, &r, &sc[nr], &e);
		if (ret) {
			nr++; /* free the partial one too */
			goto out;
		}
		for (i = 0; i < nr; i++) {
			if (sc[i].slot == sc[nr].slot) {
				nr++;
				ret = refuse(&e, "context slot %u twice",
					     sc[i].slot);
				goto out;
			}
		}
		if (d->ctx[sc[nr].slot] &&
		    d->ctx[sc[nr].slot]->owner == VPMU_OWNER_HOST) {
			nr++;
			ret = refuse(&e, "context slot %u is taken",
				     sc[nr - 1].slot);
			goto out;
		}
	}
	if (r.off != r.len) {
		ret = refuse(&e, "%zu trailing bytes", r.len - r.off);
		goto out;
	}
	ret = install(d, sc, nr, run_ns, idle, &h, &e);
out:
	for (i = 0; sc && i < nr; i++)
		free_built(sc[i].ctx);
	pthread_mutex_unlock(&d->lock);
	free(sc);
	free(run_ns);
	free(idle);
	return ret;
}
