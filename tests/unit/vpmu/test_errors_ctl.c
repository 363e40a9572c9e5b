// SPDX-License-Identifier: MIT
/*
 * test_errors_ctl.c: the errors of START, LOAD, the set commands, GETINFO,
 * SET/GET_CONFIG and message reads (spec 3.1.5-3.1.17, "Return values"),
 * with the per-element error flags. One row per error: a case function returns
 * the command's result and stores the flags of the element that failed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "error_rows.h"
#include "harness.h"

static int set1(int fd, uint32_t *fl, struct pfarg_setdesc s, bool del)
{
	int ret = del ? vpmu_ctx_delete_evtsets(H.d, &H.guest, fd, &s, 1)
		      : vpmu_ctx_create_evtsets(H.d, &H.guest, fd, &s, 1);

	*fl = s.set_flags & PFM_SET_RETFL_MASK;
	return ret;
}

/* 3.1.5 */
static int start_null_n1(int fd, uint32_t *fl)
{
	(void)fl;
	h_load(fd, 0);
	return vpmu_ctx_start(H.d, &H.guest, fd, NULL, 1);
}
static int start_arg_n0(int fd, uint32_t *fl)
{
	struct pfarg_start s = {0};

	(void)fl;
	h_load(fd, 0);
	return vpmu_ctx_start(H.d, &H.guest, fd, &s, 0);
}
static int start_no_set(int fd, uint32_t *fl)
{
	struct pfarg_start s = {.start_set = 4};

	(void)fl;
	h_load(fd, 0);
	return vpmu_ctx_start(H.d, &H.guest, fd, &s, 1);
}

/* 3.1.7 */
static int load_null(int fd, uint32_t *fl)
{
	(void)fl;
	return vpmu_ctx_load(H.d, &H.guest, fd, NULL, 1);
}
static int load_n2(int fd, uint32_t *fl)
{
	struct pfarg_load l = {0};

	(void)fl;
	return vpmu_ctx_load(H.d, &H.guest, fd, &l, 2);
}
static int load_no_set(int fd, uint32_t *fl)
{
	struct pfarg_load l = {.load_set = 2};

	(void)fl;
	return vpmu_ctx_load(H.d, &H.guest, fd, &l, 1);
}
static int load_broken_chain(int fd, uint32_t *fl)
{
	struct pfarg_load l = {0};

	(void)fl;
	h_set(fd, 1, PFM_SETFL_EXPL_NEXT, 7, 0); /* set7 never created */
	return vpmu_ctx_load(H.d, &H.guest, fd, &l, 1);
}

/* 3.1.10 - 3.1.12 */
static int set_rsvd_flag(int fd, uint32_t *fl)
{
	return set1(fd, fl,
		    (struct pfarg_setdesc){.set_id = 1, .set_flags = 0x1000},
		    false);
}
static int set_two_methods(int fd, uint32_t *fl)
{
	return set1(fd, fl,
		    (struct pfarg_setdesc){.set_id    = 1,
					   .set_flags = PFM_SETFL_OVFL_SWITCH |
							PFM_SETFL_TIME_SWITCH,
					   .set_timeout = {.tv_sec = 1}},
		    false);
}
static int set_zero_timeout(int fd, uint32_t *fl)
{
	return set1(fd, fl,
		    (struct pfarg_setdesc){.set_id    = 1,
					   .set_flags = PFM_SETFL_TIME_SWITCH},
		    false);
}
static int set_bad_nsec(int fd, uint32_t *fl)
{
	return set1(fd, fl,
		    (struct pfarg_setdesc){
			    .set_id      = 1,
			    .set_flags   = PFM_SETFL_TIME_SWITCH,
			    .set_timeout = {.tv_nsec = 1000000000ULL}},
		    false);
}
static int del_set0(int fd, uint32_t *fl)
{
	return set1(fd, fl, (struct pfarg_setdesc){.set_id = 0}, true);
}
static int del_missing(int fd, uint32_t *fl)
{
	return set1(fd, fl, (struct pfarg_setdesc){.set_id = 8}, true);
}
static int del_in_flag(int fd, uint32_t *fl)
{
	h_set(fd, 8, 0, 0, 0);
	return set1(fd, fl,
		    (struct pfarg_setdesc){.set_id    = 8,
					   .set_flags = PFM_SETFL_EXPL_NEXT},
		    true);
}
static int info_missing(int fd, uint32_t *fl)
{
	struct pfarg_setinfo s = {.set_id = 9};
	int ret = vpmu_ctx_getinfo_evtsets(H.d, &H.guest, fd, &s, 1);

	*fl = s.set_flags & PFM_SET_RETFL_MASK;
	return ret;
}

