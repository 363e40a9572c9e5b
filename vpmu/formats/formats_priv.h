/* SPDX-License-Identifier: MIT */
/*
 * formats_priv.h: helpers shared by the built-in sampling formats. Only
 * vpmu/formats/ includes it.
 *
 * Both formats write samples in the default format's sample layout
 * (spec §3.6.4): a sample header selected by buf_flags, then the values of
 * the PMC's smpl_pmds in increasing PMD index.
 */
#ifndef VPMU_FORMATS_PRIV_H
#define VPMU_FORMATS_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "vpmu_smpl.h"

/*
 * What a full buffer asks of the core (§3.6.5): notify, mask, and block the
 * monitored thread; the core honours block_thread only for a non-self
 * per-thread context with PFM_FL_NOTIFY_BLOCK (§3.5.14), and sends the
 * message only if an overflowed PMC has OVFL_NOTIFY (else: saturated).
 */
#define VPMU_SMPL_CTRL_FULL                                                    \
	(VPMU_SMPL_CTRL_NOTIFY_USER | VPMU_SMPL_CTRL_BLOCK_THREAD |            \
	 VPMU_SMPL_CTRL_MASK_MONITORING)

/* buf_flags bits that select the sample header (shared by both formats). */
#define VPMU_SMPL_ENTRY_FLAGS (PFM_DFL_SMPL_NO_HDR | PFM_DFL_SMPL_IIP_HDR)

/*
 * Check the sample-header bits of (buf_flags): NO_HDR and IIP_HDR are
 * exclusive. Other bits are the caller's to check. Returns 0 or -EINVAL.
 */
int vpmu_smpl_entry_check_flags(uint32_t buf_flags);

/*
 * Bytes of the sample header for (buf_flags): 40 (full entry), 8 (IIP_HDR:
 * the ip only) or 0 (NO_HDR).
 */
size_t vpmu_smpl_entry_hdr_size(uint32_t buf_flags);

/*
 * max_sample_size of spec §3.6.5: header plus 8 bytes per implemented PMD
 * (num_pmds), with the effective header size of (buf_flags).
 */
size_t vpmu_smpl_max_sample_size(uint32_t buf_flags, uint16_t num_pmds);

/* Bytes the sample of overflow (arg) takes with (buf_flags). */
size_t vpmu_smpl_sample_size(uint32_t buf_flags,
			     const struct vpmu_smpl_ovfl_arg *arg);

/*
 * Write the sample of overflow (arg) at (dst): (size) bytes, the value
 * vpmu_smpl_sample_size() returned for the same (buf_flags, arg). (dst) is
 * 8-byte aligned host buffer memory with room for (size) bytes.
 */
void vpmu_smpl_write_sample(void *dst, uint32_t buf_flags,
			    const struct vpmu_smpl_ovfl_arg *arg, size_t size);

/* The host page size (sysconf, with a 4096 fallback). */
size_t vpmu_smpl_page_size(void);

#endif /* VPMU_FORMATS_PRIV_H */
