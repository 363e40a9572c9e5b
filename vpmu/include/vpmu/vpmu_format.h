/* SPDX-License-Identifier: MIT */
/*
 * vpmu/vpmu_format.h: the sampling-format interface of libvpmu (perfmon2
 * spec §3.5.7-§3.5.15), part of libvpmu's public headers. A format author
 * includes only this file: a format is a struct vpmu_smpl_fmt (name, UUID,
 * the handler set of §3.5.7), built into libvpmu or, like a perfmon2 kernel
 * module, loaded at run time by the VMM from a shared object.
 *
 * Run-time formats (§3.5, §3.6 "register at run time"). The shared object
 * exports one symbol, VPMU_FORMAT_SYMBOL, a struct vpmu_format_desc:
 *
 *   #include <vpmu/vpmu_format.h>
 *   static int my_handler(struct vpmu_smpl_buf *buf,
 *                         const struct vpmu_smpl_ovfl_arg *arg,
 *                         uint32_t *ovfl_ctrl) { ... }
 *   VPMU_FORMAT_EXPORT(.name = "my-format", .uuid = {0x..., ...},
 *                      .arg_size = sizeof(struct my_arg),
 *                      .handler = my_handler, ...);
 *
 * It must be self-contained (link nothing of libvpmu; libc is fine) and
 * built position-independent (a MODULE library). The VMM loads every
 * "*.so" of its format directory (`vpmu run --format-dir DIR`, or
 * <vpmu:formats dir="..."/> in a domain XML) at set-up, before the guest
 * runs, and checks each descriptor before registering it:
 *   - abi_version == VPMU_FORMAT_ABI_VERSION and desc_size >= the size of
 *     the version-1 descriptor (else: "format ABI version N, want M");
 *   - a name of 1..VPMU_FORMAT_NAME_MAX-1 printable characters, a UUID
 *     that is not all zero, a handler (§3.5.8: name, UUID and handler are
 *     required; validate, getsize, init, restart and exit are optional);
 *   - arg_size <= VPMU_FORMAT_ARG_MAX, msgq_depth <= VPMU_FORMAT_MSGQ_MAX
 *     (0 counts as 1, §3.5.7), no unknown flags;
 *   - a UUID no other format (built-in or loaded) has (§3.5.8: EBUSY).
 * A file that fails is refused with one message naming it and the
 * problem; the VM still runs with the other formats.
 *
 * Unregistering (§3.5.9) fails with EBUSY while a context uses the format
 * (digest §9.4 [GAP], resolved: a format in use cannot go away) and with
 * EINVAL for a UUID that is not registered or is built in.
 */
#ifndef VPMU_FORMAT_H
#define VPMU_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bound of PMD indexes a sample can carry (PFM_MAX_PMDS). */
#define VPMU_SMPL_MAX_PMDS 64
#define VPMU_SMPL_PMD_BV   ((VPMU_SMPL_MAX_PMDS + 63) / 64)

/* Output control bits of handler/restart (§3.5.14, §3.5.15 ovfl_ctrl). */
#define VPMU_SMPL_CTRL_NOTIFY_USER (1U << 0) /* queue an overflow msg */
#define VPMU_SMPL_CTRL_RESET_OVFL_PMDS                                         \
	(1U << 1)                                /* short (handler) or long    \
						    (restart) reset */
#define VPMU_SMPL_CTRL_BLOCK_THREAD    (1U << 2) /* honoured if eligible */
#define VPMU_SMPL_CTRL_MASK_MONITORING (1U << 3) /* wins over the reset */

/* Format capability flags (fmt_flags, §3.5.7). */
#define VPMU_SMPL_FMTFL_NOSET (1U << 0) /* only set0 may exist */

/*
 * One 64-bit counter overflow, as the core describes it to the handler
 * (§3.5.14 pfm_ovfl_arg_t plus its tstamp and "data" arguments). Host
 * internal: not guest ABI, but part of the format ABI below.
 */
