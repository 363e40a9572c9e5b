// SPDX-License-Identifier: MIT
/*
 * test_abi_layout.c: sizeof and offsetof of every struct of pvpmu/abi.h
 * against literal numbers (libpfm4's struct table), next to the header's
 * _Static_asserts: a layout change shows here as a readable diff with the
 * row's line. Also the numeric constants guests and host must agree on.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <stddef.h>

#include <pvpmu/abi.h>

struct layout_row {
	int line;
	char what[64]; /* inline: parameters are copied between processes */
	size_t got, want;
};

#define SIZE(T, n)                                                             \
	{                                                                      \
		.line = __LINE__, .what = "sizeof(" #T ")", .got = sizeof(T),  \
		.want = (n)                                                    \
	}
#define OFF(T, f, n)                                                           \
	{                                                                      \
		.line = __LINE__, .what = #T "." #f, .got = offsetof(T, f),    \
		.want = (n)                                                    \
	}

static struct layout_row rows[] = {
	SIZE(struct pvpmu_boot_info, 144),
	OFF(struct pvpmu_boot_info, magic, 0),
	OFF(struct pvpmu_boot_info, abi, 8),
	OFF(struct pvpmu_boot_info, nr_vcpus, 12),
	OFF(struct pvpmu_boot_info, mem_size, 16),
	OFF(struct pvpmu_boot_info, tsc_khz, 24),
	OFF(struct pvpmu_boot_info, uuid, 32),
	OFF(struct pvpmu_boot_info, name, 48),
	OFF(struct pvpmu_boot_info, reserved, 112),

	SIZE(struct pvpmu_hc_echo, 24),
	OFF(struct pvpmu_hc_echo, size, 0),
	OFF(struct pvpmu_hc_echo, pad0, 4),
	OFF(struct pvpmu_hc_echo, in, 8),
	OFF(struct pvpmu_hc_echo, out, 16),

	SIZE(struct pvpmu_hc_pfm, 48),
	OFF(struct pvpmu_hc_pfm, size, 0),
	OFF(struct pvpmu_hc_pfm, cmd, 4),
	OFF(struct pvpmu_hc_pfm, fd, 8),
	OFF(struct pvpmu_hc_pfm, nargs, 12),
	OFF(struct pvpmu_hc_pfm, arg_gpa, 16),
	OFF(struct pvpmu_hc_pfm, arg_size, 24),
	OFF(struct pvpmu_hc_pfm, tid, 32),
	OFF(struct pvpmu_hc_pfm, gid, 36),
	OFF(struct pvpmu_hc_pfm, restart_arg, 40),

	SIZE(struct pvpmu_hc_ctx, 8),
	OFF(struct pvpmu_hc_ctx, size, 0),
	OFF(struct pvpmu_hc_ctx, fd, 4),

	SIZE(struct pvpmu_hc_smpl_info, 24),
	OFF(struct pvpmu_hc_smpl_info, size, 0),
	OFF(struct pvpmu_hc_smpl_info, fd, 4),
	OFF(struct pvpmu_hc_smpl_info, gpa, 8),
	OFF(struct pvpmu_hc_smpl_info, buf_size, 16),

	SIZE(struct pvpmu_hc_vector, 8),
	OFF(struct pvpmu_hc_vector, size, 0),
	OFF(struct pvpmu_hc_vector, vector, 4),

	SIZE(struct pvpmu_hc_shared, 16),
	OFF(struct pvpmu_hc_shared, size, 0),
	OFF(struct pvpmu_hc_shared, pad0, 4),
	OFF(struct pvpmu_hc_shared, gpa, 8),

	SIZE(struct pvpmu_hc_sched, 16),
	OFF(struct pvpmu_hc_sched, size, 0),
	OFF(struct pvpmu_hc_sched, fd, 4),
	OFF(struct pvpmu_hc_sched, op, 8),
	OFF(struct pvpmu_hc_sched, tid, 12),

	SIZE(struct pvpmu_shared_pmd, 16),
	OFF(struct pvpmu_shared_pmd, value, 0),
	OFF(struct pvpmu_shared_pmd, tsc_mult, 8),
	OFF(struct pvpmu_shared_pmd, tsc_shift, 12),

