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
/* END sampling formats */

#endif /* PVPMU_ABI_H */
