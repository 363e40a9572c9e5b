// SPDX-License-Identifier: MIT
/*
 * msg.c: the messages of a context: the bounded FIFO (spec 3.3.1, 3.3.4,
 * 3.3.5), whole messages only, and the notification that appends one and
 * calls the VMM (3.3.7, 3.3.8; a full queue drops and counts).
 */
#include "vpmu_mech.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vpmu_msgq_init(struct vpmu_msgq *q, uint32_t depth)
{
	if (depth == 0)
		return -EINVAL;
	q->msgs = calloc(depth, sizeof(*q->msgs));
	if (!q->msgs)
		return -ENOMEM;
	q->depth = depth;
	q->head  = 0;
	q->count = 0;
	return 0;
}

void vpmu_msgq_free(struct vpmu_msgq *q)
{
	free(q->msgs);
	q->msgs  = NULL;
	q->depth = 0;
	q->count = 0;
}

/* 3.3.5: every LOAD deletes unconsumed messages. */
void vpmu_msgq_reset(struct vpmu_msgq *q)
{
	q->head  = 0;
	q->count = 0;
}

/* Append (m) at the tail; -ENOSPC if the queue is full. */
int vpmu_msgq_push(struct vpmu_msgq *q, const union pfm_msg *m)
{
	if (q->count == q->depth)
		return -ENOSPC;
	q->msgs[(q->head + q->count) % q->depth] = *m;
	q->count++;
	return 0;
}

/* Remove up to (max) messages from the head into (out); returns how many. */
unsigned int vpmu_msgq_pop(struct vpmu_msgq *q, union pfm_msg *out,
			   unsigned int max)
{
	unsigned int n = 0;

	while (n < max && q->count) {
		out[n++] = q->msgs[q->head];
		q->head  = (q->head + 1) % q->depth;
		q->count--;
	}
	return n;
}

/*
 * Queue a message of (type) (none for type 0, nor for overflows with
 * PFM_FL_OVFL_NO_MSG, 3.3.7) and run the notification callback; the message is
 * appended before the callback (3.3.8). A full queue drops the message
 * (vpmu.h).
 */
void vpmu_ctx_notify(struct vpmu_ctx *ctx, uint32_t type, uint64_t ovfl,
		     uint32_t flags)
{
	struct vpmu_domain *d = ctx->dom;
	union pfm_msg m;
	struct vpmu_notify n = {
		.handle    = ctx->handle,
		.owner     = ctx->owner,
		.cpu_index = ctx->cpu ? ctx->cpu->index : UINT32_MAX,
		.msg_type  = type,
		.load_pid  = ctx->load_pid,
		.ovfl_pmds = type == PFM_MSG_OVFL ? ovfl : 0,
	};

	bool has_msg = type == PFM_MSG_OVFL ? !(ctx->flags & PFM_FL_OVFL_NO_MSG)
					    : type != 0;

	if (has_msg) {
		memset(&m, 0, sizeof(m));
		m.pfm_ovfl_msg.msg_type = type;
		if (type == PFM_MSG_OVFL) {
			m.pfm_ovfl_msg.msg_active_set   = ctx->active->id;
			m.pfm_ovfl_msg.msg_ovfl_pmds[0] = ovfl;
			m.pfm_ovfl_msg.msg_tstamp =
				ctx->cpu ? ctx->cpu->run_ns : 0;
		}
		if (vpmu_msgq_push(&ctx->q, &m)) {
			ctx->st.nr_msg_lost++;
			flags |= VPMU_NOTIFY_LOST;
		} else {
			flags |= VPMU_NOTIFY_MSG;
		}
	}
	ctx->st.nr_notify++;
	n.flags = flags;
	if (d->cfg.notify)
		d->cfg.notify(d->cfg.notify_opaque, &n);
}
