// SPDX-License-Identifier: MIT
/*
 * test_smpl.c: iteration over default-format sample buffers, including
 * corrupt headers: the iterator never reads past the size it is given.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pvpmu/pvpmu.h>

#define BUF_SIZE 4096

static uint64_t *buf; /* uint64_t for alignment */

static void setup(void)
{
	buf = calloc(1, BUF_SIZE);
	cr_assert(not(eq(ptr, buf, NULL)));
}

static void teardown(void)
{
	free(buf);
}

TestSuite(sdk_smpl, .init = setup, .fini = teardown);

static struct pfm_default_smpl_hdr *hdr(void)
{
	return (struct pfm_default_smpl_hdr *)buf;
}

static void init_hdr(uint32_t flags)
{
	*hdr() = (struct pfm_default_smpl_hdr){
		.hdr_cur_offs = sizeof(struct pfm_default_smpl_hdr),
		.hdr_buf_size = BUF_SIZE,
		.hdr_version  = PFM_DEFAULT_SMPL_VERSION,
		.hdr_flags    = flags,
	};
}

/* Append a full sample for (pmd) with (nr) body values base, base+1... */
static void add_sample(uint16_t pmd, uint16_t set, uint64_t ip, unsigned int nr,
		       uint64_t base)
{
	uint8_t *p                      = (uint8_t *)buf + hdr()->hdr_cur_offs;
	struct pfm_default_smpl_entry e = {
		.pid = 10, .tid = 11, .ovfl_pmd = pmd, .set = set, .ip = ip};
	uint64_t v;
	unsigned int i;

	memcpy(p, &e, sizeof(e));
	for (i = 0; i < nr; i++) {
		v = base + i;
		memcpy(p + sizeof(e) + 8 * i, &v, 8);
	}
	hdr()->hdr_cur_offs += sizeof(e) + 8ULL * nr;
	hdr()->hdr_count++;
}

/* PMD0 records PMDs 1 and 2, PMD3 records none, set 1 PMD0 records 1..3. */
static uint64_t pmds_of(void *opaque, uint16_t set, uint16_t pmd)
{
	(void)opaque;
	if (set == 1 && pmd == 0)
		return 0xe;
	if (pmd == 0)
		return 0x6;
	if (pmd == 0xffff)
		return 0x3;
	return 0;
}

Test(sdk_smpl, iterates_variable_bodies)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;

	init_hdr(0);
	add_sample(0, 0, 0x1000, 2, 100);
	add_sample(3, 0, 0x2000, 0, 0);
	add_sample(0, 1, 0x3000, 3, 200);
	cr_assert(eq(int,
		     pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, pmds_of, NULL),
		     0));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(u64, s.entry.ip, 0x1000));
	cr_assert(eq(int, s.entry.pid, 10));
	cr_assert(eq(u32, s.nr_body, 2));
	cr_assert(eq(u64, s.body[0], 100));
	cr_assert(eq(u64, s.body[1], 101));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(u64, s.entry.ip, 0x2000));
	cr_assert(eq(u32, s.nr_body, 0));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(u64, s.entry.ip, 0x3000));
	cr_assert(eq(u32, s.nr_body, 3));
	cr_assert(eq(u64, s.body[2], 202));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
}

Test(sdk_smpl, empty_buffer)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;

	init_hdr(0);
	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, NULL, NULL),
		     0));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
}

/* A count larger than what cur_offs covers stops at cur_offs. */
Test(sdk_smpl, count_beyond_cur_offs)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;

	init_hdr(0);
	add_sample(3, 0, 0x1000, 0, 0);
	hdr()->hdr_count = 1000000;
	pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, pmds_of, NULL);
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
}

/* hdr_cur_offs and hdr_buf_size past the real size: bounded by (size). */
Test(sdk_smpl, corrupt_offsets_bounded_by_size)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	unsigned int n = 0;
	int ret;

	init_hdr(0);
	hdr()->hdr_cur_offs = UINT64_MAX;
	hdr()->hdr_buf_size = UINT64_MAX;
	hdr()->hdr_count    = UINT64_MAX;
	/* Fill with samples whose (garbage) bodies are 2 values long. */
	memset(buf + 5, 0, BUF_SIZE - 40);
	pvpmu_smpl_iter_init(&it, buf, 1000, pmds_of, NULL);
	while ((ret = pvpmu_smpl_iter_next(&it, &s)) == 1) {
		cr_assert(le(u64, s.offs + 40 + 8 * s.nr_body, 1000));
		n++;
	}
	/* (1000 - 40) / 56 = 17 whole samples, then a truncated one. */
	cr_assert(eq(u32, n, 17));
	cr_assert(eq(int, ret, -PVPMU_EFAULT));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
}

Test(sdk_smpl, truncated_sample)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;

	init_hdr(0);
	add_sample(0, 0, 0x1000, 2, 100);
	hdr()->hdr_cur_offs -= 8; /* body cut short */
	pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, pmds_of, NULL);
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), -PVPMU_EFAULT));
}

Test(sdk_smpl, bad_headers)
{
	struct pvpmu_smpl_iter it;

	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, NULL, BUF_SIZE, NULL, NULL),
		     -PVPMU_EFAULT));
	init_hdr(0);
	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, buf, 39, NULL, NULL),
		     -PVPMU_EINVAL));
	hdr()->hdr_version = 2 << 16;
	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, NULL, NULL),
		     -PVPMU_EINVAL));
	init_hdr(PFM_DFL_SMPL_NO_HDR | PFM_DFL_SMPL_IIP_HDR);
	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, NULL, NULL),
		     -PVPMU_EINVAL));
	/* a newer minor version is fine */
	init_hdr(0);
	hdr()->hdr_version = PFM_DEFAULT_SMPL_VERSION + 5;
	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, NULL, NULL),
		     0));
}

Test(sdk_smpl, iip_header)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	uint64_t rec[] = {0x4000, 7, 8};

	init_hdr(PFM_DFL_SMPL_IIP_HDR);
	memcpy(buf + 5, rec, sizeof(rec));
	hdr()->hdr_cur_offs += sizeof(rec);
	hdr()->hdr_count = 1;
	pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, pmds_of, NULL);
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(u64, s.entry.ip, 0x4000));
	cr_assert(eq(u32, s.nr_body, 2));
	cr_assert(eq(u64, s.body[1], 8));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
}

Test(sdk_smpl, no_header)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	uint64_t rec[] = {1, 2, 3, 4};

	init_hdr(PFM_DFL_SMPL_NO_HDR);
	memcpy(buf + 5, rec, sizeof(rec));
	hdr()->hdr_cur_offs += sizeof(rec);
	hdr()->hdr_count = 2;
	pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, pmds_of, NULL);
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(u64, s.body[0], 1));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
	cr_assert(eq(u64, s.body[1], 4));
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
	/* No header and no body: nothing can advance; corrupt. */
	pvpmu_smpl_iter_init(&it, buf, BUF_SIZE, NULL, NULL);
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), -PVPMU_EFAULT));
}
