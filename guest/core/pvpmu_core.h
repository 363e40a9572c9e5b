/* SPDX-License-Identifier: MIT */
/*
 * pvpmu_core.h: the portable core of the vpmu guest driver.
 *
 * The core wraps every hypercall of pvpmu/abi.h (sections 5 and 8), reads
 * the per-vCPU shared page without an exit (seqlock, TSC extension of
 * time-based PMDs) and detects vpmu through CPUID. It is freestanding C:
 * no libc and no OS header, so the project's minimal guest kernel, ring-3
 * programs granted the doorbell ports and (later) a Linux module all build
 * it unchanged. Whatever depends on the OS is reached through a small glue
 * ops table (struct pvpmu_glue_ops): address translation, the doorbell
 * itself, and the calling thread's ids.
 *
 * Addresses: request blocks and argument arrays are passed to the VMM as
 * guest-PHYSICAL addresses. The doorbell carries a 32-bit GPA, so request
 * blocks must lie below 4 GiB (-PVPMU_EFAULT otherwise) or be placed there
 * by the glue (call_block); argument arrays are 64-bit GPAs and must be
 * physically contiguous (the glue says).
 *
 * Errors: every int-returning function returns 0 (or a documented
 * non-negative value) or a negative PVPMU_E* code (pvpmu/abi.h section 4).
 */
#ifndef PVPMU_CORE_H
#define PVPMU_CORE_H

#include <pvpmu/abi.h>

/*
 * OS glue. (virt_to_gpa) and (map_gpa) are required; the others may be
 * NULL. Functions get the (opaque) of their struct pvpmu_drv.
 */
struct pvpmu_glue_ops {
	/*
	 * Store in (*gpa) the guest-physical address of the (len) bytes at
	 * (p), which must be physically contiguous. Returns 0 or
	 * -PVPMU_EFAULT.
	 */
	int (*virt_to_gpa)(void *opaque, const void *p, pvpmu_u64 len,
			   pvpmu_u64 *gpa);

	/*
	 * Store in (*out) an address through which the caller can read the
	 * (len) bytes of guest-physical memory at (gpa) (e.g. a sampling
	 * buffer). Returns 0, -PVPMU_EFAULT or -PVPMU_ENOMEM.
	 */
	int (*map_gpa)(void *opaque, pvpmu_u64 gpa, pvpmu_u64 len,
		       const void **out);

	/*
	 * Ring doorbell (nr) with the request block at (gpa) and return RAX
	 * (0 or -PVPMU_E*). NULL: pvpmu_doorbell(), the `outl` of
	 * pvpmu_hc.h, which needs the doorbell ports (ring 0, or ring 3
	 * with the ports in the TSS I/O bitmap).
	 */
	long (*doorbell)(void *opaque, unsigned int nr, pvpmu_u32 gpa);

	/*
	 * Issue (nr) for the request block (block) of (size) bytes that the
	 * caller filled where the VMM may not reach it (e.g. on a kernel
	 * stack in vmalloc space): copy it to memory below 4 GiB of the
	 * glue's choosing, ring, copy it back. Returns RAX (0 or -PVPMU_E*).
	 * NULL: the block is passed in place (virt_to_gpa, then doorbell).
	 */
	long (*call_block)(void *opaque, unsigned int nr, void *block,
			   pvpmu_u64 size);

	/* Id and group of the calling guest thread; NULL: 0 (unknown). */
	pvpmu_u32 (*current_tid)(void *opaque);
	pvpmu_u32 (*current_gid)(void *opaque);
};

/* A driver instance: the glue and its argument. */
struct pvpmu_drv {
	const struct pvpmu_glue_ops *ops;
	void *opaque;
};

/* The raw doorbell of pvpmu_hc.h, usable as glue (opaque ignored). */
long pvpmu_doorbell(void *opaque, unsigned int nr, pvpmu_u32 gpa);

/*
 * The guest OS supplies its glue: it registers its driver (which must
 * outlive every call; NULL withdraws it) once at start-up, before other
 * vCPUs use it (e.g. the minimal kernel on vCPU 0, guest/kernel/
 * pvpmu_glue.c). pvpmu_os_driver() returns it, or pvpmu_null_drv, whose
 * every operation answers -PVPMU_ENODEV, when none is registered. The SDK
 * calls the core with this driver unless told otherwise
 * (pvpmu_set_driver()).
 */
void pvpmu_os_register(const struct pvpmu_drv *drv);
const struct pvpmu_drv *pvpmu_os_driver(void);
extern const struct pvpmu_drv pvpmu_null_drv;

