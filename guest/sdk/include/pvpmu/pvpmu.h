/* SPDX-License-Identifier: MIT */
/*
 * pvpmu/pvpmu.h: libpvpmu, the guest SDK of the vpmu virtual PMU.
 *
 * The perfmon2 interface v0.6 (spec chapter 3, section 6.1 calls) with the
 * spec's names and its pfarg_* structures (pvpmu/abi.h section 6), carried
 * by the paravirtual hypercalls; plus what a tool needs around them: event
 * names from the catalogue, multiplexing-scaled values, the sampling buffer
 * and its samples, the exit-free fast read, and error strings.
 *
 * Return convention (differs from the spec on purpose): every int function
 * returns 0 on success or a NEGATIVE PVPMU_E* code (= -errno of the spec's
 * error lists, e.g. -PVPMU_EBADF for a bad context). There is no errno: the
 * SDK runs freestanding on several vCPUs at once. As in the spec the return
 * value is never overloaded: the context handle comes back in ctx_fd.
 * Vector commands stop at the first bad element and flag it in its
 * reg_flags / set_flags (PFM_REG_HAS_ERROR(), PFM_SET_HAS_ERROR()).
 *
 * Context handles (the spec's fds) are small integers valid only in the VM
 * that created them. Every call goes to the paravirtual driver core
 * (guest/core/pvpmu_core.h) with the driver the guest OS registered
 * there (its glue: address translation, doorbell; the minimal guest kernel
 * registers its own at boot), or the one given to pvpmu_set_driver().
 * Without either every call answers -PVPMU_ENODEV.
 */
#ifndef PVPMU_PVPMU_H
#define PVPMU_PVPMU_H

#include "abi.h"
#include "catalog.h"

#define PVPMU_API __attribute__((visibility("default")))

struct pvpmu_drv;

/*
 * Use (drv) (see guest/core/pvpmu_core.h; the struct must outlive
 * its use) for every later call, or with NULL the driver the guest OS
 * registered (pvpmu_os_driver()). Not thread-safe: call before using the
 * SDK on other vCPUs.
 */
PVPMU_API void pvpmu_set_driver(const struct pvpmu_drv *drv);

/* The driver in use. */
PVPMU_API const struct pvpmu_drv *pvpmu_driver(void);

/*
 * 1. perfmon2 calls (spec 3.1; digest 5). Each maps to one hypercall.
 */

/*
 * PFM_CREATE_CONTEXT. (ctx) IN/OUT: ctx_flags and ctx_smpl_buf_id in,
 * ctx_fd and ctx_smpl_buf_size out. (fmt_arg), (fmt_arg_size): the format
 * arguments appended after the pfarg_ctx (NULL/0 without a format; e.g. a
 * pfm_default_smpl_arg). If (fmt_arg) already follows (ctx) in memory it is
 * sent in place; otherwise both are copied into a bounce buffer of
 * PVPMU_CTX_BOUNCE_MAX bytes (-PVPMU_E2BIG beyond). Errors: as the spec
 * (-PVPMU_EINVAL flags/UUID/format, -PVPMU_ENOMEM, -PVPMU_E2BIG,
 * -PVPMU_EFAULT, -PVPMU_EPERM).
 */
#define PVPMU_CTX_BOUNCE_MAX 512
PVPMU_API int pfm_create_context(pfarg_ctx_t *ctx, const void *fmt_arg,
				 pvpmu_u64 fmt_arg_size);

/* PFM_WRITE_PMCS / PFM_WRITE_PMDS / PFM_READ_PMDS of (n) elements. */
PVPMU_API int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int n);
PVPMU_API int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int n);
PVPMU_API int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int n);

/*
 * PFM_LOAD_CONTEXT. For a PFM_FL_SYSTEM_WIDE context, load_pid is the
 * calling vCPU's index (from the OS; the minimal kernel passes it to
 * user_main()); for a per-thread one, the guest thread, which is counted
 * only while scheduled in (pvpmu_sched()).
 */
PVPMU_API int pfm_load_context(int fd, pfarg_load_t *load);

/* PFM_START ((start) may be NULL), PFM_STOP, PFM_UNLOAD_CONTEXT. */
PVPMU_API int pfm_start(int fd, pfarg_start_t *start);
PVPMU_API int pfm_stop(int fd);
PVPMU_API int pfm_unload_context(int fd);

/*
 * PFM_RESTART: one per overflow notification. pvpmu_restart_arg() passes
 * the format's restart argument (n-way format: regions to release).
 */
PVPMU_API int pfm_restart(int fd);
PVPMU_API int pvpmu_restart_arg(int fd, pvpmu_u64 restart_arg);

/* PFM_CREATE_EVTSETS / PFM_DELETE_EVTSETS / PFM_GETINFO_EVTSETS. */
PVPMU_API int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int n);
PVPMU_API int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int n);
PVPMU_API int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int n);

