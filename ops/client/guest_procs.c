// SPDX-License-Identifier: MIT
/*
 * guest_procs.c: a guest's processes from its process records, and where a
 * sample's address is (guest_procs.h).
 */
#include "guest_procs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pvpmu/abi.h>

#define GUEST_PROCS_MAX (1U << 20) /* process notes kept, idem */
#define USER_TOP        (1ULL << 47)

/* Grow (*arr) of (*cap) elements of (size) to hold one more. */
static int grow(void *arr, size_t *cap, size_t nr, size_t size)
{
	void **a = arr, *n;
	size_t c;

	if (nr < *cap)
		return 0;
	if (nr >= GUEST_PROCS_MAX)
		return -E2BIG;
	c = *cap ? *cap * 2 : 64;
	n = realloc(*a, c * size);
	if (!n)
		return -ENOMEM;
	*a   = n;
	*cap = c;
	return 0;
}

static unsigned int dso_index(struct guest_procs *p, const char *path, int *err)
{
	size_t i;

	for (i = 0; i < p->nr_dsos; i++) {
		if (!strcmp(p->dsos[i].path, path))
			return (unsigned int)i;
	}
	*err = grow(&p->dsos, &p->cap_dsos, p->nr_dsos, sizeof(*p->dsos));
	if (*err)
		return 0;
	p->dsos[p->nr_dsos] =
		(struct gp_dso){.path = strdup(path), .load_ret = 1};
	if (!p->dsos[p->nr_dsos].path) {
		*err = -ENOMEM;
		return 0;
	}
	return (unsigned int)p->nr_dsos++;
}

static size_t head_slot(uint32_t vm, int32_t pid, size_t cap)
{
	uint64_t h =
		((uint64_t)vm << 32 | (uint32_t)pid) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 32) & (cap - 1);
}

/*
 * The records of process (pid) of VM (vm), found by hashing: every lookup
 * walks that process's own records, never the others'. NULL: none yet;
 * with (create), a new head (NULL only out of memory).
 */
static struct gp_head *head_of(struct guest_procs *p, uint32_t vm, int32_t pid,
			       bool create)
{
	struct gp_head *h, *old = p->heads;
	size_t i, cap           = p->cap_heads, k;

	if (!cap) {
		if (!create)
			return NULL;
	} else {
		for (k = head_slot(vm, pid, cap);; k = (k + 1) & (cap - 1)) {
			h = &p->heads[k];
			if (!h->used)
				break;
			if (h->vm == vm && h->pid == pid)
				return h;
		}
		if (!create)
			return NULL;
	}
	if (2 * (p->nr_heads + 1) > cap) { /* at most half full */
		p->cap_heads = cap ? 2 * cap : 64;
		p->heads     = calloc(p->cap_heads, sizeof(*p->heads));
		if (!p->heads) {
			p->heads     = old;
			p->cap_heads = cap;
			return NULL;
		}
		for (i = 0; i < cap; i++) {
			if (!old[i].used)
				continue;
			k = head_slot(old[i].vm, old[i].pid, p->cap_heads);
			while (p->heads[k].used)
				k = (k + 1) & (p->cap_heads - 1);
			p->heads[k] = old[i];
		}
		free(old);
	}
	k = head_slot(vm, pid, p->cap_heads);
	while (p->heads[k].used)
		k = (k + 1) & (p->cap_heads - 1);
	p->heads[k] = (struct gp_head){.used = true, .vm = vm, .pid = pid};
	p->nr_heads++;
	return &p->heads[k];
}

/* The mappings of process (h) end before sample (at). */
static void end_maps(struct guest_procs *p, const struct gp_head *h, size_t at)
{
	size_t i;

	for (i = h->map; i; i = p->maps[i - 1].prev) {
		if (p->maps[i - 1].to == SIZE_MAX)
			p->maps[i - 1].to = at;
	}
}

int guest_procs_add(struct guest_procs *p, const struct rec_task *t, size_t at)
{
	struct gp_head *h;
	int err = 0;
	unsigned int dso;

	p->has_tasks = true;
	if (t->op != PVPMU_TASK_COMM && t->op != PVPMU_TASK_MMAP)
		return 0; /* an exit ends nothing here: see below */
	h = head_of(p, t->vm, t->pid, true);
	if (!h)
		return -ENOMEM;
	switch (t->op) {
	case PVPMU_TASK_COMM:
		if (t->exec)
			end_maps(p, h, at);
		err = grow(&p->comms, &p->cap_comms, p->nr_comms,
			   sizeof(*p->comms));
		if (err)
			return err;
		p->comms[p->nr_comms] = (struct gp_comm){.vm   = t->vm,
							 .pid  = t->pid,
							 .tid  = t->tid,
							 .from = at,
							 .prev = h->comm};
		snprintf(p->comms[p->nr_comms++].comm, sizeof(p->comms[0].comm),
			 "%s", t->comm);
		h->comm = p->nr_comms;
		return 0;
	case PVPMU_TASK_MMAP:
		if (t->start >= USER_TOP || t->len > USER_TOP - t->start)
			return 0; /* not a user mapping: nothing maps to it */
		dso = dso_index(p, t->path, &err);
		if (!err)
			err = grow(&p->maps, &p->cap_maps, p->nr_maps,
				   sizeof(*p->maps));
		if (err)
			return err;
		p->maps[p->nr_maps++] =
			(struct gp_map){.vm    = t->vm,
					.pid   = t->pid,
					.start = t->start,
					.end   = t->start + t->len,
					.pgoff = t->pgoff,
					.from  = at,
					.to    = SIZE_MAX,
					.dso   = dso,
					.prev  = h->map};
		h->map = p->nr_maps;
		return 0;
	default:
		/*
		 * An exit ends nothing here: its last samples may be
		 * drained after the note (samples follow notes by up to a
		 * drain), and a pid is rarely reused within one recording.
		 */
		return 0;
	}
}