/*
 * Issue hypercall (nr) with the request block at (block) ((size) bytes, or
 * NULL and 0 for calls without one). Returns the VMM's answer, or
 * -PVPMU_EFAULT if the block is not addressable below 4 GiB, -PVPMU_EINVAL
 * for (nr) out of range.
 */
int pvpmu_call(const struct pvpmu_drv *drv, unsigned int nr, void *block,
	       pvpmu_u64 size);

/*
 * One perfmon2 command, perfmonctl(fd, cmd, arg, nargs) (PVPMU_HC_PFM),
 * with the argument given by guest-physical address: (arg_gpa) (0 for
 * none) and (arg_size) bytes. (restart_arg) is the format restart argument
 * of PFM_RESTART (0 otherwise). No local checks: bad values reach the VMM,
 * which is what error-path tests want.
 */
struct pvpmu_pfm_req {
	int fd;
	unsigned int cmd;
	int nargs;
	pvpmu_u64 arg_gpa;
	pvpmu_u64 arg_size;
	pvpmu_u64 restart_arg;
};
int pvpmu_pfm_gpa(const struct pvpmu_drv *drv, const struct pvpmu_pfm_req *r);

/*
 * The same with the argument given by pointer (arg) of (arg_size) bytes,
 * translated by the glue (NULL or 0 bytes: no argument). The VMM writes the
 * argument back (OUT fields, RETFL flags), also when the command fails.
 */
int pvpmu_pfm(const struct pvpmu_drv *drv, int fd, unsigned int cmd, void *arg,
	      pvpmu_u64 arg_size, int nargs);

/* PFM_RESTART of (fd) with format restart argument (restart_arg). */
int pvpmu_pfm_restart(const struct pvpmu_drv *drv, int fd,
		      pvpmu_u64 restart_arg);

/* PVPMU_HC_CLOSE: destroy context (fd) (the spec's close()). */
int pvpmu_hc_close(const struct pvpmu_drv *drv, int fd);

/*
 * PVPMU_HC_READ_MSG: dequeue one message of (fd) into (*msg), waiting up to
 * (timeout_ns) (0: never wait, -PVPMU_EAGAIN if none; PVPMU_WAIT_FOREVER).
 * Returns 0, -PVPMU_ETIMEDOUT, -PVPMU_EBADF...
 */
int pvpmu_hc_read_msg(const struct pvpmu_drv *drv, int fd, union pfm_msg *msg,
		      pvpmu_u64 timeout_ns);

/*
 * PVPMU_HC_SMPL_INFO: the guest-physical address (*gpa) and size (*size) of
 * the sampling buffer of (fd). -PVPMU_ENOENT when it has none.
 */
int pvpmu_hc_smpl_info(const struct pvpmu_drv *drv, int fd, pvpmu_u64 *gpa,
		       pvpmu_u64 *size);

/*
 * PVPMU_HC_SMPL_INFO, then map the buffer through the glue: (*buf) and
 * (*size) on success.
 */
int pvpmu_smpl_map(const struct pvpmu_drv *drv, int fd, const void **buf,
		   pvpmu_u64 *size);

/* PVPMU_HC_SET_VECTOR: notification vector of the calling vCPU (0: off). */
int pvpmu_hc_set_vector(const struct pvpmu_drv *drv, pvpmu_u32 vector);

/*
 * PVPMU_HC_SHARED: register (page) (page-aligned, physically contiguous) as
 * the calling vCPU's shared page, or unregister with NULL. The page must
 * stay in place until unregistered.
 */
int pvpmu_shared_register(const struct pvpmu_drv *drv,
			  struct pvpmu_shared_page *page);

/*
 * PVPMU_HC_SCHED: thread (tid) of context (fd) goes (op) PVPMU_SCHED_*.
 * (counting), unless NULL, gets the answer's counting field: 1 when a
 * SCHED_OUT was counted by the context's hv_* events.
 */
int pvpmu_hc_sched(const struct pvpmu_drv *drv, int fd, pvpmu_u32 op,
		   pvpmu_u32 tid, pvpmu_u32 *counting);

/*
 * PVPMU_HC_BLOCK: wait (at most (timeout_ns)) while guest thread (tid) (0:
 * the one scheduled in on this vCPU) is blocked by a PFM_FL_NOTIFY_BLOCK
 * notification. Returns 0 (not or no longer blocked), -PVPMU_EAGAIN
 * (blocked, timeout 0), -PVPMU_ETIMEDOUT.
 */
