// SPDX-License-Identifier: MIT
/*
 * rec_profile.c: loading a record file and its symbols (rec_profile.h).
 */
#include "rec_profile.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLES_MAX (1ULL << 28) /* bounded memory for any file */
/* Periods of the header's period sample (s) stands for. */
uint64_t rec_weight(const struct rec_header *h, const struct rec_sample *s)
{
	unsigned __int128 w = (unsigned __int128)s->missed + 1;

	if (s->period && h->period && s->period != h->period)
		w = (w * s->period + h->period / 2) / h->period;
	if (w > (1ULL << 40))
		w = 1ULL << 40; /* any file stays summable */
	return w ? (uint64_t)w : 1;
}

static int add_task(void *opaque, const struct rec_task *t)
{
	struct rec_profile *p = opaque;

	return guest_procs_add(&p->procs, t, p->nr);
}

static int add(void *opaque, const struct rec_sample *s)
{
	struct rec_profile *p = opaque;
	struct rec_psample *ns;
	uint64_t *nc;
	size_t cap;

	if (s->vm >= p->h.nr_vms || p->nr >= SAMPLES_MAX)
		return -EINVAL; /* rec_read checks vm; belt and braces */
	if (p->nr == p->cap) {
		cap = p->cap ? p->cap * 2 : 4096;
		ns  = realloc(p->smp, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->smp = ns;
		p->cap = cap;
	}
	if (p->nr_chains + s->nr_chain > p->cap_chains) {
		cap = p->cap_chains ? p->cap_chains * 2 : 16384;
		while (cap < p->nr_chains + s->nr_chain)
			cap *= 2;
		nc = realloc(p->chains, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		p->chains     = nc;
		p->cap_chains = cap;
	}
	if (s->nr_chain) /* p->chains may still be NULL otherwise */
		memcpy(p->chains + p->nr_chains, s->chain,
		       s->nr_chain * sizeof(*s->chain));
	p->smp[p->nr++] = (struct rec_psample){.vm       = s->vm,
					       .cpu      = s->cpu,
					       .pid      = s->pid,
					       .tid      = s->tid,
					       .ip       = s->ip,
					       .nr_chain = s->nr_chain,
					       .chain    = p->nr_chains,
					       .weight = rec_weight(&p->h, s)};
	p->nr_chains += s->nr_chain;
	return 0;
}

/* The path of VM (i)'s symbols: --image, else [symfs]/recorded image. */
static const char *image_of(const struct rec_profile *p, unsigned int i,
			    const struct rec_sym_opts *o, char *buf, size_t len)
{
	const struct rec_vm *v = &p->h.vms[i];
	char idx[16];
	unsigned int k;

	snprintf(idx, sizeof(idx), "%u", i);
	for (k = 0; o && k < o->nr_images; k++) {
		if (!strcmp(o->images[k].vm, v->name) ||
		    !strcmp(o->images[k].vm, v->uuid) ||
		    !strcmp(o->images[k].vm, idx))
			return o->images[k].path;
	}
	if (!o || !o->symfs)
		return v->image;
	if (snprintf(buf, len, "%s/%s", o->symfs, v->image) >= (int)len)
		return v->image;
	/*
	 * A Linux guest's kernel is a host file, its programs are under
	 * the guest's root: the image is found where it was booted from.
	 */
	if (access(buf, F_OK) && !access(v->image, F_OK))
		return v->image;
	return buf;
}

static void load_one(struct rec_profile *p, unsigned int i,
		     const struct rec_sym_opts *o, FILE *warn)
{
	const struct rec_vm *v = &p->h.vms[i];
	char buf[PATH_MAX], id[REC_BUILD_ID_HEX];
	const char *path = image_of(p, i, o, buf, sizeof(buf));
	int ret          = symtab_load(&p->st[i], path);

	/* Not ELF: a kallsyms-style map (System.map) for Linux guests. */
	if (ret == -ENOEXEC && !symtab_load_map(&p->st[i], path))
		return;
	if (ret) {
		if (warn)
			fprintf(warn,
				"vpmu report: VM %s: no symbols from %s (%s): "
				"IPs show as [unknown]\n",
				v->name, path,
				ret == -EINVAL ? "not a regular file"
					       : strerror(-ret));
		return;
	}
	symtab_build_id_hex(&p->st[i], id, sizeof(id));
	if (warn && v->build_id[0] && strcmp(id, v->build_id))
		fprintf(warn,
			"vpmu report: VM %s: warning: %s has build-id %s but "
			"the recorded image had %s: symbols may be wrong "
			"(point at the right image with --image or --symfs)\n",
			v->name, path, id[0] ? id : "(none)", v->build_id);
}

int rec_profile_load(struct rec_profile *p, const char *path,
		     const struct rec_sym_opts *o, FILE *warn, char *err,
		     size_t errlen)
{
	const struct rec_read_args a = {.path    = path,
					.flags   = REC_READ_PARTIAL,
					.fn      = add,
					.task_fn = add_task,
					.opaque  = p,
					.err     = err,
					.errlen  = errlen};
	unsigned int i;
	int ret;

	memset(p, 0, sizeof(*p));
	p->procs.symfs = o ? o->symfs : NULL;
	ret            = rec_read_ex(&a, &p->h);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", path);
	if (ret)
		goto fail;
	if (p->h.truncated && warn)
		fprintf(warn,
			"vpmu report: %s is incomplete (no end line: its "
			"recording was cut short%s); reporting its %zu "
			"complete samples\n",
			path, p->h.torn_line ? ", last line dropped" : "",
			p->nr);
	/* Sized from the header of this same read. */
	p->st = calloc(p->h.nr_vms, sizeof(*p->st));
	if (!p->st) {
		snprintf(err, errlen, "%s: out of memory", path);
		ret = -ENOMEM;
		goto fail;
	}
	p->nr_st = p->h.nr_vms;
	for (i = 0; i < p->nr_st; i++)
		load_one(p, i, o, warn);
	return 0;
fail:
	rec_profile_free(p);
	return ret;
}

const struct sym *rec_profile_sym(const struct rec_profile *p, uint32_t vm,
				  uint64_t ip)
{
	return vm < p->nr_st ? symtab_find(&p->st[vm], ip) : NULL;
}

const char *rec_profile_name(const struct rec_profile *p, uint32_t vm,
			     uint64_t ip)
{
	const struct sym *s = rec_profile_sym(p, vm, ip);

	return s ? s->name : "[unknown]";
}

int rec_profile_srcline(const struct rec_profile *p, uint32_t vm, uint64_t ip,
			const char **file, int *line)
{
	return vm < p->nr_st ? symtab_srcline(&p->st[vm], ip, file, line)
			     : -ENOENT;
}

void rec_profile_where(struct rec_profile *p, const struct rec_psample *s,
		       uint64_t ip, struct rec_where *w)
{
	guest_procs_where(&p->procs, s->vm, s->pid, s->tid, ip,
			  (size_t)(s - p->smp),
			  s->vm < p->nr_st ? &p->st[s->vm] : NULL,
			  p->h.vms[s->vm].image, w);
}

void rec_profile_free(struct rec_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_st; i++)
		symtab_free(&p->st[i]);
	free(p->st);
	free(p->smp);
	free(p->chains);
	guest_procs_free(&p->procs);
	rec_header_free(&p->h);
	memset(p, 0, sizeof(*p));
}
