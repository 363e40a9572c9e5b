/* SPDX-License-Identifier: MIT */
/*
 * pvpmu/abi.h: the one ABI shared by the vpmu host (vmm/, vpmu/), the guest
 * driver (guest-driver/) and the guest SDK (sdk/).
 *
 * It is freestanding: fixed-width types only, no pointers and no size_t.
 * Guest addresses are u64 guest-physical addresses (GPAs). Every struct has
 * explicit padding and a _Static_assert on its size; tests/unit/sdk checks
 * the offsets too.
 *
 * Sections:
 *   1. Boot protocol (VMM -> guest image)
 *   2. I/O ports (console, exit, hypercall doorbells)
 *   3. CPUID leaves
 *   4. Status codes
 *   5. Hypercall convention and numbers
 *   6. perfmon2 constants and argument structures
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

/*
 * 1. Boot protocol
 *
 * The VMM loads a static ELF64 x86-64 image and starts every vCPU directly
 * in 64-bit long mode at the ELF entry point, ring 0, interrupts disabled:
 *   - CS = PVPMU_BOOT_CS (64-bit code), DS/ES/SS = PVPMU_BOOT_DS;
 *   - paging on, the first 4 GiB identity mapped with 2 MiB pages
 *     (RWX, supervisor), page tables in the VMM area below 1 MiB;
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
	pvpmu_u64 magic;      /* OUT: PVPMU_BOOT_MAGIC */
	pvpmu_u32 abi;        /* OUT: PVPMU_ABI_VERSION */
	pvpmu_u32 nr_vcpus;   /* OUT: vCPUs started */
	pvpmu_u64 mem_size;   /* OUT: bytes of RAM at GPA 0 */
	pvpmu_u64 tsc_khz;    /* OUT: guest TSC frequency, 0 if unknown */
	pvpmu_u8 uuid[16];    /* OUT: the VM's UUID */
	pvpmu_u8 name[64];    /* OUT: the VM's name, NUL-terminated */
	pvpmu_u64 reserved[4];
};
_Static_assert(sizeof(struct pvpmu_boot_info) == 152,
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

/*
 * 4. Status codes
 *
 * Hypercalls return 0 or a negative PVPMU_E* value. The numbers are fixed
 * by this ABI; they happen to equal the Linux x86 errno values so that
 * perfmon2's errno semantics carry over unchanged, but host errno values
 * never cross into the guest: the host maps each one explicitly.
 */
enum pvpmu_status {
	PVPMU_OK      = 0,
	PVPMU_EPERM   = 1,
	PVPMU_ENOENT  = 2,
	PVPMU_ESRCH   = 3,
	PVPMU_EINTR   = 4,
	PVPMU_EIO     = 5,
	PVPMU_EBADF   = 9,
	PVPMU_EAGAIN  = 11,
	PVPMU_ENOMEM  = 12,
	PVPMU_EACCES  = 13,
	PVPMU_EFAULT  = 14,
	PVPMU_EBUSY   = 16,
	PVPMU_EEXIST  = 17,
	PVPMU_ENODEV  = 19,
	PVPMU_EINVAL  = 22,
	PVPMU_ENOSPC  = 28,
	PVPMU_E2BIG   = 7,
	PVPMU_ENOSYS  = 38,
	PVPMU_ENOTSUP = 95,
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
 * and copies the answer back once. Every request block starts with a u32
 * size (sizeof the struct as the guest knows it); see each struct. A GPA
 * range that is not wholly inside guest RAM gives -PVPMU_EFAULT; an unknown
 * nr gives -PVPMU_ENOSYS.
 *
 * Number 0 is reserved. PVPMU_HC_NOP answers 0 and is used to measure the
 * round trip. PVPMU_HC_ECHO copies the request's value to its answer.
 */
#define PVPMU_HC_RESERVED 0
#define PVPMU_HC_NOP      1
#define PVPMU_HC_ECHO     2

/* PVPMU_HC_ECHO */
struct pvpmu_hc_echo {
	pvpmu_u32 size; /* IN: sizeof(struct pvpmu_hc_echo) */
	pvpmu_u32 pad0; /* IN: must be zero */
	pvpmu_u64 in;   /* IN */
	pvpmu_u64 out;  /* OUT: in, bit-inverted */
};
_Static_assert(sizeof(struct pvpmu_hc_echo) == 24,
	       "pvpmu_hc_echo layout is ABI");

/*
 * 6. perfmon2 constants and argument structures
 */
/* BEGIN perfmon2 core (owner: logical-PMU core) */
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
#define PFM_DEFAULT_SMPL_VERSION_MINOR 0
#define PFM_DEFAULT_SMPL_VERSION                                               \
	((PFM_DEFAULT_SMPL_VERSION_MAJOR << 16) | PFM_DEFAULT_SMPL_VERSION_MINOR)

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
_Static_assert(__builtin_offsetof(struct pfm_default_smpl_hdr,
				  hdr_overflows) == 16,
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
	pvpmu_u16 pad0;           /* OUT: zero */
	pvpmu_u64 last_reset_val; /* OUT: last value loaded in ovfl_pmd */
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

#define PVPMU_NWAY_MIN_REGIONS 2
#define PVPMU_NWAY_MAX_REGIONS 16
#define PVPMU_NWAY_NO_REGION   0xffffffffU /* cur_region when all FULL */
#define PVPMU_NWAY_RELEASE_OLDEST 0ULL      /* restart argument */

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
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_arg, nr_regions) ==
		       12,
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
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_hdr, cur_region) ==
		       60,
	       "pvpmu_nway_smpl_hdr layout is ABI");
_Static_assert(__builtin_offsetof(struct pvpmu_nway_smpl_hdr, regions) == 64,
	       "pvpmu_nway_smpl_hdr layout is ABI");
/* END sampling formats */

#endif /* PVPMU_ABI_H */
