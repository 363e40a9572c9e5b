// SPDX-License-Identifier: MIT
/*
 * test_errors.c: every error the spec lists for each command (spec 3.1.1 -
 * 3.1.17, "Return values"), and the per-element error flags of vector
 * commands. One row per error: a case function returns the command's result
 * and stores the flags of the element that failed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "error_rows.h"
#include "harness.h"

static int pmc1(int fd, uint32_t *fl, struct pfarg_pmc p)
{
	int ret = vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &p, 1);

	*fl = p.reg_flags & PFM_REG_RETFL_MASK;
	return ret;
}

static int pmd1(int fd, uint32_t *fl, struct pfarg_pmd p, bool rd)
{
	int ret = rd ? vpmu_ctx_read_pmds(H.d, &H.guest, fd, &p, 1)
		     : vpmu_ctx_write_pmds(H.d, &H.guest, fd, &p, 1);

	*fl = p.reg_flags & PFM_REG_RETFL_MASK;
	return ret;
}

/* 3.1.1 */
static int create_null(int fd, uint32_t *fl)
{
	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, NULL, 1, NULL, 0);
}
static int create_n2(int fd, uint32_t *fl)
{
	struct pfarg_ctx c = {0};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 2, NULL, 0);
}
static int create_rsvd_flag(int fd, uint32_t *fl)
{
	struct pfarg_ctx c = {.ctx_flags = 0x100};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, NULL, 0);
}
static int create_sys_block(int fd, uint32_t *fl)
{
	struct pfarg_ctx c = {.ctx_flags =
				      PFM_FL_SYSTEM_WIDE | PFM_FL_NOTIFY_BLOCK};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, NULL, 0);
}
static int create_bad_uuid(int fd, uint32_t *fl)
{
	struct pfarg_ctx c = {.ctx_smpl_buf_id = {1, 2, 3}};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, NULL, 0);
}
static int create_fmt_arg_too_big(int fd, uint32_t *fl)
{
	static char big[8192];
	struct pfarg_ctx c = {.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, big, sizeof(big));
}
static int create_fmt_arg_short(int fd, uint32_t *fl)
{
	struct pfarg_ctx c = {.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};
	struct pfm_default_smpl_arg a = {.buf_size = 8192};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, &a, 4);
}
static int create_fmt_validate(int fd, uint32_t *fl)
{
	struct pfarg_ctx c = {.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};
	struct pfm_default_smpl_arg a = {.buf_size = 8192, .buf_flags = 0x80};

	(void)fd, (void)fl;
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, &a, sizeof(a));
}
static int create_gid(int fd, uint32_t *fl)
{
	struct pfarg_config cf;
	struct pfarg_ctx c = {0};

	(void)fd, (void)fl;
	cr_assert(eq(int, vpmu_get_config(H.d, &H.host, &cf, 1), 0));
	cf.cf_thread_gid = 42; /* guest runs with gid 0 */
	cr_assert(eq(int, vpmu_set_config(H.d, &H.host, &cf, 1), 0));
	return vpmu_ctx_create(H.d, &H.guest, &c, 1, NULL, 0);
}

/* 3.1: vector arguments (n, pointer, cf_arg_size_max) and the fd. */
static int vec_n0(int fd, uint32_t *fl)
{
	struct pfarg_pmc p = {0};

	(void)fl;
	return vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &p, 0);
}
static int vec_nneg(int fd, uint32_t *fl)
{
	struct pfarg_pmd p = {0};

	(void)fl;
	return vpmu_ctx_read_pmds(H.d, &H.guest, fd, &p, -1);
}
static int vec_null(int fd, uint32_t *fl)
{
	(void)fl;
	return vpmu_ctx_write_pmds(H.d, &H.guest, fd, NULL, 1);
}
static int vec_too_long(int fd, uint32_t *fl)
{
	static struct pfarg_pmd p[4096 / sizeof(struct pfarg_pmd) + 1];

	(void)fl;
	return vpmu_ctx_read_pmds(H.d, &H.guest, fd, p,
				  (int)(sizeof(p) / sizeof(p[0])));
}
static int vec_bad_fd(int fd, uint32_t *fl)
{
	struct pfarg_pmc p = {0};

	(void)fl;
	return vpmu_ctx_write_pmcs(H.d, &H.guest, fd + 1, &p, 1);
}
static int vec_neg_fd(int fd, uint32_t *fl)
{
	struct pfarg_setinfo s = {0};

	(void)fd, (void)fl;
	return vpmu_ctx_getinfo_evtsets(H.d, &H.guest, -1, &s, 1);
}

