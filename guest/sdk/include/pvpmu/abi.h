/* SPDX-License-Identifier: MIT */
/*
 * pvpmu/abi.h: the one ABI shared by the vpmu host (vmm/, vpmu/), the guest
 * driver (guest/core/, guest/linux/) and the guest SDK (guest/sdk/).
 *
 * It is freestanding: fixed-width types only, no pointers and no size_t.
 * Guest addresses are u64 guest-physical addresses (GPAs). Every struct has
 * explicit padding and a _Static_assert on its size; tests/unit/guest/sdk
 * checks the offsets too.
 *
 * Sections:
 *   1. Boot protocol (VMM -> guest image)
 *   2. I/O ports (console, exit, hypercall doorbells)
 *   3. CPUID leaves
 *   4. Status codes
 *   5. Hypercall convention, numbers and request blocks
 *   6. perfmon2 constants and argument structures
 *   7. Sampling formats
 *   8. Hypercall request blocks that carry perfmon2 types
 *   9. Event catalogue codes
 *  10. The Linux character device (ioctl, mmap)
 */
#ifndef PVPMU_ABI_H
#define PVPMU_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef __u8 pvpmu_u8;
typedef __u16 pvpmu_u16;
typedef __u32 pvpmu_u32;
typedef __u64 pvpmu_u64;
typedef __s32 pvpmu_s32;
typedef __s64 pvpmu_s64;
#else
#include <stdint.h>
typedef uint8_t pvpmu_u8;
typedef uint16_t pvpmu_u16;
typedef uint32_t pvpmu_u32;
typedef uint64_t pvpmu_u64;
typedef int32_t pvpmu_s32;
typedef int64_t pvpmu_s64;
#endif

#define PVPMU_ABI_VERSION 1
#define PFM_MAX_PMDS_ABI  64 /* == PFM_MAX_PMDS (section 6) */

/*
 * 1. Boot protocol
 *
 * The VMM loads a static ELF64 x86-64 image and starts every vCPU directly
 * in 64-bit long mode at the ELF entry point, ring 0, interrupts disabled:
 *   - CS = PVPMU_BOOT_CS (64-bit code), DS/ES/SS = PVPMU_BOOT_DS;
 *   - paging on, the first 4 GiB identity mapped with 2 MiB pages
 *     (RWX, user-accessible), page tables in the VMM area below 1 MiB;
 *   - CR4.OSFXSR/OSXMMEXCPT set, EFER.SCE/LME/LMA set;
 *   - RDI = vCPU index (0 .. nr_vcpus-1), RSI = GPA of struct
 *     pvpmu_boot_info, RSP = 0 (the image chooses its own stacks).
 * Guest images are linked at or above PVPMU_BOOT_IMAGE_MIN.
 */
#define PVPMU_BOOT_CS        0x08
#define PVPMU_BOOT_DS        0x10
#define PVPMU_BOOT_INFO_GPA  0x9000ULL
#define PVPMU_BOOT_IMAGE_MIN 0x100000ULL
#define PVPMU_BOOT_MAGIC     0x31554d5056ULL /* "VPMU1" */

/* Filled by the VMM before any vCPU starts; read-only by convention. */
struct pvpmu_boot_info {
	pvpmu_u64 magic;    /* OUT: PVPMU_BOOT_MAGIC */
	pvpmu_u32 abi;      /* OUT: PVPMU_ABI_VERSION */
	pvpmu_u32 nr_vcpus; /* OUT: vCPUs started */
	pvpmu_u64 mem_size; /* OUT: bytes of RAM at GPA 0 */
	pvpmu_u64 tsc_khz;  /* OUT: guest TSC frequency, 0 if unknown */
	pvpmu_u8 uuid[16];  /* OUT: the VM's UUID */
	pvpmu_u8 name[64];  /* OUT: the VM's name, NUL-terminated */
	/*
	 * OUT, at run time: bit i set means the thread running on vCPU i was
	 * blocked by a PFM_FL_NOTIFY_BLOCK notification (spec 3.1.9). The
	 * guest kernel checks it on the notification vector and, before it
	 * returns to user level there, calls PVPMU_HC_BLOCK (tid 0), which
	 * waits for the RESTART and clears the bit.
	 */
	pvpmu_u64 block_vcpus;
	pvpmu_u64 reserved[3];
};
_Static_assert(sizeof(struct pvpmu_boot_info) == 144,
	       "pvpmu_boot_info layout is ABI");

/*
 * 2. I/O ports
 *
 * PVPMU_PORT_COM1: an 8250/16550 UART (8 registers); polled output.
 * PVPMU_PORT_EXIT: a 32-bit OUT ends the whole VM; the value is the VMM's
 *   exit status (0..255; larger values are truncated to 8 bits).
 * PVPMU_PORT_NULL: writes are accepted and ignored, reads return 0; it is
 *   the floor of the doorbell benchmarks (a bare PIO exit, no dispatch).
 * PVPMU_PORT_HC_BASE + nr: the doorbell of hypercall nr (see section 5).
 */
#define PVPMU_PORT_COM1    0x3f8
#define PVPMU_PORT_EXIT    0x0f4
#define PVPMU_PORT_NULL    0x0f5
#define PVPMU_PORT_HC_BASE 0x0600
#define PVPMU_HC_MAX       64 /* hypercall numbers are 1 .. PVPMU_HC_MAX-1 */

/*
 * 3. CPUID leaves
 *
 * 0x40000000: EAX = highest hypervisor leaf, EBX:ECX:EDX = "vpmuvpmuvpmu".
 * 0x40000001: EAX = PVPMU_ABI_VERSION, EBX = PVPMU_FEAT_* bits,
 *             ECX = first doorbell port, EDX = PVPMU_HC_MAX.
 */
#define PVPMU_CPUID_SIGNATURE 0x40000000U
#define PVPMU_CPUID_FEATURES  0x40000001U
#define PVPMU_CPUID_SIG_EBX   0x756d7076U /* "vpmu" */
#define PVPMU_CPUID_SIG_ECX   0x756d7076U
#define PVPMU_CPUID_SIG_EDX   0x756d7076U

#define PVPMU_FEAT_HYPERCALL (1U << 0) /* doorbell hypercalls */
#define PVPMU_FEAT_EXIT_PORT (1U << 1) /* PVPMU_PORT_EXIT */
#define PVPMU_FEAT_PFM       (1U << 2) /* perfmon2 hypercalls (3..9) */
#define PVPMU_FEAT_SHARED    (1U << 3) /* per-vCPU shared page */

/*
 * 4. Status codes
 *
 * Hypercalls return 0 or a negative PVPMU_E* value. The numbers are fixed
 * by this ABI; they happen to equal the Linux x86 errno values so that
 * perfmon2's errno semantics carry over unchanged, but host errno values
 * never cross into the guest: the host maps each one explicitly.
 */
enum pvpmu_status {
	PVPMU_OK        = 0,
	PVPMU_EPERM     = 1,
	PVPMU_ENOENT    = 2,
	PVPMU_ESRCH     = 3,
	PVPMU_EINTR     = 4,
	PVPMU_EIO       = 5,
	PVPMU_EBADF     = 9,
	PVPMU_EAGAIN    = 11,
	PVPMU_ENOMEM    = 12,
	PVPMU_EACCES    = 13,
	PVPMU_EFAULT    = 14,
	PVPMU_EBUSY     = 16,
	PVPMU_EEXIST    = 17,
	PVPMU_ENODEV    = 19,
	PVPMU_EINVAL    = 22,
	PVPMU_ENOSPC    = 28,
	PVPMU_E2BIG     = 7,
	PVPMU_ENOSYS    = 38,
	PVPMU_ENOTSUP   = 95,
	PVPMU_ETIMEDOUT = 110,
};

