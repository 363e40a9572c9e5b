// SPDX-License-Identifier: MIT
/*
 * test_guest_walk.c: the host's reads of guest-virtual memory for call
 * chains: x86-64 4-level paging (Intel SDM vol. 3 §4.5) built
 * in a buffer that stands for guest RAM, with 4 KiB, 2 MiB and 1 GiB
 * pages, non-present and out-of-range entries and non-canonical
 * addresses, and frame-pointer chains that are good, cyclic, misaligned
 * or leave RAM; the caller of a frameless leaf read from [rsp] only when
 * a direct call to the sampled function proves it.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm_core.h"

#define RAM      (8ULL << 20) /* 8 MiB of fake guest RAM */
#define P        1ULL
#define RW       2ULL
#define PS       (1ULL << 7)
#define PML4     0x1000ULL
#define PDPT     0x2000ULL
#define PD       0x3000ULL
#define PT       0x4000ULL
#define PDPT_HI  0x5000ULL
#define STACK_VA 0x7fff00000000ULL /* mapped 4 KiB pages -> 0x100000 */
#define STACK_PA 0x100000ULL

static unsigned char *ram;
static struct vmm_gmem_view m;

static void put64(uint64_t pa, uint64_t v)
{
	memcpy(ram + pa, &v, 8);
}

/*
 * va 0..2 MiB: 4 KiB pages (PT), page 5 not present, page 6 pointing past
 * RAM; va 2..4 MiB: one 2 MiB page at pa 4 MiB; va 1 GiB: a 1 GiB page
 * (pa 0, only 8 MiB of it is RAM); va 0xffff800000000000 (upper half,
 * PML4 slot 256): a PDPT entry pointing outside RAM; STACK_VA: two 4 KiB
 * pages of stack at STACK_PA.
 */
static void setup(void)
{
	uint64_t i;

	ram = calloc(1, RAM);
	cr_assert(not(eq(ptr, ram, NULL)));
	m = (struct vmm_gmem_view){.base = ram, .size = RAM};
	put64(PML4 + 0 * 8, PDPT | P | RW);
	put64(PDPT + 0 * 8, PD | P | RW);
	put64(PDPT + 1 * 8, 0 | P | RW | PS); /* 1 GiB page at pa 0 */
	put64(PD + 0 * 8, PT | P | RW);
	put64(PD + 1 * 8, (4ULL << 20) | P | RW | PS); /* 2 MiB at 4 MiB */
	for (i = 0; i < 512; i++)
		put64(PT + i * 8, (i << 12) | P | RW);
	put64(PT + 5 * 8, 5ULL << 12);            /* not present */
	put64(PT + 6 * 8, (1ULL << 40) | P | RW); /* outside RAM */
	put64(PML4 + 256 * 8, PDPT_HI | P | RW);
	put64(PDPT_HI, (1ULL << 45) | P | RW); /* a PD outside RAM */
	/* STACK_VA: PML4 slot 255, PDPT 508, PD 0, PT 0..1. */
	put64(PML4 + 255 * 8, 0x6000 | P | RW);
	put64(0x6000 + 508 * 8, 0x7000 | P | RW);
	put64(0x7000, 0x8000 | P | RW);
	put64(0x8000, STACK_PA | P | RW);
	put64(0x8008, (STACK_PA + 0x1000) | P | RW);
}

static void teardown(void)
{
	free(ram);
}

TestSuite(vmm_guest_walk, .init = setup, .fini = teardown);

Test(vmm_guest_walk, four_kib_pages)
{
	uint64_t gpa = 0;

	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0x3123, &gpa), 0));
	cr_assert(eq(u64, gpa, 0x3123));
	/* CR3's low bits (PCID, PWT/PCD) are not part of the table. */
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4 | 0x18, 0x7ff8, &gpa), 0));
	cr_assert(eq(u64, gpa, 0x7ff8));
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0x5000, &gpa), -EFAULT),
		  "not present");
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0x6000, &gpa), -EFAULT),
		  "outside RAM");
}