struct vpmu_smpl_ovfl_arg {
	uint16_t ovfl_pmd;   /* index of the overflowed PMD */
	uint16_t active_set; /* set active at the overflow (the PMD's set) */
	uint16_t cpu;        /* vCPU index the overflow was taken on */
	bool ovfl_notify;    /* the PMC has PFM_REGFL_OVFL_NOTIFY */
	int32_t pid;         /* guest pid from the shared page, 0 unknown */
	int32_t tid;         /* guest tid from the shared page, 0 unknown */
	uint64_t pmd_last_reset; /* last value loaded in the PMD (random or
				    short/long reset value) */
	uint64_t pmd_value;      /* current 64-bit value of the PMD */
	uint64_t pmd_eventid;    /* reg_smpl_eventid of the PMC */
	uint64_t ip;             /* guest RIP when the overflow was taken */
	uint64_t tstamp;         /* per-vCPU unique, increasing; identical
				    for all PMDs of one overflow event */
	uint64_t smpl_pmds[VPMU_SMPL_PMD_BV]; /* reg_smpl_pmds of the PMC */
	/*
	 * Values of the PMDs set in smpl_pmds, packed in increasing PMD
	 * index: smpl_pmds_values[k] belongs to the k-th set bit. Only the
	 * first popcount(smpl_pmds) entries are read.
	 */
	uint64_t smpl_pmds_values[VPMU_SMPL_MAX_PMDS];
	/*
	 * Appended last, so the fields above keep their offsets: whole periods
	 * of ovfl_pmd that elapsed after this one before the overflow was seen
	 * (vCPU preempted, a long exit, the throttle holding the kick back).
	 * The sample stands for 1 + nr_missed periods.
	 */
	uint64_t nr_missed;
};

/*
 * A context's sampling buffer. Owned by the context; the core zeroes it,
 * then vpmu_smpl_create() (or the core, step by step) fills it.
 */
struct vpmu_smpl_buf {
	const struct vpmu_smpl_fmt *fmt; /* the format in use */
	void *base;         /* page-aligned host mapping; NULL if none */
	size_t size;        /* mapped bytes, a multiple of the page size;
			       this is ctx_smpl_buf_size */
	uint32_t ctx_flags; /* ctx_flags given at create */
	uint16_t num_pmds;  /* implemented PMDs (max_sample_size) */
	void *priv;         /* format-private host state (init/exit) */
};

/*
 * The operations of one format (§3.5.7 pfm_buffer_fmt_t). All callbacks
 * return 0 or -errno. (arg) always points at exactly (arg_size) bytes of
 * format arguments copied once from the guest (§3.5.3); it is only read.
 */
struct vpmu_smpl_fmt {
	const char *name;    /* logical name, listed to guests (§3.5.2) */
	uint8_t uuid[16];    /* identity (§3.5.2), not all zero */
	size_t arg_size;     /* bytes of per-context arguments; 0 if none */
	uint32_t msgq_depth; /* messages the format may need queued (0: 1) */
	uint32_t flags;      /* VPMU_SMPL_FMTFL_* */

	/*
	 * §3.5.10: check (arg) and that the context (ctx_flags) suits the
	 * format; (num_pmds) is the number of implemented PMDs. Errors:
	 * -EINVAL for bad arguments (reserved flags, buffer too small to
	 * hold one sample). Optional (NULL: nothing to check).
	 */
	int (*validate)(uint32_t ctx_flags, uint16_t num_pmds, const void *arg);
	/*
	 * §3.5.11: store in (*size) the bytes to allocate (page-rounded);
	 * 0 means no buffer. Called after validate. Optional.
	 */
	int (*getsize)(uint32_t ctx_flags, const void *arg, size_t *size);
	/*
	 * §3.5.12: initialise (buf) (base/size/ctx_flags/num_pmds filled,
	 * memory zeroed) from (arg). May set buf->priv. Optional.
	 */
	int (*init)(struct vpmu_smpl_buf *buf, const void *arg);
	/*
	 * §3.5.14: record the overflow (arg) and store in (*ovfl_ctrl) the
	 * VPMU_SMPL_CTRL_* bits the core applies on return (it starts at 0).
	 * Required. Runs in the overflow path: no allocation, no syscalls.
	 */
	int (*handler)(struct vpmu_smpl_buf *buf,
		       const struct vpmu_smpl_ovfl_arg *arg,
		       uint32_t *ovfl_ctrl);
	/*
	 * §3.5.15: PFM_RESTART. (is_active) is false when monitoring is
	 * masked. (restart_arg) is the format-specific restart argument the
	 * guest passed (0 when none; the default format ignores it, the
	 * n-way format reads it as the regions to release). Store
	 * MASK_MONITORING / RESET_OVFL_PMDS (long reset) in (*ctrl); other
	 * bits are ignored by the core. Optional (NULL: the core unmasks and
	 * long-resets as without a format).
	 */
	int (*restart)(struct vpmu_smpl_buf *buf, bool is_active,
		       uint64_t restart_arg, uint32_t *ctrl);
	/* §3.5.13: release buf->priv; the buffer is freed after. Optional. */
	int (*exit)(struct vpmu_smpl_buf *buf);
};

