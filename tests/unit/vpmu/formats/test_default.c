// SPDX-License-Identifier: MIT
/*
 * test_default.c: the default sampling format, spec §3.6 (digest §9.6):
 * arguments, header initialisation, exact sample layout, the post-check
 * full rule, saturation and the two kinds of restart.
 */
#include <errno.h>
#include <stdlib.h>

#include "fmt_test.h"

#define HDR   40 /* sizeof(pfm_default_smpl_hdr_t), §3.6.3 */
#define ENTRY 40 /* sizeof(pfm_default_smpl_entry_t), §3.6.4 */
#define CTRL_FULL                                                              \
	(VPMU_SMPL_CTRL_NOTIFY_USER | VPMU_SMPL_CTRL_BLOCK_THREAD |            \
	 VPMU_SMPL_CTRL_MASK_MONITORING)

static const struct vpmu_smpl_fmt *dfl = &vpmu_smpl_fmt_default;

static int validate(uint64_t size, uint32_t flags, uint16_t num_pmds)
{
	struct pfm_default_smpl_arg a = {.buf_size = size, .buf_flags = flags};

	return dfl->validate(0, num_pmds, &a);
}

static struct pfm_default_smpl_hdr *mkbuf(struct vpmu_smpl_buf *b,
					  uint64_t size, uint32_t flags)
{
	struct pfm_default_smpl_arg a = {.buf_size = size, .buf_flags = flags};

	ft_create(dfl, &a, FT_NUM_PMDS, b);
	return b->base;
}

static uint32_t ovfl(struct vpmu_smpl_buf *b, struct vpmu_smpl_ovfl_arg a)
{
	uint32_t ctrl = 0;

	cr_assert(eq(int, dfl->handler(b, &a, &ctrl), 0));
	return ctrl;
}

Test(vpmu_smpl_default, validate_requires_room_for_one_max_sample)
{
	/* §3.6.2 "large enough"; §3.6.5 max_sample_size = 40 + 8 * PMDs. */
	cr_assert(eq(int, validate(HDR + ENTRY + 8 * 8 - 1, 0, 8), -EINVAL));
	cr_assert(eq(int, validate(HDR + ENTRY + 8 * 8, 0, 8), 0));
	cr_assert(eq(int, validate(0, 0, 8), -EINVAL));
	/* With IIP_HDR the sample header is 8 bytes; NO_HDR: none. */
	cr_assert(eq(int, validate(HDR + 8 + 64 - 1, PFM_DFL_SMPL_IIP_HDR, 8),
		     -EINVAL));
	cr_assert(eq(int, validate(HDR + 8 + 64, PFM_DFL_SMPL_IIP_HDR, 8), 0));
	cr_assert(eq(int, validate(HDR + 64, PFM_DFL_SMPL_NO_HDR, 8), 0));
}

Test(vpmu_smpl_default, validate_rejects_reserved_flags_and_pad)
{
	struct pfm_default_smpl_arg a = {.buf_size = 4096, .pad0 = 1};

	/* §3.6.2: undefined buf_flags bits are reserved and must be clear. */
	cr_assert(eq(int, validate(4096, 1U << 2, 8), -EINVAL));
	cr_assert(eq(int, validate(4096, 1U << 31, 8), -EINVAL));
	cr_assert(eq(int, validate(4096, PVPMU_NWAY_SMPL_CYCLE, 8), -EINVAL));
	cr_assert(eq(int, dfl->validate(0, 8, &a), -EINVAL));
	/* NO_HDR with IIP_HDR has no meaning (decision, vpmu_smpl.h). */
	cr_assert(eq(
		int,
		validate(4096, PFM_DFL_SMPL_NO_HDR | PFM_DFL_SMPL_IIP_HDR, 8),
		-EINVAL));
	cr_assert(eq(int, validate(4096, 0, 0), -EINVAL));
}

Test(vpmu_smpl_default, works_per_thread_and_system_wide)
{
	struct pfm_default_smpl_arg a = {.buf_size = 4096};

	/* §3.6: generic enough for both kinds of context. */
	cr_assert(eq(int, dfl->validate(0, 8, &a), 0));
	cr_assert(eq(int, dfl->validate(PFM_FL_SYSTEM_WIDE, 8, &a), 0));
	cr_assert(eq(u32, dfl->flags & VPMU_SMPL_FMTFL_NOSET, 0));
}