Test(vmm_guest_walk, huge_pages)
{
	uint64_t gpa = 0;

	cr_assert(
		eq(int, vmm_gva_to_gpa(&m, PML4, 0x200000 + 0x1234, &gpa), 0));
	cr_assert(eq(u64, gpa, (4ULL << 20) + 0x1234), "2 MiB page");
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, (1ULL << 30) + 0x5678, &gpa),
		     0));
	cr_assert(eq(u64, gpa, 0x5678), "1 GiB page");
	/* Inside the 1 GiB page but past the 8 MiB of RAM. */
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, (1ULL << 30) + RAM, &gpa),
		     -EFAULT));
}

Test(vmm_guest_walk, bad_tables_and_addresses)
{
	uint64_t gpa = 0;

	/* Non-canonical: bit 47 set without the bits above it. */
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0x0000800000000000ULL, &gpa),
		     -EFAULT));
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0x8000000000001000ULL, &gpa),
		     -EFAULT));
	/* Canonical upper half whose PD lies outside RAM. */
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0xffff800000001000ULL, &gpa),
		     -EFAULT));
	/* A CR3 outside RAM, and one whose PML4 is the last page + 1. */
	cr_assert(
		eq(int, vmm_gva_to_gpa(&m, 1ULL << 44, 0x1000, &gpa), -EFAULT));
	cr_assert(eq(int, vmm_gva_to_gpa(&m, RAM, 0x1000, &gpa), -EFAULT));
	/* An unmapped PML4 slot. */
	cr_assert(eq(int, vmm_gva_to_gpa(&m, PML4, 0x10000000000ULL, &gpa),
		     -EFAULT));
}

Test(vmm_guest_walk, reads_across_pages)
{
	unsigned char buf[16];
	unsigned int i;

	for (i = 0; i < 16; i++)
		ram[0x3ff8 + i] = (unsigned char)i;
	cr_assert(eq(int, vmm_gva_read(&m, PML4, 0x3ff8, buf, 16), 0));
	for (i = 0; i < 16; i++)
		cr_assert(eq(u8, buf[i], i));
	/* The second page is not present: the whole read fails. */
	cr_assert(eq(int, vmm_gva_read(&m, PML4, 0x4ff8, buf, 16), -EFAULT));
}

/* A stack frame at stack va (fp): saved rbp (next), return address. */
static void frame(uint64_t fp, uint64_t next, uint64_t ret)
{
	put64(STACK_PA + (fp - STACK_VA), next);
	put64(STACK_PA + (fp - STACK_VA) + 8, ret);
}

Test(vmm_guest_walk, frame_pointer_chain)
{
	uint64_t out[8];
	uint64_t sp = STACK_VA + 0x100;

	/* hot's frame -> middle's -> outer's -> end (rbp 0). */
	frame(STACK_VA + 0x100, STACK_VA + 0x180, 0x101111);
	frame(STACK_VA + 0x180, STACK_VA + 0x1200, 0x102222); /* next page */
	frame(STACK_VA + 0x1200, 0, 0x103333);
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp, sp, out, 8), 3));
	cr_assert(eq(u64, out[0], 0x101111));
	cr_assert(eq(u64, out[1], 0x102222));
	cr_assert(eq(u64, out[2], 0x103333));
	/* At most (max) frames. */
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp, sp, out, 2), 2));
}

Test(vmm_guest_walk, bad_frames_end_the_chain)
{
	uint64_t out[8];
	uint64_t sp = STACK_VA + 0x100;

	/* A cycle (saved rbp points back down) stops after one frame. */
	frame(STACK_VA + 0x100, STACK_VA + 0x100, 0x101111);
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp, sp, out, 8), 1));
	/* A saved rbp into an unmapped page: one frame, no fault. */
	frame(STACK_VA + 0x100, STACK_VA + 0x3000, 0x101111);
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp, sp, out, 8), 1));
	/* Non-canonical, misaligned, below rsp, null: no frame at all. */
	cr_assert(eq(u32,
		     vmm_fp_unwind(&m, PML4, 0x0000900000000000ULL, 0, out, 8),
		     0));
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp + 4, sp, out, 8), 0));
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp, sp + 8, out, 8), 0));
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, 0, sp, out, 8), 0));
	/* A null or non-canonical return address ends the chain. */
	frame(STACK_VA + 0x100, STACK_VA + 0x180, 0x101111);
	frame(STACK_VA + 0x180, STACK_VA + 0x200, 0x8000000000000000ULL);
	cr_assert(eq(u32, vmm_fp_unwind(&m, PML4, sp, sp, out, 8), 1));
	/* A frame whose last bytes are past the mapped stack. */
	cr_assert(eq(u32,
		     vmm_fp_unwind(&m, PML4, STACK_VA + 0x1ff8,
				   STACK_VA + 0x1000, out, 8),
		     0));
}

