/* SPDX-License-Identifier: MIT */
/*
 * reader.h: a host-side reader of sampling buffers, for the format tests.
 * Guest programs read their buffers with the SDK (pvpmu_smpl_*).
 */
#ifndef VPMU_TEST_READER_H
#define VPMU_TEST_READER_H

#include <stddef.h>
#include <stdint.h>

#include "vpmu_smpl.h"

/*
 * Walk the samples of a default-format buffer or of one n-way region.
 * Samples of different PMDs may have different body sizes (§3.6.4), so the
 * caller says how many values a sample of (set, ovfl_pmd) carries; with
 * PFM_DFL_SMPL_NO_HDR or _IIP_HDR there is no (set, ovfl_pmd) and it is
 * asked with (0, 0): such buffers need a single sample size.
 */
typedef unsigned int (*vpmu_smpl_nvals_fn)(void *opaque, uint16_t set,
					   uint16_t ovfl_pmd);

struct vpmu_smpl_sample {
	const struct pfm_default_smpl_entry *entry; /* NULL without header */
	uint64_t ip;             /* entry ip, IIP header, or 0 (NO_HDR) */
	const pvpmu_u64 *values; /* body: smpl_pmds values, PMD order */
	unsigned int nr_values;  /* entries in values */
};

struct vpmu_smpl_iter {
	const unsigned char *base; /* buffer start */
	size_t off, end;           /* next sample, end of the valid bytes */
	uint64_t left;             /* samples still to return */
	uint32_t flags;            /* buf_flags of the buffer */
	vpmu_smpl_nvals_fn nvals;
	void *opaque;
};

/*
 * Start walking the default-format buffer (buf) of (size) bytes: hdr_count
 * samples from the header (§3.6.3: use hdr_count, not hdr_cur_offs).
 * (nvals)/(opaque) give body sizes. Returns 0, or -EINVAL if the header
 * is not a default-format header that fits (size).
 */
int vpmu_smpl_iter_default(struct vpmu_smpl_iter *it, const void *buf,
			   size_t size, vpmu_smpl_nvals_fn nvals, void *opaque);

/*
 * Start walking region (region) of the n-way buffer (buf) of (size) bytes.
 * Read only FULL regions (or a FILLING one of a stopped context): the
 * state is read with acquire ordering first. Returns 0 or -EINVAL.
 */
int vpmu_smpl_iter_nway(struct vpmu_smpl_iter *it, const void *buf, size_t size,
			uint32_t region, vpmu_smpl_nvals_fn nvals,
			void *opaque);

/*
 * Next sample into (*s). Returns 1, 0 at the end, or -EINVAL when a sample
 * would run past the valid bytes (wrong nvals, or a corrupt buffer).
 */
int vpmu_smpl_iter_next(struct vpmu_smpl_iter *it, struct vpmu_smpl_sample *s);

/*
 * Store in (order) the indexes of the FULL regions of the n-way buffer
 * (buf), oldest (lowest seq) first, at most (max). Returns how many.
 */
unsigned int vpmu_smpl_nway_full(const void *buf, uint32_t *order,
				 unsigned int max);

#endif /* VPMU_TEST_READER_H */
