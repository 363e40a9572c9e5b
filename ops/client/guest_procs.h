/* SPDX-License-Identifier: MIT */
/*
 * guest_procs.h: a guest's processes as its kernel reported them (process
 * records: names, executable mappings; abi.h PVPMU_HC_TASK), and where an
 * address of a sample is: which process, which file, which function. Used
 * by `vpmu report` on a record file's notes and by `vpmu serve` on the
 * records it fetches while it profiles.
 *
 * Records are kept with the position (at) of the first sample they apply
 * to: a sample counter the caller keeps. A later exec ends a process's
 * mappings; an exit ends nothing (its last samples may come after it).
 * Bounded: at most GUEST_PROCS_MAX records.
 */
#ifndef OPS_GUEST_PROCS_H
#define OPS_GUEST_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_symbols.h"
#include "record_file.h"

#define GUEST_PROCS_MAX (1U << 20)

struct gp_comm {
	uint32_t vm;
	int32_t pid, tid;
	size_t from;
	size_t prev; /* the process's previous name + 1, 0: none */
	char comm[16];
};

struct gp_map {
	uint32_t vm;
	int32_t pid;
	uint64_t start, end, pgoff;
	size_t from, to;
	unsigned int dso; /* index in guest_procs.dsos */
	size_t prev;      /* the process's previous mapping + 1, 0: none */
};

/* A process's newest name and mapping (+ 1, 0: none), by (vm, pid). */
struct gp_head {
	bool used;
	uint32_t vm;
	int32_t pid;
	size_t comm, map;
};

struct gp_dso {
	char *path;       /* as the guest named it */
	struct symtab st; /* loaded on first use, from symfs/path */
	int load_ret;     /* 0 loaded, 1 not tried yet, else -errno */
};

struct guest_procs {
	struct gp_comm *comms;
	size_t nr_comms, cap_comms;
	struct gp_map *maps;
	size_t nr_maps, cap_maps;
	struct gp_dso *dsos;
	size_t nr_dsos, cap_dsos;
	struct gp_head *heads; /* open addressing, a power of two */
	size_t nr_heads, cap_heads;
	bool has_tasks;          /* some record came: a Linux guest */
	const char *symfs;       /* where the guest's files are on the host */
	unsigned int dso_misses; /* files whose symbols could not be loaded */
};

/*
 * Where an address of a sample is: the process (comm, NULL when it never
 * got a name; pid 0 for none), the file (dso: its base name; the VM
 * image's, or "[kernel.kallsyms]" for a Linux guest's kernel; "[unknown]")
 * with its index (dso_index, -1 for the image), and the function (sym,
 * NULL when none) with (st, addr) for source lines.
 */
struct rec_where {
	const char *comm;
	int32_t pid;
	const char *dso;
	int dso_index;
	const struct sym *sym;
	const struct symtab *st;
	uint64_t addr;
};

/* Take record (t), which applies from sample (at) on. 0 or -errno. */
int guest_procs_add(struct guest_procs *g, const struct rec_task *t, size_t at);

/*
 * Where (ip) is for a sample at (at) of thread (pid, tid) of VM (vm),
 * whose image is (image) with symbols (image_st) (may be NULL). An
 * address no mapping of the process covers is looked up in the image.
 */
void guest_procs_where(struct guest_procs *g, uint32_t vm, int32_t pid,
		       int32_t tid, uint64_t ip, size_t at,
		       const struct symtab *image_st, const char *image,
		       struct rec_where *w);

/* The symbols of file (i), loaded on first use; NULL if unavailable. */
const struct symtab *guest_procs_dso_syms(struct guest_procs *g,
					  unsigned int i);

void guest_procs_free(struct guest_procs *g);

#endif /* OPS_GUEST_PROCS_H */
