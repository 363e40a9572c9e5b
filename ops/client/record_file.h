/* SPDX-License-Identifier: MIT */
/*
 * record_file.h: the file `vpmu record` writes and `vpmu report` reads.
 *
 * Format (version 1): JSON lines, UTF-8, one JSON object per line.
 *   line 1   header  {"vpmu_record":1, "created":UNIX_S, "event":NAME,
 *                     "code":N, "period":P, "freq":HZ (0 with -c),
 *                     "events":[NAME...] (what each PMD value is: the
 *                     sampled event first), "vms":[{"idx":I,"uuid":U,
 *                     "name":S,"image":PATH,"nr_vcpus":N,"tsc_khz":K,
 *                     "build_id":HEX (optional: the image's GNU build-id
 *                     when recorded, "" if it has none)}],
 *                     "callchain":true (optional: samples carry chains)}
 *   samples  {"vm":I, "cpu":C, "ip":IP, "set":S, "t":TSTAMP,
 *             "pmd":[VALUES...], "chain":[RET...] (optional),
 *             "m":MISSED (optional: periods after this one
 *             that elapsed unsampled; the sample stands for 1 + m),
 *             "p":PERIOD (optional: the sample's period when
 *             it differs from the header's, e.g. raised by the
 *             throttle in frequency mode),
 *             "pid":P, "tid":T (optional: the guest thread that ran,
 *             as its kernel reported it; absent when unknown or idle)}
 *             vm indexes header.vms; t is the vCPU
 *             run time in ns at the overflow (per-vCPU, increasing);
 *             pmd are the values of the header's events at the sample;
 *             chain are the return addresses of the callers, innermost
 *             first (from `vpmu record -g`; empty when none was found)
 *   notes    {"note":"vm_gone", "vm":I, "msg":TEXT}
 *            {"note":"comm", "vm":I, "pid":P, "tid":T, "exec":B,
 *             "comm":NAME} (the guest's thread T of process P is named
 *             NAME from here on; "exec": the process exec()ed, its
 *             earlier mappings are gone)
 *            {"note":"mmap", "vm":I, "pid":P, "start":A, "len":L,
 *             "pgoff":O, "path":PATH} (process P maps the executable
 *             file PATH, byte O of it at address A, L bytes)
 *            {"note":"exit", "vm":I, "pid":P}
 *            (these three as the guest's kernel reported them, in order,
 *            before the samples they name)
 *            {"note":"snapshot", "vm":I, "pauses":N, "pause_ns":NS}
 *            (optional: the VM was paused N times for
 *            `vpmu snapshot` during the recording, NS ns in all;
 *            several such lines for one VM add up)
 *   last     {"end":{"samples":N, "lost":L, "duration_ns":D,
 *             "reason":TEXT, "throttled":T, "missed":M (both optional:
 *             samples the VMs' throttle did not take, periods
 *             carried by later samples), "tasks_refused":R,
 *             "tasks_dropped":D (optional: process records the VMs
 *             refused as malformed, or dropped over their limits)}}
 * Readers ignore keys they do not know, so the optional keys
 * keep version 1: older files read as "m" 0, "p" the header's period,
 * "throttled" and "missed" 0.
 * A file without its "end" line, or whose sample count differs from it, is
 * invalid. The writer writes FILE.tmp and renames it to FILE only after
 * the end line is flushed and synced, so FILE is always complete. A writer
 * killed mid-run leaves the temporary file cut anywhere: REC_READ_PARTIAL
 * accepts such a file up to its last complete line and says so.
 */
#ifndef OPS_RECORD_FILE_H
#define OPS_RECORD_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <vpmu_limits.h>

#define REC_VERSION      1
#define REC_EVENTS_MAX   8
#define REC_VALS_MAX     16
#define REC_CHAIN_MAX    64  /* callers per sample */
#define REC_BUILD_ID_HEX 129 /* 64 bytes as hex + NUL */

