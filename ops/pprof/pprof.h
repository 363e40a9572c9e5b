/* SPDX-License-Identifier: MIT */
/*
 * pprof.h: gzipped pprof profiles (profile.proto, encoded with protobuf-c)
 * of guest samples, shared by `vpmu report --pprof` and `vpmu serve`'s
 * /debug/pprof/profile. Sits on the operator client library (record files,
 * symbols, sessions); knows neither the commands nor the daemon.
 */
#ifndef OPS_PPROF_H
#define OPS_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "ctl_client.h"
#include "elf_symbols.h"
#include "guest_procs.h"

/* ---- gzip (gzip.c) ---------------------------------------------------- */

/*
 * Compress (len) bytes at (in) into a gzip member (RFC 1952), malloc'd
 * into (*out, *outlen). 0 or -ENOMEM / -EIO.
 */
int pprof_gzip(const void *in, size_t len, uint8_t **out, size_t *outlen);

/* ---- pprof profiles (pprof_build.c) ----------------------------------- */

#define PPROF_TYPES_MAX  (OPS_COUNTERS + 2) /* samples, sampled, events */
#define PPROF_FRAMES_MAX 64

/* What one Sample.value means: e.g. {"hv_run_ns", "nanoseconds"}. */
struct pprof_type {
	char type[64];
	const char *unit;
};

/*
 * One sample: (nr_ips) guest instruction addresses, leaf first (plain
 * profiles have the leaf only; call chains add their callers), the VM and
 * vCPU it came from, and one value per sample type.
 */
struct pprof_sample {
	unsigned int vm, vcpu;
	int32_t pid;      /* the guest process (labels pid, comm); 0: none */
	const char *comm; /* its name, NULL: unknown */
	unsigned int nr_ips;
	uint64_t ips[PPROF_FRAMES_MAX];
	/*
	 * Where each address is: 0 in the VM's image, k in the guest file
	 * pprof_add_dso() answered k for (then ips[] are the file's
	 * link-time addresses).
	 */
	unsigned int space[PPROF_FRAMES_MAX];
	int64_t values[PPROF_TYPES_MAX];
};

struct pprof_builder;

/*
 * A builder for a profile whose samples carry the (nr_types) values of
 * (types); (period) events of (types[period_type]) between samples.
 * 0 or -ENOMEM.
 */
int pprof_new(struct pprof_builder **out, const struct pprof_type *types,
	      unsigned int nr_types, unsigned int period_type, int64_t period);

/*
 * VM number (vm) of the samples is (name) booted from (image) with the
 * function symbols (st) (may be NULL or empty: addresses only). (st) must
 * outlive the builder. 0 or -ENOMEM.
 */
int pprof_add_vm(struct pprof_builder *b, unsigned int vm, const char *name,
		 const char *uuid, const char *image, const struct symtab *st);

/*
 * A guest file (a program or library of a Linux guest's process) with its
 * symbols (st, may be NULL; must outlive the builder): its own mapping in
 * the profile, with its build-id. Returns its space (>= 1) or -ENOMEM.
 */
int pprof_add_dso(struct pprof_builder *b, const char *path,
		  const struct symtab *st);

/*
 * The stack of (s): the sampled (ip), then the (nr) return addresses of
 * its callers, innermost first, each as its call site (ret - 1), up to
 * PPROF_FRAMES_MAX in all. Used by live profiles and `report --pprof`.
 */
void pprof_sample_stack(struct pprof_sample *s, uint64_t ip,
			const uint64_t *callers, unsigned int nr);

/* Add one sample (equal stacks of one vCPU are merged). 0 or -errno. */
int pprof_add(struct pprof_builder *b, const struct pprof_sample *s);

/* Number of samples added so far. */
uint64_t pprof_nr_samples(const struct pprof_builder *b);

/*
 * Serialize the profile (Profile.time_nanos (time_ns), duration) and gzip
 * it into malloc'd (*out, *len). 0 or -errno.
 */
int pprof_finish(struct pprof_builder *b, int64_t time_ns, int64_t duration_ns,
		 uint8_t **out, size_t *len);

void pprof_free(struct pprof_builder *b);

/* The pprof unit of a vpmu event: "nanoseconds", "cycles" or "count". */
const char *pprof_unit_of(const char *event);

/* ---- Guest processes (pprof_guest.c) --------------------------------- */

/* Which profile space each guest file (guest_procs index) became. */
struct pprof_guest {
	int *space;
	size_t nr;
};

/*
 * Place the frames of (ps) (raw guest addresses, from
 * pprof_sample_stack()) of thread (pid, tid), the sample at position (at)
 * of VM (gvm) of (g): addresses in a guest file become that file's, in its
 * own space; the leaf's process becomes (ps->pid, ps->comm). (image_st,
 * image): the VM's image, for the rest. 0 or -ENOMEM.
 */
int pprof_guest_frames(struct pprof_builder *b, struct pprof_guest *pg,
		       struct guest_procs *g, uint32_t gvm,
		       struct pprof_sample *ps, int32_t pid, int32_t tid,
		       size_t at, const struct symtab *image_st,
		       const char *image);

void pprof_guest_free(struct pprof_guest *pg);

/* ---- Record file -> pprof (pprof_record.c) ------------------------- */

/*
 * `vpmu report --pprof OUT FILE`: convert the record file (in) to a
 * gzipped pprof profile written to (out) (atomically: OUT.tmp, renamed);
 * a Linux guest's programs are read under (symfs) (NULL: none).
 * Returns 0, or 1 with one message on stderr.
 */
int pprof_from_record(const char *in, const char *out, const char *symfs);

#endif /* OPS_PPROF_H */
