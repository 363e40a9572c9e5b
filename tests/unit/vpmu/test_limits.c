// SPDX-License-Identifier: MIT
/*
 * test_limits.c: host limits (spec 3.1.1, 3.1.10, 3.1.16, 4.4; DESIGN.md 4):
 * contexts per VM, sets per context, message queue depth, vector argument
 * size, and the PMU description seen through GETINFO/GET_CONFIG.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "harness.h"

static void init_with(void (*tweak)(struct vpmu_limits *))
{
	struct vpmu_limits l;

	vpmu_limits_default(&l);
	tweak(&l);
	h_init(&l);
}

static void three_contexts(struct vpmu_limits *l)
{
	l->max_contexts  = 3;
	l->host_contexts = 2;
}

/*
 * 3.1.1: contexts are limited ("by memory"): -ENOMEM past the limit.
 * Guest and host operators have separate limits: a guest
 * holding every one of its contexts leaves the operator's free, and the
 * other way round.
 */
Test(vpmu_limits, contexts_per_vm, .fini = h_teardown)
{
	int fd[3], host[2], extra = -1, i;

	init_with(three_contexts);
	for (i = 0; i < 3; i++)
		fd[i] = h_ctx(0);
	cr_assert(eq(int, h_ctx_raw(&H.guest, 0, &extra), -ENOMEM),
		  "the guest's limit holds");
	for (i = 0; i < 2; i++)
		cr_assert(eq(int, h_ctx_raw(&H.host, 0, &host[i]), 0),
			  "a full guest does not lock the operator out (%d)",
			  i);
	cr_assert(eq(int, h_ctx_raw(&H.host, 0, &extra), -ENOMEM),
		  "the host's limit holds");
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.guest, fd[1]), 0));
	cr_assert(eq(int, h_ctx_raw(&H.host, 0, &extra), -ENOMEM),
		  "a guest slot is not the host's");
	cr_assert(eq(int, h_ctx_raw(&H.guest, 0, &fd[1]), 0));
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.host, host[0]), 0));
	cr_assert(eq(int, h_ctx_raw(&H.guest, 0, &extra), -ENOMEM),
		  "a host slot is not the guest's");
	cr_assert(eq(int, h_ctx_raw(&H.host, 0, &host[0]), 0));
}

static void no_host_contexts(struct vpmu_limits *l)
{
	l->host_contexts = 0;
}

/* host_contexts 0: no operator context at all; the guest keeps its own. */
Test(vpmu_limits, zero_host_contexts, .fini = h_teardown)
{
	int fd = -1;

	init_with(no_host_contexts);
	cr_assert(eq(int, h_ctx_raw(&H.host, 0, &fd), -ENOMEM));
	cr_assert(eq(int, h_ctx_raw(&H.guest, 0, &fd), 0));
}

static void too_many_slots(struct vpmu_limits *l)
{
	l->max_contexts  = 40000;
	l->host_contexts = 30000;
}

/* Handles keep their slot in 16 bits: every owner's slots together. */
Test(vpmu_limits, slots_fit_a_handle)
{
	struct vpmu_domain_config cfg = {0};
	struct vpmu_domain *d         = NULL;

	vpmu_limits_default(&cfg.limits);
	too_many_slots(&cfg.limits);
	cr_assert(eq(int, vpmu_domain_create(&cfg, &d), -EINVAL));
}

static void four_sets(struct vpmu_limits *l)
{
	l->max_sets = 4;
}

/* 3.1.10: an implementation may limit the sets (set0 included). */
Test(vpmu_limits, sets_per_context, .fini = h_teardown)
{
	struct pfarg_setdesc sd[4] = {
		{.set_id = 1}, {.set_id = 2}, {.set_id = 3}, {.set_id = 4}};
	int fd;

	init_with(four_sets);
	fd = h_ctx(0);
	cr_assert(eq(int, vpmu_ctx_create_evtsets(H.d, &H.guest, fd, sd, 4),
		     -ENOMEM));
	cr_assert(eq(u64, h_setinfo(fd, 3).set_runs, 0), "sets 1-3 made");
	sd[0].set_id = 2; /* modifying an existing set needs no room */
	cr_assert(
		eq(int, vpmu_ctx_create_evtsets(H.d, &H.guest, fd, sd, 1), 0));
}

static void depth_one(struct vpmu_limits *l)
{
	l->msgq_depth = 1;
}