/* The name of thread (tid) of process (h) at sample (at). */
static const char *comm_of(const struct guest_procs *p, const struct gp_head *h,
			   int32_t tid, size_t at)
{
	const char *by_pid = NULL;
	size_t i;

	for (i = h ? h->comm : 0; i; i = p->comms[i - 1].prev) {
		const struct gp_comm *c = &p->comms[i - 1];

		if (c->from > at)
			continue;
		if (c->tid == tid)
			return c->comm;
		if (!by_pid)
			by_pid = c->comm; /* a thread it never named */
	}
	return by_pid;
}

/*
 * The mapping of (ip) in process (h) at sample (at): one valid then,
 * else the latest that covered it (a sample drained after its process's
 * exec note still ran the old image).
 */
static const struct gp_map *map_of(const struct guest_procs *p,
				   const struct gp_head *h, uint64_t ip,
				   size_t at)
{
	const struct gp_map *any = NULL;
	size_t i;

	for (i = h ? h->map : 0; i; i = p->maps[i - 1].prev) {
		const struct gp_map *m = &p->maps[i - 1];

		if (ip < m->start || ip >= m->end)
			continue;
		if (m->from <= at && at < m->to)
			return m;
		if (!any && m->to != SIZE_MAX && m->to <= at)
			any = m;
	}
	return any;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static struct gp_dso *dso_loaded(struct guest_procs *p, unsigned int i)
{
	struct gp_dso *d = &p->dsos[i];
	char buf[PATH_MAX];

	if (d->load_ret == 1) {
		/* A guest path means nothing on the host without --symfs. */
		if (!p->symfs)
			d->load_ret = -ENOENT;
		else if (snprintf(buf, sizeof(buf), "%s%s", p->symfs,
				  d->path) >= (int)sizeof(buf))
			d->load_ret = -ENAMETOOLONG;
		else
			d->load_ret = symtab_load(&d->st, buf);
		if (d->load_ret)
			p->dso_misses++;
	}
	return d->load_ret ? NULL : d;
}

const struct symtab *guest_procs_dso_syms(struct guest_procs *g, unsigned int i)
{
	struct gp_dso *d = i < g->nr_dsos ? dso_loaded(g, i) : NULL;

	return d ? &d->st : NULL;
}

void guest_procs_where(struct guest_procs *g, uint32_t vm, int32_t pid,
		       int32_t tid, uint64_t ip, size_t at,
		       const struct symtab *image_st, const char *image,
		       struct rec_where *w)
{
	const struct gp_head *h = pid > 0 ? head_of(g, vm, pid, false) : NULL;
	const struct gp_map *m;
	struct gp_dso *d;
	uint64_t vaddr;

	memset(w, 0, sizeof(*w));
	w->pid       = pid;
	w->dso_index = -1;
	w->comm      = pid > 0 ? comm_of(g, h, tid, at)
			       : (g->has_tasks ? "swapper" : NULL);
	m            = ip < USER_TOP ? map_of(g, h, ip, at) : NULL;
	if (m) {
		w->dso       = base_name(g->dsos[m->dso].path);
		w->dso_index = (int)m->dso;
		d            = dso_loaded(g, m->dso);
		if (d && !symtab_vaddr_of(&d->st, ip - m->start + m->pgoff,
					  &vaddr)) {
			w->st   = &d->st;
			w->addr = vaddr;
			w->sym  = symtab_find(&d->st, vaddr);
		}
		return;
	}
	if (g->has_tasks && ip < USER_TOP) {
		w->dso = "[unknown]"; /* guest user space of no known file */
		return;
	}
	w->st   = image_st;
	w->addr = ip;
	w->sym  = image_st ? symtab_find(image_st, ip) : NULL;
	w->dso  = g->has_tasks ? "[kernel.kallsyms]" : base_name(image);
}

void guest_procs_free(struct guest_procs *g)
{
	size_t i;

	for (i = 0; i < g->nr_dsos; i++) {
		if (!g->dsos[i].load_ret)
			symtab_free(&g->dsos[i].st);
		free(g->dsos[i].path);
	}
	free(g->dsos);
	free(g->heads);
	free(g->maps);
	free(g->comms);
	memset(g, 0, sizeof(*g));
}