/* 3.1.13, 3.1.14, 3.1.16, 3.1.17 */
static int pmcinfo_unimpl(int fd, uint32_t *fl)
{
	struct pfarg_pmcinfo p = {.reg_num = 30};
	int ret                = vpmu_getinfo_pmcs(H.d, &H.guest, &p, 1);

	(void)fd;
	*fl = p.reg_flags;
	return ret;
}
static int pmdinfo_unimpl(int fd, uint32_t *fl)
{
	struct pfarg_pmdinfo p = {.reg_num = 12};
	int ret                = vpmu_getinfo_pmds(H.d, &H.guest, &p, 1);

	(void)fd;
	*fl = p.reg_flags;
	return ret;
}
static int setcfg_guest(int fd, uint32_t *fl)
{
	struct pfarg_config cf;

	(void)fd, (void)fl;
	cr_assert(eq(int, vpmu_get_config(H.d, &H.guest, &cf, 1), 0));
	return vpmu_set_config(H.d, &H.guest, &cf, 1);
}
static int setcfg_n0(int fd, uint32_t *fl)
{
	struct pfarg_config cf = {0};

	(void)fd, (void)fl;
	return vpmu_set_config(H.d, &H.host, &cf, 0);
}
static int setcfg_below_page(int fd, uint32_t *fl)
{
	struct pfarg_config cf;

	(void)fd, (void)fl;
	cr_assert(eq(int, vpmu_get_config(H.d, &H.host, &cf, 1), 0));
	cf.cf_arg_size_max = 100;
	return vpmu_set_config(H.d, &H.host, &cf, 1);
}
static int setcfg_flags(int fd, uint32_t *fl)
{
	struct pfarg_config cf;

	(void)fd, (void)fl;
	cr_assert(eq(int, vpmu_get_config(H.d, &H.host, &cf, 1), 0));
	cf.cf_flags = 1;
	return vpmu_set_config(H.d, &H.host, &cf, 1);
}
static int getcfg_null(int fd, uint32_t *fl)
{
	(void)fd, (void)fl;
	return vpmu_get_config(H.d, &H.guest, NULL, 1);
}
static int getcfg_n2(int fd, uint32_t *fl)
{
	struct pfarg_config cf[2];

	(void)fd, (void)fl;
	return vpmu_get_config(H.d, &H.guest, cf, 2);
}
static int msgs_null(int fd, uint32_t *fl)
{
	unsigned int nr;

	(void)fl;
	return vpmu_ctx_read_msgs(H.d, &H.guest, fd, NULL, 1, &nr);
}
static int msgs_max0(int fd, uint32_t *fl)
{
	union pfm_msg m;
	unsigned int nr;

	(void)fl;
	return vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 0, &nr);
}

enum case_id {
	C_start_null_n1,
	C_start_arg_n0,
	C_start_no_set,
	C_load_null,
	C_load_n2,
	C_load_no_set,
	C_load_broken_chain,
	C_set_rsvd_flag,
	C_set_two_methods,
	C_set_zero_timeout,
	C_set_bad_nsec,
	C_del_set0,
	C_del_missing,
	C_del_in_flag,
	C_info_missing,
	C_pmcinfo_unimpl,
	C_pmdinfo_unimpl,
	C_setcfg_guest,
	C_setcfg_n0,
	C_setcfg_below_page,
	C_setcfg_flags,
	C_getcfg_null,
	C_getcfg_n2,
	C_msgs_null,
	C_msgs_max0,
};