	SIZE(struct pvpmu_shared_set, 32),
	OFF(struct pvpmu_shared_set, id, 0),
	OFF(struct pvpmu_shared_set, pad0, 2),
	OFF(struct pvpmu_shared_set, pad1, 4),
	OFF(struct pvpmu_shared_set, runs, 8),
	OFF(struct pvpmu_shared_set, enabled_ns, 16),
	OFF(struct pvpmu_shared_set, running_ns, 24),

	SIZE(struct pvpmu_shared_page, 1608),
	OFF(struct pvpmu_shared_page, seq, 0),
	OFF(struct pvpmu_shared_page, abi, 4),
	OFF(struct pvpmu_shared_page, fd, 8),
	OFF(struct pvpmu_shared_page, active_set, 12),
	OFF(struct pvpmu_shared_page, active, 14),
	OFF(struct pvpmu_shared_page, nr_sets, 15),
	OFF(struct pvpmu_shared_page, pmd_mask, 16),
	OFF(struct pvpmu_shared_page, tsc, 24),
	OFF(struct pvpmu_shared_page, run_ns, 32),
	OFF(struct pvpmu_shared_page, reserved0, 40),
	OFF(struct pvpmu_shared_page, pmds, 64),
	OFF(struct pvpmu_shared_page, sets, 1088),
	OFF(struct pvpmu_shared_page, pid, 1600),
	OFF(struct pvpmu_shared_page, tid, 1604),

	SIZE(struct pfarg_ctx, 32),
	OFF(struct pfarg_ctx, ctx_flags, 0),
	OFF(struct pfarg_ctx, ctx_fd, 4),
	OFF(struct pfarg_ctx, ctx_smpl_buf_id, 8),
	OFF(struct pfarg_ctx, ctx_smpl_buf_size, 24),

	SIZE(struct pfarg_pmc, 40),
	OFF(struct pfarg_pmc, reg_num, 0),
	OFF(struct pfarg_pmc, reg_set, 2),
	OFF(struct pfarg_pmc, reg_flags, 4),
	OFF(struct pfarg_pmc, reg_value, 8),
	OFF(struct pfarg_pmc, reg_reset_pmds, 16),
	OFF(struct pfarg_pmc, reg_smpl_pmds, 24),
	OFF(struct pfarg_pmc, reg_smpl_eventid, 32),

	SIZE(struct pfarg_pmd, 64),
	OFF(struct pfarg_pmd, reg_num, 0),
	OFF(struct pfarg_pmd, reg_set, 2),
	OFF(struct pfarg_pmd, reg_flags, 4),
	OFF(struct pfarg_pmd, reg_value, 8),
	OFF(struct pfarg_pmd, reg_long_reset, 16),
	OFF(struct pfarg_pmd, reg_short_reset, 24),
	OFF(struct pfarg_pmd, reg_last_reset_val, 32),
	OFF(struct pfarg_pmd, reg_ovflsw_thres, 40),
	OFF(struct pfarg_pmd, reg_random_mask, 48),
	OFF(struct pfarg_pmd, reg_random_seed, 56),
	OFF(struct pfarg_pmd, reg_reserved, 60),

	SIZE(struct pfarg_start, 8),
	OFF(struct pfarg_start, start_set, 0),
	OFF(struct pfarg_start, reserved0, 2),
	OFF(struct pfarg_start, reserved1, 4),

	SIZE(struct pfarg_load, 8),
	OFF(struct pfarg_load, load_pid, 0),
	OFF(struct pfarg_load, load_set, 4),
	OFF(struct pfarg_load, reserved0, 6),

	SIZE(struct pfarg_timespec, 16),
	OFF(struct pfarg_timespec, tv_sec, 0),
	OFF(struct pfarg_timespec, tv_nsec, 8),

	SIZE(struct pfarg_setdesc, 24),
	OFF(struct pfarg_setdesc, set_id, 0),
	OFF(struct pfarg_setdesc, set_id_next, 2),
	OFF(struct pfarg_setdesc, set_flags, 4),
	OFF(struct pfarg_setdesc, set_timeout, 8),

	SIZE(struct pfarg_setinfo, 56),
	OFF(struct pfarg_setinfo, set_id, 0),
	OFF(struct pfarg_setinfo, set_id_next, 2),
	OFF(struct pfarg_setinfo, set_flags, 4),
	OFF(struct pfarg_setinfo, set_switch_pmds, 8),
	OFF(struct pfarg_setinfo, set_runs, 16),
	OFF(struct pfarg_setinfo, set_timeout, 24),
	OFF(struct pfarg_setinfo, set_act_duration, 40),

