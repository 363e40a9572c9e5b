/* SPDX-License-Identifier: MIT */
/*
 * smpl_setup.h: the sampling set-up the SDK test guest sdk_smpl and the
 * measurement guests (bench_slowdown, tm_skid) share: a system-wide
 * context with the default sampling format, and a sampling PMD 0.
 */
#ifndef PVPMU_SMPL_SETUP_H
#define PVPMU_SMPL_SETUP_H

#include <stdint.h>

#include <pvpmu/pvpmu.h>

/* A context and its default-format argument, laid out back to back. */
struct smpl_ctx {
	pfarg_ctx_t ctx;
	pfm_default_smpl_arg_t arg; /* right after ctx: sent without a copy */
};

/*
 * Create a system-wide context with the default sampling format (spec 3.6)
 * and a (buf_size)-byte buffer, in (a). Returns pfm_create_context()'s
 * result; on success a->ctx.ctx_fd and a->ctx.ctx_smpl_buf_size are set.
 */
static inline int smpl_create_context(struct smpl_ctx *a, uint64_t buf_size)
{
	*a = (struct smpl_ctx){
		.ctx = {.ctx_flags       = PFM_FL_SYSTEM_WIDE,
			.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID},
		.arg = {.buf_size = buf_size},
	};
	return pfm_create_context(&a->ctx, &a->arg, sizeof(a->arg));
}

/* PMD 0 overflowing every (period) events: value and both resets -period. */
static inline pfarg_pmd_t smpl_pmd0(uint64_t period)
{
	return (pfarg_pmd_t){.reg_num         = 0,
			     .reg_value       = -period,
			     .reg_short_reset = -period,
			     .reg_long_reset  = -period};
}

#endif /* PVPMU_SMPL_SETUP_H */