/*
 * 5. Hypercall convention
 *
 * The guest issues `outl %eax, %dx` with DX = PVPMU_PORT_HC_BASE + nr and
 * EAX = the 32-bit GPA of the call's request block (0 for calls that take
 * none). When the OUT completes, RAX holds the result: 0 or -PVPMU_E*,
 * sign-extended to 64 bits. Other registers are preserved.
 *
 * The VMM copies the request block out of guest memory once, validates it,
 * and copies the answer back once. A GPA range that is not wholly inside
 * guest RAM gives -PVPMU_EFAULT; an unknown nr gives -PVPMU_ENOSYS.
 *
 * 5.1 Request block sizes: how a block grows
 *
 * Every request block starts with a u32 size: sizeof the struct as the
 * guest was built with it (guests always send sizeof). A block only ever
 * grows at its end, and a new field's zero value means "as before". With
 * H the host's sizeof, V1 the block's first-version size (its
 * PVPMU_HC_*_SIZE_VER1) and G the guest's size field:
 *   - G == H: the common case;
 *   - V1 <= G < H (an older guest): the host reads G bytes and treats the
 *     fields it knows beyond them as zero; it writes back only G bytes;
 *   - H < G <= PVPMU_HC_BLOCK_MAX (a newer guest): accepted if the G - H
 *     bytes the host does not know are all zero (the guest asks for
 *     nothing new), else -PVPMU_E2BIG; the host writes back H bytes;
 *   - G < V1 (0 included): -PVPMU_EINVAL;
 *   - G > PVPMU_HC_BLOCK_MAX: -PVPMU_E2BIG.
 * The VMM fetches each byte of the block once: the first V1 bytes (which
 * hold the size), then the rest; every check looks at that copy. A refused
 * block counts as a guest error in the vCPU's statistics.
 *
 * Number 0 is reserved. PVPMU_HC_NOP answers 0 and is used to measure the
 * round trip. PVPMU_HC_ECHO copies the request's value to its answer.
 */
#define PVPMU_HC_RESERVED   0
#define PVPMU_HC_NOP        1  /* no block; answers 0 */
#define PVPMU_HC_ECHO       2  /* struct pvpmu_hc_echo */
#define PVPMU_HC_PFM        3  /* struct pvpmu_hc_pfm: a perfmonctl() */
#define PVPMU_HC_CLOSE      4  /* struct pvpmu_hc_ctx: close(fd) */
#define PVPMU_HC_READ_MSG   5  /* struct pvpmu_hc_read_msg: read(fd) */
#define PVPMU_HC_SMPL_INFO  6  /* struct pvpmu_hc_smpl_info: mmap() info */
#define PVPMU_HC_SET_VECTOR 7  /* struct pvpmu_hc_vector: this vCPU's IRQ */
#define PVPMU_HC_SHARED     8  /* struct pvpmu_hc_shared: this vCPU's page */
#define PVPMU_HC_SCHED      9  /* struct pvpmu_hc_sched: thread in/out/exit */
#define PVPMU_HC_BLOCK      10 /* struct pvpmu_hc_block: wait while blocked */
#define PVPMU_HC_FMT_INFO   11 /* struct pvpmu_hc_fmt_info: list formats */
#define PVPMU_HC_TASK       12 /* struct pvpmu_hc_task: process names, maps */

/* The largest request block a VMM accepts (section 5.1): one page. */
#define PVPMU_HC_BLOCK_MAX 4096

/*
 * First-version sizes of the request blocks (section 5.1): the smallest
 * size field a VMM accepts for each. They never change; sizeof may grow.
 */
#define PVPMU_HC_ECHO_SIZE_VER1      24
#define PVPMU_HC_PFM_SIZE_VER1       48
#define PVPMU_HC_CTX_SIZE_VER1       8
#define PVPMU_HC_SMPL_INFO_SIZE_VER1 24
#define PVPMU_HC_VECTOR_SIZE_VER1    8
#define PVPMU_HC_SHARED_SIZE_VER1    16
#define PVPMU_HC_SCHED_SIZE_VER1     16
#define PVPMU_HC_READ_MSG_SIZE_VER1  48
#define PVPMU_HC_BLOCK_SIZE_VER1     16
#define PVPMU_HC_FMT_INFO_SIZE_VER1  80
#define PVPMU_HC_TASK_SIZE_VER1      72

/* PVPMU_HC_ECHO */
struct pvpmu_hc_echo {
	pvpmu_u32 size; /* IN: sizeof(struct pvpmu_hc_echo), §5.1 */
	pvpmu_u32 pad0; /* IN: must be zero */
	pvpmu_u64 in;   /* IN */
	pvpmu_u64 out;  /* OUT: in, bit-inverted */
};
_Static_assert(sizeof(struct pvpmu_hc_echo) == 24,
	       "pvpmu_hc_echo layout is ABI");

/*
 * PVPMU_HC_PFM: one perfmon2 command, exactly perfmonctl(fd, cmd, arg,
 * nargs) of the spec (section 3.1; section 6.1's per-command calls map onto
 * it). (arg_gpa) is the guest-physical address of the argument: an array of
 * (nargs) elements of the command's pfarg_* type, or for PFM_CREATE_CONTEXT
 * one pfarg_ctx followed by (arg_size - 32) bytes of format arguments.
 * (arg_size) is the argument's total byte size; for vector commands it must
 * equal nargs * sizeof(element). The VMM copies the argument in once,
 * runs the command, and copies it back once (OUT fields, RETFL error
 * flags), also when the command failed. Context handles (fd) are small
 * integers valid only in this VM.
 */
struct pvpmu_hc_pfm {
	pvpmu_u32 size;        /* IN: sizeof(struct pvpmu_hc_pfm), §5.1 */
	pvpmu_u32 cmd;         /* IN: PFM_* command code */
	pvpmu_s32 fd;          /* IN: context handle (ignored when the command
				  takes none) */
	pvpmu_s32 nargs;       /* IN: element count */
	pvpmu_u64 arg_gpa;     /* IN: argument address, 0 for none */
	pvpmu_u64 arg_size;    /* IN: argument bytes */
	pvpmu_u32 tid;         /* IN: calling guest thread (0: unknown) */
	pvpmu_u32 gid;         /* IN: its group id (0: unknown) */
	pvpmu_u64 restart_arg; /* IN: PFM_RESTART: format restart argument */
};
_Static_assert(sizeof(struct pvpmu_hc_pfm) == 48, "pvpmu_hc_pfm layout is ABI");

/* PVPMU_HC_CLOSE */
struct pvpmu_hc_ctx {
	pvpmu_u32 size; /* IN: sizeof(struct pvpmu_hc_ctx), §5.1 */
	pvpmu_s32 fd;   /* IN: context handle */
};
_Static_assert(sizeof(struct pvpmu_hc_ctx) == 8, "pvpmu_hc_ctx is ABI");

/*
 * PVPMU_HC_SMPL_INFO: where the sampling buffer of (fd) is mapped in guest
 * physical memory: read-only, page-aligned, (buf_size) bytes at (gpa).
 * -PVPMU_ENOENT when the context has no buffer.
 */
struct pvpmu_hc_smpl_info {
	pvpmu_u32 size;     /* IN: sizeof(struct pvpmu_hc_smpl_info), §5.1 */
	pvpmu_s32 fd;       /* IN: context handle */
	pvpmu_u64 gpa;      /* OUT: guest-physical address */
	pvpmu_u64 buf_size; /* OUT: bytes */
};
_Static_assert(sizeof(struct pvpmu_hc_smpl_info) == 24,
	       "pvpmu_hc_smpl_info is ABI");

/*
 * PVPMU_HC_SET_VECTOR: the interrupt vector (32..255) the VMM injects on
 * the calling vCPU when a message is queued for a context loaded there
 * (0 turns notifications off). Injection waits until the guest has
 * interrupts enabled.
 */
struct pvpmu_hc_vector {
	pvpmu_u32 size;   /* IN: sizeof(struct pvpmu_hc_vector), §5.1 */
	pvpmu_u32 vector; /* IN: 0 or 32..255 */
};
_Static_assert(sizeof(struct pvpmu_hc_vector) == 8, "pvpmu_hc_vector is ABI");

/*
 * PVPMU_HC_SHARED: register (gpa, page-aligned, in RAM) as the calling
 * vCPU's struct pvpmu_shared_page, or unregister it with gpa 0.
 */
struct pvpmu_hc_shared {
	pvpmu_u32 size; /* IN: sizeof(struct pvpmu_hc_shared), §5.1 */
	pvpmu_u32 pad0; /* IN: must be zero */
	pvpmu_u64 gpa;  /* IN: page address or 0 */
};
_Static_assert(sizeof(struct pvpmu_hc_shared) == 16, "pvpmu_hc_shared is ABI");

/*
 * PVPMU_HC_SCHED: the guest driver tells the VMM that the guest thread of
 * per-thread context (fd) starts (IN) or stops (OUT) running on the calling
 * vCPU, or has exited (EXIT: the context is unloaded, PFM_MSG_END queued).
 * The hypercall itself is an exit like any other: SCHED_OUT is counted by
 * the context's hv_* events when the context was counting (started, not
 * masked), and its answer says whether it was, so that a driver can tell
 * its own calls apart from its thread's (struct pvpmu_ioc_info).
 */
