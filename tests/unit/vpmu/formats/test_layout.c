// SPDX-License-Identifier: MIT
/*
 * test_layout.c: ABI layouts of the sampling formats, against literal
 * numbers: the spec's LP64 layouts (digest Appendix A; spec §3.6.2-§3.6.4)
 * so tools written for the spec parse vpmu buffers unchanged, and the n-way
 * format's own layout (pvpmu/abi.h 7.2). Table-driven, one row per field.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stddef.h>
#include <string.h>

#include <pvpmu/abi.h>

struct layout_row {
	int line;
	const char *what;
	size_t got, want;
};

#define ROW(expr, n)                                                           \
	{                                                                      \
		__LINE__, #expr, (expr), (n)                                   \
	}

static const struct layout_row layout_rows[] = {
	/* §3.6.2 pfm_default_smpl_arg_t: LP64 16 bytes. */
	ROW(sizeof(struct pfm_default_smpl_arg), 16),
	ROW(offsetof(struct pfm_default_smpl_arg, buf_size), 0),
	ROW(offsetof(struct pfm_default_smpl_arg, buf_flags), 8),
	/* §3.6.3 pfm_default_smpl_hdr_t: 40 bytes, a multiple of 8. */
	ROW(sizeof(struct pfm_default_smpl_hdr), 40),
	ROW(offsetof(struct pfm_default_smpl_hdr, hdr_count), 0),
	ROW(offsetof(struct pfm_default_smpl_hdr, hdr_cur_offs), 8),
	ROW(offsetof(struct pfm_default_smpl_hdr, hdr_overflows), 16),
	ROW(offsetof(struct pfm_default_smpl_hdr, hdr_buf_size), 24),
	ROW(offsetof(struct pfm_default_smpl_hdr, hdr_version), 32),
	ROW(offsetof(struct pfm_default_smpl_hdr, hdr_flags), 36),
	/* §3.6.4 pfm_default_smpl_entry_t: 40 bytes, pad after cpu. */
	ROW(sizeof(struct pfm_default_smpl_entry), 40),
	ROW(offsetof(struct pfm_default_smpl_entry, pid), 0),
	ROW(offsetof(struct pfm_default_smpl_entry, tid), 4),
	ROW(offsetof(struct pfm_default_smpl_entry, ovfl_pmd), 8),
	ROW(offsetof(struct pfm_default_smpl_entry, set), 10),
	ROW(offsetof(struct pfm_default_smpl_entry, cpu), 12),
	ROW(offsetof(struct pfm_default_smpl_entry, last_reset_val), 16),
	ROW(offsetof(struct pfm_default_smpl_entry, tstamp), 24),
	ROW(offsetof(struct pfm_default_smpl_entry, ip), 32),
	/* n-way format (vpmu's own layout). */
	ROW(sizeof(struct pvpmu_nway_smpl_arg), 16),
	ROW(offsetof(struct pvpmu_nway_smpl_arg, buf_flags), 8),
	ROW(offsetof(struct pvpmu_nway_smpl_arg, nr_regions), 12),
	ROW(sizeof(struct pvpmu_nway_region), 40),
	ROW(offsetof(struct pvpmu_nway_region, state), 0),
	ROW(offsetof(struct pvpmu_nway_region, seq), 8),
	ROW(offsetof(struct pvpmu_nway_region, count), 16),
	ROW(offsetof(struct pvpmu_nway_region, offs), 24),
	ROW(offsetof(struct pvpmu_nway_region, cur_offs), 32),
	ROW(sizeof(struct pvpmu_nway_smpl_hdr), 704),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, buf_size), 0),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, region_size), 8),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, overflows), 16),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, lost), 24),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, masked), 32),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, next_seq), 40),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, version), 48),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, flags), 52),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, nr_regions), 56),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, cur_region), 60),
	ROW(offsetof(struct pvpmu_nway_smpl_hdr, regions), 64),
};

Test(vpmu_smpl_layout, abi_sizes_and_offsets)
{
	size_t i;

	for (i = 0; i < sizeof(layout_rows) / sizeof(layout_rows[0]); i++) {
		const struct layout_row *r = &layout_rows[i];

		cr_expect(eq(sz, r->got, r->want), "line %d: %s", r->line,
			  r->what);
	}
}

/* §3.6.1: the default UUID is fixed on all implementations. */
Test(vpmu_smpl_layout, default_uuid_bytes)
{
	static const unsigned char got[16]  = PFM_DEFAULT_SMPL_UUID;
	static const unsigned char want[16] = {
		0x4d, 0x72, 0xbe, 0xc0, 0x06, 0x64, 0x41, 0x43,
		0x82, 0xb4, 0xd3, 0xfd, 0x27, 0x24, 0x3c, 0x97};

	cr_assert(eq(int, memcmp(got, want, 16), 0));
}

/* §3.6.3, §3.6.4: header and sample header align samples on 8 bytes. */
Test(vpmu_smpl_layout, headers_keep_samples_8_byte_aligned)
{
	cr_assert(eq(sz, sizeof(struct pfm_default_smpl_hdr) % 8, 0));
	cr_assert(eq(sz, sizeof(struct pfm_default_smpl_entry) % 8, 0));
	cr_assert(eq(sz, sizeof(struct pvpmu_nway_smpl_hdr) % 8, 0));
}