/* Rows carry an index: function pointers do not survive re-exec. */
static const case_fn cases[] = {
	[C_start_null_n1]     = start_null_n1,
	[C_start_arg_n0]      = start_arg_n0,
	[C_start_no_set]      = start_no_set,
	[C_load_null]         = load_null,
	[C_load_n2]           = load_n2,
	[C_load_no_set]       = load_no_set,
	[C_load_broken_chain] = load_broken_chain,
	[C_set_rsvd_flag]     = set_rsvd_flag,
	[C_set_two_methods]   = set_two_methods,
	[C_set_zero_timeout]  = set_zero_timeout,
	[C_set_bad_nsec]      = set_bad_nsec,
	[C_del_set0]          = del_set0,
	[C_del_missing]       = del_missing,
	[C_del_in_flag]       = del_in_flag,
	[C_info_missing]      = info_missing,
	[C_pmcinfo_unimpl]    = pmcinfo_unimpl,
	[C_pmdinfo_unimpl]    = pmdinfo_unimpl,
	[C_setcfg_guest]      = setcfg_guest,
	[C_setcfg_n0]         = setcfg_n0,
	[C_setcfg_below_page] = setcfg_below_page,
	[C_setcfg_flags]      = setcfg_flags,
	[C_getcfg_null]       = getcfg_null,
	[C_getcfg_n2]         = getcfg_n2,
	[C_msgs_null]         = msgs_null,
	[C_msgs_max0]         = msgs_max0,
};

ParameterizedTestParameters(vpmu_cmd, control_errors)
{
	static struct row rows[] = {
		ROW(start_null_n1, -EFAULT, 0),
		ROW(start_arg_n0, -EFAULT, 0),
		ROW(start_no_set, -EINVAL, 0),
		ROW(load_null, -EFAULT, 0),
		ROW(load_n2, -EFAULT, 0),
		ROW(load_no_set, -EINVAL, 0),
		ROW(load_broken_chain, -EINVAL, 0),
		ROW(set_rsvd_flag, -EINVAL, PFM_SET_RETFL_EINVAL),
		ROW(set_two_methods, -EINVAL, PFM_SET_RETFL_EINVAL),
		ROW(set_zero_timeout, -EINVAL, PFM_SET_RETFL_EINVAL),
		ROW(set_bad_nsec, -EINVAL, PFM_SET_RETFL_EINVAL),
		ROW(del_set0, -EINVAL, PFM_SET_RETFL_EINVAL),
		ROW(del_missing, -EINVAL, PFM_SET_RETFL_NOSET),
		ROW(del_in_flag, -EINVAL, PFM_SET_RETFL_EINVAL),
		ROW(info_missing, -EINVAL, PFM_SET_RETFL_NOSET),
		ROW(pmcinfo_unimpl, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(pmdinfo_unimpl, -EINVAL, PFM_REG_RETFL_EINVAL),
		ROW(setcfg_guest, -EPERM, 0),
		ROW(setcfg_n0, -EFAULT, 0),
		ROW(setcfg_below_page, -EINVAL, 0),
		ROW(setcfg_flags, -EINVAL, 0),
		ROW(getcfg_null, -EFAULT, 0),
		ROW(getcfg_n2, -EFAULT, 0),
		ROW(msgs_null, -EFAULT, 0),
		ROW(msgs_max0, -EINVAL, 0),
	};

	return cr_make_param_array(struct row, rows,
				   sizeof(rows) / sizeof(rows[0]));
}

/* 3.1.5-3.1.17 "Return values", and the element flags. */
ParameterizedTest(struct row *r, vpmu_cmd, control_errors)
{
	error_row_check(r, cases);
}
