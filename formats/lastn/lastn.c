// SPDX-License-Identifier: MIT
/*
 * lastn.c: the "last-N" sampling format (lastn.h), a shared object the VMM
 * loads at run time (vpmu run --format-dir; vpmu/vpmu_format.h). It keeps
 * the last n samples per PMD and never stops monitoring. It implements
 * the whole handler set of spec §3.5.7 to show it: validate (§3.5.10),
 * getsize (§3.5.11), init (§3.5.12), handler (§3.5.14), restart (§3.5.15)
 * and exit (§3.5.13).
 */
#include <errno.h>
#include <string.h>

#include <vpmu/vpmu_format.h>

#include "lastn.h"

static int lastn_validate(uint32_t ctx_flags, uint16_t num_pmds,
			  const void *arg)
{
	const struct lastn_arg *a = arg;

	(void)ctx_flags;
	(void)num_pmds;
	if (a->n < 1 || a->n > LASTN_MAX_N || a->nr_pmds < 1 ||
	    a->nr_pmds > LASTN_MAX_PMDS)
		return -EINVAL;
	return 0;
}

static int lastn_getsize(uint32_t ctx_flags, const void *arg, size_t *size)
{
	const struct lastn_arg *a = arg;

	(void)ctx_flags;
	*size = sizeof(struct lastn_hdr) +
		(size_t)a->n * a->nr_pmds * sizeof(struct lastn_sample);
	return 0;
}

static int lastn_init(struct vpmu_smpl_buf *buf, const void *arg)
{
	const struct lastn_arg *a = arg;
	struct lastn_hdr *h       = buf->base;

	h->version = LASTN_VERSION;
	h->n       = a->n;
	h->nr_pmds = a->nr_pmds;
	return 0;
}

static int lastn_handler(struct vpmu_smpl_buf *buf,
			 const struct vpmu_smpl_ovfl_arg *arg,
			 uint32_t *ovfl_ctrl)
{
	struct lastn_hdr *h = buf->base;
	struct lastn_sample *s;
	uint64_t k, off;

	/* Keep counting: the overflowed PMD gets its short reset. */
	*ovfl_ctrl = VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	if (arg->ovfl_pmd >= h->nr_pmds || h->nr_pmds > LASTN_MAX_PMDS ||
	    h->n == 0) {
		h->dropped++;
		return 0;
	}
	k   = h->total[arg->ovfl_pmd];
	off = lastn_offset(h, arg->ovfl_pmd, k);
	if (off + sizeof(*s) > buf->size)
		return -EINVAL; /* never with the header init wrote */
	s         = (struct lastn_sample *)((char *)buf->base + off);
	s->ip     = arg->ip;
	s->tstamp = arg->tstamp;
	s->value  = arg->pmd_value;
	s->pid    = arg->pid;
	s->tid    = arg->tid;
	/* Publish the sample before its count (readers acquire total). */
	__atomic_store_n(&h->total[arg->ovfl_pmd], k + 1, __ATOMIC_RELEASE);
	return 0;
}

/* Nothing masks this format; a RESTART only asks for the long resets. */
static int lastn_restart(struct vpmu_smpl_buf *buf, bool is_active,
			 uint64_t restart_arg, uint32_t *ctrl)
{
	(void)buf;
	(void)is_active;
	(void)restart_arg;
	*ctrl = VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	return 0;
}

/* No private state to release; the core frees the buffer. */
static int lastn_exit(struct vpmu_smpl_buf *buf)
{
	(void)buf;
	return 0;
}

VPMU_FORMAT_EXPORT(.name = LASTN_NAME, .uuid = LASTN_SMPL_UUID,
		   .arg_size = sizeof(struct lastn_arg), .msgq_depth = 1,
		   .validate = lastn_validate, .getsize = lastn_getsize,
		   .init = lastn_init, .handler = lastn_handler,
		   .restart = lastn_restart, .exit = lastn_exit);
