// SPDX-License-Identifier: MIT
/*
 * test_sets.c: event sets and multiplexing (spec 3.1.10-3.1.12, 3.7):
 * ordering and chains, timeout rounding, time- and overflow-based
 * switching measured in vCPU run time, set_runs / set_act_duration
 * accounting, frozen inactive sets, and switching deferred while masked.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>

#include "harness.h"

#define MS 1000000ULL

TestSuite(vpmu_sets, .init = h_setup, .fini = h_teardown);

static uint64_t ts_ns(struct pfarg_timespec ts)
{
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A vCPU-wide context whose set (id) counts H_EV(ev) in PMD0. */
static void count_in_set(int fd, uint16_t id, unsigned int ev)
{
	h_pmc(fd, id, 0, H_EVSEL(ev), 0);
}

/* Fig. 3.33: sets are ordered by id; round robin back to set0. */
Test(vpmu_sets, default_order_is_increasing_id_round_robin)
{
	int fd = h_ctx(0);

	h_set(fd, 5, 0, 0, 0);
	h_set(fd, 3, 0, 0, 0);
	cr_assert(eq(u16, h_setinfo(fd, 0).set_id_next, 3));
	cr_assert(eq(u16, h_setinfo(fd, 3).set_id_next, 5));
	cr_assert(eq(u16, h_setinfo(fd, 5).set_id_next, 0));
}

/* 3.1.10: "If the set already exists, its properties are modified". */
Test(vpmu_sets, create_existing_set_modifies_it)
{
	int fd = h_ctx(0);

	h_set(fd, 4, 0, 0, 0);
	h_set(fd, 4, PFM_SETFL_EXPL_NEXT, 4, 0);
	cr_assert(eq(u32, h_setinfo(fd, 4).set_flags, PFM_SETFL_EXPL_NEXT));
	cr_assert(eq(u16, h_setinfo(fd, 4).set_id_next, 4), "self loop");
	h_set(fd, 0, PFM_SETFL_EXPL_NEXT, 4, 0); /* set0 can be modified */
	cr_assert(eq(u16, h_setinfo(fd, 0).set_id_next, 4));
}

/* 3.1.10: the effective timeout is rounded up to the granularity. */
Test(vpmu_sets, timeout_rounded_up_to_granularity)
{
	struct vpmu_limits l;
	struct pfarg_setdesc sd = {
		.set_id      = 1,
		.set_flags   = PFM_SETFL_TIME_SWITCH,
		.set_timeout = {.tv_nsec = 15 * MS},
	};
	int fd;

	vpmu_limits_default(&l);
	l.timer_gran_ns = 10 * MS; /* the spec's 10 ms tick */
	h_init(&l);
	fd = h_ctx(0);
	cr_assert(
		eq(int, vpmu_ctx_create_evtsets(H.d, &H.guest, fd, &sd, 1), 0));
	cr_assert(eq(u64, ts_ns(sd.set_timeout), 20 * MS));
	cr_assert(eq(u64, ts_ns(h_setinfo(fd, 1).set_timeout), 20 * MS));
}

/* 3.1.7, 3.1.12: LOAD counts a run of the load set even without START. */
Test(vpmu_sets, load_counts_a_run)
{
	int fd                = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_start st = {.start_set = 2};

	h_set(fd, 2, 0, 0, 0);
	h_load(fd, 0);
	cr_assert(eq(u64, h_setinfo(fd, 0).set_runs, 1));
	h_start(fd); /* no set: stays on the load set, no new run */
	cr_assert(eq(u64, h_setinfo(fd, 0).set_runs, 1));
	cr_assert(eq(int, vpmu_ctx_start(H.d, &H.guest, fd, &st, 1), 0));
	cr_assert(eq(u64, h_setinfo(fd, 2).set_runs, 1), "start_set wins");
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	h_load(fd, 0);
	cr_assert(eq(u64, h_setinfo(fd, 0).set_runs, 2), "not reset at LOAD");
}

/*
 * 3.7.6, 3.1.12: time switching in run time. Set durations add up to the
 * run time, and counts scaled by total/duration are within 1% of the
 * ground truth of constant-rate streams (the Fig. 3.32 scaling).
 */
