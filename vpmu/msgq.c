// SPDX-License-Identifier: MIT
/*
 * msgq.c: the bounded FIFO of messages of a context (spec 3.3.1, 3.3.4,
 * 3.3.5). Whole messages only; the policy when it is full is the caller's
 * (overflow.c: drop and count).
 */
#include "vpmu_priv.h"

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
