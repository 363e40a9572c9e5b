// SPDX-License-Identifier: MIT
/*
 * registry.c: the sampling formats, found by UUID (spec §3.5.2): the
 * built-in ones (a const table) and those registered at run time
 * (§3.5.8, §3.5.9; formats/loader.c loads them from shared objects), and
 * the buffer services of the core (§3.5.5, §3.5.6): page-aligned,
 * page-granular anonymous mappings that the VMM can map read-only into
 * guest physical space.
 *
 * Run-time formats live in one process-wide list under a mutex. Each has a
 * count of the contexts using it: vpmu_smpl_fmt_find() takes a reference,
 * vpmu_smpl_fmt_put() drops it, and a format with users cannot be
 * unregistered (EBUSY), so a loaded object never goes away under a
 * context.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "formats_priv.h"

#include "vpmu_common.h"

static const struct vpmu_smpl_fmt *const vpmu_smpl_fmts[] = {
	&vpmu_smpl_fmt_default,
	&vpmu_smpl_fmt_nway,
};

/* A format registered at run time. */
struct rt_fmt {
	struct rt_fmt *next;
	const struct vpmu_smpl_fmt *fmt;
	unsigned int users; /* contexts using it */
	void *handle;       /* dlopen handle of its object, or NULL */
	char origin[256];   /* file it came from, or "" */
};

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rt_fmt *rt_head; /* in registration order (appended) */

static const struct vpmu_smpl_fmt *builtin_find(const uint8_t *uuid)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vpmu_smpl_fmts); i++) {
		if (memcmp(uuid, vpmu_smpl_fmts[i]->uuid, 16) == 0)
			return vpmu_smpl_fmts[i];
	}
	return NULL;
}

static struct rt_fmt *rt_find(const uint8_t *uuid)
{
	struct rt_fmt *r;

	for (r = rt_head; r; r = r->next) {
		if (memcmp(uuid, r->fmt->uuid, 16) == 0)
			return r;
	}
	return NULL;
}

int vpmu_smpl_fmt_find(const uuid_t uuid, const struct vpmu_smpl_fmt **out)
{
	const struct vpmu_smpl_fmt *f = builtin_find(uuid);
	struct rt_fmt *r;

	if (f) {
		*out = f;
		return 0;
	}
	pthread_mutex_lock(&rt_lock);
	r = rt_find(uuid);
	if (r) {
		r->users++;
		*out = r->fmt;
	}
	pthread_mutex_unlock(&rt_lock);
	/* §3.5.9 names EINVAL for "the format is not registered". */
	return r ? 0 : -EINVAL;
}

void vpmu_smpl_fmt_put(const struct vpmu_smpl_fmt *fmt)
{
	struct rt_fmt *r;

	if (!fmt || builtin_find(fmt->uuid) == fmt)
		return;
	pthread_mutex_lock(&rt_lock);
	for (r = rt_head; r; r = r->next) {
		if (r->fmt == fmt && r->users) {
			r->users--;
			break;
		}
	}
	pthread_mutex_unlock(&rt_lock);
}

size_t vpmu_smpl_fmt_count(void)
{
	return ARRAY_SIZE(vpmu_smpl_fmts);
}

const struct vpmu_smpl_fmt *vpmu_smpl_fmt_at(size_t i)
{
	return i < ARRAY_SIZE(vpmu_smpl_fmts) ? vpmu_smpl_fmts[i] : NULL;
}

static bool name_ok(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return false;
	for (i = 0; name[i]; i++) {
		if (i >= VPMU_FORMAT_NAME_MAX - 1 ||
		    !isprint((unsigned char)name[i]))
			return false;
	}
	return true;
}