	SIZE(struct pfarg_pmcinfo, 32),
	OFF(struct pfarg_pmcinfo, reg_num, 0),
	OFF(struct pfarg_pmcinfo, reg_type, 2),
	OFF(struct pfarg_pmcinfo, reg_flags, 4),
	OFF(struct pfarg_pmcinfo, reg_def_value, 8),
	OFF(struct pfarg_pmcinfo, reg_rsvd_mask, 16),
	OFF(struct pfarg_pmcinfo, reg_index, 24),

	SIZE(struct pfarg_pmdinfo, 32),
	OFF(struct pfarg_pmdinfo, reg_num, 0),
	OFF(struct pfarg_pmdinfo, reg_type, 2),
	OFF(struct pfarg_pmdinfo, reg_flags, 4),
	OFF(struct pfarg_pmdinfo, reg_def_value, 8),
	OFF(struct pfarg_pmdinfo, reg_rsvd_mask, 16),
	OFF(struct pfarg_pmdinfo, reg_index, 24),

	SIZE(struct pfarg_config, 56),
	OFF(struct pfarg_config, cf_version, 0),
	OFF(struct pfarg_config, cf_flags, 4),
	OFF(struct pfarg_config, cf_impl_pmcs, 8),
	OFF(struct pfarg_config, cf_impl_pmds, 16),
	OFF(struct pfarg_config, cf_sys_gid, 24),
	OFF(struct pfarg_config, cf_thread_gid, 28),
	OFF(struct pfarg_config, cf_arg_size_max, 32),
	OFF(struct pfarg_config, cf_smpl_buf_size_max, 40),
	OFF(struct pfarg_config, cf_counter_width, 48),
	OFF(struct pfarg_config, reserved0, 50),
	OFF(struct pfarg_config, reserved1, 52),

	SIZE(struct pfm_ovfl_msg, 32),
	OFF(struct pfm_ovfl_msg, msg_type, 0),
	OFF(struct pfm_ovfl_msg, msg_active_set, 4),
	OFF(struct pfm_ovfl_msg, reserved0, 6),
	OFF(struct pfm_ovfl_msg, msg_ovfl_pmds, 8),
	OFF(struct pfm_ovfl_msg, msg_tstamp, 16),
	OFF(struct pfm_ovfl_msg, reserved1, 24),

	SIZE(union pfm_msg, 32),
	OFF(union pfm_msg, msg_type, 0),
	OFF(union pfm_msg, pfm_ovfl_msg, 0),
	OFF(union pfm_msg, reserved, 0),

	SIZE(struct pvpmu_hc_read_msg, 48),
	OFF(struct pvpmu_hc_read_msg, size, 0),
	OFF(struct pvpmu_hc_read_msg, fd, 4),
	OFF(struct pvpmu_hc_read_msg, timeout_ns, 8),
	OFF(struct pvpmu_hc_read_msg, msg, 16),

	SIZE(struct pfm_default_smpl_arg, 16),
	OFF(struct pfm_default_smpl_arg, buf_size, 0),
	OFF(struct pfm_default_smpl_arg, buf_flags, 8),
	OFF(struct pfm_default_smpl_arg, pad0, 12),

	SIZE(struct pfm_default_smpl_hdr, 40),
	OFF(struct pfm_default_smpl_hdr, hdr_count, 0),
	OFF(struct pfm_default_smpl_hdr, hdr_cur_offs, 8),
	OFF(struct pfm_default_smpl_hdr, hdr_overflows, 16),
	OFF(struct pfm_default_smpl_hdr, hdr_buf_size, 24),
	OFF(struct pfm_default_smpl_hdr, hdr_version, 32),
	OFF(struct pfm_default_smpl_hdr, hdr_flags, 36),

	SIZE(struct pfm_default_smpl_entry, 40),
	OFF(struct pfm_default_smpl_entry, pid, 0),
	OFF(struct pfm_default_smpl_entry, tid, 4),
	OFF(struct pfm_default_smpl_entry, ovfl_pmd, 8),
	OFF(struct pfm_default_smpl_entry, set, 10),
	OFF(struct pfm_default_smpl_entry, cpu, 12),
	OFF(struct pfm_default_smpl_entry, pad0, 14),
	OFF(struct pfm_default_smpl_entry, last_reset_val, 16),
	OFF(struct pfm_default_smpl_entry, tstamp, 24),
	OFF(struct pfm_default_smpl_entry, ip, 32),

