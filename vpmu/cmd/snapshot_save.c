// SPDX-License-Identifier: MIT
/*
 * snapshot_save.c: the whole logical PMU of a domain as a byte blob
 * (vpmu_domain_save in vpmu.h; snapshot_restore.c reads it back). The blob
 * layout is in docs/snapshot-format.md, "VPMU section".
 *
 * What is kept, per guest and architectural context: the handle, flags and
 * state bits (active, masked, blocked, pending switch and overflows), every
 * set with its PMCs, its PMDs' 64-bit values (hw and sw parts of the 64-bit
 * emulation), reset values, randomization masks, seeds and PRNG state, run
 * counts, active time and remaining timeout, the message queue in order,
 * the sampling buffer (its format's UUID and every byte: the formats keep
 * their state in the buffer), the virtual PMD snapshot, statistics; per
 * cpu: its guest run time. Backend events are not state: a restored loaded
 * context re-opens them at its cpu's restored run time, so counting goes on
 * from the saved 64-bit values. Host (operator) contexts are not saved:
 * their owner is a client of the old VMM process.
 */
#include "cmd_priv.h"
#include "snap_io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu_mech.h"

static void put_set(struct snap_wr *w, const struct vpmu_set *s)
{
	unsigned int i;

	snap_put_u16(w, s->id);
	snap_put_u16(w, s->id_next);
	snap_put_u32(w, s->flags);
	snap_put_u64(w, s->timeout_ns);
	snap_put_u64(w, s->timeout_left);
	snap_put_u64(w, s->runs);
	snap_put_u64(w, s->act_ns);
	snap_put_u64(w, s->switch_pmds);
	snap_put_u64(w, s->pending_reset);
	for (i = 0; i < VPMU_NR_REGS; i++) {
		const struct vpmu_pmc *c = &s->pmc[i];

		snap_put_u64(w, c->value);
		snap_put_u32(w, c->flags);
		snap_put_u64(w, c->reset_pmds);
		snap_put_u64(w, c->smpl_pmds);
		snap_put_u64(w, c->eventid);
	}
	for (i = 0; i < VPMU_NR_REGS; i++) {
		const struct vpmu_pmd *p = &s->pmd[i];

		snap_put_u64(w, p->hw);
		snap_put_u64(w, p->sw);
		snap_put_u64(w, p->long_reset);
		snap_put_u64(w, p->short_reset);
		snap_put_u64(w, p->last_reset);
		snap_put_u64(w, p->ovflsw_thres);
		snap_put_u64(w, p->ovflsw_left);
		snap_put_u64(w, p->random_mask);
		snap_put_u32(w, p->random_seed);
		snap_put_u32(w, p->prng);
	}
}

static void put_ctx(struct snap_wr *w, const struct vpmu_ctx *c)
{
	unsigned int i;

	snap_put_u32(w, (uint32_t)c->handle);
	snap_put_u32(w, c->owner);
	snap_put_u32(w, c->flags);
	snap_put_u32(w, c->state);
	snap_put_u8(w, c->is_active);
	snap_put_u8(w, c->is_masked);
	snap_put_u8(w, c->is_self);
	snap_put_u8(w, c->switch_pending);
	snap_put_u8(w, c->is_blocked);
	snap_put_u32(w, c->load_pid);
	snap_put_u32(w, c->cpu ? c->cpu->index : SNAP_NO_CPU);
	snap_put_u16(w, c->active->id);
	snap_put_u64(w, c->ovfl_pending);
	for (i = 0; i < 8; i++)
		snap_put_u64(w, c->vpmd[i]);
	snap_put_u64(w, c->enabled_ns);
	snap_put_u64(w, c->thr_start);
	snap_put_u64(w, c->thr_count);
	snap_put(w, &c->st, sizeof(c->st));
	/* Messages, oldest first (3.3.3: read from the head). */
	snap_put_u32(w, c->q.count);
	for (i = 0; i < c->q.count; i++)
		snap_put(w, &c->q.msgs[(c->q.head + i) % c->q.depth],
			 sizeof(union pfm_msg));
	snap_put_u8(w, c->has_fmt);
	if (c->has_fmt) {
		snap_put(w, c->smpl.fmt->uuid, 16);
		snap_put_u32(w, c->smpl.ctx_flags);
		snap_put_u16(w, c->smpl.num_pmds);
		snap_put_u64(w, c->smpl.size);
		snap_put(w, c->smpl.base, c->smpl.size);
	}
	snap_put_u32(w, c->nr_sets);
	for (i = 0; i < c->nr_sets; i++)
		put_set(w, c->sets[i]);
}

static void put_name(struct snap_wr *w, const char *name)
{
	char buf[SNAP_NAME_LEN] = {0};

	snprintf(buf, sizeof(buf), "%s", name ? name : "");
	snap_put(w, buf, sizeof(buf));
}

int vpmu_domain_save(struct vpmu_domain *d, void **data, size_t *len,
		     unsigned int *dropped)
{
	const struct vpmu_limits *l = &d->cfg.limits;
	struct snap_wr w            = {0};
	uint32_t i, nr = 0, nr_cpus = 0, host = 0;
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < vpmu_nr_slots(d); i++) {
		struct vpmu_ctx *c = d->ctx[i];

		if (!c)
			continue;
		if (c->owner == VPMU_OWNER_HOST) {
			host++;
			continue;
		}
		/* A format with host-private state cannot be written out. */
		if (c->has_fmt && c->smpl.priv) {
			ret = -ENOTSUP;
			goto out_unlock;
		}
		vpmu_ctx_sync(c); /* fold in the last backend deltas */
		nr++;
	}
	for (i = 0; i < VPMU_MAX_CPUS; i++)
		nr_cpus += d->cpus[i] != NULL;
	snap_put_u32(&w, SNAP_MAGIC);
	snap_put_u32(&w, VPMU_SNAP_STATE_VERSION);
	put_name(&w, d->pmu->name);
	snap_put_u32(&w, l->counter_width);
	snap_put_u32(&w, l->max_contexts);
	snap_put_u32(&w, l->host_contexts);
	snap_put_u32(&w, l->arch_contexts);
	snap_put_u32(&w, d->gen);
	snap_put_u32(&w, nr_cpus);
	for (i = 0; i < VPMU_MAX_CPUS; i++) {
		if (!d->cpus[i])
			continue;
		snap_put_u32(&w, i);
		snap_put_u64(&w, d->cpus[i]->run_ns);
		snap_put_u8(&w, d->cpus[i]->is_idle);
	}
	snap_put_u32(&w, nr);
	for (i = 0; i < vpmu_nr_slots(d); i++) {
		if (d->ctx[i] && d->ctx[i]->owner != VPMU_OWNER_HOST)
			put_ctx(&w, d->ctx[i]);
	}
	if (w.nomem) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	*data = w.buf;
	*len  = w.len;
	w.buf = NULL;
	if (dropped)
		*dropped = host;
out_unlock:
	pthread_mutex_unlock(&d->lock);
	free(w.buf);
	return ret;
}