#define PVPMU_SCHED_IN   1
#define PVPMU_SCHED_OUT  2
#define PVPMU_SCHED_EXIT 3
struct pvpmu_hc_sched {
	pvpmu_u32 size;     /* IN: sizeof(struct pvpmu_hc_sched), §5.1 */
	pvpmu_s32 fd;       /* IN: context handle */
	pvpmu_u32 op;       /* IN: PVPMU_SCHED_* */
	pvpmu_u32 tid;      /* IN: the guest thread */
	pvpmu_u32 counting; /* OUT: SCHED_OUT: 1 if the context was counting,
			       so that its active set's hv_* events count
			       this call; else 0 */
	pvpmu_u32 pad0;     /* IN: must be zero */
};
_Static_assert(sizeof(struct pvpmu_hc_sched) == 24, "pvpmu_hc_sched is ABI");

/*
 * PVPMU_HC_BLOCK (spec 3.1.9, 3.4.3): with PFM_FL_NOTIFY_BLOCK, the
 * monitored thread of a per-thread context makes no user-level progress
 * after an overflow notification until PFM_RESTART (or UNLOAD, or close).
 * Only the guest kernel can hold a thread back: on the notification
 * vector (which the VMM raises on the vCPU the thread runs on), before it
 * returns to that thread's user level, it calls this for the thread. The
 * VMM answers 0 at once when the thread is not blocked; otherwise the vCPU
 * waits in the VMM (halted, not spinning) until the RESTART, or
 * (timeout_ns) passes (-PVPMU_ETIMEDOUT; 0: never wait, -PVPMU_EAGAIN).
 * (tid) 0 names the thread whose context is scheduled in on this vCPU.
 */
struct pvpmu_hc_block {
	pvpmu_u32 size;       /* IN: sizeof(struct pvpmu_hc_block), §5.1 */
	pvpmu_u32 tid;        /* IN: guest thread, 0: the one scheduled in */
	pvpmu_u64 timeout_ns; /* IN: 0, nanoseconds, or PVPMU_WAIT_FOREVER */
};
_Static_assert(sizeof(struct pvpmu_hc_block) == 16, "pvpmu_hc_block is ABI");

/*
 * PVPMU_HC_FMT_INFO (spec 3.5.2: "a way for a user level application to
 * figure out the list of available formats", UUID and name, without
 * privileges): format (index) of the VM's host, built-in formats first,
 * then those the VMM loaded at run time. (nr) is how many there are; an
 * (index) >= nr gives -PVPMU_ENOENT (nr still written). Names are
 * NUL-terminated.
 */
#define PVPMU_FMT_NAME_MAX 32
#define PVPMU_FMT_BUILTIN  (1U << 0) /* flags: built into the VMM */
struct pvpmu_hc_fmt_info {
	pvpmu_u32 size;                    /* IN: sizeof, §5.1 */
	pvpmu_u32 index;                   /* IN: which format */
	pvpmu_u32 nr;                      /* OUT: formats available */
	pvpmu_u32 flags;                   /* OUT: PVPMU_FMT_* */
	pvpmu_u8 uuid[16];                 /* OUT: ctx_smpl_buf_id to use */
	pvpmu_u8 name[PVPMU_FMT_NAME_MAX]; /* OUT: logical name */
	pvpmu_u64 arg_size;                /* OUT: bytes of format arguments */
	pvpmu_u64 reserved0;               /* OUT: zero */
};
_Static_assert(sizeof(struct pvpmu_hc_fmt_info) == 80,
	       "pvpmu_hc_fmt_info is ABI");

/*
 * PVPMU_HC_TASK: what a host profile needs to name the guest's processes
 * and their code (`vpmu report --sort comm,pid,dso,sym`). The guest kernel
 * tells the VMM, as they happen:
 *   COMM (pid, tid, comm): the thread is named comm; with PVPMU_TASK_EXEC
 *        the process has just exec()ed, and its earlier mappings are gone;
 *   MMAP (pid, start, len, pgoff, path): the process maps the executable
 *        file (path) at [start, start + len) from byte (pgoff) of the file;
 *   EXIT (pid): the process has exited.
 * Which process runs is in the shared page (pid, tid), written by the
 * guest at each context switch, so a sample costs no extra exit. The path
 * is (path_len) bytes at (path_gpa), without NUL, absolute (starts with
 * '/'); comm is NUL-terminated. The VMM refuses a malformed record
 * (-PVPMU_EINVAL, or -PVPMU_EFAULT for a path outside RAM) and, to bound
 * what a guest can make it hold, a record over its rate or its table
 * (-PVPMU_EAGAIN, -PVPMU_ENOSPC); each is counted for the operator.
 * Like any hypercall, the call is an exit the hv_* events of a context
 * counting on the vCPU count; (counted) says whether one did, so that a
 * driver can tell its own calls apart from its thread's.
 */
#define PVPMU_TASK_COMM     1
#define PVPMU_TASK_MMAP     2
#define PVPMU_TASK_EXIT     3
#define PVPMU_TASK_EXEC     (1U << 0) /* COMM flags: named by an exec() */
#define PVPMU_TASK_COMM_LEN 16
#define PVPMU_TASK_PATH_MAX 1024
struct pvpmu_hc_task {
	pvpmu_u32 size;     /* IN: sizeof(struct pvpmu_hc_task), §5.1 */
	pvpmu_u32 op;       /* IN: PVPMU_TASK_COMM, _MMAP or _EXIT */
	pvpmu_s32 pid;      /* IN: process (thread group) id, > 0 */
	pvpmu_s32 tid;      /* IN: COMM: the thread, > 0; else 0 */
	pvpmu_u32 flags;    /* IN: COMM: PVPMU_TASK_EXEC or 0; else 0 */
	pvpmu_u32 path_len; /* IN: MMAP: 1..PVPMU_TASK_PATH_MAX; else 0 */
	pvpmu_u64 start;    /* IN: MMAP: page-aligned user address; else 0 */
	pvpmu_u64 len;      /* IN: MMAP: page-aligned, > 0; else 0 */
	pvpmu_u64 pgoff;    /* IN: MMAP: page-aligned file offset; else 0 */
	pvpmu_u64 path_gpa; /* IN: MMAP: guest-physical address of the path */
	pvpmu_u8 comm[PVPMU_TASK_COMM_LEN]; /* IN: COMM; else zero */
	pvpmu_u32 counted; /* OUT: 1 if a started, unmasked context on
			      this vCPU counted this call; else 0 */
	pvpmu_u32 pad0;    /* IN: must be zero */
};
_Static_assert(sizeof(struct pvpmu_hc_task) == 80, "pvpmu_hc_task is ABI");

/*
 * The per-vCPU shared page (PVPMU_HC_SHARED), written by the VMM at every
 * exit of the vCPU while a started context is loaded on it, read by the
 * guest without an exit (the SDK's fast read):
 *
 *   do {
 *           s = seq; (odd: retry) ; acquire fence
 *           copy what you need
 *           acquire fence
 *   } while (seq != s);
 *
 * Values are those of the last exit. A PMD with a nonzero tsc_mult counts
 * time (guest cycles, run ns) and is exact at any instant while the
 * context is active and not masked:
 *   value_now = value + (((rdtsc() - tsc) * tsc_mult) >> tsc_shift).
 * Every other PMD is stale by at most the time since the vCPU's last exit,
 * which the VMM bounds by its timer tick (docs/benchmarks.md: the fast read).
 * The guest writes only pid and tid, for sample attribution: at each
 * context switch of its vCPU when it reports tasks (PVPMU_HC_TASK).
 */
#define PVPMU_SHARED_MAX_SETS 16
struct pvpmu_shared_pmd {
	pvpmu_u64 value;     /* OUT: 64-bit value at the last exit */
	pvpmu_u32 tsc_mult;  /* OUT: 0, or value units per TSC tick << shift */
	pvpmu_u32 tsc_shift; /* OUT */
};
_Static_assert(sizeof(struct pvpmu_shared_pmd) == 16, "shared pmd is ABI");

struct pvpmu_shared_set {
	pvpmu_u16 id; /* OUT: set id */
	pvpmu_u16 pad0;
	pvpmu_u32 pad1;
	pvpmu_u64 runs;       /* OUT: times it became active */
	pvpmu_u64 enabled_ns; /* OUT: run time since LOAD (all sets) */
	pvpmu_u64 running_ns; /* OUT: run time while this set was active */
};
_Static_assert(sizeof(struct pvpmu_shared_set) == 32, "shared set is ABI");

