// SPDX-License-Identifier: MIT
/*
 * registry.c: the built-in sampling formats, found by UUID (spec §3.5.2),
 * and the buffer services of the core (§3.5.5, §3.5.6): page-aligned,
 * page-granular anonymous mappings that the VMM can map read-only into
 * guest physical space.
 *
 * Formats are not registered at run time (digest §9.4 [VMM]): the table is
 * const, so there is no global mutable state and no register/unregister
 * race. A new format is one more line in vpmu_smpl_fmts[].
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "formats_priv.h"

#include "vpmu_common.h"

static const struct vpmu_smpl_fmt *const vpmu_smpl_fmts[] = {
	&vpmu_smpl_fmt_default,
	&vpmu_smpl_fmt_nway,
};

int vpmu_smpl_fmt_find(const uuid_t uuid, const struct vpmu_smpl_fmt **out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vpmu_smpl_fmts); i++) {
		if (uuid_compare(uuid, vpmu_smpl_fmts[i]->uuid) == 0) {
			*out = vpmu_smpl_fmts[i];
			return 0;
		}
	}
	/* §3.5.9 names EINVAL for "the format is not registered". */
	return -EINVAL;
}

size_t vpmu_smpl_fmt_count(void)
{
	return ARRAY_SIZE(vpmu_smpl_fmts);
}

const struct vpmu_smpl_fmt *vpmu_smpl_fmt_at(size_t i)
{
	return i < ARRAY_SIZE(vpmu_smpl_fmts) ? vpmu_smpl_fmts[i] : NULL;
}

bool vpmu_smpl_uuid_is_null(const uuid_t uuid)
{
	return uuid_is_null(uuid) != 0;
}

size_t vpmu_smpl_buf_roundup(size_t size)
{
	size_t ps = vpmu_smpl_page_size();

	if (size == 0 || size > SIZE_MAX - (ps - 1))
		return 0;
	return (size + ps - 1) & ~(ps - 1);
}

int vpmu_smpl_buf_alloc(struct vpmu_smpl_buf *buf, size_t size)
{
	size_t len = vpmu_smpl_buf_roundup(size);
	void *p;

	if (len == 0)
		return -EINVAL;
	/* Anonymous mappings are page-aligned and zero-filled (§3.5.5). */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	buf->base = p;
	buf->size = len;
	return 0;
}

void vpmu_smpl_buf_free(struct vpmu_smpl_buf *buf)
{
	if (buf->base)
		munmap(buf->base, buf->size);
	buf->base = NULL;
	buf->size = 0;
}

static int smpl_check_size(const struct vpmu_smpl_fmt *fmt,
			   const struct vpmu_smpl_create_arg *a, size_t *size)
{
	int ret;

	*size = 0;
	if (!fmt->getsize)
		return 0;
	ret = fmt->getsize(a->ctx_flags, a->arg, size);
	if (ret)
		return ret;
	if (*size == 0)
		return 0;
	*size = vpmu_smpl_buf_roundup(*size);
	/* §3.5.11: too big for the limit fails the create (digest: ENOMEM). */
	if (*size == 0 || *size > a->size_max)
		return -ENOMEM;
	return 0;
}

int vpmu_smpl_create(const struct vpmu_smpl_fmt *fmt,
		     const struct vpmu_smpl_create_arg *a,
		     struct vpmu_smpl_buf *buf)
{
	size_t size;
	int ret;

	if (!fmt || !a || !buf || (fmt->arg_size && !a->arg))
		return -EINVAL;
	/* §3.1.1: validate, getsize, allocation, init, in that order. */
	if (fmt->validate) {
		ret = fmt->validate(a->ctx_flags, a->num_pmds, a->arg);
		if (ret)
			return ret;
	}
	ret = smpl_check_size(fmt, a, &size);
	if (ret)
		return ret;
	buf->fmt       = fmt;
	buf->ctx_flags = a->ctx_flags;
	buf->num_pmds  = a->num_pmds;
	if (size) {
		ret = vpmu_smpl_buf_alloc(buf, size);
		if (ret)
			goto out_clear;
	}
	if (fmt->init) {
		ret = fmt->init(buf, a->arg);
		if (ret)
			goto out_free;
	}
	return 0;

out_free:
	vpmu_smpl_buf_free(buf);
out_clear:
	memset(buf, 0, sizeof(*buf));
	return ret;
}

int vpmu_smpl_destroy(struct vpmu_smpl_buf *buf)
{
	int ret = 0;

	if (buf->fmt && buf->fmt->exit)
		ret = buf->fmt->exit(buf);
	vpmu_smpl_buf_free(buf);
	memset(buf, 0, sizeof(*buf));
	return ret;
}
