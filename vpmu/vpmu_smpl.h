/* SPDX-License-Identifier: MIT */
/*
 * vpmu_smpl.h: the sampling-format framework of libvpmu (perfmon2 spec
 * §3.5, digest §9).
 *
 * A sampling format records samples into a buffer on 64-bit counter
 * overflows and decides, per overflow, whether to notify the user, mask
 * monitoring or reset the overflowed PMDs (§3.5.14 ovfl_ctrl). Formats are
 * built in (a const table) or registered at run time by the host (§3.5.8,
 * shared objects the VMM loads: vpmu/vpmu_format.h, formats/loader.c),
 * never by a guest (§4.4.5), and found by UUID. The run-time registry is
 * the only global mutable state; everything a context needs lives in its
 * struct vpmu_smpl_buf.
 *
 * Life cycle, driven by the context code (the "core"):
 *
 *   PFM_CREATE_CONTEXT  vpmu_smpl_fmt_find(uuid)        unknown -> -EINVAL
 *                       fmt->validate(ctx_flags, num_pmds, arg)
 *                       fmt->getsize(ctx_flags, arg, &size)  -> charge it
 *                       vpmu_smpl_buf_alloc(size)       page-aligned, zeroed
 *                       fmt->init(buf, arg)
 *                       (vpmu_smpl_create() does all of this in order)
 *   64-bit overflow     fmt->handler(buf, arg, &ctrl) once per overflowed
 *                       PMD, in increasing PMD index, same tstamp; stop at
 *                       the first error (§3.5.14)
 *   PFM_RESTART         fmt->restart(buf, is_active, restart_arg, &ctrl)
 *   destroy             fmt->exit(buf), then vpmu_smpl_buf_free()
 *                       (vpmu_smpl_destroy() does both)
 *
 * Buffers are host memory, mapped read-only into guest physical space by
 * the VMM (a read-only KVM memslot), hence page-aligned and page-granular.
 * Only the host writes them, so formats may keep their state in them; the
 * guest reads them concurrently, so consumer-visible state changes are
 * published with release ordering (see the n-way format).
 *
 * Built-in formats (layouts in pvpmu/abi.h, "sampling formats" section):
 *   - "default" (PFM_DEFAULT_SMPL_UUID): spec §3.6, digest §9.6.
 *   - "n-way"   (PVPMU_NWAY_SMPL_UUID): N regions (2..16); a full region
 *     is handed to the consumer with a notification while sampling goes on
 *     in the next free region; only when all regions are full does it mask
 *     and notify like the default format. See formats/nway.c.
 *
 * Decisions where the spec is silent (digest §14 items 25, 28, 32, 37):
 *   - Unknown UUID: -EINVAL (the error §3.5.9 names for an unregistered
 *     format).
 *   - getsize returns the requested buf_size rounded up to whole pages: that
 *     is what is really allocated, charged against the sampling-memory limit
 *     and reported in ctx_smpl_buf_size; hdr_buf_size reports the same
 *     (usable) size (§3.1.1 "may differ due to ... alignment").
 *   - PFM_DFL_SMPL_NO_HDR together with PFM_DFL_SMPL_IIP_HDR: -EINVAL. The
 *     IIP-only sample header is one u64 (the ip). max_sample_size is
 *     computed with the effective sample-header size.
 *   - hdr_version is PFM_DEFAULT_SMPL_VERSION (major 1, minor 1: nr_missed).
 *   - Default format: once the post-check declares the buffer full it
 *     takes no more samples until PFM_RESTART; later overflows of the same
 *     event are lost (§3.6.4: "the others are not written") and again ask
 *     for mask + notify, without counting another hdr_overflows.
 *   - The restart callback takes a u64 restart argument (not in §3.5.15):
 *     the n-way format needs the consumer to say which regions it drained,
 *     since the guest cannot write the buffer. 0 keeps the spec's meaning.
 *   - n-way: an active restart with no FULL region is -EBUSY (one of the
 *     errors §3.1.9 lists); naming a region that is not FULL is -EINVAL.
 *   - The formats always request notify_user when a buffer (region) fills;
 *     the core queues a message only if the PMC has OVFL_NOTIFY, otherwise
 *     the buffer saturates (§3.6.5). When they mask (buffer full, all n-way
 *     regions full) they also request block_thread, which the core honours
 *     only for a non-self per-thread PFM_FL_NOTIFY_BLOCK context (§3.1.9:
 *     such a thread stays blocked while masked). A region fill that does
 *     not mask never blocks: that would defeat the n-way format.
 */
#ifndef VPMU_SMPL_H
#define VPMU_SMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uuid/uuid.h>

#include <pvpmu/abi.h>

#include <vpmu/vpmu_format.h>

