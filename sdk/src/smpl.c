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
	if ((h->hdr_flags & PFM_DFL_SMPL_NO_HDR) &&
	    (h->hdr_flags & PFM_DFL_SMPL_IIP_HDR))
		return -PVPMU_EINVAL;
	it->flags = h->hdr_flags;
	if (h->hdr_flags & PFM_DFL_SMPL_NO_HDR)
		it->entry_size = 0;
	else if (h->hdr_flags & PFM_DFL_SMPL_IIP_HDR)
		it->entry_size = sizeof(pvpmu_u64);
	else
		it->entry_size = sizeof(struct pfm_default_smpl_entry);
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