/* Version of struct vpmu_format_desc and of the types above. */
#define VPMU_FORMAT_ABI_VERSION 1
#define VPMU_FORMAT_NAME_MAX    32   /* bytes of a name, with the NUL */
#define VPMU_FORMAT_ARG_MAX     4096 /* bytes of format arguments */
#define VPMU_FORMAT_MSGQ_MAX    1024 /* msgq_depth */
#define VPMU_FORMAT_SYMBOL      "vpmu_format_descriptor"

/* What a run-time format's shared object exports. */
struct vpmu_format_desc {
	uint32_t abi_version;     /* VPMU_FORMAT_ABI_VERSION */
	uint32_t desc_size;       /* sizeof(struct vpmu_format_desc) */
	struct vpmu_smpl_fmt fmt; /* the format */
};

/* Define the exported descriptor; the arguments initialise its .fmt. */
#define VPMU_FORMAT_EXPORT(...)                                                \
	__attribute__((visibility("default")))                                 \
	const struct vpmu_format_desc vpmu_format_descriptor = {               \
		.abi_version = VPMU_FORMAT_ABI_VERSION,                        \
		.desc_size   = sizeof(struct vpmu_format_desc),                \
		.fmt         = {__VA_ARGS__},                                  \
	}

/*
 * For the VMM (and tools): the format registry, process-wide. Formats are
 * host objects; guests only list them (§3.5.2) and name one by UUID.
 */
struct vpmu_format_info {
	uint8_t uuid[16];
	char name[VPMU_FORMAT_NAME_MAX];
	char origin[256]; /* shared object it came from; "" if built in */
	bool builtin;
	size_t arg_size;
};

/*
 * Copy the description of up to (max) formats, built-in first, then the
 * run-time ones in registration order, into (out). Returns how many there
 * are (may exceed max).
 */
size_t vpmu_format_list(struct vpmu_format_info *out, size_t max);

/*
 * Load the run-time format in shared object (path) (dlopen, then the
 * checks above) and register it. Returns 0, or -errno with one message
 * naming (path) and the problem in (err): -ENOENT/-ENOEXEC (cannot load),
 * -EINVAL (no descriptor, wrong version, bad field), -EBUSY (UUID taken).
 */
int vpmu_format_load(const char *path, char *err, size_t errlen);

/* Called for each file vpmu_format_load_dir() refuses, with its message. */
typedef void (*vpmu_format_err_fn)(void *opaque, const char *msg);

/*
 * Load every "*.so" of directory (dir), in name order. A file that fails is
 * reported through (fn) and skipped. Returns the number of formats
 * loaded, or -errno (with a message through (fn)) when (dir) cannot be
 * read.
 */
int vpmu_format_load_dir(const char *dir, vpmu_format_err_fn fn, void *opaque);

/*
 * Unregister run-time format (uuid) and unload its object (§3.5.9).
 * Returns 0, -EBUSY (a context uses it), -EINVAL (not a run-time format).
 */
int vpmu_format_unload(const uint8_t uuid[16]);

#endif /* VPMU_FORMAT_H */