/* 3.1.2 */
static int pmc_bad_num(int fd, uint32_t *fl)
{
	return pmc1(fd, fl, (struct pfarg_pmc){.reg_num = 8});
}
static int pmc_num_64(int fd, uint32_t *fl)
{
	return pmc1(fd, fl, (struct pfarg_pmc){.reg_num = 64});
}
static int pmc_no_set(int fd, uint32_t *fl)
{
	return pmc1(fd, fl, (struct pfarg_pmc){.reg_num = 0, .reg_set = 3});
}
static int pmc_rsvd_flag(int fd, uint32_t *fl)
{
	return pmc1(fd, fl, (struct pfarg_pmc){.reg_flags = 0x100});
}
static int pmc_reset_unimpl(int fd, uint32_t *fl)
{
	return pmc1(fd, fl, (struct pfarg_pmc){.reg_reset_pmds = {1 << 10}});
}
static int pmc_smpl_unimpl(int fd, uint32_t *fl)
{
	return pmc1(fd, fl, (struct pfarg_pmc){.reg_smpl_pmds = {1 << 12}});
}
static int pmc_event_unavail(int fd, uint32_t *fl)
{
	return pmc1(
		fd, fl,
		(struct pfarg_pmc){.reg_value = VPMU_EVSEL(H_EV_UNKNOWN, 0)});
}

/* 3.1.3, 3.1.4 */
static int pmd_bad_num(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_num = 9}, false);
}
static int pmd_no_set(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_set = 9}, false);
}
static int pmd_in_flag(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_flags = 1}, false);
}
static int pmd_rsvd(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_reserved = 1}, false);
}
static int pmd_write_virtual(int fd, uint32_t *fl)
{
	return pmd1(fd, fl,
		    (struct pfarg_pmd){.reg_num = VPMU_PMD_VIRT_BASE + 1},
		    false);
}
static int rd_bad_num(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_num = 63}, true);
}
static int rd_no_set(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_set = 1}, true);
}
static int rd_in_flag(int fd, uint32_t *fl)
{
	return pmd1(fd, fl, (struct pfarg_pmd){.reg_flags = 4}, true);
}

enum case_id {
	C_create_null,
	C_create_n2,
	C_create_rsvd_flag,
	C_create_sys_block,
	C_create_bad_uuid,
	C_create_fmt_arg_too_big,
	C_create_fmt_arg_short,
	C_create_fmt_validate,
	C_create_gid,
	C_vec_n0,
	C_vec_nneg,
	C_vec_null,
	C_vec_too_long,
	C_vec_bad_fd,
	C_vec_neg_fd,
	C_pmc_bad_num,
	C_pmc_num_64,
	C_pmc_no_set,
	C_pmc_rsvd_flag,
	C_pmc_reset_unimpl,
	C_pmc_smpl_unimpl,
	C_pmc_event_unavail,
	C_pmd_bad_num,
	C_pmd_no_set,
	C_pmd_in_flag,
	C_pmd_rsvd,
	C_pmd_write_virtual,
	C_rd_bad_num,
	C_rd_no_set,
	C_rd_in_flag,
};

/* Rows carry an index: function pointers do not survive re-exec. */
static const case_fn cases[] = {
	[C_create_null]            = create_null,
	[C_create_n2]              = create_n2,
	[C_create_rsvd_flag]       = create_rsvd_flag,
	[C_create_sys_block]       = create_sys_block,
	[C_create_bad_uuid]        = create_bad_uuid,
	[C_create_fmt_arg_too_big] = create_fmt_arg_too_big,
	[C_create_fmt_arg_short]   = create_fmt_arg_short,
	[C_create_fmt_validate]    = create_fmt_validate,
	[C_create_gid]             = create_gid,
	[C_vec_n0]                 = vec_n0,
	[C_vec_nneg]               = vec_nneg,
	[C_vec_null]               = vec_null,
	[C_vec_too_long]           = vec_too_long,
	[C_vec_bad_fd]             = vec_bad_fd,
	[C_vec_neg_fd]             = vec_neg_fd,
	[C_pmc_bad_num]            = pmc_bad_num,
	[C_pmc_num_64]             = pmc_num_64,
	[C_pmc_no_set]             = pmc_no_set,
	[C_pmc_rsvd_flag]          = pmc_rsvd_flag,
	[C_pmc_reset_unimpl]       = pmc_reset_unimpl,
	[C_pmc_smpl_unimpl]        = pmc_smpl_unimpl,
	[C_pmc_event_unavail]      = pmc_event_unavail,
	[C_pmd_bad_num]            = pmd_bad_num,
	[C_pmd_no_set]             = pmd_no_set,
	[C_pmd_in_flag]            = pmd_in_flag,
	[C_pmd_rsvd]               = pmd_rsvd,
	[C_pmd_write_virtual]      = pmd_write_virtual,
	[C_rd_bad_num]             = rd_bad_num,
	[C_rd_no_set]              = rd_no_set,
	[C_rd_in_flag]             = rd_in_flag,
};