	SIZE(struct pvpmu_nway_smpl_arg, 16),
	OFF(struct pvpmu_nway_smpl_arg, buf_size, 0),
	OFF(struct pvpmu_nway_smpl_arg, buf_flags, 8),
	OFF(struct pvpmu_nway_smpl_arg, nr_regions, 12),

	SIZE(struct pvpmu_nway_region, 40),
	OFF(struct pvpmu_nway_region, state, 0),
	OFF(struct pvpmu_nway_region, pad0, 4),
	OFF(struct pvpmu_nway_region, seq, 8),
	OFF(struct pvpmu_nway_region, count, 16),
	OFF(struct pvpmu_nway_region, offs, 24),
	OFF(struct pvpmu_nway_region, cur_offs, 32),

	SIZE(struct pvpmu_nway_smpl_hdr, 704),
	OFF(struct pvpmu_nway_smpl_hdr, buf_size, 0),
	OFF(struct pvpmu_nway_smpl_hdr, region_size, 8),
	OFF(struct pvpmu_nway_smpl_hdr, overflows, 16),
	OFF(struct pvpmu_nway_smpl_hdr, lost, 24),
	OFF(struct pvpmu_nway_smpl_hdr, masked, 32),
	OFF(struct pvpmu_nway_smpl_hdr, next_seq, 40),
	OFF(struct pvpmu_nway_smpl_hdr, version, 48),
	OFF(struct pvpmu_nway_smpl_hdr, flags, 52),
	OFF(struct pvpmu_nway_smpl_hdr, nr_regions, 56),
	OFF(struct pvpmu_nway_smpl_hdr, cur_region, 60),
	OFF(struct pvpmu_nway_smpl_hdr, regions, 64),