int vpmu_smpl_fmt_check(const struct vpmu_smpl_fmt *fmt, char *err,
			size_t errlen)
{
	static const uint8_t zero[16];
	const char *why = NULL;

	if (!name_ok(fmt->name))
		why = "has no printable name of 1 to 31 characters";
	else if (memcmp(fmt->uuid, zero, 16) == 0)
		why = "has an all-zero UUID";
	else if (!fmt->handler)
		why = "has no handler (required, spec 3.5.8)";
	else if (fmt->arg_size > VPMU_FORMAT_ARG_MAX)
		why = "wants more than 4096 bytes of arguments";
	/*
	 * §3.5.7: "fmt_msgq_depth ... <1 forced to 1": a depth of 0 is not
	 * an error. Every context queue holds at least one message
	 * (limits.msgq_depth >= 1, domain.c), so 0 needs no rewriting.
	 */
	else if (fmt->msgq_depth > VPMU_FORMAT_MSGQ_MAX)
		why = "has a msgq_depth above 1024";
	else if (fmt->flags & ~VPMU_SMPL_FMTFL_NOSET)
		why = "sets unknown flags";
	if (!why)
		return 0;
	snprintf(err, errlen, "format '%s' %s",
		 name_ok(fmt->name) ? fmt->name : "?", why);
	return -EINVAL;
}

/* Who has (uuid) already, for the message; NULL if nobody. */
static const char *owner_of(const uint8_t *uuid)
{
	const struct vpmu_smpl_fmt *f = builtin_find(uuid);
	struct rt_fmt *r;

	if (f)
		return f->name;
	r = rt_find(uuid);
	return r ? r->fmt->name : NULL;
}

int vpmu_smpl_fmt_register(const struct vpmu_smpl_fmt *fmt, void *handle,
			   const char *origin, char *err, size_t errlen)
{
	struct rt_fmt *r, **tail;
	const char *owner;
	char id[37];
	int ret;

	ret = vpmu_smpl_fmt_check(fmt, err, errlen);
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fmt    = fmt;
	r->handle = handle;
	snprintf(r->origin, sizeof(r->origin), "%s", origin ? origin : "");
	pthread_mutex_lock(&rt_lock);
	owner = owner_of(fmt->uuid);
	if (owner) {
		pthread_mutex_unlock(&rt_lock);
		uuid_unparse(fmt->uuid, id);
		snprintf(err, errlen,
			 "format '%s': UUID %s is already registered by '%s'",
			 fmt->name, id, owner);
		free(r);
		return -EBUSY; /* §3.5.8 */
	}
	for (tail = &rt_head; *tail; tail = &(*tail)->next)
		;
	*tail = r;
	pthread_mutex_unlock(&rt_lock);
	return 0;
}

int vpmu_smpl_fmt_unregister(const uint8_t *uuid, void **handle)
{
	struct rt_fmt **pp, *r;
	int ret = -EINVAL; /* §3.5.9: not registered (or built in) */

	pthread_mutex_lock(&rt_lock);
	for (pp = &rt_head; *pp; pp = &(*pp)->next) {
		if (memcmp((*pp)->fmt->uuid, uuid, 16) != 0)
			continue;
		r = *pp;
		if (r->users) {
			ret = -EBUSY; /* in use by a context */
			break;
		}
		*pp = r->next;
		if (handle)
			*handle = r->handle;
		free(r);
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&rt_lock);
	return ret;
}

static void info_of(const struct vpmu_smpl_fmt *f, bool builtin,
		    const char *origin, struct vpmu_format_info *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->uuid, f->uuid, 16);
	snprintf(out->name, sizeof(out->name), "%s", f->name);
	snprintf(out->origin, sizeof(out->origin), "%s", origin);
	out->builtin  = builtin;
	out->arg_size = f->arg_size;
}

size_t vpmu_format_list(struct vpmu_format_info *out, size_t max)
{
	size_t i, n = 0;
	struct rt_fmt *r;

	for (i = 0; i < ARRAY_SIZE(vpmu_smpl_fmts); i++, n++) {
		if (n < max)
			info_of(vpmu_smpl_fmts[i], true, "", &out[n]);
	}
	pthread_mutex_lock(&rt_lock);
	for (r = rt_head; r; r = r->next, n++) {
		if (n < max)
			info_of(r->fmt, false, r->origin, &out[n]);
	}
	pthread_mutex_unlock(&rt_lock);
	return n;
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