struct pvpmu_shared_page {
	pvpmu_u32 seq;        /* OUT: seqlock, odd while the VMM writes */
	pvpmu_u32 abi;        /* OUT: PVPMU_ABI_VERSION */
	pvpmu_s32 fd;         /* OUT: context on this vCPU, or -1 */
	pvpmu_u16 active_set; /* OUT: active set id */
	pvpmu_u8 active;      /* OUT: 1 when started and not masked */
	pvpmu_u8 nr_sets;     /* OUT: entries used in sets[] */
	pvpmu_u64 pmd_mask;   /* OUT: PMDs valid in pmds[] */
	pvpmu_u64 tsc;        /* OUT: guest TSC at the last exit */
	pvpmu_u64 run_ns;     /* OUT: vCPU run time at the last exit */
	/*
	 * Formerly reserved (zero): samples of the context the
	 * throttle did not take (rate or overhead limit), and periods that
	 * elapsed without their own sample (carried by the next sample's
	 * nr_missed). Cumulative since LOAD; 0 from older VMMs.
	 */
	pvpmu_u64 nr_throttled; /* OUT */
	pvpmu_u64 nr_missed;    /* OUT */
	/*
	 * Formerly reserved (zero): the run time between two switches
	 * of the active set when it switches on timeout
	 * (PFM_SETFL_TIME_SWITCH): its set_timeout, or longer while the
	 * VM's overhead budget stretches it; 0 when the active set does not
	 * switch on time, and from older VMMs.
	 */
	pvpmu_u64 switch_ns;                                 /* OUT */
	struct pvpmu_shared_pmd pmds[PFM_MAX_PMDS_ABI];      /* OUT */
	struct pvpmu_shared_set sets[PVPMU_SHARED_MAX_SETS]; /* OUT */
	pvpmu_s32 pid; /* IN (guest-written): current process */
	pvpmu_s32 tid; /* IN (guest-written): current thread */
};
_Static_assert(sizeof(struct pvpmu_shared_page) <= 4096,
	       "pvpmu_shared_page must fit one page");

/*
 * 6. perfmon2 constants and argument structures
 */
/* BEGIN perfmon2 core (owner: logical-PMU core) */
/*
 * The perfmon2 interface v0.6 (spec chapter 3) with fixed-width types. The
 * spec gives no numbers; the values below are ours and are fixed by this ABI.
 * Errors are negative enum pvpmu_status values (= Linux errnos).
 *
 * PFM_MAX_PMDS = PFM_MAX_PMCS = 64: every register bitvector is one u64 word,
 * bit n = register n (spec 3.1.2).
 */
#define PFM_VERSION_MAJOR(x) (((x) >> 16) & 0xffff)
#define PFM_VERSION_MINOR(x) ((x)&0xffff)
#define PFM_VERSION          ((1U << 16) | 0U) /* perfmon2 interface 1.0 */

#define PFM_MAX_PMCS          64
#define PFM_MAX_PMDS          64
#define PFM_MAX_PMC_BITVECTOR ((PFM_MAX_PMCS + 64 - 1) / 64)
#define PFM_MAX_PMD_BITVECTOR ((PFM_MAX_PMDS + 64 - 1) / 64)

/* Command codes (spec Table 3.1); the hypercall layer carries them. */
#define PFM_WRITE_PMCS      0x01
#define PFM_WRITE_PMDS      0x02
#define PFM_READ_PMDS       0x03
#define PFM_STOP            0x04
#define PFM_START           0x05
#define PFM_CREATE_CONTEXT  0x06
#define PFM_LOAD_CONTEXT    0x07
#define PFM_UNLOAD_CONTEXT  0x08
#define PFM_RESTART         0x09
#define PFM_CREATE_EVTSETS  0x0a
#define PFM_DELETE_EVTSETS  0x0b
#define PFM_GETINFO_EVTSETS 0x0c
#define PFM_GETINFO_PMCS    0x0d
#define PFM_GETINFO_PMDS    0x0e
#define PFM_SET_CONFIG      0x0f
#define PFM_GET_CONFIG      0x10

/* pfarg_ctx.ctx_flags (spec 3.1.1); bits 0-15 generic, 16-31 vpmu. */
#define PFM_FL_NOTIFY_BLOCK 0x01 /* block the monitored thread on notify */
#define PFM_FL_SYSTEM_WIDE  0x02 /* vCPU-wide context ("CPU" = vCPU) */
#define PFM_FL_OVFL_NO_MSG  0x80 /* no overflow messages (spec 3.3.7) */

/* pfarg_pmc.reg_flags, input (spec 3.1.2, 6.2.1). */
#define PFM_REGFL_OVFL_NOTIFY   0x01 /* notify on 64-bit overflow */
#define PFM_REGFL_RANDOM        0x02 /* randomize resets (spec 3.4.2) */
#define PFM_REGFL_NO_EMUL64     0x04 /* no 64-bit emulation: PMD is hw wide */
#define PFM_REGFL_NO_64BIT_EMUL PFM_REGFL_NO_EMUL64 /* spec 6.2.1 spelling */

/* reg_flags, output: the element that stopped a vector command. */
#define PFM_REG_RETFL_NOSET    (1U << 29) /* reg_set does not exist */
#define PFM_REG_RETFL_EINVAL   (1U << 30) /* bad value or flags */
#define PFM_REG_RETFL_NOTAVAIL (1U << 31) /* no such register / event */
#define PFM_REG_RETFL_MASK                                                     \
	(PFM_REG_RETFL_NOSET | PFM_REG_RETFL_EINVAL | PFM_REG_RETFL_NOTAVAIL)
#define PFM_REG_HAS_ERROR(f) (((f)&PFM_REG_RETFL_MASK) != 0)

/* pfarg_setdesc.set_flags (spec 3.1.10). */
#define PFM_SETFL_OVFL_SWITCH 0x01 /* switch after N overflows of triggers */
#define PFM_SETFL_TIME_SWITCH 0x02 /* switch on timeout (vCPU run time) */
#define PFM_SETFL_EXPL_NEXT   0x04 /* next set is set_id_next */
#define PFM_SETFL_EXCL_IDLE   0x08 /* vCPU-wide only: not in guest idle */

#define PFM_SET_RETFL_NOSET  (1U << 29) /* set does not exist */
#define PFM_SET_RETFL_EINVAL (1U << 30) /* bad flags or arguments */
#define PFM_SET_RETFL_MASK   (PFM_SET_RETFL_NOSET | PFM_SET_RETFL_EINVAL)
#define PFM_SET_HAS_ERROR(f) (((f)&PFM_SET_RETFL_MASK) != 0)

/* pfarg_pmcinfo/pmdinfo.reg_type (spec 3.1.13). */
#define PFM_REG_TYPE_PMC  1
#define PFM_REG_TYPE_PMD  2
#define PFM_REG_TYPE_MSR  3
#define PFM_REG_TYPE_SPR  4
#define PFM_REG_TYPE_IBR  5
#define PFM_REG_TYPE_DBR  6
#define PFM_REG_TYPE_VIRT 7 /* virtual PMD: a hypervisor resource */

#define PFM_REG_IDX_NONE 0xffffffffffffffffULL
#define PFM_GROUP_ANY    0xffffffffU /* cf_sys_gid/cf_thread_gid: no limit */

/* pfm_msg.msg_type (spec 3.3.2). */
#define PFM_MSG_OVFL 1
#define PFM_MSG_END  2

typedef pvpmu_u8 pfm_uuid_t[16];

/* PFM_CREATE_CONTEXT (spec 3.1.1); format arguments follow at offset 32. */
struct pfarg_ctx {
	pvpmu_u32 ctx_flags;          /* IN: PFM_FL_* */
	pvpmu_s32 ctx_fd;             /* OUT: context handle */
	pvpmu_u8 ctx_smpl_buf_id[16]; /* IN: format UUID, all zero = none */
	pvpmu_u64 ctx_smpl_buf_size;  /* OUT: sampling buffer bytes, or 0 */
};
_Static_assert(sizeof(struct pfarg_ctx) == 32, "pfarg_ctx layout is ABI");