/* Random tables and stacks: the walk ends, never reads outside RAM. */
Test(vmm_guest_walk, random_memory)
{
	uint64_t out[64], gpa, i;
	unsigned int k;

	srand(17);
	for (k = 0; k < 20; k++) {
		for (i = 0; i < 0x10000; i++)
			ram[i] = (unsigned char)rand();
		for (i = 0; i < 1000; i++) {
			uint64_t va =
				((uint64_t)rand() << 32) ^ (uint64_t)rand();

			(void)vmm_gva_to_gpa(&m, PML4, va, &gpa);
			cr_assert(le(u32,
				     vmm_fp_unwind(&m, PML4, va & ~7ULL,
						   va & ~7ULL, out, 64),
				     64));
			(void)vmm_leaf_caller(&m, PML4, va, va & ~7ULL, out);
		}
	}
}

/*
 * Code at va 0x20000 (= pa, 4 KiB pages): a function F, called by
 * `call F` at 0x21000 (return address R = 0x21005). (first) is F's first
 * byte: 0x0f (rdtsc: a frameless leaf) or 0x55 (push %rbp: a frame).
 */
#define LEAF_F    0x20000ULL
#define LEAF_CALL 0x21000ULL
#define LEAF_R    (LEAF_CALL + 5)

static void leaf_code(unsigned char first)
{
	int32_t rel = (int32_t)(LEAF_F - LEAF_R);

	ram[LEAF_F]    = first;
	ram[LEAF_CALL] = 0xe8;
	memcpy(ram + LEAF_CALL + 1, &rel, 4);
	put64(STACK_PA + 0x100, LEAF_R); /* [rsp] */
}

/* hot() built by GCC 12 without a frame (a leaf that never moves
 * rsp): its caller middle() is [rsp], which the rbp chain misses. */
Test(vmm_guest_walk, frameless_leaf_caller_from_rsp)
{
	uint64_t sp = STACK_VA + 0x100, r = 0;

	leaf_code(0x0f);
	cr_assert(vmm_leaf_caller(&m, PML4, LEAF_F + 0x30, sp, &r));
	cr_assert(eq(u64, r, LEAF_R));
	cr_assert(vmm_leaf_caller(&m, PML4, LEAF_F, sp, &r), "at entry");
	/* A framed function: only at its entry, before push %rbp. */
	leaf_code(0x55);
	cr_assert(vmm_leaf_caller(&m, PML4, LEAF_F, sp, &r));
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F + 0x30, sp, &r)),
		  "past the prologue: the rbp chain has the caller");
}

Test(vmm_guest_walk, leaf_caller_is_verified)
{
	uint64_t sp = STACK_VA + 0x100, r = 0;

	leaf_code(0x0f);
	/* rip not in the called function (before it, or 64 KiB past). */
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F - 1, sp, &r)));
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F + (64 << 10), sp, &r)));
	/* Misaligned or unmapped rsp. */
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F + 8, sp + 4, &r)));
	cr_assert(not(
		vmm_leaf_caller(&m, PML4, LEAF_F + 8, STACK_VA + 0x3000, &r)));
	/* [rsp] not after a call instruction (a local, a saved register). */
	ram[LEAF_CALL] = 0x90;
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F + 8, sp, &r)));
	/* [rsp] into an unmapped page, or null. */
	put64(STACK_PA + 0x100, 0x5008);
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F + 8, sp, &r)));
	put64(STACK_PA + 0x100, 0);
	cr_assert(not(vmm_leaf_caller(&m, PML4, LEAF_F + 8, sp, &r)));
	/* A call whose target is unmapped (page 5). */
	leaf_code(0x0f);
	{
		int32_t rel = (int32_t)(0x5000 - (int64_t)LEAF_R);

		memcpy(ram + LEAF_CALL + 1, &rel, 4);
	}
	cr_assert(not(vmm_leaf_caller(&m, PML4, 0x5010, sp, &r)));
}
