// SPDX-License-Identifier: MIT
/*
 * pprof_guest.c: a sample's frames placed in the guest's processes
 * (guest_procs.h) for a pprof profile: each address in its file, as a
 * mapping of its own with its build-id, and the process as labels (pid,
 * comm), so that go tool pprof and flame-graph tools name guest programs.
 */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>

/* The profile's space of guest file (i), added on first use. */
static int space_of(struct pprof_builder *b, struct pprof_guest *pg,
		    struct guest_procs *g, unsigned int i)
{
	size_t n;
	int *nh, s;

	if (i >= pg->nr) {
		n  = (size_t)i + 16;
		nh = realloc(pg->space, n * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		while (pg->nr < n)
			nh[pg->nr++] = 0;
		pg->space = nh;
	}
	if (!pg->space[i]) {
		s = pprof_add_dso(b, g->dsos[i].path,
				  guest_procs_dso_syms(g, i));
		if (s < 0)
			return s;
		pg->space[i] = s;
	}
	return pg->space[i];
}

int pprof_guest_frames(struct pprof_builder *b, struct pprof_guest *pg,
		       struct guest_procs *g, uint32_t gvm,
		       struct pprof_sample *ps, int32_t pid, int32_t tid,
		       size_t at, const struct symtab *image_st,
		       const char *image)
{
	struct rec_where w;
	unsigned int i;
	int s;

	for (i = 0; i < ps->nr_ips; i++) {
		guest_procs_where(g, gvm, pid, tid, ps->ips[i], at, image_st,
				  image, &w);
		if (!i) {
			ps->pid  = w.pid;
			ps->comm = w.comm;
		}
		if (w.dso_index < 0)
			continue;
		s = space_of(b, pg, g, (unsigned int)w.dso_index);
		if (s < 0)
			return s;
		ps->space[i] = (unsigned int)s;
		if (w.st)
			ps->ips[i] = w.addr; /* the file's own address */
	}
	return 0;
}

void pprof_guest_free(struct pprof_guest *pg)
{
	free(pg->space);
	pg->space = NULL;
	pg->nr    = 0;
}