struct rec_vm {
	char uuid[37];
	char name[VMM_NAME_MAX];
	char image[PATH_MAX];
	unsigned int nr_vcpus;
	uint64_t tsc_khz;
	char build_id[REC_BUILD_ID_HEX]; /* "" when unknown */
	/* Filled by rec_read() from "snapshot" notes: */
	uint64_t snap_pauses, snap_pause_ns;
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
	bool callchain; /* samples carry "chain" */
	/* Filled by rec_read(): */
	bool truncated;             /* no end line (REC_READ_PARTIAL) */
	bool torn_line;             /* and its last line was cut and dropped */
	uint64_t lost;              /* from the end line */
	uint64_t throttled, missed; /* from the end line */
	uint64_t tasks_refused, tasks_dropped; /* from the end line */
	unsigned long lines;
};

struct rec_sample {
	unsigned int vm, cpu, set;
	uint64_t ip, tstamp;
	unsigned int nr_vals;
	uint64_t vals[REC_VALS_MAX];
	unsigned int nr_chain;
	uint64_t chain[REC_CHAIN_MAX];
	uint64_t missed;  /* "m" */
	uint64_t period;  /* "p", 0 when the header's */
	int32_t pid, tid; /* 0: unknown */
};

/* A "comm", "mmap" or "exit" note (op: PVPMU_TASK_*). */
struct rec_task {
	unsigned int vm;
	uint32_t op;
	int32_t pid, tid;
	bool exec;
	uint64_t start, len, pgoff;
	const char *comm, *path; /* valid during the callback only */
};

struct rec_writer {
	FILE *f;
	char path[PATH_MAX];
	char tmp[PATH_MAX + 8];
	uint64_t samples;
	uint64_t period;                       /* the header's */
	uint64_t throttled, missed;            /* written in the end line */
	uint64_t tasks_refused, tasks_dropped; /* idem */
};

/* Create (path).tmp and write the header (h). 0 or -errno. */
int rec_open(struct rec_writer *w, const char *path,
	     const struct rec_header *h);

/* Append one sample / note. 0 or -errno (e.g. -ENOSPC). */
int rec_sample(struct rec_writer *w, const struct rec_sample *s);
int rec_note(struct rec_writer *w, unsigned int vm, const char *msg);
/* A process record of the guest (comm, mmap or exit note). */
int rec_task_note(struct rec_writer *w, const struct rec_task *t);
/* VM (vm) was paused (pauses) times, (pause_ns) ns in all. */
int rec_snap_note(struct rec_writer *w, unsigned int vm, uint64_t pauses,
		  uint64_t pause_ns);

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
int ops_file_create_new(const char *path);

/* Called for every sample in file order; non-zero stops the read. */
typedef int (*rec_sample_fn_t)(void *opaque, const struct rec_sample *s);

struct json_object;

/*
 * The fields of a process record (op) in JSON object (o), the same keys in
 * a record file's note and a guest_tasks reply (all but vm) into (*t),
 * whose strings point into (o). 0, or -EINVAL when a pid > 0, or what
 * the op needs (comm; path and len), is missing.
 */
int rec_task_fields(struct json_object *o, uint32_t op, struct rec_task *t);

/* Called for every comm, mmap and exit note in file order. */
typedef int (*rec_task_fn_t)(void *opaque, const struct rec_task *t);

/* Called once, after the header, before any sample; non-zero stops. */
typedef int (*rec_header_fn_t)(void *opaque, const struct rec_header *h);

/*
 * Read and check the whole file (path, "-" for standard input), opened
 * once: header, every line, the end line and the sample count. Fills (*h)
 * (free with rec_header_free()) and calls (fn) (may be NULL) per sample;
 * every sample's vm and cpu index the header just read. Returns 0, or
 * -EINVAL/-errno with a message naming the line in (err).
 */
int rec_read(const char *path, struct rec_header *h, rec_sample_fn_t fn,
	     void *opaque, char *err, size_t errlen);

#define REC_READ_PARTIAL 1u /* a file without end line is h->truncated */

struct rec_read_args {
	const char *path;
	unsigned int flags;     /* REC_READ_* */
	rec_header_fn_t hdr_fn; /* may be NULL */
	rec_sample_fn_t fn;     /* may be NULL */
	rec_task_fn_t task_fn;  /* may be NULL */
	void *opaque;
	char *err;
	size_t errlen;
};

int rec_read_ex(const struct rec_read_args *a, struct rec_header *h);

void rec_header_free(struct rec_header *h);

#endif /* OPS_RECORD_FILE_H */