int pvpmu_hc_block(const struct pvpmu_drv *drv, pvpmu_u32 tid,
		   pvpmu_u64 timeout_ns);

/*
 * PVPMU_HC_FMT_INFO: sampling format (index) into (*out) (out->nr: how
 * many there are, also on -PVPMU_ENOENT for an index past the end).
 */
int pvpmu_hc_fmt_info(const struct pvpmu_drv *drv, pvpmu_u32 index,
		      struct pvpmu_hc_fmt_info *out);
/* PVPMU_HC_TASK: one process record (abi.h); its size is filled in. */
int pvpmu_hc_task(const struct pvpmu_drv *drv, struct pvpmu_hc_task *req);

/* PVPMU_HC_NOP and PVPMU_HC_ECHO ((*out) = ~in). */
int pvpmu_hc_nop(const struct pvpmu_drv *drv);
int pvpmu_hc_echo(const struct pvpmu_drv *drv, pvpmu_u64 in, pvpmu_u64 *out);

/*
 * Fast read (shared page; no exit).
 *
 * pvpmu_shared_read() copies the values of the (n) PMDs named in (pmds)
 * (reg_num, reg_set) of context (fd) from the shared page (sp) into their
 * reg_value, consistently (seqlock), and extends time-based PMDs to now
 * with (tsc_now) (the caller's TSC; pass pvpmu_rdtsc()). Returns 0, or:
 *   -PVPMU_EINVAL   n <= 0, or a PMD index >= PFM_MAX_PMDS;
 *   -PVPMU_EFAULT   NULL page or array;
 *   -PVPMU_EAGAIN   the page cannot answer: another ABI, (fd) not loaded
 *                   on this vCPU, a PMD not published, a set that is not
 *                   the active one, or the VMM kept writing (retry or use
 *                   the hypercall).
 * (*times), if not NULL, receives the page's per-set times.
 */
struct pvpmu_shared_times {
	pvpmu_u16 active_set;
	pvpmu_u8 active; /* started and not masked */
	pvpmu_u8 nr_sets;
	pvpmu_u64 run_ns; /* vCPU run time at the last exit */
	struct pvpmu_shared_set sets[PVPMU_SHARED_MAX_SETS];
};
int pvpmu_shared_read(const struct pvpmu_shared_page *sp, int fd,
		      struct pfarg_pmd *pmds, int n, pvpmu_u64 tsc_now,
		      struct pvpmu_shared_times *times);

/*
 * Extend a time-based PMD published at TSC (tsc) with (value) to TSC
 * (now): value + (((now - tsc) * mult) >> shift), 128-bit intermediate;
 * (now) before (tsc) counts as no time.
 */
pvpmu_u64 pvpmu_tsc_extend(pvpmu_u64 value, pvpmu_u64 tsc, pvpmu_u64 now,
			   pvpmu_u32 mult, pvpmu_u32 shift);

/*
 * The TSC (rdtsc) and this vCPU's index (CPUID.1 EBX[31:24], the APIC id
 * the VMM sets). CPUID is only the guest's in ring 0 on every host: on PVM
 * the host answers ring-3 CPUID itself (measured: another APIC id, KVM's
 * hypervisor leaves), so ring 3 gets its vCPU index from its OS, and
 * pvpmu_detect() belongs in ring 0 there.
 */
pvpmu_u64 pvpmu_rdtsc(void);
pvpmu_u32 pvpmu_cpu_index(void);

/*
 * CPUID detection. pvpmu_detect() reads leaves PVPMU_CPUID_SIGNATURE and
 * PVPMU_CPUID_FEATURES; pvpmu_detect_parse() is its pure part, given the
 * EAX..EDX of both leaves. Return 0, -PVPMU_ENODEV (no vpmu signature or
 * the feature leaf missing) or -PVPMU_ENOTSUP (another ABI version; (*f)
 * is still filled).
 */
struct pvpmu_features {
	pvpmu_u32 max_leaf; /* highest hypervisor leaf */
	pvpmu_u32 abi;      /* PVPMU_ABI_VERSION of the VMM */
	pvpmu_u32 features; /* PVPMU_FEAT_* */
	pvpmu_u32 port_base;
	pvpmu_u32 hc_max;
};
int pvpmu_detect(struct pvpmu_features *f);
int pvpmu_detect_parse(const pvpmu_u32 sig[4], const pvpmu_u32 feat[4],
		       struct pvpmu_features *f);

#endif /* PVPMU_CORE_H */