Test(vpmu_smpl_default, getsize_is_buf_size_rounded_to_pages)
{
	struct pfm_default_smpl_arg a = {.buf_size = 5000};
	size_t ps = ft_page(), size = 0;

	cr_assert(eq(int, dfl->getsize(0, &a, &size), 0));
	cr_assert(eq(sz, size, (5000 + ps - 1) / ps * ps));
	a.buf_size = 2 * ps;
	cr_assert(eq(int, dfl->getsize(0, &a, &size), 0));
	cr_assert(eq(sz, size, 2 * ps));
}

Test(vpmu_smpl_default, init_fills_the_header)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h =
		mkbuf(&b, 3 * ft_page(), PFM_DFL_SMPL_IIP_HDR);

	/* §3.6.3: count 0, cur_offs just past the header, no overflow. */
	cr_assert(eq(u64, ft_u64(h, 0), 0));
	cr_assert(eq(u64, ft_u64(h, 8), HDR));
	cr_assert(eq(u64, ft_u64(h, 16), 0));
	cr_assert(eq(u64, ft_u64(h, 24), 3 * ft_page()));
	cr_assert(eq(u32, ft_u32(h, 32), PFM_DEFAULT_SMPL_VERSION));
	cr_assert(eq(u32, ft_u32(h, 36), PFM_DFL_SMPL_IIP_HDR));
	cr_assert(eq(u32, PFM_DEFAULT_SMPL_VERSION >> 16, 1));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, handler_writes_exact_entry_and_body)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, ft_page(), 0);
	/* §3.6.4 example: PMD4 overflows, PMD5 and PMD7 recorded (0xa0). */
	struct vpmu_smpl_ovfl_arg a = ft_ovfl(4, 0xa0, 77);
	const char *s               = (const char *)h + HDR;

	/* §3.6.5: not full -> short reset, no notification. */
	cr_assert(eq(u32, ovfl(&b, a), VPMU_SMPL_CTRL_RESET_OVFL_PMDS));
	cr_assert(eq(u64, h->hdr_count, 1));
	cr_assert(eq(u64, h->hdr_cur_offs, HDR + ENTRY + 2 * 8));
	cr_assert(eq(u32, ft_u32(s, 0), 1234)); /* pid */
	cr_assert(eq(u32, ft_u32(s, 4), 1235)); /* tid */
	cr_assert(eq(u16, ft_u16(s, 8), 4));    /* ovfl_pmd */
	cr_assert(eq(u16, ft_u16(s, 10), 3));   /* set */
	cr_assert(eq(u16, ft_u16(s, 12), 1));   /* cpu */
	cr_assert(eq(u16, ft_u16(s, 14), 0));   /* pad */
	cr_assert(eq(u64, ft_u64(s, 16), 0xfffffffffffe7960ULL));
	cr_assert(eq(u64, ft_u64(s, 24), 77));            /* tstamp */
	cr_assert(eq(u64, ft_u64(s, 32), 0x401000 + 77)); /* ip */
	/* Body: PMD5 then PMD7, increasing index. */
	cr_assert(eq(u64, ft_u64(s, 40), 5000 + 77));
	cr_assert(eq(u64, ft_u64(s, 48), 7000 + 77));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, simultaneous_overflows_are_consecutive_samples)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, ft_page(), 0);
	const char *s                  = (const char *)h + HDR;

	/* §3.6.4 fig 3.29: PMD4 then PMD5, same tstamp, same set. */
	ovfl(&b, ft_ovfl(4, 1ULL << 6, 9));
	ovfl(&b, ft_ovfl(5, 0, 9));
	cr_assert(eq(u64, h->hdr_count, 2));
	cr_assert(eq(u16, ft_u16(s, 8), 4));
	cr_assert(eq(u64, ft_u64(s, 40), 6009));
	cr_assert(eq(u16, ft_u16(s, ENTRY + 8 + 8), 5));
	cr_assert(eq(u64, ft_u64(s, ENTRY + 8 + 24), ft_u64(s, 24)));
	cr_assert(eq(u16, ft_u16(s, ENTRY + 8 + 10), ft_u16(s, 10)));
	cr_assert(eq(u64, h->hdr_cur_offs, HDR + ENTRY + 8 + ENTRY));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, iip_and_no_hdr_samples)
{
	struct vpmu_smpl_buf b, c;
	struct pfm_default_smpl_hdr *h =
		mkbuf(&b, ft_page(), PFM_DFL_SMPL_IIP_HDR);
	struct pfm_default_smpl_hdr *g =
		mkbuf(&c, ft_page(), PFM_DFL_SMPL_NO_HDR);

	/* §3.6.2 IIP_HDR: the header is only the ip; body unaffected. */
	ovfl(&b, ft_ovfl(0, 0x6, 5));
	cr_assert(eq(u64, h->hdr_cur_offs, HDR + 8 + 16));
	cr_assert(eq(u64, ft_u64(h, HDR), 0x401005));
	cr_assert(eq(u64, ft_u64(h, HDR + 8), 1005));
	cr_assert(eq(u64, ft_u64(h, HDR + 16), 2005));
	/* NO_HDR: the body only. */
	ovfl(&c, ft_ovfl(0, 0x2, 5));
	cr_assert(eq(u64, g->hdr_cur_offs, HDR + 8));
	cr_assert(eq(u64, ft_u64(g, HDR), 1005));
	vpmu_smpl_destroy(&b);
	vpmu_smpl_destroy(&c);
}