/* 3.5.7: a format needing a deeper queue than the host allows. */
Test(vpmu_limits, queue_depth_for_formats, .fini = h_teardown)
{
	struct pvpmu_nway_smpl_arg a = {.buf_size = 3 * 4096, .nr_regions = 2};
	struct pfarg_ctx c = {.ctx_smpl_buf_id = PVPMU_NWAY_SMPL_UUID};
	struct pfarg_ctx d = {.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};
	struct pfm_default_smpl_arg da = {.buf_size = 4096};

	init_with(depth_one);
	cr_assert(eq(int, vpmu_ctx_create(H.d, &H.guest, &c, 1, &a, sizeof(a)),
		     -ENOMEM));
	cr_assert(eq(int,
		     vpmu_ctx_create(H.d, &H.guest, &d, 1, &da, sizeof(da)), 0),
		  "the default format needs one message");
}

/* 4.4.2: vectors are bounded by cf_arg_size_max, which SET_CONFIG sets. */
Test(vpmu_limits, arg_size_max, .init = h_setup, .fini = h_teardown)
{
	static struct pfarg_pmd p[2 * 4096 / sizeof(struct pfarg_pmd)];
	int n = (int)(4096 / sizeof(p[0])), fd = h_ctx(0), i;
	struct pfarg_config cf;

	for (i = 0; i < 2 * n; i++)
		p[i].reg_num = (uint16_t)(i % 8);
	cr_assert(eq(int, vpmu_ctx_read_pmds(H.d, &H.guest, fd, p, n), 0));
	cr_assert(eq(int, vpmu_ctx_read_pmds(H.d, &H.guest, fd, p, n + 1),
		     -EFAULT));
	cr_assert(eq(int, vpmu_get_config(H.d, &H.host, &cf, 1), 0));
	cr_assert(eq(u64, cf.cf_arg_size_max, 4096));
	cf.cf_arg_size_max = 8192;
	cr_assert(eq(int, vpmu_set_config(H.d, &H.host, &cf, 1), 0));
	cr_assert(eq(int, vpmu_ctx_read_pmds(H.d, &H.guest, fd, p, 2 * n), 0),
		  "not retroactive, but applies to later calls");
}

/* Bad limits are refused when the domain is created. */
Test(vpmu_limits, domain_rejects_bad_limits)
{
	struct vpmu_domain_config cfg = {0};
	struct vpmu_domain *d         = NULL;

	vpmu_limits_default(&cfg.limits);
	cfg.limits.counter_width = 4;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &d), -EINVAL));
	vpmu_limits_default(&cfg.limits);
	cfg.limits.arg_size_max = 100;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &d), -EINVAL));
	vpmu_limits_default(&cfg.limits);
	cfg.limits.msgq_depth = 0;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &d), -EINVAL));
}

TestSuite(vpmu_pmu, .init = h_setup, .fini = h_teardown);

/* 3.1.13, 3.1.14: GETINFO reports the description table. */
Test(vpmu_pmu, getinfo_matches_description)
{
	const struct vpmu_pmu_desc *pmu = &vpmu_pmu_default;
	struct pfarg_pmcinfo c          = {0};
	struct pfarg_pmdinfo d          = {0};
	struct pfarg_config cf;
	uint16_t i;

	cr_assert(eq(int, vpmu_get_config(H.d, &H.guest, &cf, 1), 0));
	cr_assert(eq(u64, cf.cf_impl_pmcs[0], pmu->impl_pmcs));
	cr_assert(eq(u64, cf.cf_impl_pmds[0], pmu->impl_pmds));
	for (i = 0; i < 64; i++) {
		c = (struct pfarg_pmcinfo){.reg_num = i};
		if (!(pmu->impl_pmcs & (1ULL << i)))
			continue;
		cr_assert(eq(int, vpmu_getinfo_pmcs(H.d, &H.guest, &c, 1), 0));
		cr_assert(eq(u16, c.reg_type, pmu->pmcs[i].type));
		cr_assert(eq(u64, c.reg_def_value, pmu->pmcs[i].def_value));
		cr_assert(eq(u64, c.reg_rsvd_mask, pmu->pmcs[i].rsvd_mask));
		cr_assert(eq(u64, c.reg_index, pmu->pmcs[i].index));
	}
	for (i = 0; i < 64; i++) {
		d = (struct pfarg_pmdinfo){.reg_num = i};
		if (!(pmu->impl_pmds & (1ULL << i)))
			continue;
		cr_assert(eq(int, vpmu_getinfo_pmds(H.d, &H.guest, &d, 1), 0));
		cr_assert(eq(u16, d.reg_type, pmu->pmds[i].type));
		cr_assert(eq(u64, d.reg_index, pmu->pmds[i].index));
	}
}