	/* Values fixed by the ABI (not layouts, same table). */
	{.line = __LINE__, .what = "PVPMU_ABI_VERSION", PVPMU_ABI_VERSION, 1},
	{.line = __LINE__, .what = "PFM_MAX_PMDS", PFM_MAX_PMDS, 64},
	{.line = __LINE__, .what = "PFM_MAX_PMCS", PFM_MAX_PMCS, 64},
	{.line = __LINE__,
	 .what = "PFM_MAX_PMD_BITVECTOR",
	 PFM_MAX_PMD_BITVECTOR,
	 1},
	{.line = __LINE__,
	 .what = "PVPMU_SHARED_MAX_SETS",
	 PVPMU_SHARED_MAX_SETS,
	 16},
	{.line = __LINE__,
	 .what = "PVPMU_PORT_HC_BASE",
	 PVPMU_PORT_HC_BASE,
	 0x600},
	{.line = __LINE__, .what = "PVPMU_HC_PFM", PVPMU_HC_PFM, 3},
	{.line = __LINE__, .what = "PVPMU_HC_SCHED", PVPMU_HC_SCHED, 9},
	{.line = __LINE__, .what = "PFM_CREATE_CONTEXT", PFM_CREATE_CONTEXT, 6},
	{.line = __LINE__, .what = "PFM_GET_CONFIG", PFM_GET_CONFIG, 0x10},
	/* Request block sizes (section 5.1). */
	{.line = __LINE__,
	 .what = "PVPMU_HC_BLOCK_MAX",
	 PVPMU_HC_BLOCK_MAX,
	 4096},
	{.line = __LINE__,
	 .what = "PVPMU_HC_ECHO_SIZE_VER1",
	 PVPMU_HC_ECHO_SIZE_VER1,
	 24},
	{.line = __LINE__,
	 .what = "PVPMU_HC_PFM_SIZE_VER1",
	 PVPMU_HC_PFM_SIZE_VER1,
	 48},
	{.line = __LINE__,
	 .what = "PVPMU_HC_CTX_SIZE_VER1",
	 PVPMU_HC_CTX_SIZE_VER1,
	 8},
	{.line = __LINE__,
	 .what = "PVPMU_HC_SMPL_INFO_SIZE_VER1",
	 PVPMU_HC_SMPL_INFO_SIZE_VER1,
	 24},
	{.line = __LINE__,
	 .what = "PVPMU_HC_VECTOR_SIZE_VER1",
	 PVPMU_HC_VECTOR_SIZE_VER1,
	 8},
	{.line = __LINE__,
	 .what = "PVPMU_HC_SHARED_SIZE_VER1",
	 PVPMU_HC_SHARED_SIZE_VER1,
	 16},
	{.line = __LINE__,
	 .what = "PVPMU_HC_SCHED_SIZE_VER1",
	 PVPMU_HC_SCHED_SIZE_VER1,
	 16},
	{.line = __LINE__,
	 .what = "PVPMU_HC_READ_MSG_SIZE_VER1",
	 PVPMU_HC_READ_MSG_SIZE_VER1,
	 48},
	/* The counting PMC layout (section 9.1). */
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_USR",
	 PVPMU_EVSEL_USR,
	 1ULL << 16},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_OS",
	 PVPMU_EVSEL_OS,
	 1ULL << 17},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_EDGE",
	 PVPMU_EVSEL_EDGE,
	 1ULL << 18},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_INT",
	 PVPMU_EVSEL_INT,
	 1ULL << 20},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_EN",
	 PVPMU_EVSEL_EN,
	 1ULL << 22},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_INV",
	 PVPMU_EVSEL_INV,
	 1ULL << 23},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_CMASK_SHIFT",
	 PVPMU_EVSEL_CMASK_SHIFT,
	 24},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL(0x3c, 1)",
	 PVPMU_EVSEL(0x3c, 1),
	 0x53013c},
	/* vpmu's event selects and some codes (sections 9.2, 9.3). */
	{.line = __LINE__, .what = "PVPMU_EVSEL_HV", PVPMU_EVSEL_HV, 0xe0},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_HV_EXIT_REASON",
	 PVPMU_EVSEL_HV_EXIT_REASON,
	 0xe1},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_KVMSTAT",
	 PVPMU_EVSEL_KVMSTAT,
	 0xe2},
	{.line = __LINE__,
	 .what = "PVPMU_EVSEL_HOST_SW",
	 PVPMU_EVSEL_HOST_SW,
	 0xe3},
	{.line = __LINE__,
	 .what = "PVPMU_EV_HV_RUN_NS",
	 PVPMU_EV_HV_RUN_NS,
	 0x00e0},
	{.line = __LINE__,
	 .what = "PVPMU_EV_HV_GUEST_CYCLES",
	 PVPMU_EV_HV_GUEST_CYCLES,
	 0x01e0},
	{.line = __LINE__,
	 .what = "PVPMU_EV_HV_EXITS",
	 PVPMU_EV_HV_EXITS,
	 0x02e0},
	{.line = __LINE__,
	 .what = "PVPMU_EV_HV_HALTED_NS",
	 PVPMU_EV_HV_HALTED_NS,
	 0x0ae0},
	{.line = __LINE__,
	 .what = "PVPMU_EV_HV_EXIT_REASON(0x1e)",
	 PVPMU_EV_HV_EXIT_REASON(0x1e),
	 0x1ee1},
	{.line = __LINE__,
	 .what = "PVPMU_EV_KVMSTAT(3)",
	 PVPMU_EV_KVMSTAT(3),
	 0x03e2},
	{.line = __LINE__,
	 .what = "PVPMU_EV_SW_TASK_CLOCK",
	 PVPMU_EV_SW_TASK_CLOCK,
	 0x00e3},
	{.line = __LINE__,
	 .what = "PVPMU_EV_SW_CPU_MIGRATIONS",
	 PVPMU_EV_SW_CPU_MIGRATIONS,
	 0x03e3},
};

ParameterizedTestParameters(sdk_abi, layout)
{
	return cr_make_param_array(struct layout_row, rows,
				   sizeof(rows) / sizeof(rows[0]));
}

ParameterizedTest(struct layout_row *r, sdk_abi, layout)
{
	cr_expect(eq(sz, r->got, r->want), "%s: %zu, want %zu (row at line %d)",
		  r->what, r->got, r->want, r->line);
}

/* The shared page fits the one page the guest registers. */
Test(sdk_abi, shared_page_fits_one_page)
{
	cr_assert(le(sz, sizeof(struct pvpmu_shared_page), 4096));
}