/* Record samples with (smpl_pmds) until the handler masks; returns count. */
static uint64_t fill(struct vpmu_smpl_buf *b, uint64_t smpl_pmds)
{
	struct pfm_default_smpl_hdr *h = b->base;
	size_t max                     = ENTRY + 8 * FT_NUM_PMDS;
	uint64_t n                     = 0;
	uint32_t ctrl;

	do {
		ctrl = ovfl(b, ft_ovfl(1, smpl_pmds, 100 + n++));
		/* §3.6.5 post-check decides full from the space left. */
		if (b->size - h->hdr_cur_offs >= max)
			cr_assert(
				eq(u32, ctrl, VPMU_SMPL_CTRL_RESET_OVFL_PMDS));
		else
			cr_assert(eq(u32, ctrl, CTRL_FULL));
	} while (ctrl != CTRL_FULL && n < 100000);
	return n;
}

Test(vpmu_smpl_default, full_buffer_masks_notifies_and_counts_overflow)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, ft_page(), 0);
	uint64_t n                     = fill(&b, 0x3);
	uint64_t sample                = ENTRY + 16;

	/* Exactly the samples that fit before < max_sample_size is left. */
	cr_assert(eq(u64, n, (ft_page() - HDR - (ENTRY + 64)) / sample + 1));
	cr_assert(eq(u64, h->hdr_count, n));
	cr_assert(eq(u64, h->hdr_cur_offs, HDR + n * sample));
	cr_assert(eq(u64, h->hdr_overflows, 1));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, exactly_max_sample_size_left_is_not_full)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h =
		mkbuf(&b, ft_page(), PFM_DFL_SMPL_IIP_HDR);
	size_t max = 8 + 8 * FT_NUM_PMDS; /* IIP header + all PMDs */
	uint64_t k = (ft_page() - HDR - max) / 16;
	uint64_t i;

	/* 16-byte samples (ip + one value): after k of them exactly
	 * max_sample_size bytes are left, which still fits a sample. */
	for (i = 0; i < k; i++)
		cr_assert(eq(u32, ovfl(&b, ft_ovfl(1, 0x1, i)),
			     VPMU_SMPL_CTRL_RESET_OVFL_PMDS));
	cr_assert(eq(u64, b.size - h->hdr_cur_offs, max));
	cr_assert(eq(u64, h->hdr_overflows, 0));
	/* The next one leaves less than max_sample_size: full (§3.6.5). */
	cr_assert(eq(u32, ovfl(&b, ft_ovfl(1, 0x1, k)), CTRL_FULL));
	cr_assert(eq(u64, h->hdr_count, k + 1));
	cr_assert(eq(u64, h->hdr_overflows, 1));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, full_buffer_takes_no_more_samples)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, ft_page(), 0);
	uint64_t n                     = fill(&b, 0);
	uint64_t offs                  = h->hdr_cur_offs;

	/* A simultaneous overflow after the last sample that fits: lost,
	 * no partial sample, overflows counted once (§3.6.4, §3.6.5). */
	cr_assert(eq(u32, ovfl(&b, ft_ovfl(2, 0, 999)), CTRL_FULL));
	cr_assert(eq(u64, h->hdr_count, n));
	cr_assert(eq(u64, h->hdr_cur_offs, offs));
	cr_assert(eq(u64, h->hdr_overflows, 1));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, saturation_requests_notify_without_ovfl_notify)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, HDR + ENTRY + 64, 0);
	struct vpmu_smpl_ovfl_arg a    = ft_ovfl(1, 0, 1);
	uint32_t ctrl                  = 0;

	/* §3.6.5: full -> notification "systematically" requested and
	 * masked; with no OVFL_NOTIFY PMC the core sends none (saturated). */
	a.ovfl_notify = false;
	while (ctrl != CTRL_FULL && h->hdr_count < 100000)
		ctrl = ovfl(&b, a);
	cr_assert(eq(u32, ctrl, CTRL_FULL));
	/* RESTART on a saturated buffer resets it and resumes. */
	cr_assert(eq(int, dfl->restart(&b, false, 0, &ctrl), 0));
	cr_assert(eq(u32, ctrl, VPMU_SMPL_CTRL_RESET_OVFL_PMDS));
	cr_assert(eq(u64, h->hdr_count, 0));
	cr_assert(eq(u32, ovfl(&b, a) & VPMU_SMPL_CTRL_RESET_OVFL_PMDS,
		     VPMU_SMPL_CTRL_RESET_OVFL_PMDS));
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, restart_after_full_resets_header_only)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, ft_page(), 0);
	uint64_t n                     = fill(&b, 0x1);
	size_t len                     = b.size - HDR;
	char *before                   = malloc(len);
	uint32_t ctrl                  = 0xff;

	cr_assert(not(eq(ptr, before, NULL)));
	memcpy(before, (char *)h + HDR, len);
	/* §3.6.5: count 0, cur_offs after the header, long reset, resume. */
	cr_assert(eq(int, dfl->restart(&b, false, 0, &ctrl), 0));
	cr_assert(eq(u32, ctrl, VPMU_SMPL_CTRL_RESET_OVFL_PMDS));
	cr_assert(eq(u64, h->hdr_count, 0));
	cr_assert(eq(u64, h->hdr_cur_offs, HDR));
	/* hdr_overflows is not reset; old samples are not cleared. */
	cr_assert(eq(u64, h->hdr_overflows, 1));
	cr_assert(eq(int, memcmp(before, (char *)h + HDR, len), 0));
	/* New samples start again after the header; next full counts 2. */
	cr_assert(eq(u64, fill(&b, 0x1), n));
	cr_assert(eq(u64, h->hdr_overflows, 2));
	free(before);
	vpmu_smpl_destroy(&b);
}

Test(vpmu_smpl_default, active_restart_only_resets_the_header)
{
	struct vpmu_smpl_buf b;
	struct pfm_default_smpl_hdr *h = mkbuf(&b, ft_page(), 0);
	uint32_t ctrl                  = 0xff;

	ovfl(&b, ft_ovfl(1, 0x1, 1));
	ovfl(&b, ft_ovfl(1, 0x1, 2));
	/* §3.6.5 active restart: header reset, nothing else. */
	cr_assert(eq(int, dfl->restart(&b, true, 0, &ctrl), 0));
	cr_assert(eq(u32, ctrl, 0));
	cr_assert(eq(u64, h->hdr_count, 0));
	cr_assert(eq(u64, h->hdr_cur_offs, HDR));
	cr_assert(eq(u64, h->hdr_overflows, 0));
	vpmu_smpl_destroy(&b);
}