Test(vpmu_sets, multiplexing_accounting)
{
	const uint64_t rate[3] = {300000000ULL, 50000000ULL, 1200000000ULL};
	const uint64_t total   = 600 * MS;
	uint64_t sum = 0, run = 0, dl, step;
	unsigned int i;
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	for (i = 0; i < 3; i++) {
		h_set(fd, (uint16_t)i, PFM_SETFL_TIME_SWITCH, 0, (i + 1) * MS);
		count_in_set(fd, (uint16_t)i, i);
		h_rate(i, rate[i]);
	}
	h_load(fd, 0);
	h_start(fd);
	while (run < total) {
		/* Odd exit pattern: exits every 0.37 ms or at the deadline. */
		dl   = vpmu_cpu_next_deadline(H.cpu0);
		step = dl - run < 370000 ? dl - run : 370000;
		step = step < total - run ? step : total - run;
		h_run(step);
		run += step;
	}
	for (i = 0; i < 3; i++) {
		struct pfarg_setinfo si = h_setinfo(fd, (uint16_t)i);
		uint64_t act            = ts_ns(si.set_act_duration);
		double scaled, truth = (double)rate[i] * total / 1e9;

		cr_assert(lt(u64, 0, act));
		cr_assert(lt(u64, 10, si.set_runs), "set %u ran %lu times", i,
			  (unsigned long)si.set_runs);
		scaled = (double)h_val(fd, (uint16_t)i, 0) * total / act;
		cr_assert(le(dbl, fabs(scaled - truth) / truth, 0.01),
			  "set %u scaled %.0f truth %.0f", i, scaled, truth);
		sum += act;
	}
	cr_assert(eq(u64, sum, total), "durations sum to the run time");
}

/* 3.7.1: counters of inactive sets are frozen. */
Test(vpmu_sets, inactive_set_counters_are_frozen)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	uint64_t v0;

	h_set(fd, 0, PFM_SETFL_TIME_SWITCH, 0, 1 * MS);
	h_set(fd, 1, 0, 0, 0); /* no switching: stays active */
	count_in_set(fd, 0, 0);
	count_in_set(fd, 1, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(1 * MS); /* set0 times out: set1 becomes active */
	v0 = h_val(fd, 0, 0);
	cr_assert(eq(u64, v0, 1 * MS));
	h_run(5 * MS);
	cr_assert(eq(u64, h_val(fd, 0, 0), v0), "set0 frozen");
	cr_assert(eq(u64, h_val(fd, 1, 0), 5 * MS), "set1 counts");
	cr_assert(eq(u64, h_setinfo(fd, 1).set_runs, 1));
}

/*
 * Fig. 3.38: a trigger at -1000 with threshold 2 switches after 2000
 * events; the first overflow reloads the short period.
 */
Test(vpmu_sets, overflow_switch_after_threshold)
{
	int fd             = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_pmd p = {.reg_num          = 0,
			      .reg_value        = (uint64_t)-1000,
			      .reg_short_reset  = (uint64_t)-1000,
			      .reg_ovflsw_thres = 2};
	struct pfarg_setinfo si;

	h_set(fd, 0, PFM_SETFL_OVFL_SWITCH, 0, 0);
	h_set(fd, 1, 0, 0, 0);
	count_in_set(fd, 0, 0);
	h_pmd_full(fd, &p);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(1000);
	cr_assert(eq(u64, h_read(fd, 0, 0).reg_ovflsw_thres, 1), "one left");
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-1000), "short reset");
	cr_assert(eq(u64, h_setinfo(fd, 1).set_runs, 0), "not yet");
	h_run(1000);
	si = h_setinfo(fd, 0);
	cr_assert(eq(u64, si.set_switch_pmds[0], 1), "PMD0 triggered");
	cr_assert(eq(u64, h_setinfo(fd, 1).set_runs, 1), "switched");
	h_run(1000);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0), "set0 frozen, not reset yet");
}

/*
 * 3.7.7 (vpmu.h choice): the trigger that switched a set out is reset
 * with its short value when the set becomes active again.
 */
Test(vpmu_sets, trigger_reset_when_set_returns)
{
	int fd             = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_pmd p = {.reg_num          = 0,
			      .reg_value        = (uint64_t)-10,
			      .reg_short_reset  = (uint64_t)-77,
			      .reg_ovflsw_thres = 1};

	h_set(fd, 0, PFM_SETFL_OVFL_SWITCH, 0, 0);
	h_set(fd, 1, PFM_SETFL_TIME_SWITCH, 0, 1 * MS);
	count_in_set(fd, 0, 0);
	h_pmd_full(fd, &p);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(10); /* exactly the 10 events to the overflow: switch */
	cr_assert(eq(u64, h_setinfo(fd, 1).set_runs, 1));
	cr_assert(eq(u64, h_val(fd, 0, 0), 0));
	h_run(1 * MS); /* set1 times out, back to set0 */
	cr_assert(eq(u64, h_setinfo(fd, 0).set_runs, 2));
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-77));
	cr_assert(eq(u64, h_read(fd, 0, 0).reg_ovflsw_thres, 1), "reloaded");
}