/* PFM_WRITE_PMCS (spec 3.1.2). */
struct pfarg_pmc {
	pvpmu_u16 reg_num;   /* IN: PMC index */
	pvpmu_u16 reg_set;   /* IN: event set id */
	pvpmu_u32 reg_flags; /* IN: PFM_REGFL_*; OUT: PFM_REG_RETFL_* */
	pvpmu_u64 reg_value; /* IN: PMC value */
	pvpmu_u64 reg_reset_pmds[PFM_MAX_PMD_BITVECTOR]; /* IN: reset on ovfl */
	pvpmu_u64
		reg_smpl_pmds[PFM_MAX_PMD_BITVECTOR]; /* IN: record in sample */
	pvpmu_u64 reg_smpl_eventid; /* IN: opaque, passed to the format */
};
_Static_assert(sizeof(struct pfarg_pmc) == 40, "pfarg_pmc layout is ABI");

/* PFM_WRITE_PMDS, PFM_READ_PMDS (spec 3.1.3, 3.1.4). */
struct pfarg_pmd {
	pvpmu_u16 reg_num;            /* IN: PMD index */
	pvpmu_u16 reg_set;            /* IN: event set id */
	pvpmu_u32 reg_flags;          /* IN: must be 0; OUT: PFM_REG_RETFL_* */
	pvpmu_u64 reg_value;          /* write IN / read OUT: 64-bit value */
	pvpmu_u64 reg_long_reset;     /* write IN: reload at PFM_RESTART */
	pvpmu_u64 reg_short_reset;    /* write IN: reload on overflow */
	pvpmu_u64 reg_last_reset_val; /* read OUT: last value loaded by reset */
	pvpmu_u64 reg_ovflsw_thres;   /* write IN: overflows per switch;
					 read OUT: overflows left */
	pvpmu_u64 reg_random_mask;    /* write IN: randomization mask */
	pvpmu_u32 reg_random_seed;    /* write IN: PRNG seed */
	pvpmu_u32 reg_reserved;       /* IN: must be 0 */
};
_Static_assert(sizeof(struct pfarg_pmd) == 64, "pfarg_pmd layout is ABI");

/* PFM_START (spec 3.1.5). */
struct pfarg_start {
	pvpmu_u16 start_set; /* IN: first active set */
	pvpmu_u16 reserved0; /* IN: must be 0 */
	pvpmu_u32 reserved1; /* IN: must be 0 */
};
_Static_assert(sizeof(struct pfarg_start) == 8, "pfarg_start layout is ABI");

/* PFM_LOAD_CONTEXT (spec 3.1.7). */
struct pfarg_load {
	pvpmu_u32 load_pid;  /* IN: guest thread id, or vCPU index if
				PFM_FL_SYSTEM_WIDE */
	pvpmu_u16 load_set;  /* IN: set to load first */
	pvpmu_u16 reserved0; /* IN: must be 0 */
};
_Static_assert(sizeof(struct pfarg_load) == 8, "pfarg_load layout is ABI");

/* A duration (struct timespec with fixed widths). */
struct pfarg_timespec {
	pvpmu_u64 tv_sec;  /* seconds */
	pvpmu_u64 tv_nsec; /* nanoseconds, < 1000000000 */
};
_Static_assert(sizeof(struct pfarg_timespec) == 16, "timespec is ABI");

/* PFM_CREATE_EVTSETS, PFM_DELETE_EVTSETS (spec 3.1.10, 3.1.11). */
struct pfarg_setdesc {
	pvpmu_u16 set_id;      /* IN: set id */
	pvpmu_u16 set_id_next; /* IN: next set if PFM_SETFL_EXPL_NEXT */
	pvpmu_u32 set_flags;   /* IN: PFM_SETFL_*; OUT: PFM_SET_RETFL_* */
	struct pfarg_timespec set_timeout; /* IN: requested; OUT: effective */
};
_Static_assert(sizeof(struct pfarg_setdesc) == 24, "pfarg_setdesc is ABI");

/* PFM_GETINFO_EVTSETS (spec 3.1.12). Times are vCPU run time. */
struct pfarg_setinfo {
	pvpmu_u16 set_id;      /* IN: set id */
	pvpmu_u16 set_id_next; /* OUT: the set switched to from this one */
	pvpmu_u32 set_flags;   /* IN: must be 0; OUT: PFM_SETFL_* or RETFL */
	pvpmu_u64 set_switch_pmds[PFM_MAX_PMD_BITVECTOR]; /* OUT: triggers */
	pvpmu_u64 set_runs; /* OUT: times the set became active */
	struct pfarg_timespec set_timeout;      /* OUT: timeout remainder */
	struct pfarg_timespec set_act_duration; /* OUT: time active */
};
_Static_assert(sizeof(struct pfarg_setinfo) == 56, "pfarg_setinfo is ABI");

/* PFM_GETINFO_PMCS (spec 3.1.13). */
struct pfarg_pmcinfo {
	pvpmu_u16 reg_num;       /* IN: PMC index */
	pvpmu_u16 reg_type;      /* OUT: PFM_REG_TYPE_* */
	pvpmu_u32 reg_flags;     /* IN: must be 0; OUT: PFM_REG_RETFL_* */
	pvpmu_u64 reg_def_value; /* OUT: default value */
	pvpmu_u64 reg_rsvd_mask; /* OUT: 1 = reserved bit */
	pvpmu_u64 reg_index;     /* OUT: MSR address or PFM_REG_IDX_NONE */
};
_Static_assert(sizeof(struct pfarg_pmcinfo) == 32, "pfarg_pmcinfo is ABI");

/* PFM_GETINFO_PMDS (spec 3.1.14): same layout as pfarg_pmcinfo. */
struct pfarg_pmdinfo {
	pvpmu_u16 reg_num;       /* IN: PMD index */
	pvpmu_u16 reg_type;      /* OUT: PFM_REG_TYPE_* */
	pvpmu_u32 reg_flags;     /* IN: must be 0; OUT: PFM_REG_RETFL_* */
	pvpmu_u64 reg_def_value; /* OUT: default value */
	pvpmu_u64 reg_rsvd_mask; /* OUT: 1 = reserved bit */
	pvpmu_u64 reg_index;     /* OUT: MSR address or PFM_REG_IDX_NONE */
};
_Static_assert(sizeof(struct pfarg_pmdinfo) == 32, "pfarg_pmdinfo is ABI");

/* PFM_SET_CONFIG, PFM_GET_CONFIG (spec 3.1.16, 3.1.17). */
struct pfarg_config {
	pvpmu_u32 cf_version; /* OUT: PFM_VERSION (major << 16 | minor) */
	pvpmu_u32 cf_flags;   /* IN: must be 0; OUT: 0 */
	pvpmu_u64 cf_impl_pmcs[PFM_MAX_PMC_BITVECTOR]; /* OUT */
	pvpmu_u64 cf_impl_pmds[PFM_MAX_PMD_BITVECTOR]; /* OUT */
	pvpmu_u32 cf_sys_gid;           /* IN/OUT: or PFM_GROUP_ANY */
	pvpmu_u32 cf_thread_gid;        /* IN/OUT: or PFM_GROUP_ANY */
	pvpmu_u64 cf_arg_size_max;      /* IN/OUT: bytes per vector arg */
	pvpmu_u64 cf_smpl_buf_size_max; /* IN/OUT: sampling bytes per VM */
	pvpmu_u16 cf_counter_width;     /* OUT: emulated hardware width */
	pvpmu_u16 reserved0;            /* must be 0 */
	pvpmu_u32 reserved1;            /* must be 0 */
};
_Static_assert(sizeof(struct pfarg_config) == 56, "pfarg_config is ABI");

/* Messages (spec 3.3.2); every message is sizeof(union pfm_msg) bytes. */
struct pfm_ovfl_msg {
	pvpmu_u32 msg_type;       /* OUT: PFM_MSG_OVFL */
	pvpmu_u16 msg_active_set; /* OUT: set active at the overflow */
	pvpmu_u16 reserved0;
	pvpmu_u64 msg_ovfl_pmds[PFM_MAX_PMD_BITVECTOR]; /* OUT: overflowed */
	pvpmu_u64 msg_tstamp; /* OUT: vCPU run time (ns) at overflow */
	pvpmu_u64 reserved1;
};
_Static_assert(sizeof(struct pfm_ovfl_msg) == 32, "pfm_ovfl_msg is ABI");

union pfm_msg {
	pvpmu_u32 msg_type;               /* OUT: PFM_MSG_* */
	struct pfm_ovfl_msg pfm_ovfl_msg; /* OUT: when PFM_MSG_OVFL */
	pvpmu_u64 reserved[4];            /* room for future messages */
};
_Static_assert(sizeof(union pfm_msg) == 32, "pfm_msg layout is ABI");

