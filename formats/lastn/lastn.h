/* SPDX-License-Identifier: MIT */
/*
 * lastn.h: the layout of the "last-N" sampling format, an example of a
 * format loaded by the VMM at run time (vpmu/vpmu_format.h; spec §3.5).
 * Shared by the format (lastn.c, host) and the tools that read its buffer
 * (guests); only fixed-width ABI types.
 *
 * The buffer keeps, for each of the first nr_pmds PMDs, the last n samples
 * taken when that PMD overflowed: a ring of n entries per PMD. Monitoring
 * never stops for it (no notification, no mask: each overflow gets its
 * short reset). An overflow of a PMD >= nr_pmds is only counted.
 *
 *   [lastn_hdr][ring of PMD 0: n x lastn_sample][ring of PMD 1]...
 *
 * The sample of ring p with sequence number k (k = 0, 1, ... counted by
 * rings[p].total) is entry k % n of ring p. A reader reads total (acquire),
 * then the entries of total - min(total, n) .. total - 1; the host may
 * overwrite the oldest while a reader copies (a reader that needs more
 * checks total again).
 */
#ifndef VPMU_FMT_LASTN_H
#define VPMU_FMT_LASTN_H

#include <pvpmu/abi.h>

#define LASTN_SMPL_UUID                                                        \
	{                                                                      \
		0x5b, 0x0e, 0x2a, 0x7c, 0x91, 0x3d, 0x4e, 0x58, 0xa6, 0x1f,    \
			0x3c, 0x77, 0xd2, 0x40, 0x8e, 0x19                     \
	}
#define LASTN_NAME     "last-n"
#define LASTN_VERSION  1
#define LASTN_MAX_N    64 /* samples kept per PMD */
#define LASTN_MAX_PMDS 16 /* PMDs with a ring: 0 .. nr_pmds - 1 */

/* Appended to pfarg_ctx at PFM_CREATE_CONTEXT. */
struct lastn_arg {
	pvpmu_u32 n;       /* IN: samples kept per PMD, 1..LASTN_MAX_N */
	pvpmu_u32 nr_pmds; /* IN: PMDs with a ring, 1..LASTN_MAX_PMDS */
};
_Static_assert(sizeof(struct lastn_arg) == 8, "lastn_arg layout");

struct lastn_sample {
	pvpmu_u64 ip;     /* guest ip at the overflow */
	pvpmu_u64 tstamp; /* vCPU run time, ns */
	pvpmu_u64 value;  /* PMD value when the overflow was processed */
	pvpmu_s32 pid;    /* guest pid, 0 if unknown */
	pvpmu_s32 tid;    /* guest tid, 0 if unknown */
};
_Static_assert(sizeof(struct lastn_sample) == 32, "lastn_sample layout");

struct lastn_hdr {
	pvpmu_u32 version; /* LASTN_VERSION */
	pvpmu_u32 n;       /* samples per ring */
	pvpmu_u32 nr_pmds; /* rings */
	pvpmu_u32 pad0;
	pvpmu_u64 dropped;               /* overflows of PMDs >= nr_pmds */
	pvpmu_u64 total[LASTN_MAX_PMDS]; /* samples ever taken, per PMD */
};
_Static_assert(sizeof(struct lastn_hdr) == 152, "lastn_hdr layout");

/* Offset of entry (k) of the ring of PMD (p), from the buffer start. */
static inline pvpmu_u64 lastn_offset(const struct lastn_hdr *h, pvpmu_u32 p,
				     pvpmu_u64 k)
{
	return sizeof(*h) +
	       ((pvpmu_u64)p * h->n + k % h->n) * sizeof(struct lastn_sample);
}

#endif /* VPMU_FMT_LASTN_H */
