// SPDX-License-Identifier: MIT
/*
 * reader.c: walk the samples of sampling buffers (spec §3.6.3, §3.6.4),
 * as a tool reading a buffer does, for the format tests.
 *
 * The reader never trusts the buffer: every sample is bounds-checked
 * against the bytes the header says are valid, so a wrong body-size
 * callback or a buffer read while it changes gives -EINVAL, never a read
 * outside the buffer.
 */
#include <errno.h>
#include <string.h>

#include "formats_priv.h"
#include "reader.h"

static void iter_setup(struct vpmu_smpl_iter *it, const void *buf,
		       uint32_t flags, vpmu_smpl_nvals_fn nvals, void *opaque)
{
	memset(it, 0, sizeof(*it));
	it->base   = buf;
	it->flags  = flags;
	it->nvals  = nvals;
	it->opaque = opaque;
}

int vpmu_smpl_iter_default(struct vpmu_smpl_iter *it, const void *buf,
			   size_t size, vpmu_smpl_nvals_fn nvals, void *opaque)
{
	const struct pfm_default_smpl_hdr *h = buf;
	uint64_t count;

	if (!buf || size < sizeof(*h) || !nvals)
		return -EINVAL;
	/* A producer may still be writing: count first, then the bytes. */
	count = __atomic_load_n(&h->hdr_count, __ATOMIC_ACQUIRE);
	if (PFM_VERSION_MAJOR(h->hdr_version) !=
		    PFM_DEFAULT_SMPL_VERSION_MAJOR ||
	    vpmu_smpl_entry_check_flags(h->hdr_flags) ||
	    h->hdr_cur_offs < sizeof(*h) || h->hdr_cur_offs > size)
		return -EINVAL;
	iter_setup(it, buf, h->hdr_flags, nvals, opaque);
	it->off  = sizeof(*h);
	it->end  = h->hdr_cur_offs;
	it->left = count;
	return 0;
}

int vpmu_smpl_iter_nway(struct vpmu_smpl_iter *it, const void *buf, size_t size,
			uint32_t region, vpmu_smpl_nvals_fn nvals, void *opaque)
{
	const struct pvpmu_nway_smpl_hdr *h = buf;
	const struct pvpmu_nway_region *r;

	if (!buf || size < sizeof(*h) || !nvals ||
	    h->nr_regions > PVPMU_NWAY_MAX_REGIONS || region >= h->nr_regions)
		return -EINVAL;
	r = &h->regions[region];
	(void)__atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	if (r->offs < sizeof(*h) || r->cur_offs < r->offs ||
	    r->cur_offs > size || r->cur_offs - r->offs > h->region_size ||
	    vpmu_smpl_entry_check_flags(h->flags))
		return -EINVAL;
	iter_setup(it, buf, h->flags & VPMU_SMPL_ENTRY_FLAGS, nvals, opaque);
	it->off  = r->offs;
	it->end  = r->cur_offs;
	it->left = r->count;
	return 0;
}

int vpmu_smpl_iter_next(struct vpmu_smpl_iter *it, struct vpmu_smpl_sample *s)
{
	size_t hsz = vpmu_smpl_entry_hdr_size(it->flags);
	const unsigned char *p;
	uint16_t set = 0, pmd = 0;
	size_t body;

	if (it->left == 0)
		return 0;
	if (it->off > it->end || it->end - it->off < hsz)
		return -EINVAL;
	p = it->base + it->off;
	memset(s, 0, sizeof(*s));
	if (hsz == sizeof(struct pfm_default_smpl_entry)) {
		s->entry = (const struct pfm_default_smpl_entry *)p;
		s->ip    = s->entry->ip;
		set      = s->entry->set;
		pmd      = s->entry->ovfl_pmd;
	} else if (hsz) {
		memcpy(&s->ip, p, sizeof(s->ip));
	}
	s->nr_values = it->nvals(it->opaque, set, pmd);
	body         = sizeof(pvpmu_u64) * (size_t)s->nr_values;
	if (s->nr_values > VPMU_SMPL_MAX_PMDS || it->end - it->off - hsz < body)
		return -EINVAL;
	s->values = (const pvpmu_u64 *)(p + hsz);
	it->off += hsz + body;
	it->left--;
	return 1;
}

unsigned int vpmu_smpl_nway_full(const void *buf, uint32_t *order,
				 unsigned int max)
{
	const struct pvpmu_nway_smpl_hdr *h = buf;
	uint32_t full[PVPMU_NWAY_MAX_REGIONS], t;
	unsigned int n = 0, i, j;

	for (i = 0; i < h->nr_regions && i < PVPMU_NWAY_MAX_REGIONS; i++) {
		if (__atomic_load_n(&h->regions[i].state, __ATOMIC_ACQUIRE) ==
		    PVPMU_NWAY_REGION_FULL)
			full[n++] = i;
	}
	/* Insertion sort by seq: at most 16 regions. */
	for (i = 1; i < n; i++) {
		t = full[i];
		for (j = i;
		     j > 0 && h->regions[full[j - 1]].seq > h->regions[t].seq;
		     j--)
			full[j] = full[j - 1];
		full[j] = t;
	}
	n = n < max ? n : max;
	if (n)
		memcpy(order, full, n * sizeof(*order));
	return n;
}
