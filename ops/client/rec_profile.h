/* SPDX-License-Identifier: MIT */
/*
 * rec_profile.h: a record file loaded for reporting (`vpmu report`, and
 * converters such as pprof output): the header, every sample with its
 * call chain, and the symbols of each VM's image, with one resolver.
 *
 * The file is read once; every sample's vm index is checked against the
 * header of that same read, and the per-VM symbol tables are sized from
 * it, so no index can reach past a table.
 */
#ifndef OPS_REC_PROFILE_H
#define OPS_REC_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "elf_symbols.h"
#include "guest_procs.h"
#include "record_file.h"

#define REC_IMAGES_MAX 16

/* Where symbols come from (perf's --symfs and a per-VM override). */
struct rec_sym_opts {
	const char *symfs; /* prefix of every image path, or NULL */
	struct {
		char vm[128];     /* VM name, uuid or index */
		const char *path; /* ELF image or System.map */
	} images[REC_IMAGES_MAX];
	unsigned int nr_images;
};

struct rec_psample {
	uint32_t vm, cpu;
	int32_t pid, tid; /* the guest thread, 0: unknown or idle */
	uint64_t ip;
	uint32_t nr_chain;
	size_t chain; /* offset in rec_profile.chains */
	/*
	 * The header periods the sample stands for: (1 + "m") x
	 * "p" / header period, rounded, at least 1 (1 without those keys).
	 */
	uint64_t weight;
};

struct rec_profile {
	struct rec_header h;
	struct guest_procs procs; /* from the file's process notes */
	struct rec_psample *smp;
	size_t nr, cap;
	uint64_t *chains; /* callers of every sample, innermost first */
	size_t nr_chains, cap_chains;
	struct symtab *st; /* h.nr_vms tables */
	unsigned int nr_st;
};

/*
 * Read (path) once (a file cut short by a killed writer is accepted up to
 * its last complete line: p->h.truncated), then load each VM's symbols.
 * Warnings (no symbols, build-id mismatch, incomplete file) go to (warn),
 * one line each. 0, or -errno with a message in (err).
 */
int rec_profile_load(struct rec_profile *p, const char *path,
		     const struct rec_sym_opts *o, FILE *warn, char *err,
		     size_t errlen);

/* The function of (ip) in VM (vm), or NULL. */
const struct sym *rec_profile_sym(const struct rec_profile *p, uint32_t vm,
				  uint64_t ip);

/* Its name, "[unknown]" without symbol. */
const char *rec_profile_name(const struct rec_profile *p, uint32_t vm,
			     uint64_t ip);

/* Source file and line of (ip) in VM (vm): 0 or -ENOENT. */
int rec_profile_srcline(const struct rec_profile *p, uint32_t vm, uint64_t ip,
			const char **file, int *line);

/*
 * Where address (ip) of sample (s) (its IP, or one of its callers) is
 * (guest_procs.h): the process's mappings at that sample decide; an
 * address none covers is looked up in the VM's image.
 */
void rec_profile_where(struct rec_profile *p, const struct rec_psample *s,
		       uint64_t ip, struct rec_where *w);

/* The callers of sample (s), innermost first. */
static inline const uint64_t *rec_profile_chain(const struct rec_profile *p,
						const struct rec_psample *s)
{
	/* No sample had a chain: nothing allocated, nr_chain is 0. */
	return p->chains ? p->chains + s->chain : NULL;
}

void rec_profile_free(struct rec_profile *p);

/* The weight of sample (s) of a file with header (h) (see weight). */
uint64_t rec_weight(const struct rec_header *h, const struct rec_sample *s);

#endif /* OPS_REC_PROFILE_H */
