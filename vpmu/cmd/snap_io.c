// SPDX-License-Identifier: MIT
/*
 * snap_io.c: the byte cursor of the libvpmu state blob (snap_io.h).
 */
#include "snap_io.h"

#include <stdlib.h>
#include <string.h>

void snap_put(struct snap_wr *w, const void *src, size_t n)
{
	unsigned char *nb;
	size_t cap;

	if (w->nomem)
		return;
	if (n > w->cap - w->len) {
		cap = w->cap ? w->cap : 4096;
		while (cap - w->len < n)
			cap *= 2;
		nb = realloc(w->buf, cap);
		if (!nb) {
			w->nomem = true;
			return;
		}
		w->buf = nb;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, src, n);
	w->len += n;
}

const void *snap_get_ptr(struct snap_rd *r, size_t n)
{
	const void *p;

	if (r->bad || n > r->len - r->off) {
		r->bad = true;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

void snap_get(struct snap_rd *r, void *dst, size_t n)
{
	const void *p = snap_get_ptr(r, n);

	if (p)
		memcpy(dst, p, n);
	else
		memset(dst, 0, n);
}
