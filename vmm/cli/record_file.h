/* SPDX-License-Identifier: MIT */
/*
 * record_file.h: the file `vpmu record` writes and `vpmu report` reads.
 *
 * Format (version 1): JSON lines, UTF-8, one JSON object per line.
 *   line 1   header  {"vpmu_record":1, "created":UNIX_S, "event":NAME,
 *                     "code":N, "period":P, "freq":HZ (0 with -c),
 *                     "events":[NAME...] (what each PMD value is: the
 *                     sampled event first), "vms":[{"idx":I,"uuid":U,
 *                     "name":S,"image":PATH,"nr_vcpus":N,"tsc_khz":K}]}
 *   samples  {"vm":I, "cpu":C, "ip":IP, "set":S, "t":TSTAMP,
 *             "pmd":[VALUES...]}   vm indexes header.vms; t is the vCPU
 *             run time in ns at the overflow (per-vCPU, increasing);
 *             pmd are the values of the header's events at the sample
 *   notes    {"note":"vm_gone", "vm":I, "msg":TEXT}
 *   last     {"end":{"samples":N, "lost":L, "duration_ns":D,
 *             "reason":TEXT}}
 * A file without its "end" line, or whose sample count differs from it, is
 * invalid. The writer writes FILE.tmp and renames it to FILE only after
 * the end line is flushed and synced, so FILE is always complete.
 */
#ifndef VMM_RECFILE_H
#define VMM_RECFILE_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "vm_config.h"

#define REC_VERSION    1
#define REC_EVENTS_MAX 8
#define REC_VALS_MAX   16

struct rec_vm {
	char uuid[37];
	char name[VMM_NAME_MAX];
	char image[PATH_MAX];
	unsigned int nr_vcpus;
	uint64_t tsc_khz;
};

struct rec_header {
	char event[64];
	uint16_t code;
	uint64_t period, freq;
	int64_t created;
	unsigned int nr_events;
	char events[REC_EVENTS_MAX][64];
	struct rec_vm *vms; /* malloc'd by rec_read() */
	unsigned int nr_vms;
};

struct rec_sample {
	unsigned int vm, cpu, set;
	uint64_t ip, tstamp;
	unsigned int nr_vals;
	uint64_t vals[REC_VALS_MAX];
};

struct rec_writer {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX + 8];
	uint64_t samples;
};

/* Create (path).tmp and write the header (h). 0 or -errno. */
int rec_open(struct rec_writer *w, const char *path,
	     const struct rec_header *h);

/* Append one sample / note. 0 or -errno (e.g. -ENOSPC). */
int rec_sample(struct rec_writer *w, const struct rec_sample *s);
int rec_note(struct rec_writer *w, unsigned int vm, const char *msg);

/*
 * Write the end line, flush, fsync, rename (path).tmp to (path). 0 or
 * -errno (the temporary file is then removed).
 */
int rec_finish(struct rec_writer *w, uint64_t lost, uint64_t duration_ns,
	       const char *reason);

/* Give up: close and remove (path).tmp. */
void rec_abort(struct rec_writer *w);

/*
 * Create (path) as a new, empty regular file open for writing (mode 0666
 * less the umask, close-on-exec) without following a symlink: whatever
 * already has that name (a stale file, a symlink another user planted) is
 * unlinked first, never written through, and if something reappears in
 * between the create fails with -EEXIST. Returns the fd or -errno
 * (safe_file.c).
 */
int vmm_file_create_new(const char *path);

/* Called for every sample in file order; non-zero stops the read. */
typedef int (*rec_sample_fn_t)(void *opaque, const struct rec_sample *s);

/*
 * Read and check the whole file (path): header, every line, the end line
 * and the sample count. Fills (*h) (free with rec_header_free()) and calls
 * (fn) (may be NULL) per sample. Returns 0, or -EINVAL/-errno with a
 * message naming the line in (err).
 */
int rec_read(const char *path, struct rec_header *h, rec_sample_fn_t fn,
	     void *opaque, char *err, size_t errlen);

void rec_header_free(struct rec_header *h);

#endif /* VMM_RECFILE_H */