#ifdef PFM_MAX_PMDS
_Static_assert(VPMU_SMPL_MAX_PMDS == PFM_MAX_PMDS,
	       "sample bodies are sized by the ABI's PFM_MAX_PMDS");
#endif

/*
 * Find the format (built-in, else run-time) whose UUID is (uuid); a
 * run-time format is referenced until vpmu_smpl_fmt_put(). Returns 0 and
 * sets (*out),
 * or -EINVAL if no format has that UUID (all-zero means "no format"; the
 * caller checks vpmu_smpl_uuid_is_null() first).
 */
int vpmu_smpl_fmt_find(const uuid_t uuid, const struct vpmu_smpl_fmt **out);

/*
 * Drop the reference vpmu_smpl_fmt_find() took on a run-time format (a
 * context stops using it). No-op for built-in formats and NULL.
 */
void vpmu_smpl_fmt_put(const struct vpmu_smpl_fmt *fmt);

/*
 * The checks a run-time format passes before it is registered (see
 * vpmu/vpmu_format.h). Returns 0, or -EINVAL with a message in (err).
 */
int vpmu_smpl_fmt_check(const struct vpmu_smpl_fmt *fmt, char *err,
			size_t errlen);

/*
 * Register (fmt) at run time (§3.5.8): checked, and refused with -EBUSY if
 * its UUID is taken (built in or registered). (handle) (a dlopen handle or
 * NULL) and (origin) are kept for unregistration and listing. Returns 0,
 * -EINVAL, -EBUSY (message in (err)) or -ENOMEM. (fmt) must stay valid
 * until unregistered.
 */
int vpmu_smpl_fmt_register(const struct vpmu_smpl_fmt *fmt, void *handle,
			   const char *origin, char *err, size_t errlen);

/*
 * Unregister run-time format (uuid) (§3.5.9); its handle goes to (*handle)
 * (if not NULL) for the caller to close. Returns 0, -EBUSY (in use by a
 * context) or -EINVAL (not registered, or built in).
 */
int vpmu_smpl_fmt_unregister(const uint8_t *uuid, void **handle);

/* Number of built-in formats (run-time ones: vpmu_format_list()). */
size_t vpmu_smpl_fmt_count(void);

/* The (i)-th built-in format, or NULL if (i) >= vpmu_smpl_fmt_count(). */
const struct vpmu_smpl_fmt *vpmu_smpl_fmt_at(size_t i);

/* True if (uuid) is all zeroes: the context uses no format (§3.1.1). */
bool vpmu_smpl_uuid_is_null(const uuid_t uuid);

/*
 * (size) rounded up to whole host pages; 0 if (size) is 0 or the rounding
 * overflows.
 */
size_t vpmu_smpl_buf_roundup(size_t size);

/*
 * Map (size) bytes (rounded up to pages) of zeroed, page-aligned anonymous
 * memory into buf->base / buf->size. Other fields are untouched. Returns 0,
 * -EINVAL if (size) is 0, or -ENOMEM.
 */
int vpmu_smpl_buf_alloc(struct vpmu_smpl_buf *buf, size_t size);

/* Unmap buf->base (if any) and clear base/size. Safe to call twice. */
void vpmu_smpl_buf_free(struct vpmu_smpl_buf *buf);

/* What vpmu_smpl_create() needs from PFM_CREATE_CONTEXT. */
struct vpmu_smpl_create_arg {
	uint32_t ctx_flags; /* IN: pfarg_ctx ctx_flags */
	uint16_t num_pmds;  /* IN: implemented PMDs */
	const void *arg;    /* IN: fmt->arg_size bytes of format arguments */
	size_t size_max;    /* IN: sampling memory still allowed (bytes) */
};

/*
 * Run validate, getsize, allocation and init of (fmt) in that order
 * (§3.1.1) into (buf), which must be zeroed by the caller. Returns 0 with
 * buf->size bytes allocated (to charge), or -errno with nothing allocated:
 * the format's own error, -ENOMEM if the size exceeds (a->size_max) or the
 * memory is not available.
 */
int vpmu_smpl_create(const struct vpmu_smpl_fmt *fmt,
		     const struct vpmu_smpl_create_arg *a,
		     struct vpmu_smpl_buf *buf);

/*
 * Call buf->fmt->exit (if any) then free the memory (§3.5.13). Returns
 * exit's result; the memory is freed in any case. Safe on a zeroed buf.
 */
int vpmu_smpl_destroy(struct vpmu_smpl_buf *buf);

/* The built-in formats (formats/default.c, formats/nway.c). */
extern const struct vpmu_smpl_fmt vpmu_smpl_fmt_default;
extern const struct vpmu_smpl_fmt vpmu_smpl_fmt_nway;

#endif /* VPMU_SMPL_H */