/* Spec spellings. */
typedef struct pfarg_ctx pfarg_ctx_t;
typedef struct pfarg_pmc pfarg_pmc_t;
typedef struct pfarg_pmd pfarg_pmd_t;
typedef struct pfarg_start pfarg_start_t;
typedef struct pfarg_load pfarg_load_t;
typedef struct pfarg_setdesc pfarg_setdesc_t;
typedef struct pfarg_setinfo pfarg_setinfo_t;
typedef struct pfarg_pmcinfo pfarg_pmcinfo_t;
typedef struct pfarg_pmdinfo pfarg_pmdinfo_t;
typedef struct pfarg_config pfarg_config_t;
typedef struct pfm_ovfl_msg pfm_ovfl_msg_t;
typedef union pfm_msg pfm_msg_t;
/* END perfmon2 core */

/*
 * 7. Sampling formats: the default format's header and entry layouts
 */
/* BEGIN sampling formats (owner: sampling formats) */
/*
 * A context created with a format UUID gets a sampling buffer: host memory
 * mapped read-only into guest physical space, page-aligned, of
 * ctx_smpl_buf_size bytes. Only the host writes it. Layouts follow the
 * spec's LP64 layouts (digest Appendix A) with fixed-width fields, so tools
 * written for the spec parse it unchanged, and ILP32 guests see the same
 * bytes.
 *
 * 7.1 The default format (spec §3.6, digest §9.6)
 *
 *   [pfm_default_smpl_hdr][sample][sample]...
 *   sample = [pfm_default_smpl_entry][u64 value of each PMD set in the
 *            PMC's smpl_pmds, increasing PMD index]
 *
 * With PFM_DFL_SMPL_IIP_HDR the sample header is only a u64 ip; with
 * PFM_DFL_SMPL_NO_HDR there is none (body only). The two cannot be
 * combined. Samples are 8-byte aligned; there are no partial samples.
 */
#define PFM_DEFAULT_SMPL_UUID                                                  \
	{                                                                      \
		0x4d, 0x72, 0xbe, 0xc0, 0x06, 0x64, 0x41, 0x43, 0x82, 0xb4,    \
			0xd3, 0xfd, 0x27, 0x24, 0x3c, 0x97                     \
	}

/* hdr_version: major in bits 31..16, minor in bits 15..0 */
#define PFM_DEFAULT_SMPL_VERSION_MAJOR 1
/* Minor 1: pfm_default_smpl_entry.nr_missed (was pad0, zero). */
#define PFM_DEFAULT_SMPL_VERSION_MINOR 1
#define PFM_DEFAULT_SMPL_VERSION                                               \
	((PFM_DEFAULT_SMPL_VERSION_MAJOR << 16) |                              \
	 PFM_DEFAULT_SMPL_VERSION_MINOR)

/* buf_flags; every other bit is reserved and must be zero */
#define PFM_DFL_SMPL_NO_HDR  (1U << 0) /* samples carry the body only */
#define PFM_DFL_SMPL_IIP_HDR (1U << 1) /* sample header is just the ip */

/* Appended to pfarg_ctx at PFM_CREATE_CONTEXT (§3.6.2). */
struct pfm_default_smpl_arg {
	pvpmu_u64 buf_size;  /* IN: bytes incl. the buffer header */
	pvpmu_u32 buf_flags; /* IN: PFM_DFL_SMPL_* */
	pvpmu_u32 pad0;      /* IN: must be zero */
};
typedef struct pfm_default_smpl_arg pfm_default_smpl_arg_t;
_Static_assert(sizeof(struct pfm_default_smpl_arg) == 16,
	       "pfm_default_smpl_arg layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_arg, buf_flags) == 8,
	       "pfm_default_smpl_arg layout is ABI");

/* At offset 0 of the buffer (§3.6.3). */
struct pfm_default_smpl_hdr {
	pvpmu_u64 hdr_count;     /* OUT: samples since the last reset */
	pvpmu_u64 hdr_cur_offs;  /* OUT: offset of the next byte to write */
	pvpmu_u64 hdr_overflows; /* OUT: times the buffer became full */
	pvpmu_u64 hdr_buf_size;  /* OUT: usable bytes (page-rounded) */
	pvpmu_u32 hdr_version;   /* OUT: PFM_DEFAULT_SMPL_VERSION */
	pvpmu_u32 hdr_flags;     /* OUT: buf_flags given at creation */
};
typedef struct pfm_default_smpl_hdr pfm_default_smpl_hdr_t;
_Static_assert(sizeof(struct pfm_default_smpl_hdr) == 40,
	       "pfm_default_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_hdr, hdr_cur_offs) ==
		       8,
	       "pfm_default_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_hdr, hdr_overflows) ==
		       16,
	       "pfm_default_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_hdr, hdr_buf_size) ==
		       24,
	       "pfm_default_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_hdr, hdr_version) ==
		       32,
	       "pfm_default_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_hdr, hdr_flags) == 36,
	       "pfm_default_smpl_hdr layout is ABI");

/* Sample header (§3.6.4); the body follows immediately. */
struct pfm_default_smpl_entry {
	pvpmu_s32 pid;            /* OUT: guest process at the overflow */
	pvpmu_s32 tid;            /* OUT: guest thread at the overflow */
	pvpmu_u16 ovfl_pmd;       /* OUT: PMD that triggered the sample */
	pvpmu_u16 set;            /* OUT: active set */
	pvpmu_u16 cpu;            /* OUT: vCPU that took the overflow */
	pvpmu_u16 nr_missed;      /* OUT: periods after this one that
				     elapsed unsampled (preempted vCPU,
				     throttle); the sample stands for
				     1 + nr_missed periods; saturates at
				     0xffff. Zero before version 1.1. */
	pvpmu_u64 last_reset_val; /* OUT: last value loaded in ovfl_pmd
				     (0 - its period) */
	pvpmu_u64 tstamp;         /* OUT: unique per vCPU, increasing */
	pvpmu_u64 ip;             /* OUT: interrupted guest ip */
};
typedef struct pfm_default_smpl_entry pfm_default_smpl_entry_t;
_Static_assert(sizeof(struct pfm_default_smpl_entry) == 40,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry, tid) == 4,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry, ovfl_pmd) == 8,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry, set) == 10,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry, cpu) == 12,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry,
				  last_reset_val) == 16,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry, tstamp) == 24,
	       "pfm_default_smpl_entry layout is ABI");
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_entry, ip) == 32,
	       "pfm_default_smpl_entry layout is ABI");

/*
 * 7.2 The n-way multi-buffer format (vpmu's own, after spec §6.3.1)
 *
 *   [pvpmu_nway_smpl_hdr (with nr_regions region descriptors)]
 *   [region 0][region 1]...[region N-1]       each region_size bytes
 *
 * Samples inside a region have the default format's sample layout (same
 * buf_flags meaning). Region states, published by the host with release
 * ordering (read the state, then an acquire fence, then the samples):
 *   FREE    owned by the host, not yet filled;
 *   FILLING the host is writing it (count/cur_offs change at any time);
 *   FULL    stable, owned by the consumer until released.
 * When the filling region can no longer hold a maximal sample it becomes
 * FULL, a notification is requested and sampling continues in the next
 * FREE region (in ring order) without masking. If no region is FREE,
 * monitoring is masked and notified as with the default format, unless
 * PVPMU_NWAY_SMPL_CYCLE is set: then the filling region is recycled and
 * its samples are counted in `lost`.
 *
 * The guest cannot write the buffer, so regions come back through
 * PFM_RESTART: with restart argument 0 it releases the FULL region with the
 * lowest seq (the oldest, matching one RESTART per notification), otherwise
 * the argument is a bitmask of region indexes to release, all of which must
 * be FULL. Consumers drain FULL regions in increasing seq.
 */
#define PVPMU_NWAY_SMPL_UUID                                                   \
	{                                                                      \
		0xd8, 0x65, 0x7c, 0x44, 0x05, 0xd4, 0x4d, 0x21, 0xb5, 0xcb,    \
			0x8f, 0x48, 0xb9, 0xe9, 0x4b, 0x57                     \
	}
#define PVPMU_NWAY_SMPL_VERSION ((1U << 16) | 0U) /* 1.0 */

#define PVPMU_NWAY_MIN_REGIONS    2
#define PVPMU_NWAY_MAX_REGIONS    16
#define PVPMU_NWAY_NO_REGION      0xffffffffU /* cur_region when all FULL */
#define PVPMU_NWAY_RELEASE_OLDEST 0ULL        /* restart argument */

/* buf_flags: PFM_DFL_SMPL_NO_HDR / _IIP_HDR, plus: */
#define PVPMU_NWAY_SMPL_CYCLE (1U << 16) /* recycle instead of masking */

