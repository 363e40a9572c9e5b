// SPDX-License-Identifier: MIT
/*
 * test_reader.c: the buffers the formats write, walked by the SDK's reader
 * (guest/sdk/src/smpl.c) as a tool walks them (spec §3.6.3: locate samples
 * with hdr_count; §3.6.4: body PMDs from (set, ovfl_pmd)), for the default
 * format and n-way regions.
 */
#include "fmt_test.h"

/*
 * The measurement: PMD1 records PMD1+PMD2 (0x6), PMD3 records the PMDs of
 * (*opaque) (none, or a lie to check that the reader does not overread).
 */
static pvpmu_u64 body(void *opaque, pvpmu_u16 set, pvpmu_u16 pmd)
{
	(void)set;
	return pmd == 1 ? 0x6 : *(pvpmu_u64 *)opaque;
}

static void rec(const struct vpmu_smpl_fmt *f, struct vpmu_smpl_buf *b,
		uint16_t pmd, uint64_t t)
{
	struct vpmu_smpl_ovfl_arg a = ft_ovfl(pmd, pmd == 1 ? 0x6 : 0, t);
	uint32_t ctrl               = 0;

	cr_assert(eq(int, f->handler(b, &a, &ctrl), 0));
}

Test(vpmu_smpl_reader, walks_default_samples_of_different_sizes)
{
	struct pfm_default_smpl_arg da = {.buf_size = ft_page()};
	struct vpmu_smpl_buf b;
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	pvpmu_u64 none = 0;
	uint64_t t;

	ft_create(&vpmu_smpl_fmt_default, &da, FT_NUM_PMDS, &b);
	for (t = 1; t <= 5; t++)
		rec(&vpmu_smpl_fmt_default, &b, t % 2 ? 1 : 3, t);
	cr_assert(eq(int,
		     pvpmu_smpl_iter_init(&it, b.base, b.size, body, &none),
		     0));
	for (t = 1; t <= 5; t++) {
		cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 1));
		cr_assert(eq(u64, s.entry.tstamp, t));
		cr_assert(eq(u64, s.entry.ip, 0x401000 + t));
		cr_assert(eq(u32, s.nr_body, t % 2 ? 2 : 0));
		if (t % 2) {
			cr_assert(eq(u64, s.body[0], 1000 + t));
			cr_assert(eq(u64, s.body[1], 2000 + t));
		}
	}
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_reader, wrong_body_size_is_detected_not_overread)
{
	struct pfm_default_smpl_arg da = {.buf_size = ft_page()};
	struct vpmu_smpl_buf b;
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	pvpmu_u64 lie = (1ULL << 60) - 1; /* PMD3 samples claimed to carry 60 */
	int ret;

	ft_create(&vpmu_smpl_fmt_default, &da, FT_NUM_PMDS, &b);
	rec(&vpmu_smpl_fmt_default, &b, 3, 1);
	rec(&vpmu_smpl_fmt_default, &b, 3, 2);
	cr_assert(eq(int, pvpmu_smpl_iter_init(&it, b.base, b.size, body, &lie),
		     0));
	ret = pvpmu_smpl_iter_next(&it, &s);
	cr_assert(eq(int, ret, -PVPMU_EFAULT));
	/* Iteration stops there: no second try past the end. */
	cr_assert(eq(int, pvpmu_smpl_iter_next(&it, &s), 0));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_reader, rejects_a_foreign_header)
{
	struct pvpmu_nway_smpl_arg na = {.buf_size   = 4 * ft_page(),
					 .nr_regions = 2};
	struct vpmu_smpl_buf b;
	struct pvpmu_smpl_iter it;
	pvpmu_u64 none = 0;

	/* An n-way buffer is not a default-format buffer (hdr_version). */
	ft_create(&vpmu_smpl_fmt_nway, &na, FT_NUM_PMDS, &b);
	cr_assert(eq(int,
		     pvpmu_smpl_iter_init(&it, b.base, b.size, body, &none),
		     -PVPMU_EINVAL));
	cr_assert(eq(int,
		     pvpmu_nway_iter_init(&it, b.base, b.size, 2, body, &none),
		     -PVPMU_EINVAL));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_reader, walks_nway_full_regions_oldest_first)
{
	struct pvpmu_nway_smpl_arg na = {.buf_size   = 4 * ft_page(),
					 .buf_flags  = PFM_DFL_SMPL_IIP_HDR,
					 .nr_regions = 3};
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h;
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	unsigned int order[3];
	uint32_t ctrl;
	pvpmu_u64 none = 0;
	uint64_t t     = 0, n, c0;

	ft_create(&vpmu_smpl_fmt_nway, &na, FT_NUM_PMDS, &b);
	h = b.base;
	/* Fill regions 0 and 1, release 0, fill 2: FULL are 1 then 2. */
	while (h->cur_region != 2)
		rec(&vpmu_smpl_fmt_nway, &b, 3, ++t);
	c0 = h->regions[0].count;
	cr_assert(eq(int, vpmu_smpl_fmt_nway.restart(&b, true, 0, &ctrl), 0));
	while (h->cur_region != 0)
		rec(&vpmu_smpl_fmt_nway, &b, 3, ++t);
	cr_assert(eq(u32, pvpmu_nway_full(b.base, b.size, order, 3), 2));
	cr_assert(eq(u32, order[0], 1));
	cr_assert(eq(u32, order[1], 2));
	cr_assert(eq(u32, pvpmu_nway_full(b.base, b.size, order, 1), 1));
	cr_assert(eq(u32, order[0], 1));
	/* IIP header: the ip only; samples in region 1 follow region 0's. */
	cr_assert(eq(int,
		     pvpmu_nway_iter_init(&it, b.base, b.size, 1, body, &none),
		     0));
	cr_assert(eq(u32, it.entry_size, sizeof(pvpmu_u64)));
	n = c0 + 1;
	while (pvpmu_smpl_iter_next(&it, &s) == 1) {
		cr_assert(eq(u64, s.entry.tstamp, 0), "no entry header");
		cr_assert(eq(u64, s.entry.ip, 0x401000 + n++));
	}
	cr_assert(eq(u64, n, c0 + h->regions[1].count + 1));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_reader, full_regions_sorted_by_seq_not_index)
{
	struct pvpmu_nway_smpl_arg na = {.buf_size   = 4 * ft_page(),
					 .buf_flags  = PFM_DFL_SMPL_NO_HDR,
					 .nr_regions = 3};
	struct vpmu_smpl_buf b;
	struct pvpmu_nway_smpl_hdr *h;
	unsigned int order[3];
	uint32_t ctrl;
	uint64_t t = 0;

	ft_create(&vpmu_smpl_fmt_nway, &na, FT_NUM_PMDS, &b);
	h = b.base;
	/* Region 0 fills, is released, then 1, 2 and 0 again fill. */
	while (h->cur_region == 0)
		rec(&vpmu_smpl_fmt_nway, &b, 1, ++t);
	cr_assert(eq(int, vpmu_smpl_fmt_nway.restart(&b, true, 0, &ctrl), 0));
	while (h->cur_region != PVPMU_NWAY_NO_REGION)
		rec(&vpmu_smpl_fmt_nway, &b, 1, ++t);
	cr_assert(eq(u32, pvpmu_nway_full(b.base, b.size, order, 3), 3));
	cr_assert(eq(u32, order[0], 1));
	cr_assert(eq(u32, order[1], 2));
	cr_assert(eq(u32, order[2], 0));
	vpmu_smpl_destroy(&b);
}
