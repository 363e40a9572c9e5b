// SPDX-License-Identifier: MIT
/*
 * test_hc_block.c: the request-block size rule of pvpmu/abi.h §5.1
 * (vmm_hc_block_fit(), vmm_hc_block_answer_len()), both ways: blocks from
 * newer guests (larger) and from older guests (smaller), and the bounds.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include <pvpmu/abi.h>

#include "vmm_core.h"

/*
 * A host block in its second version: version 1 was the first 16 bytes,
 * version 2 added (added).
 */
struct block_v2 {
	uint32_t size;
	uint32_t pad0;
	uint64_t in;
	uint64_t added;
};
#define BLOCK_V1_SIZE 16

/* What a guest sends: a block of (size) bytes, (in) filled, rest zero. */
static uint8_t raw[PVPMU_HC_BLOCK_MAX + 64];

static void guest_block(uint32_t size, uint64_t in)
{
	memset(raw, 0, sizeof(raw));
	memcpy(raw, &size, sizeof(size));
	memcpy(raw + 8, &in, sizeof(in));
}

/* A host block full of garbage, so that zero-extension shows. */
static struct block_v2 host_block(void)
{
	struct block_v2 b;

	memset(&b, 0xa5, sizeof(b));
	return b;
}

Test(vmm_hc_block, same_size_is_copied)
{
	struct block_v2 b = host_block();
	uint64_t added    = 7;

	guest_block(sizeof(b), 42);
	memcpy(raw + 16, &added, sizeof(added));
	cr_assert(eq(
		int,
		vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw, sizeof(b)),
		0));
	cr_assert(eq(u32, b.size, sizeof(b)));
	cr_assert(eq(u64, b.in, 42));
	cr_assert(eq(u64, b.added, 7));
	cr_assert(eq(sz, vmm_hc_block_answer_len(&b, sizeof(b)), sizeof(b)));
}

Test(vmm_hc_block, larger_block_with_zero_tail_is_accepted)
{
	struct block_v2 b = host_block();
	uint32_t size     = sizeof(b) + 8;

	guest_block(size, 42);
	cr_assert(eq(int,
		     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw, size),
		     0));
	cr_assert(eq(u32, b.size, size), "the size field tells the guest's");
	cr_assert(eq(u64, b.in, 42));
	cr_assert(eq(u64, b.added, 0));
	/* The answer covers what the host knows, not the guest's tail. */
	cr_assert(eq(sz, vmm_hc_block_answer_len(&b, sizeof(b)), sizeof(b)));
}

Test(vmm_hc_block, larger_block_with_nonzero_tail_is_refused)
{
	struct block_v2 b = host_block();
	struct block_v2 before;
	uint32_t size = sizeof(b) + 8;
	size_t at;

	before = b;
	/* Every byte of the tail counts, the first and the last. */
	for (at = sizeof(b); at < size; at += size - sizeof(b) - 1) {
		guest_block(size, 42);
		raw[at] = 1;
		cr_assert(eq(int,
			     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw,
					      size),
			     -PVPMU_E2BIG),
			  "nonzero byte at %zu", at);
		cr_assert(eq(int, memcmp(&b, &before, sizeof(b)), 0),
			  "a refused block leaves the host's untouched");
	}
}

Test(vmm_hc_block, smaller_block_is_zero_extended)
{
	struct block_v2 b = host_block();

	guest_block(BLOCK_V1_SIZE, 42);
	/* Bytes past the guest's block are not the guest's: never read. */
	memset(raw + BLOCK_V1_SIZE, 0xff, 8);
	cr_assert(eq(int,
		     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw,
				      BLOCK_V1_SIZE),
		     0));
	cr_assert(eq(u32, b.size, BLOCK_V1_SIZE));
	cr_assert(eq(u64, b.in, 42));
	cr_assert(eq(u64, b.added, 0), "the unknown field reads as zero");
	/* Only the bytes the older guest knows go back to it. */
	cr_assert(
		eq(sz, vmm_hc_block_answer_len(&b, sizeof(b)), BLOCK_V1_SIZE));
}

Test(vmm_hc_block, block_below_first_version_is_refused)
{
	struct block_v2 b = host_block();
	uint32_t sizes[]  = {0, 4, 8, BLOCK_V1_SIZE - 1};
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		guest_block(sizes[i], 42);
		cr_assert(eq(int,
			     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw,
					      BLOCK_V1_SIZE),
			     -PVPMU_EINVAL),
			  "size %u", sizes[i]);
	}
}

Test(vmm_hc_block, block_over_one_page_is_refused)
{
	struct block_v2 b = host_block();

	guest_block(PVPMU_HC_BLOCK_MAX, 42);
	cr_assert(eq(int,
		     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw,
				      PVPMU_HC_BLOCK_MAX),
		     0),
		  "one page with a zero tail is the largest accepted");
	guest_block(PVPMU_HC_BLOCK_MAX + 1, 42);
	cr_assert(eq(int,
		     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw,
				      sizeof(raw)),
		     -PVPMU_E2BIG));
	guest_block(UINT32_MAX, 42);
	cr_assert(eq(int,
		     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw,
				      sizeof(raw)),
		     -PVPMU_E2BIG));
}

Test(vmm_hc_block, block_not_wholly_copied_is_a_fault)
{
	struct block_v2 b = host_block();

	guest_block(sizeof(b) + 8, 42);
	cr_assert(eq(
		int,
		vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw, sizeof(b)),
		-PVPMU_EFAULT));
	cr_assert(eq(int,
		     vmm_hc_block_fit(&b, sizeof(b), BLOCK_V1_SIZE, raw, 2),
		     -PVPMU_EFAULT));
}

/* Every ABI request block accepts its own size and its first version. */
Test(vmm_hc_block, abi_blocks_accept_sizeof_and_first_version)
{
	static const struct {
		const char *name;
		size_t size, ver1;
	} blocks[] = {
		{"echo", sizeof(struct pvpmu_hc_echo), PVPMU_HC_ECHO_SIZE_VER1},
		{"pfm", sizeof(struct pvpmu_hc_pfm), PVPMU_HC_PFM_SIZE_VER1},
		{"ctx", sizeof(struct pvpmu_hc_ctx), PVPMU_HC_CTX_SIZE_VER1},
		{"smpl_info", sizeof(struct pvpmu_hc_smpl_info),
		 PVPMU_HC_SMPL_INFO_SIZE_VER1},
		{"vector", sizeof(struct pvpmu_hc_vector),
		 PVPMU_HC_VECTOR_SIZE_VER1},
		{"shared", sizeof(struct pvpmu_hc_shared),
		 PVPMU_HC_SHARED_SIZE_VER1},
		{"sched", sizeof(struct pvpmu_hc_sched),
		 PVPMU_HC_SCHED_SIZE_VER1},
		{"read_msg", sizeof(struct pvpmu_hc_read_msg),
		 PVPMU_HC_READ_MSG_SIZE_VER1},
	};
	uint8_t host[PVPMU_HC_BLOCK_MAX];
	size_t i;

	for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		guest_block(blocks[i].size, 1);
		cr_assert(eq(int,
			     vmm_hc_block_fit(host, blocks[i].size,
					      blocks[i].ver1, raw,
					      blocks[i].size),
			     0),
			  "%s", blocks[i].name);
		guest_block(blocks[i].ver1, 1);
		cr_assert(eq(int,
			     vmm_hc_block_fit(host, blocks[i].size,
					      blocks[i].ver1, raw,
					      blocks[i].ver1),
			     0),
			  "%s first version", blocks[i].name);
	}
}