#define PVPMU_NWAY_REGION_FREE    0
#define PVPMU_NWAY_REGION_FILLING 1
#define PVPMU_NWAY_REGION_FULL    2

/* Appended to pfarg_ctx at PFM_CREATE_CONTEXT. */
struct pvpmu_nway_smpl_arg {
	pvpmu_u64 buf_size;   /* IN: bytes incl. the buffer header */
	pvpmu_u32 buf_flags;  /* IN: see above; other bits must be zero */
	pvpmu_u32 nr_regions; /* IN: PVPMU_NWAY_MIN..MAX_REGIONS */
};
_Static_assert(sizeof(struct pvpmu_nway_smpl_arg) == 16,
	       "pvpmu_nway_smpl_arg layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_arg, nr_regions) == 12,
	       "pvpmu_nway_smpl_arg layout is ABI");

struct pvpmu_nway_region {
	pvpmu_u32 state;    /* OUT: PVPMU_NWAY_REGION_* */
	pvpmu_u32 pad0;     /* OUT: zero */
	pvpmu_u64 seq;      /* OUT: fill order, 1, 2, ... (0: never used) */
	pvpmu_u64 count;    /* OUT: samples in the region */
	pvpmu_u64 offs;     /* OUT: region start, from the buffer start */
	pvpmu_u64 cur_offs; /* OUT: next byte to write, from buffer start */
};
_Static_assert(sizeof(struct pvpmu_nway_region) == 40,
	       "pvpmu_nway_region layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_region, seq) == 8,
	       "pvpmu_nway_region layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_region, count) == 16,
	       "pvpmu_nway_region layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_region, offs) == 24,
	       "pvpmu_nway_region layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_region, cur_offs) == 32,
	       "pvpmu_nway_region layout is ABI");

/* At offset 0 of the buffer; regions start at sizeof(this) (704). */
struct pvpmu_nway_smpl_hdr {
	pvpmu_u64 buf_size;    /* OUT: usable bytes (page-rounded) */
	pvpmu_u64 region_size; /* OUT: bytes per region, multiple of 8 */
	pvpmu_u64 overflows;   /* OUT: times a region became FULL */
	pvpmu_u64 lost;        /* OUT: samples dropped or recycled */
	pvpmu_u64 masked;      /* OUT: times all regions were FULL */
	pvpmu_u64 next_seq;    /* OUT: seq the next filled region gets */
	pvpmu_u32 version;     /* OUT: PVPMU_NWAY_SMPL_VERSION */
	pvpmu_u32 flags;       /* OUT: buf_flags given at creation */
	pvpmu_u32 nr_regions;  /* OUT: regions in use */
	pvpmu_u32 cur_region;  /* OUT: FILLING region, or NO_REGION */
	struct pvpmu_nway_region regions[PVPMU_NWAY_MAX_REGIONS]; /* OUT */
};
_Static_assert(sizeof(struct pvpmu_nway_smpl_hdr) == 704,
	       "pvpmu_nway_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_hdr, version) == 48,
	       "pvpmu_nway_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_hdr, cur_region) == 60,
	       "pvpmu_nway_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_hdr, regions) == 64,
	       "pvpmu_nway_smpl_hdr layout is ABI");
/* END sampling formats */

/*
 * 8. Hypercall request blocks that carry perfmon2 types
 */
_Static_assert(PFM_MAX_PMDS == PFM_MAX_PMDS_ABI, "shared page PMD count");

/*
 * PVPMU_HC_READ_MSG: dequeue one message of context (fd). With
 * (timeout_ns) 0 it never waits (-PVPMU_EAGAIN when the queue is empty);
 * otherwise the vCPU is halted in the VMM, without spinning, until a
 * message arrives (0) or the timeout passes (-PVPMU_ETIMEDOUT);
 * PVPMU_WAIT_FOREVER waits without limit.
 */
#define PVPMU_WAIT_FOREVER 0xffffffffffffffffULL
struct pvpmu_hc_read_msg {
	pvpmu_u32 size;       /* IN: sizeof(struct pvpmu_hc_read_msg), §5.1 */
	pvpmu_s32 fd;         /* IN: context handle */
	pvpmu_u64 timeout_ns; /* IN: 0, nanoseconds, or PVPMU_WAIT_FOREVER */
	union pfm_msg msg;    /* OUT: the message */
};
_Static_assert(sizeof(struct pvpmu_hc_read_msg) == 48,
	       "pvpmu_hc_read_msg is ABI");