/* 3.7.7, 3.1.9: an overflow switch is deferred to RESTART if masked. */
Test(vpmu_sets, overflow_switch_deferred_while_masked)
{
	int fd             = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_pmd p = {.reg_num          = 0,
			      .reg_value        = (uint64_t)-10,
			      .reg_long_reset   = (uint64_t)-500,
			      .reg_ovflsw_thres = 1};
	union pfm_msg m;

	h_set(fd, 0, PFM_SETFL_OVFL_SWITCH, 0, 0);
	h_set(fd, 7, 0, 0, 0);
	h_pmc(fd, 0, 0, H_EVSEL(0), PFM_REGFL_OVFL_NOTIFY);
	h_pmd_full(fd, &p);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(10);
	m = h_msg(fd);
	cr_assert(eq(u16, m.pfm_ovfl_msg.msg_active_set, 0));
	cr_assert(eq(u64, h_setinfo(fd, 7).set_runs, 0), "deferred");
	h_run(1 * MS);
	cr_assert(eq(u64, h_setinfo(fd, 7).set_runs, 0), "still masked");
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(eq(u64, h_setinfo(fd, 7).set_runs, 1), "switched at RESTART");
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-500), "long reset");
}

/* 3.7.6, 3.1.9: the timeout pauses while masked and resumes after. */
Test(vpmu_sets, timeout_paused_while_masked)
{
	uint64_t steps[] = {0, 1};
	int fd           = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_setinfo si;

	h_set(fd, 0, PFM_SETFL_TIME_SWITCH, 0, 4 * MS);
	h_set(fd, 1, 0, 0, 0);
	h_pmc(fd, 0, 0, H_EVSEL(0), PFM_REGFL_OVFL_NOTIFY);
	h_pmd(fd, 0, 0, (uint64_t)-1, 0, (uint64_t)-1000000000);
	h_steps(0, steps, 2);
	h_load(fd, 0);
	h_start(fd);
	h_run(1 * MS);
	h_run(1 * MS); /* overflow: masked with 2 ms left */
	h_run(10 * MS);
	si = h_setinfo(fd, 0);
	cr_assert(eq(u64, ts_ns(si.set_timeout), 2 * MS));
	cr_assert(eq(u64, ts_ns(si.set_act_duration), 2 * MS),
		  "masked time is not active time");
	cr_assert(eq(u64, h_setinfo(fd, 1).set_runs, 0));
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(eq(u64, vpmu_cpu_next_deadline(H.cpu0),
		     vpmu_cpu_run_ns(H.cpu0) + 2 * MS),
		  "resumes, not reset");
	h_run(2 * MS);
	cr_assert(eq(u64, h_setinfo(fd, 1).set_runs, 1));
}

/* 3.1.11: delete and recreate is the only way to reset act_duration. */
Test(vpmu_sets, recreate_resets_act_duration)
{
	int fd                  = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_setdesc sd = {.set_id = 3};
	struct pfarg_start st   = {.start_set = 3};

	h_set(fd, 3, 0, 0, 0);
	h_load(fd, 3);
	cr_assert(eq(int, vpmu_ctx_start(H.d, &H.guest, fd, &st, 1), 0));
	h_run(5 * MS);
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(u64, ts_ns(h_setinfo(fd, 3).set_act_duration), 5 * MS));
	cr_assert(
		eq(int, vpmu_ctx_delete_evtsets(H.d, &H.guest, fd, &sd, 1), 0));
	h_set(fd, 3, 0, 0, 0);
	cr_assert(eq(u64, ts_ns(h_setinfo(fd, 3).set_act_duration), 0));
	cr_assert(eq(u64, h_setinfo(fd, 3).set_runs, 0));
}

/* 3.1.10, 3.7.6: EXCL_IDLE stops counting in idle; the timeout runs. */
Test(vpmu_sets, excl_idle_stops_counting_not_timeout)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_set(fd, 0, PFM_SETFL_TIME_SWITCH | PFM_SETFL_EXCL_IDLE, 0, 3 * MS);
	count_in_set(fd, 0, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(1 * MS);
	vpmu_cpu_set_idle(H.cpu0, true);
	h_run(1 * MS);
	cr_assert(eq(u64, h_val(fd, 0, 0), 1 * MS), "idle not counted");
	cr_assert(eq(u64, ts_ns(h_setinfo(fd, 0).set_timeout), 1 * MS));
	vpmu_cpu_set_idle(H.cpu0, false);
	h_run(1 * MS);
	cr_assert(eq(u64, h_setinfo(fd, 0).set_runs, 2), "self switch counts");
}