/* PFM_GETINFO_PMCS / PFM_GETINFO_PMDS: no context needed. */
PVPMU_API int pfm_getinfo_pmcs(pfarg_pmcinfo_t *pmcs, int n);
PVPMU_API int pfm_getinfo_pmds(pfarg_pmdinfo_t *pmds, int n);

/* PFM_GET_CONFIG / PFM_SET_CONFIG (guests get -PVPMU_EPERM for SET). */
PVPMU_API int pfm_get_config(pfarg_config_t *cfg);
PVPMU_API int pfm_set_config(pfarg_config_t *cfg);

/* Destroy context (fd) (the spec's close()); the handle is dead after. */
PVPMU_API int pfm_close(int fd);

/*
 * The spec's read() on the context: dequeue one message into (*msg),
 * waiting at most (timeout_ns) (0: do not wait, -PVPMU_EAGAIN when the
 * queue is empty; PVPMU_WAIT_FOREVER). -PVPMU_ETIMEDOUT on timeout. The
 * vCPU halts in the VMM while it waits.
 */
PVPMU_API int pfm_read_msg(int fd, pfm_msg_t *msg, pvpmu_u64 timeout_ns);

/*
 * The spec's mmap() of the sampling buffer: (*buf) and (*size) of the
 * read-only buffer of (fd). -PVPMU_ENOENT when the context has none.
 */
PVPMU_API int pfm_smpl_buf(int fd, const void **buf, pvpmu_u64 *size);

/*
 * The sampling formats this host offers (spec 3.5.2; no privilege needed):
 * built-in ones first, then those the VMM loaded at run time. Fills up to
 * (max) entries of (fmts) (uuid: the ctx_smpl_buf_id to use, name,
 * flags PVPMU_FMT_BUILTIN, arg_size) and returns how many formats there
 * are (may exceed max), or a negative status. (max) 0 only counts them.
 */
typedef struct pvpmu_hc_fmt_info pfm_format_info_t;
PVPMU_API int pfm_getinfo_formats(pfm_format_info_t *fmts, int max);

/* Notification vector of the calling vCPU (32..255, 0: none). */
PVPMU_API int pvpmu_set_vector(pvpmu_u32 vector);

/* Tell the VMM guest thread (tid) of per-thread (fd) runs: PVPMU_SCHED_*. */
PVPMU_API int pvpmu_sched(int fd, pvpmu_u32 op, pvpmu_u32 tid);

/*
 * 2. The fast read (shared page; no exit)
 *
 * pvpmu_shared_attach() registers (page) (4096 bytes, page-aligned, owned
 * by the caller) as the calling vCPU's shared page (NULL: unregister).
 *
 * pvpmu_read_fast() answers like pfm_read_pmds() (reg_value only) from
 * (page) when it can: (fd) is the context loaded on this vCPU and every
 * requested PMD is published for the active set. Time-based PMDs are exact
 * now; others are as of the vCPU's last exit. -PVPMU_EAGAIN when the page
 * cannot answer. pfm_read_pmds_fast() falls back to pfm_read_pmds() then.
 */
PVPMU_API int pvpmu_shared_attach(struct pvpmu_shared_page *page);
PVPMU_API int pvpmu_read_fast(const struct pvpmu_shared_page *page, int fd,
			      pfarg_pmd_t *pmds, int n);
PVPMU_API int pfm_read_pmds_fast(const struct pvpmu_shared_page *page, int fd,
				 pfarg_pmd_t *pmds, int n);

/*
 * 3. Events: names of the catalogue -> PMC values: pvpmu_event_encode()
 * of pvpmu/catalog.h (included above), which the host shares.
 *
 * Counting PMCs use the x86 IA32_PERFEVTSELx layout, PVPMU_EVSEL_* of
 * pvpmu/abi.h section 9.1: code = umask << 8 | event.
 */

/*
 * 4. Multiplexing: scaled = raw * enabled / running (128-bit, no FPU)
 *
 * Returns PVPMU_SCALE_EXACT (running >= enabled: *scaled = raw),
 * PVPMU_SCALE_SCALED, or PVPMU_SCALE_NOT_COUNTED (running == 0: the event
 * never ran; *scaled = 0). Saturates at UINT64_MAX.
 */
#define PVPMU_SCALE_EXACT       0
#define PVPMU_SCALE_SCALED      1
#define PVPMU_SCALE_NOT_COUNTED 2
PVPMU_API int pvpmu_scale(pvpmu_u64 raw, pvpmu_u64 enabled, pvpmu_u64 running,
			  pvpmu_u64 *scaled);

