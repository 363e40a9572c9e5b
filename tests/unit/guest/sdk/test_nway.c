// SPDX-License-Identifier: MIT
/*
 * test_nway.c: n-way buffers: FULL regions oldest first, iteration inside
 * one region, and headers or regions that do not fit the buffer.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pvpmu/pvpmu.h>

#define REGION   1024
#define NR_REG   3
#define BUF_SIZE (sizeof(struct pvpmu_nway_smpl_hdr) + NR_REG * REGION)

static uint64_t *buf;

static struct pvpmu_nway_smpl_hdr *hdr(void)
{
	return (struct pvpmu_nway_smpl_hdr *)buf;
}

/* Region (r) holds (n) samples with ip base + i, no body. */
static void fill(unsigned int r, uint32_t state, uint64_t seq, unsigned int n,
		 uint64_t base)
{
	struct pvpmu_nway_region *g = &hdr()->regions[r];
	unsigned int i;

	g->state    = state;
	g->seq      = seq;
	g->count    = n;
	g->offs     = sizeof(struct pvpmu_nway_smpl_hdr) + r * REGION;
	g->cur_offs = g->offs;
	for (i = 0; i < n; i++) {
		struct pfm_default_smpl_entry e = {.ip = base + i, .set = 0};

		memcpy((uint8_t *)buf + g->cur_offs, &e, sizeof(e));
		g->cur_offs += sizeof(e);
	}
}

static void setup(void)
{
	buf = calloc(1, BUF_SIZE);
	cr_assert(not(eq(ptr, buf, NULL)));
	*hdr() = (struct pvpmu_nway_smpl_hdr){
		.buf_size    = BUF_SIZE,
		.region_size = REGION,
		.version     = PVPMU_NWAY_SMPL_VERSION,
		.nr_regions  = NR_REG,
		.cur_region  = 2,
	};
	fill(0, PVPMU_NWAY_REGION_FULL, 2, 5, 0x2000);
	fill(1, PVPMU_NWAY_REGION_FULL, 1, 3, 0x1000);
	fill(2, PVPMU_NWAY_REGION_FILLING, 3, 1, 0x3000);
}

static void teardown(void)
{
	free(buf);
}

TestSuite(sdk_nway, .init = setup, .fini = teardown);

Test(sdk_nway, full_regions_oldest_first)
{
	unsigned int order[PVPMU_NWAY_MAX_REGIONS];

	cr_assert(eq(int, pvpmu_nway_full(buf, BUF_SIZE, order, 16), 2));
	cr_assert(eq(u32, order[0], 1));
	cr_assert(eq(u32, order[1], 0));
	cr_assert(eq(int, pvpmu_nway_full(buf, BUF_SIZE, order, 1), 1));
	cr_assert(eq(u32, order[0], 1));
}

Test(sdk_nway, iterates_one_region)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	unsigned int n = 0;

	cr_assert(
		eq(int, pvpmu_nway_iter_init(&it, buf, BUF_SIZE, 0, 0, 0), 0));
	while (pvpmu_smpl_iter_next(&it, &s) == 1)
		cr_assert(eq(u64, s.entry.ip, 0x2000 + n++));
	cr_assert(eq(u32, n, 5));
}

Test(sdk_nway, bad_headers_and_regions)
{
	struct pvpmu_smpl_iter it;
	unsigned int order[4];

	cr_assert(eq(int, pvpmu_nway_iter_init(&it, buf, BUF_SIZE, 3, 0, 0),
		     -PVPMU_EINVAL));
	cr_assert(eq(int, pvpmu_nway_full(buf, 100, order, 4), -PVPMU_EINVAL));
	cr_assert(eq(int, pvpmu_nway_full(NULL, BUF_SIZE, order, 4),
		     -PVPMU_EFAULT));
	/* A region reaching past the buffer the caller has. */
	cr_assert(eq(int,
		     pvpmu_nway_iter_init(
			     &it, buf, sizeof(struct pvpmu_nway_smpl_hdr) + 100,
			     0, 0, 0),
		     -PVPMU_EINVAL));
	/* cur_offs beyond its region */
	hdr()->regions[1].cur_offs = hdr()->regions[1].offs + REGION + 8;
	cr_assert(eq(int, pvpmu_nway_iter_init(&it, buf, BUF_SIZE, 1, 0, 0),
		     -PVPMU_EINVAL));
	hdr()->nr_regions = PVPMU_NWAY_MAX_REGIONS + 1;
	cr_assert(eq(int, pvpmu_nway_full(buf, BUF_SIZE, order, 4),
		     -PVPMU_EINVAL));
	hdr()->nr_regions = NR_REG;
	hdr()->version    = 2 << 16;
	cr_assert(eq(int, pvpmu_nway_full(buf, BUF_SIZE, order, 4),
		     -PVPMU_EINVAL));
}
