// SPDX-License-Identifier: MIT
/*
 * entry.c: the sample layout shared by the built-in formats (spec §3.6.4).
 *
 * A sample is a header chosen by buf_flags (the full 40-byte
 * pfm_default_smpl_entry, the ip alone with PFM_DFL_SMPL_IIP_HDR, or nothing
 * with PFM_DFL_SMPL_NO_HDR) followed by the body: the 64-bit values of the
 * PMDs in the overflowed PMC's smpl_pmds, in increasing PMD index. Every
 * part is a multiple of 8 bytes, so samples stay 8-byte aligned without
 * padding.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "formats_priv.h"

int vpmu_smpl_entry_check_flags(uint32_t buf_flags)
{
	/* digest §9.6 [GAP]: the combination has no defined meaning. */
	if ((buf_flags & VPMU_SMPL_ENTRY_FLAGS) == VPMU_SMPL_ENTRY_FLAGS)
		return -EINVAL;
	return 0;
}

size_t vpmu_smpl_entry_hdr_size(uint32_t buf_flags)
{
	if (buf_flags & PFM_DFL_SMPL_NO_HDR)
		return 0;
	if (buf_flags & PFM_DFL_SMPL_IIP_HDR)
		return sizeof(pvpmu_u64);
	return sizeof(struct pfm_default_smpl_entry);
}

size_t vpmu_smpl_max_sample_size(uint32_t buf_flags, uint16_t num_pmds)
{
	return vpmu_smpl_entry_hdr_size(buf_flags) +
	       sizeof(pvpmu_u64) * (size_t)num_pmds;
}

static unsigned int smpl_nr_values(const struct vpmu_smpl_ovfl_arg *arg)
{
	unsigned int i, n = 0;

	for (i = 0; i < VPMU_SMPL_PMD_BV; i++)
		n += (unsigned int)__builtin_popcountll(arg->smpl_pmds[i]);
	return n;
}

size_t vpmu_smpl_sample_size(uint32_t buf_flags,
			     const struct vpmu_smpl_ovfl_arg *arg)
{
	return vpmu_smpl_entry_hdr_size(buf_flags) +
	       sizeof(pvpmu_u64) * smpl_nr_values(arg);
}

static size_t smpl_write_hdr(void *dst, uint32_t buf_flags,
			     const struct vpmu_smpl_ovfl_arg *arg)
{
	struct pfm_default_smpl_entry *e = dst;

	if (buf_flags & PFM_DFL_SMPL_NO_HDR)
		return 0;
	if (buf_flags & PFM_DFL_SMPL_IIP_HDR) {
		*(pvpmu_u64 *)dst = arg->ip;
		return sizeof(pvpmu_u64);
	}
	/*
	 * dst is 8-byte aligned inside an mmap'ed buffer (memory with no
	 * declared type), so plain stores are valid and cheaper than a copy.
	 */
	e->pid      = arg->pid;
	e->tid      = arg->tid;
	e->ovfl_pmd = arg->ovfl_pmd;
	e->set      = arg->active_set;
	e->cpu      = arg->cpu;
	e->nr_missed =
		arg->nr_missed > 0xffff ? 0xffff : (uint16_t)arg->nr_missed;
	e->last_reset_val = arg->pmd_last_reset;
	e->tstamp         = arg->tstamp;
	e->ip             = arg->ip;
	return sizeof(*e);
}

void vpmu_smpl_write_sample(void *dst, uint32_t buf_flags,
			    const struct vpmu_smpl_ovfl_arg *arg, size_t size)
{
	size_t off = smpl_write_hdr(dst, buf_flags, arg);

	/* The core packs the values in increasing PMD index already. */
	memcpy((char *)dst + off, arg->smpl_pmds_values, size - off);
}

size_t vpmu_smpl_page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}