ParameterizedTestParameters(vpmu_cmd, errors)
{
	static struct row rows[] = {
		ROW(create_null, -EFAULT, 0),
		ROW(create_n2, -EFAULT, 0),
		ROW(create_rsvd_flag, -EINVAL, 0),
		ROW(create_sys_block, -EINVAL, 0),
		ROW(create_bad_uuid, -EINVAL, 0),
		ROW(create_fmt_arg_too_big, -E2BIG, 0),
		ROW(create_fmt_arg_short, -EINVAL, 0),
		ROW(create_fmt_validate, -EINVAL, 0),
		ROW(create_gid, -EPERM, 0),
		ROW(vec_n0, -EINVAL, 0),
		ROW(vec_nneg, -EINVAL, 0),
		ROW(vec_null, -EFAULT, 0),
		ROW(vec_too_long, -EFAULT, 0),
		ROW(vec_bad_fd, -EBADF, 0),
		ROW(vec_neg_fd, -EBADF, 0),
		ROW(pmc_bad_num, -EINVAL, PFM_REG_RETFL_NOTAVAIL),
		ROW(pmc_num_64, -EINVAL, PFM_REG_RETFL_NOTAVAIL),
		ROW(pmc_no_set, -EINVAL, PFM_REG_RETFL_NOSET),
		ROW(pmc_rsvd_flag, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(pmc_reset_unimpl, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(pmc_smpl_unimpl, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(pmc_event_unavail, -EINVAL, PFM_REG_RETFL_NOTAVAIL),
		ROW(pmd_bad_num, -EINVAL, PFM_REG_RETFL_NOTAVAIL),
		ROW(pmd_no_set, -EINVAL, PFM_REG_RETFL_NOSET),
		ROW(pmd_in_flag, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(pmd_rsvd, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(pmd_write_virtual, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(rd_bad_num, -EINVAL, PFM_REG_RETFL_NOTAVAIL),
		ROW(rd_no_set, -EINVAL, PFM_REG_RETFL_NOSET),
		ROW(rd_in_flag, -EINVAL, PFM_REG_RETFL_EINVAL),
	};

	return cr_make_param_array(struct row, rows,
				   sizeof(rows) / sizeof(rows[0]));
}

/* 3.1 "Return values" of each command, and the element flags. */
ParameterizedTest(struct row *r, vpmu_cmd, errors)
{
	error_row_check(r, cases);
}

TestSuite(vpmu_cmd, .init = h_setup, .fini = h_teardown);

/* 3.1 "Elements placed before the invalid element are ... processed". */
Test(vpmu_cmd, vector_stops_at_first_bad_element)
{
	int fd                = h_ctx(0);
	struct pfarg_pmd p[3] = {
		{.reg_num = 0, .reg_value = 11},
		{.reg_num = 1, .reg_set = 6, .reg_value = 22},
		{.reg_num = 2, .reg_value = 33},
	};

	cr_assert(
		eq(int, vpmu_ctx_write_pmds(H.d, &H.guest, fd, p, 3), -EINVAL));
	cr_assert(eq(u32, p[0].reg_flags, 0));
	cr_assert(eq(u32, p[1].reg_flags, PFM_REG_RETFL_NOSET));
	cr_assert(eq(u32, p[2].reg_flags, 0));
	cr_assert(eq(u64, h_val(fd, 0, 0), 11), "earlier element applied");
	cr_assert(eq(u64, h_val(fd, 0, 2), 0), "later element not applied");
}

/* 3.1.10 (same rule for sets): earlier sets stay created. */
Test(vpmu_cmd, set_vector_stops_at_first_bad_element)
{
	int fd                    = h_ctx(0);
	struct pfarg_setdesc s[3] = {
		{.set_id = 1},
		{.set_id = 2, .set_flags = 0x4000},
		{.set_id = 3},
	};
	struct pfarg_setinfo si = {.set_id = 3};

	cr_assert(eq(int, vpmu_ctx_create_evtsets(H.d, &H.guest, fd, s, 3),
		     -EINVAL));
	cr_assert(eq(u16, h_setinfo(fd, 1).set_id, 1));
	cr_assert(eq(int, vpmu_ctx_getinfo_evtsets(H.d, &H.guest, fd, &si, 1),
		     -EINVAL));
	cr_assert(eq(u32, si.set_flags, PFM_SET_RETFL_NOSET));
}

/* 3.1.2: an event no backend counts is refused, not counted as 0. */
Test(vpmu_cmd, unavailable_event_leaves_pmc_unchanged)
{
	int fd             = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_pmc p = {.reg_num   = 0,
			      .reg_value = VPMU_EVSEL(H_EV_UNKNOWN, 0)};

	h_rate(0, 1000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	cr_assert(eq(int, vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &p, 1),
		     -EINVAL));
	cr_assert(eq(u32, p.reg_flags, PFM_REG_RETFL_NOTAVAIL));
	h_load(fd, 0);
	h_start(fd);
	h_run(10);
	cr_assert(eq(u64, h_val(fd, 0, 0), 10), "old event still counts");
}
