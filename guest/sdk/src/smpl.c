// SPDX-License-Identifier: MIT
/*
 * smpl.c: iteration over the samples of a default-format buffer (abi.h
 * section 7.1, spec 3.6). The buffer is read-only to the guest but the
 * host may write it while monitoring is not masked, so the header is
 * copied once, every sample header is copied before use, and every bound
 * comes from the caller's (size), never from the buffer alone.
 */
#include "sdk_priv.h"

static unsigned int popcount64(pvpmu_u64 x)
{
	unsigned int n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

static void copy_bytes(void *dst, const void *src, unsigned int n)
{
	const volatile pvpmu_u8 *s = src;
	pvpmu_u8 *d                = dst;

	while (n--)
		*d++ = *s++;
}

/* Sample header size for (flags); -1 for a bad combination. */
static int entry_size(pvpmu_u32 flags)
{
	if ((flags & PFM_DFL_SMPL_NO_HDR) && (flags & PFM_DFL_SMPL_IIP_HDR))
		return -1;
	if (flags & PFM_DFL_SMPL_NO_HDR)
		return 0;
	if (flags & PFM_DFL_SMPL_IIP_HDR)
		return sizeof(pvpmu_u64);
	return sizeof(struct pfm_default_smpl_entry);
}

int pvpmu_smpl_iter_init(struct pvpmu_smpl_iter *it, const void *buf,
			 pvpmu_u64 size, pvpmu_smpl_pmds_fn_t fn, void *opaque)
{
	struct pfm_default_smpl_hdr *h;
	pvpmu_u64 end;

	if (!it || !buf)
		return -PVPMU_EFAULT;
	*it = (struct pvpmu_smpl_iter){.buf = buf, .fn = fn, .opaque = opaque};
	h   = &it->hdr;
	if (size < sizeof(*h))
		return -PVPMU_EINVAL;
	copy_bytes(h, buf, sizeof(*h));
	if ((h->hdr_version >> 16) != PFM_DEFAULT_SMPL_VERSION_MAJOR)
		return -PVPMU_EINVAL;
	if (entry_size(h->hdr_flags) < 0)
		return -PVPMU_EINVAL;
	it->flags      = h->hdr_flags;
	it->entry_size = (pvpmu_u32)entry_size(h->hdr_flags);
	/* Samples end at hdr_cur_offs, inside hdr_buf_size and (size). */
	end = h->hdr_cur_offs;
	if (end > h->hdr_buf_size)
		end = h->hdr_buf_size;
	if (end > size)
		end = size;
	it->end  = end < sizeof(*h) ? sizeof(*h) : end;
	it->offs = sizeof(*h);
	it->left = h->hdr_count;
	return 0;
}

int pvpmu_smpl_iter_next(struct pvpmu_smpl_iter *it, struct pvpmu_smpl *s)
{
	pvpmu_u16 set = 0xffff, pmd = 0xffff;
	pvpmu_u64 room, need;

	if (!it->left || it->offs >= it->end)
		return 0;
	room = it->end - it->offs;
	if (room < it->entry_size)
		goto out_corrupt;
	*s = (struct pvpmu_smpl){.offs = it->offs};
	if (it->entry_size == sizeof(s->entry)) {
		copy_bytes(&s->entry, it->buf + it->offs, sizeof(s->entry));
		set = s->entry.set;
		pmd = s->entry.ovfl_pmd;
	} else if (it->entry_size) {
		copy_bytes(&s->entry.ip, it->buf + it->offs,
			   sizeof(s->entry.ip));
	}
	s->smpl_pmds = it->fn ? it->fn(it->opaque, set, pmd) : 0;
	s->nr_body   = popcount64(s->smpl_pmds);
	need         = it->entry_size + 8ULL * s->nr_body;
	if (need == 0 || room < need)
		goto out_corrupt;
	s->body = (const pvpmu_u64 *)(it->buf + it->offs + it->entry_size);
	it->offs += need;
	it->left--;
	return 1;

out_corrupt:
	it->left = 0;
	return -PVPMU_EFAULT;
}

/* Copy the n-way header's fixed part and check it against (size). */
static int nway_hdr(const void *buf, pvpmu_u64 size,
		    struct pvpmu_nway_smpl_hdr *h)
{
	if (!buf)
		return -PVPMU_EFAULT;
	if (size < sizeof(*h))
		return -PVPMU_EINVAL;
	copy_bytes(h, buf, sizeof(*h));
	if ((h->version >> 16) != (PVPMU_NWAY_SMPL_VERSION >> 16) ||
	    h->nr_regions > PVPMU_NWAY_MAX_REGIONS || entry_size(h->flags) < 0)
		return -PVPMU_EINVAL;
	/* Region states are published with release (abi.h 7.2). */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return 0;
}

int pvpmu_nway_full(const void *buf, pvpmu_u64 size, unsigned int *order,
		    unsigned int max)
{
	unsigned int full[PVPMU_NWAY_MAX_REGIONS], n = 0, i, j, t;
	struct pvpmu_nway_smpl_hdr h;
	int ret = nway_hdr(buf, size, &h);

	if (ret)
		return ret;
	for (i = 0; i < h.nr_regions; i++) {
		if (h.regions[i].state == PVPMU_NWAY_REGION_FULL)
			full[n++] = i;
	}
	/* Oldest first: insertion sort by seq (16 regions at most). */
	for (i = 1; i < n; i++) {
		t = full[i];
		for (j = i;
		     j > 0 && h.regions[full[j - 1]].seq > h.regions[t].seq;
		     j--)
			full[j] = full[j - 1];
		full[j] = t;
	}
	for (i = 0; i < n && i < max; i++)
		order[i] = full[i];
	return (int)i;
}

int pvpmu_nway_iter_init(struct pvpmu_smpl_iter *it, const void *buf,
			 pvpmu_u64 size, unsigned int region,
			 pvpmu_smpl_pmds_fn_t fn, void *opaque)
{
	struct pvpmu_nway_smpl_hdr h;
	const struct pvpmu_nway_region *r;
	int ret;

	if (!it)
		return -PVPMU_EFAULT;
	ret = nway_hdr(buf, size, &h);
	if (ret)
		return ret;
	if (region >= h.nr_regions)
		return -PVPMU_EINVAL;
	r = &h.regions[region];
	if (r->offs < sizeof(h) || r->offs > size || r->cur_offs < r->offs ||
	    r->cur_offs > size || r->cur_offs - r->offs > h.region_size)
		return -PVPMU_EINVAL;
	*it = (struct pvpmu_smpl_iter){
		.buf        = buf,
		.end        = r->cur_offs,
		.offs       = r->offs,
		.left       = r->count,
		.flags      = h.flags,
		.entry_size = (pvpmu_u32)entry_size(h.flags),
		.fn         = fn,
		.opaque     = opaque,
		.hdr        = {.hdr_count    = r->count,
			       .hdr_cur_offs = r->cur_offs,
			       .hdr_buf_size = h.buf_size,
			       .hdr_version  = h.version,
			       .hdr_flags    = h.flags},
	};
	return 0;
}