/* (a * b) / c with a 128-bit product, saturated; c == 0 gives 0. */
PVPMU_API pvpmu_u64 pvpmu_muldiv(pvpmu_u64 a, pvpmu_u64 b, pvpmu_u64 c);

/*
 * 5. Default-format samples (abi.h section 7.1)
 *
 * The body of a sample is the PMDs of the overflowed PMC's reg_smpl_pmds;
 * the iterator asks (fn) for that mask per (set, ovfl_pmd) (for
 * PFM_DFL_SMPL_NO_HDR/IIP_HDR buffers, which do not say, with both
 * 0xffff). NULL (fn): no body. It never reads outside the (size) bytes
 * given, whatever the header says.
 */
typedef pvpmu_u64 (*pvpmu_smpl_pmds_fn_t)(void *opaque, pvpmu_u16 set,
					  pvpmu_u16 ovfl_pmd);

struct pvpmu_smpl_iter {
	const pvpmu_u8 *buf;
	pvpmu_u64 end;  /* bytes that may hold samples */
	pvpmu_u64 offs; /* next sample */
	pvpmu_u64 left; /* samples the header announces, still unread */
	pvpmu_u32 flags;
	pvpmu_u32 entry_size; /* 40, 8 (IIP) or 0 (NO_HDR) */
	pvpmu_smpl_pmds_fn_t fn;
	void *opaque;
	struct pfm_default_smpl_hdr hdr; /* copy taken at init */
};

struct pvpmu_smpl {
	struct pfm_default_smpl_entry entry; /* copy; ip only with IIP */
	pvpmu_u64 smpl_pmds;                 /* PMDs of the body */
	const pvpmu_u64 *body;               /* popcount(smpl_pmds) values */
	unsigned int nr_body;
	pvpmu_u64 offs; /* of the sample in the buffer */
};

/*
 * Start iterating the (size)-byte buffer (buf). Returns 0, -PVPMU_EFAULT
 * (NULL), -PVPMU_EINVAL (smaller than a header, another major version,
 * NO_HDR with IIP_HDR).
 */
PVPMU_API int pvpmu_smpl_iter_init(struct pvpmu_smpl_iter *it, const void *buf,
				   pvpmu_u64 size, pvpmu_smpl_pmds_fn_t fn,
				   void *opaque);

/*
 * The next sample into (*s): 1, or 0 at the end, or -PVPMU_EFAULT when the
 * header announces a sample that does not fit (corrupt or truncated
 * buffer; iteration stops).
 */
PVPMU_API int pvpmu_smpl_iter_next(struct pvpmu_smpl_iter *it,
				   struct pvpmu_smpl *s);

/*
 * 5b. n-way buffers (abi.h section 7.2, PVPMU_NWAY_SMPL_UUID)
 *
 * pvpmu_nway_full() stores in (order) the indexes of the FULL regions,
 * oldest (lowest seq) first, at most (max); returns their number, or
 * -PVPMU_EINVAL for a header that cannot be an n-way header of (size)
 * bytes. pvpmu_nway_iter_init() starts iterating the samples of region
 * (region) with the iterator of section 5 (pvpmu_smpl_iter_next()):
 * -PVPMU_EINVAL for a bad region index or region bounds outside the
 * buffer. Only FULL regions are stable (the host writes the FILLING one);
 * the header is read with acquire ordering after the states, as the host
 * publishes them with release stores. A drained region goes back to the VMM
 * with pvpmu_restart_arg(fd, 1ULL << region) (or 0: the oldest FULL one).
 */
PVPMU_API int pvpmu_nway_full(const void *buf, pvpmu_u64 size,
			      unsigned int *order, unsigned int max);
PVPMU_API int pvpmu_nway_iter_init(struct pvpmu_smpl_iter *it, const void *buf,
				   pvpmu_u64 size, unsigned int region,
				   pvpmu_smpl_pmds_fn_t fn, void *opaque);

/*
 * 6. Symbols: address -> function, for profiles
 *
 * (tab) holds (n) text symbols sorted by address (e.g. generated from the
 * image's `nm` at build time, see guest/tools). Returns the symbol whose
 * [addr, addr + size) holds (ip); a symbol of size 0 extends to the next
 * one. NULL when (ip) is before the first symbol or in a gap.
 */
struct pvpmu_sym {
	pvpmu_u64 addr;
	pvpmu_u64 size;
	const char *name;
};
PVPMU_API const struct pvpmu_sym *
pvpmu_sym_lookup(const struct pvpmu_sym *tab, unsigned int n, pvpmu_u64 ip);

/*
 * 7. Errors: a static string for 0 or any PVPMU_E* code (sign ignored).
 * Not pfm_strerror(): that is libpfm4's, which a tool may link as well.
 */
PVPMU_API const char *pvpmu_strerror(int err);

#endif /* PVPMU_PVPMU_H */