/* The x86 event-select layout: PMC i is PERFEVTSELi, PMD i is PMCi. */
Test(vpmu_pmu, x86_layout)
{
	struct pfarg_pmcinfo c = {.reg_num = 2};
	struct pfarg_pmdinfo v = {.reg_num = VPMU_PMD_VIRT_BASE};

	cr_assert(eq(int, vpmu_getinfo_pmcs(H.d, &H.guest, &c, 1), 0));
	cr_assert(eq(u64, c.reg_index, 0x188));
	cr_assert(eq(u16, c.reg_type, PFM_REG_TYPE_MSR));
	cr_assert(eq(u64, c.reg_def_value & VPMU_EVSEL_EN, 0),
		  "the default measures nothing (3.1.2)");
	cr_assert(eq(u64, c.reg_rsvd_mask & VPMU_EVSEL_EN, 0));
	cr_assert(ne(u64, c.reg_rsvd_mask & (1ULL << 40), 0));
	cr_assert(eq(int, vpmu_getinfo_pmds(H.d, &H.guest, &v, 1), 0));
	cr_assert(eq(u16, v.reg_type, PFM_REG_TYPE_VIRT));
	cr_assert(eq(u64, v.reg_index, PFM_REG_IDX_NONE));
}

/* 3.1.13: reserved bits are forced to their default, silently. */
Test(vpmu_pmu, reserved_pmc_bits_forced_silently)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct vpmu_snapshot snap;

	h_rate(0, 1000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0) | (0xffULL << 40) | (1ULL << 21), 0);
	h_load(fd, 0);
	h_start(fd);
	h_run(10);
	cr_assert(eq(u64, h_val(fd, 0, 0), 10), "the event still counts");
	cr_assert(eq(int, vpmu_cpu_snapshot(H.cpu0, &snap), 0));
	cr_assert(eq(u16, snap.pmd_code[0], H_EV(0)));
}

/* 3.1.2: a never-written (default) PMC measures nothing. */
Test(vpmu_pmu, default_pmcs_measure_nothing)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	unsigned int i;

	for (i = 0; i < 8; i++)
		h_rate(i, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(1000);
	for (i = 0; i < 8; i++)
		cr_assert(eq(u64, h_val(fd, 0, (uint16_t)i), 0));
}

static void kick_10us(struct vpmu_limits *l)
{
	l->min_kick_ns = 10000;
}

/* 4.4.4 (policy): deadlines are never closer than min_kick_ns. */
Test(vpmu_limits, min_kick_spaces_deadlines, .fini = h_teardown)
{
	int fd;

	init_with(kick_10us);
	fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd(fd, 0, 0, (uint64_t)-10, (uint64_t)-10, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	cr_assert(eq(u64, vpmu_cpu_next_deadline(H.cpu0),
		     vpmu_cpu_run_ns(H.cpu0) + 10000));
	h_run(10000);
	/* One overflow event; the skid, modulo the period, stays on top. */
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-10 + (10000 - 10) % 10));
}

static void five_per_sec(struct vpmu_limits *l)
{
	l->max_ovfl_per_sec = 5;
}

/* 4.4.4 (policy): too many overflows per second mask until RESTART. */
Test(vpmu_limits, overflow_throttling, .fini = h_teardown)
{
	struct vpmu_ctx_stats st;
	union pfm_msg m;
	unsigned int i, nr;
	int fd;

	init_with(five_per_sec);
	fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd(fd, 0, 0, (uint64_t)-10, (uint64_t)-10, (uint64_t)-10);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	for (i = 0; i < 5; i++)
		h_run(10);
	cr_assert(eq(u32, H.nr_notes, 0), "within the limit");
	h_run(10);
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(eq(u32, H.notes[0].flags, VPMU_NOTIFY_THROTTLED));
	cr_assert(eq(u32, H.notes[0].msg_type, 0));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN),
		  "no message");
	cr_assert(eq(int, vpmu_ctx_stats(H.d, &H.guest, fd, &st), 0));
	cr_assert(eq(u64, st.nr_throttled, 1));
	h_run(1000);
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-10), "masked");
	h_run(1000000000ULL); /* a new one-second window */
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	h_run(10);
	cr_assert(eq(u32, H.nr_notes, 1), "counting again");
}