/* A block never shrinks below its first version (section 5.1). */
#define PVPMU_HC_SIZE_CHECK(type, ver1)                                        \
	_Static_assert(sizeof(struct type) >= (ver1) &&                        \
			       sizeof(struct type) <= PVPMU_HC_BLOCK_MAX,      \
		       #type " keeps its first version")
PVPMU_HC_SIZE_CHECK(pvpmu_hc_echo, PVPMU_HC_ECHO_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_pfm, PVPMU_HC_PFM_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_ctx, PVPMU_HC_CTX_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_smpl_info, PVPMU_HC_SMPL_INFO_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_vector, PVPMU_HC_VECTOR_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_shared, PVPMU_HC_SHARED_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_sched, PVPMU_HC_SCHED_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_read_msg, PVPMU_HC_READ_MSG_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_block, PVPMU_HC_BLOCK_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_fmt_info, PVPMU_HC_FMT_INFO_SIZE_VER1);
PVPMU_HC_SIZE_CHECK(pvpmu_hc_task, PVPMU_HC_TASK_SIZE_VER1);

/*
 * 9. Event catalogue codes
 *
 * 9.1 The counting PMC layout
 *
 * Guests program a counting PMC with the x86 IA32_PERFEVTSELx layout
 * (Intel SDM vol. 3B 20.2.1.1), through pfarg_pmc.reg_value or the
 * architectural MSRs alike. An event's code is umask << 8 | event select.
 */
#define PVPMU_EVSEL_EVENT_MASK  0xffULL      /* bits 7:0 event select */
#define PVPMU_EVSEL_UMASK_SHIFT 8            /* bits 15:8 unit mask */
#define PVPMU_EVSEL_USR         (1ULL << 16) /* count at CPL > 0 */
#define PVPMU_EVSEL_OS          (1ULL << 17) /* count at CPL 0 */
#define PVPMU_EVSEL_EDGE        (1ULL << 18) /* edge detect */
#define PVPMU_EVSEL_INT         (1ULL << 20) /* interrupt on overflow */
#define PVPMU_EVSEL_EN          (1ULL << 22) /* counter enabled */
#define PVPMU_EVSEL_INV         (1ULL << 23) /* invert cmask */
#define PVPMU_EVSEL_CMASK_SHIFT 24           /* bits 31:24 counter mask */
/* Bit 19 (pin control), bit 21 (any thread) and bits 63:32 are reserved. */
#define PVPMU_EVSEL_RSVD (0xffffffff00000000ULL | (1ULL << 19) | (1ULL << 21))

/* An event-select value: enabled, user and kernel, interrupt. */
#define PVPMU_EVSEL(event, umask)                                              \
	(((pvpmu_u64)(event)&0xff) | ((pvpmu_u64)((umask)&0xff) << 8) |        \
	 PVPMU_EVSEL_USR | PVPMU_EVSEL_OS | PVPMU_EVSEL_INT | PVPMU_EVSEL_EN)

/*
 * 9.2 Event selects of vpmu's own events (model-specific range 0xe0-0xe3
 * on both vendors); the umask picks the event within each.
 */
#define PVPMU_EVSEL_HV             0xe0 /* hypervisor events */
#define PVPMU_EVSEL_HV_EXIT_REASON 0xe1 /* exits of one KVM exit reason */
#define PVPMU_EVSEL_KVMSTAT        0xe2 /* one KVM statistic of the vCPU */
#define PVPMU_EVSEL_HOST_SW        0xe3 /* host software events */

#define PVPMU_EV_CODE(umask, event) ((((umask)&0xff) << 8) | ((event)&0xff))
#define PVPMU_EV_EVENT(code)        ((code)&0xff)
#define PVPMU_EV_UMASK(code)        (((code) >> 8) & 0xff)

/*
 * 9.3 The events
 *
 * The names and descriptions are in the one catalogue table,
 * guest/sdk/catalog/catalog.c, shared by libvpmu, the SDK and the host
 * commands.
 * Architectural codes are Intel's architectural perfmon encodings (SDM
 * vol. 3B, table "UMask and Event Select Encodings for Pre-Defined
 * Architectural Performance Events"); a host without a hardware PMU
 * refuses them (PFM_REG_RETFL_NOTAVAIL), never counts zeros.
 */
#define PVPMU_EV_CYCLES         0x003c /* unhalted core cycles (guest) */
#define PVPMU_EV_INSTRUCTIONS   0x00c0 /* instructions retired (guest) */
#define PVPMU_EV_REF_CYCLES     0x013c /* unhalted reference cycles */
#define PVPMU_EV_LLC_REFERENCES 0x4f2e /* last-level cache references */
#define PVPMU_EV_LLC_MISSES     0x412e /* last-level cache misses */
#define PVPMU_EV_BRANCHES       0x00c4 /* branch instructions retired */
#define PVPMU_EV_BRANCH_MISSES  0x00c5 /* mispredicted branches retired */

/* Hypervisor events: exact, counted by the VMM. */
#define PVPMU_EV_HV(n)           PVPMU_EV_CODE(n, PVPMU_EVSEL_HV)
#define PVPMU_EV_HV_RUN_NS       PVPMU_EV_HV(0x00) /* guest run time, ns */
#define PVPMU_EV_HV_GUEST_CYCLES PVPMU_EV_HV(0x01) /* run time, TSC cycles */
#define PVPMU_EV_HV_EXITS        PVPMU_EV_HV(0x02) /* VM exits, all reasons */
#define PVPMU_EV_HV_HYPERCALLS   PVPMU_EV_HV(0x03) /* doorbell hypercalls */
#define PVPMU_EV_HV_MSR_READS    PVPMU_EV_HV(0x04) /* trapped RDMSR */
#define PVPMU_EV_HV_MSR_WRITES   PVPMU_EV_HV(0x05) /* trapped WRMSR */
#define PVPMU_EV_HV_PIO          PVPMU_EV_HV(0x06) /* port I/O exits */
#define PVPMU_EV_HV_MMIO         PVPMU_EV_HV(0x07) /* MMIO exits */
#define PVPMU_EV_HV_IRQS         PVPMU_EV_HV(0x08) /* interrupts injected */
#define PVPMU_EV_HV_HALTS        PVPMU_EV_HV(0x09) /* HLT exits */
#define PVPMU_EV_HV_HALTED_NS    PVPMU_EV_HV(0x0a) /* time halted, ns */
#define PVPMU_EV_HV_CPU_NS       PVPMU_EV_HV(0x0b) /* vCPU thread CPU, ns */
/* VM exits of one KVM exit reason r (KVM_EXIT_*, 0..63). */
#define PVPMU_EV_HV_EXIT_REASON(r) PVPMU_EV_CODE(r, PVPMU_EVSEL_HV_EXIT_REASON)
/* The i-th statistic of KVM_GET_STATS_FD for the vCPU (host-discovered). */
#define PVPMU_EV_KVMSTAT(i) PVPMU_EV_CODE(i, PVPMU_EVSEL_KVMSTAT)
/* Host software events of the vCPU thread (perf_event). */
#define PVPMU_EV_SW(n)               PVPMU_EV_CODE(n, PVPMU_EVSEL_HOST_SW)
#define PVPMU_EV_SW_TASK_CLOCK       PVPMU_EV_SW(0x00) /* ns on a host CPU */
#define PVPMU_EV_SW_PAGE_FAULTS      PVPMU_EV_SW(0x01)
#define PVPMU_EV_SW_CONTEXT_SWITCHES PVPMU_EV_SW(0x02)
#define PVPMU_EV_SW_CPU_MIGRATIONS   PVPMU_EV_SW(0x03)

/* Is (code) of a family whose umask is a parameter (exit reason, kvmstat)? */
#define PVPMU_EV_IS_FAMILY(code)                                               \
	(PVPMU_EV_EVENT(code) == PVPMU_EVSEL_HV_EXIT_REASON ||                 \
	 PVPMU_EV_EVENT(code) == PVPMU_EVSEL_KVMSTAT)

/*
 * 10. The Linux character device /dev/pvpmu (guest/linux/)
 *
 * A Linux guest reaches the hypercalls through the pvpmu.ko module. Each
 * open file of /dev/pvpmu holds at most one perfmon2 context: the SDK opens
 * one per pfm_create_context() and that descriptor is the spec's context
 * fd (read: messages, poll/select, O_ASYNC + F_SETOWN: SIGIO, mmap: the
 * sampling buffer and the shared pages, close: destroy). Commands that
 * need no context (GETINFO, GET/SET_CONFIG) work on any open file.
 *
 * PVPMU_IOC_PFM carries one perfmonctl(): (arg) is the user address of the
 * argument (arg_size bytes; pfarg_* arrays or pfarg_ctx + format
 * arguments), copied in once and back once (OUT fields also on failure).
 * The ioctl returns 0 or -1 with errno = the PVPMU_E* code; a bad user
 * pointer gives EFAULT. After PFM_CREATE_CONTEXT, ctx_fd holds the VMM's
 * context handle (the SDK overwrites it with the descriptor).
 * PVPMU_IOC_INFO describes the file's context. Both blocks follow the size
 * rule of section 5.1. PVPMU_IOC_FMT_INFO is PVPMU_HC_FMT_INFO (the
 * format list, spec 3.5.2) on any open file: size and index in, the
 * format out; an index past the end fails with ENOENT and still writes nr.
 *
 * mmap offsets: 0 maps the sampling buffer (smpl_size bytes), read-only;
 * PVPMU_MMAP_SHARED maps nr_cpus pages read-only, page i being CPU i's
 * struct pvpmu_shared_page (fast reads: the page of the CPU the reader
 * runs on, compared against ctx). Writable mappings are refused.
 */
#define PVPMU_DEV_PATH           "/dev/pvpmu"
#define PVPMU_MMAP_SHARED        0x100000000ULL
#define PVPMU_IOC_PFM_SIZE_VER1  40
#define PVPMU_IOC_INFO_SIZE_VER1 40

struct pvpmu_ioc_pfm {
	pvpmu_u32 size;        /* IN: sizeof(struct pvpmu_ioc_pfm) */
	pvpmu_u32 cmd;         /* IN: PFM_* command code */
	pvpmu_s32 nargs;       /* IN: element count */
	pvpmu_u32 pad0;        /* IN: must be zero */
	pvpmu_u64 arg;         /* IN: user address of the argument, or 0 */
	pvpmu_u64 arg_size;    /* IN: argument bytes */
	pvpmu_u64 restart_arg; /* IN: PFM_RESTART: format restart argument */
};
_Static_assert(sizeof(struct pvpmu_ioc_pfm) == 40, "pvpmu_ioc_pfm is ABI");

struct pvpmu_ioc_info {
	pvpmu_u32 size;       /* IN: sizeof(struct pvpmu_ioc_info) */
	pvpmu_s32 ctx;        /* OUT: VMM context handle, -1 if none */
	pvpmu_u32 ctx_flags;  /* OUT: PFM_FL_* given at creation */
	pvpmu_u32 nr_cpus;    /* OUT: shared pages at PVPMU_MMAP_SHARED */
	pvpmu_u64 smpl_size;  /* OUT: sampling buffer bytes, 0 if none */
	pvpmu_u64 sched_outs; /* OUT: the driver's own hypercalls in the
				 monitored thread's time that the context
				 counted (its hv events count each of them,
				 and no other): PVPMU_SCHED_OUT at each
				 switch-out, and the process records
				 (PVPMU_HC_TASK) of its exec, renames and
				 exit */
	pvpmu_s32 load_pid;   /* OUT: monitored thread, or -1 */
	pvpmu_s32 load_cpu;   /* OUT: CPU of a system-wide context, or -1 */
};
_Static_assert(sizeof(struct pvpmu_ioc_info) == 40, "pvpmu_ioc_info is ABI");

/* Linux _IOWR('v', 1..3, ...), spelled out. */
#define PVPMU_IOC(nr, size)                                                    \
	((3U << 30) | ((pvpmu_u32)(size) << 16) | ((pvpmu_u32)'v' << 8) | (nr))
#define PVPMU_IOC_PFM      PVPMU_IOC(1, sizeof(struct pvpmu_ioc_pfm))
#define PVPMU_IOC_INFO     PVPMU_IOC(2, sizeof(struct pvpmu_ioc_info))
#define PVPMU_IOC_FMT_INFO PVPMU_IOC(3, sizeof(struct pvpmu_hc_fmt_info))

#endif /* PVPMU_ABI_H */
