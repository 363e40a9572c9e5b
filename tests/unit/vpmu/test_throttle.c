// SPDX-License-Identifier: MIT
/*
 * test_throttle.c: sampling limits per VM (vpmu.h, vpmu_limits
 * max_smpl_rate and max_overhead_pct; mech/throttle.c): the pure controller,
 * refusal of a period above the maximum rate, samples dropped and counted
 * inside the throttle gap, frequency mode stretching the period, and the
 * periods a preempted vCPU missed carried by its next sample (replay
 * backend).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "vpmu_priv.h"

TestSuite(vpmu_throttle, .init = h_setup, .fini = h_teardown);

static const uint8_t dfl_uuid[16] = PFM_DEFAULT_SMPL_UUID;

/* Rebuild the fixture with the given sampling limits. */
static void limits(uint64_t rate, uint32_t pct)
{
	struct vpmu_limits l;

	vpmu_limits_default(&l);
	l.timer_gran_ns    = 1000000;
	l.max_smpl_rate    = rate;
	l.max_overhead_pct = pct;
	h_init(&l);
}

/* A default-format context of (who), vCPU 0, buffer of (size). */
static int dfl_ctx(const struct vpmu_caller *who, uint64_t size)
{
	struct pfm_default_smpl_arg a = {.buf_size = size};
	struct pfarg_ctx c            = {.ctx_flags = PFM_FL_SYSTEM_WIDE};

	memcpy(c.ctx_smpl_buf_id, dfl_uuid, 16);
	cr_assert(eq(int, vpmu_ctx_create(H.d, who, &c, 1, &a, sizeof(a)), 0));
	return c.ctx_fd;
}

/* PMC0 samples H_EV(0) with period (p); loaded and started by (who). */
static void sample_ev0(const struct vpmu_caller *who, int fd, uint64_t p)
{
	struct pfarg_pmc c   = {.reg_num = 0, .reg_value = H_EVSEL(0)};
	struct pfarg_pmd d   = {.reg_num         = 0,
				.reg_value       = 0 - p,
				.reg_short_reset = 0 - p,
				.reg_long_reset  = 0 - p};
	struct pfarg_load ld = {.load_pid = 0};

	cr_assert(eq(int, vpmu_ctx_write_pmcs(H.d, who, fd, &c, 1), 0));
	cr_assert(eq(int, vpmu_ctx_write_pmds(H.d, who, fd, &d, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, who, fd, &ld, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(H.d, who, fd, NULL, 0), 0));
}

static const struct pfm_default_smpl_entry *entry(const struct vpmu_caller *w,
						  int fd, unsigned int k)
{
	void *base  = NULL;
	size_t size = 0;

	cr_assert(eq(int, vpmu_ctx_smpl_buf(H.d, w, fd, &base, &size), 0));
	/* Samples without body: header, then 40-byte entries. */
	return (const void *)((const char *)base +
			      sizeof(struct pfm_default_smpl_hdr) +
			      k * sizeof(struct pfm_default_smpl_entry));
}

static struct vpmu_ctx_stats stats(const struct vpmu_caller *w, int fd)
{
	struct vpmu_ctx_stats st;

	cr_assert(eq(int, vpmu_ctx_stats(H.d, w, fd, &st), 0));
	return st;
}

/* The controller over a window of (wall) ns that cost (cost), none of it
 * inside the run time. */
static uint64_t next_of(uint64_t cost, uint64_t wall, uint64_t cur,
			uint64_t floor, unsigned int pct)
{
	struct vpmu_thr_window w = {.run_ns    = wall > cost ? wall - cost : 0,
				    .cost_ns   = cost,
				    .in_run_ns = 0};

	return vpmu_throttle_next(&w, cur, floor, pct);
}

/*
 * The controller: a sample's cost the same at any spacing, the spacing
 * that makes cost / (spacing + cost) 99 % of the budget, above it or
 * below 97 % of it (never less than half per step).
 */
Test(vpmu_throttle, controller_is_a_pure_function)
{
	/* 50 % spent, 25 % allowed: 24.75 % needs 3.04 times the spacing. */
	cr_assert(eq(u64, next_of(500, 1000, 1000, 1, 25), 3041));
	/* Just over: at least one more. */
	cr_assert(eq(u64, next_of(251, 1000, 1, 1, 25), 2));
	/* Within 97-100 % of the budget: unchanged. */
	cr_assert(eq(u64, next_of(245, 1000, 4000, 1, 25), 4000));
	/* 10 % spent of 25: lowered, never below 1/2 per step. */
	cr_assert(eq(u64, next_of(100, 1000, 4000, 1, 25), 2000));
	/* 15 % of 25: lowered to land on 24.75 %. */
	cr_assert(eq(u64, next_of(150, 1000, 4500, 1, 25), 2414));
	/* 22 % of 25, under the 97 % band: lowered too. */
	cr_assert(eq(u64, next_of(220, 1000, 4000, 1, 25), 3430));
	/*
	 * Half the time again, all of it inside the run time (kicks' kernel
	 * parts): the run between two samples holds that part, so it needs
	 * 2.02 times, not 3.04.
	 */
	cr_assert(eq(
		u64,
		vpmu_throttle_next(&(struct vpmu_thr_window){.run_ns    = 1000,
							     .cost_ns   = 500,
							     .in_run_ns = 500},
				   1000, 1, 25),
		2021));
	/* A whole-time budget lengthens nothing: the floor. */
	cr_assert(eq(u64, next_of(900, 1000, 4000, 7, 100), 7));
	/* Never below the floor; no budget or no window: max(cur, floor). */
	cr_assert(eq(u64, next_of(0, 1000, 4000, 3000, 25), 3000));
	cr_assert(eq(u64, next_of(900, 1000, 10, 50, 0), 50));
	cr_assert(eq(u64, next_of(0, 0, 10, 5, 25), 10));
	/* Deterministic: same inputs, same answer. */
	cr_assert(eq(u64, next_of(777, 1000, 333, 1, 25),
		     next_of(777, 1000, 333, 1, 25)));
}

/* A time event's period above the maximum rate is refused. */
Test(vpmu_throttle, period_above_max_rate_is_refused)
{
	uint16_t code = PVPMU_EV_HV_RUN_NS;
	struct pfarg_pmc c;
	struct pfarg_pmd d;
	int fd;

	limits(1000, 25); /* at most one sample per ms */
	cr_assert(eq(int, vpmu_replay_add_event(H.rp, code, "hv_run_ns"), 0));
	fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	c  = (struct pfarg_pmc){.reg_num   = 0,
				.reg_value = VPMU_EVSEL(PVPMU_EV_EVENT(code),
							PVPMU_EV_UMASK(code))};
	cr_assert(eq(int, vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &c, 1), 0));
	/* 100 us: 10 kHz. */
	d = (struct pfarg_pmd){.reg_num = 0, .reg_short_reset = 0 - 100000ULL};
	cr_assert(eq(int, vpmu_ctx_write_pmds(H.d, &H.guest, fd, &d, 1),
		     -EINVAL));
	cr_assert(eq(u32, d.reg_flags, PFM_REG_RETFL_EINVAL));
	d = (struct pfarg_pmd){.reg_num = 0, .reg_value = 0 - 999999ULL};
	cr_assert(eq(int, vpmu_ctx_write_pmds(H.d, &H.guest, fd, &d, 1),
		     -EINVAL));
	/* 1 ms is the maximum itself: accepted. */
	d = (struct pfarg_pmd){.reg_num         = 0,
			       .reg_short_reset = 0 - 1000000ULL,
			       .reg_long_reset  = 0 - 2000000ULL};
	cr_assert(eq(int, vpmu_ctx_write_pmds(H.d, &H.guest, fd, &d, 1), 0));
	/* A non-time event has no rate to check. */
	c.reg_num   = 1;
	c.reg_value = H_EVSEL(1);
	cr_assert(eq(int, vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &c, 1), 0));
	d = (struct pfarg_pmd){.reg_num = 1, .reg_short_reset = 0 - 1ULL};
	cr_assert(eq(int, vpmu_ctx_write_pmds(H.d, &H.guest, fd, &d, 1), 0));
}

/* A preempted vCPU's periods are carried by the next sample. */
Test(vpmu_throttle, preempted_vcpu_missed_periods_are_counted)
{
	uint64_t steps[] = {50, 350, 100};
	struct vpmu_ctx_stats st;
	int fd = dfl_ctx(&H.guest, 65536);

	h_steps(0, steps, 3);
	sample_ev0(&H.guest, fd, 100);
	h_run(1); /* 50 of 100 */
	h_run(1); /* +350: wrapped with 300 of skid, 3 whole periods */
	cr_assert(eq(u16, entry(&H.guest, fd, 0)->nr_missed, 3));
	st = stats(&H.guest, fd);
	cr_assert(eq(u64, st.nr_missed, 3));
	cr_assert(eq(u64, st.nr_dropped, 0));
	cr_assert(eq(u64, st.nr_samples, 1));
	h_run(1); /* in phase: +100 is the next period exactly */
	cr_assert(eq(u16, entry(&H.guest, fd, 1)->nr_missed, 0));
	/* After its short reset, a sample's period is in last_reset_val. */
	cr_assert(eq(u64, entry(&H.guest, fd, 1)->last_reset_val, 0 - 100ULL));
	cr_assert(eq(u64, stats(&H.guest, fd).nr_samples, 2));
}

/* Inside the gap of max_smpl_rate samples are dropped, counted. */
Test(vpmu_throttle, samples_above_max_rate_are_dropped_and_counted)
{
	struct vpmu_ctx_stats st;
	int fd, i;

	limits(1000, 0); /* gap 1 ms, no overhead budget */
	fd = dfl_ctx(&H.guest, 1 << 20);
	h_rate(0, 10000); /* one event per 100 us of run time */
	sample_ev0(&H.guest, fd, 1);
	for (i = 0; i < 100; i++) /* 10 ms, 100 overflows */
		h_run(100000);
	st = stats(&H.guest, fd);
	cr_assert(eq(u64, st.nr_samples + st.nr_dropped, 100));
	cr_assert(ge(u64, st.nr_samples, 9));
	cr_assert(le(u64, st.nr_samples, 11));
	cr_assert(eq(u64, st.gap_ns, 1000000));
}

/* The overhead budget widens the gap from the charged cost. */
Test(vpmu_throttle, overhead_budget_widens_the_gap)
{
	struct vpmu_ctx_stats st;
	int fd, i;

	limits(0, 25);
	fd = dfl_ctx(&H.guest, 1 << 20);
	h_rate(0, 10000);
	sample_ev0(&H.guest, fd, 1);
	/*
	 * Each 100 us of run costs 100 us of monitoring: 50 %, twice 25;
	 * one controller step (10 ms of run time plus cost).
	 */
	for (i = 0; i < 50; i++) {
		vpmu_cpu_charge(H.cpu0, 100000);
		h_run(100000);
	}
	st = stats(&H.guest, fd);
	cr_assert(eq(u64, st.gap_ns, 304041),
		  "a sample costs 100 us: 24.75 %% (99 %% of 25) takes 304 us "
		  "of run between two");
	cr_assert(eq(u64, vpmu_cpu_cost_ns(H.cpu0), 5000000));
	for (i = 0; i < 100; i++)
		h_run(100000);
	st = stats(&H.guest, fd);
	cr_assert(lt(u64, 0, st.nr_dropped), "dropped once throttled");
	/* The cost stopped: the controller relaxes (at most halving). */
	cr_assert(lt(u64, st.gap_ns, 304041));
}

/*
 * A kick's kernel part passes inside the run time the VMM accounts
 * (vpmu_cpu_charge_in_run): it is cost, and not run time as well. Each
 * 100 us of run holds 50 us of it: half the vCPU's time, twice 25 %
 * (counted twice, it would read 50 / 150, a third, and the gap 152 us).
 */
Test(vpmu_throttle, cost_inside_run_time_is_counted_once)
{
	struct vpmu_ctx_stats st;
	int fd, i;

	limits(0, 25);
	fd = dfl_ctx(&H.guest, 1 << 20);
	h_rate(0, 10000);
	sample_ev0(&H.guest, fd, 1);
	for (i = 0; i < 100; i++) { /* one step: 10 ms of the vCPU's time */
		vpmu_cpu_charge_in_run(H.cpu0, 50000);
		h_run(100000);
	}
	st = stats(&H.guest, fd);
	cr_assert(eq(u64, st.gap_ns, 202021),
		  "50 us of guest time a sample: 24.75 %% takes 152 us of it, "
		  "202 us of run with the 50 us inside");
	cr_assert(eq(u64, vpmu_cpu_cost_ns(H.cpu0), 5000000));
}

/* Frequency mode (operators' -F) stretches the period instead. */
Test(vpmu_throttle, frequency_mode_raises_the_period)
{
	struct vpmu_ctx_stats st;
	int fd, i, k;

	limits(0, 25);
	fd = dfl_ctx(&H.host, 1 << 20);
	cr_assert(eq(int, vpmu_ctx_set_budget(H.d, &H.host, fd, 20, true), 0));
	cr_assert(eq(int, vpmu_ctx_set_budget(H.d, &H.guest, fd, 20, true),
		     -EPERM));
	cr_assert(eq(int, vpmu_ctx_set_budget(H.d, &H.host, fd, 101, true),
		     -EINVAL));
	h_rate(0, 10000);
	sample_ev0(&H.host, fd, 10);
	for (i = 0; i < 100; i++) { /* 40 % of the time spent: 2x of 20 */
		vpmu_cpu_charge(H.cpu0, 66667);
		h_run(100000);
	}
	st = stats(&H.host, fd);
	cr_assert(eq(u64, st.nr_dropped, 0), "nothing dropped in -F mode");
	cr_assert(ge(u32, st.scale, 2 * VPMU_THR_SCALE_ONE));
	k = (int)st.nr_samples;
	for (i = 0; i < 200; i++)
		h_run(100000);
	/* A later sample stands for the stretched period (last_reset). */
	cr_assert(lt(u64, 10,
		     0 - entry(&H.host, fd, (unsigned)k + 1)->last_reset_val));
}

/* Architectural PMU contexts keep hardware semantics: never throttled. */
Test(vpmu_throttle, zero_limits_change_nothing)
{
	struct vpmu_ctx_stats st;
	int fd, i;

	fd = dfl_ctx(&H.guest, 1 << 20); /* library defaults: no limits */
	h_rate(0, 10000);
	sample_ev0(&H.guest, fd, 1);
	for (i = 0; i < 100; i++) {
		vpmu_cpu_charge(H.cpu0, 1000000);
		h_run(100000);
	}
	st = stats(&H.guest, fd);
	cr_assert(eq(u64, st.nr_samples, 100));
	cr_assert(eq(u64, st.nr_dropped, 0));
	cr_assert(eq(u64, st.gap_ns, 0));
}

/*
 * The controller steps every 10 ms of the vCPU's time, run plus cost: at
 * 1 ms of cost per 20 us sample, 10 ms of run time alone would take half
 * a second at 98 % cost before the first step.
 */
Test(vpmu_throttle, a_costly_window_steps_early)
{
	struct vpmu_ctx_stats st;
	int fd, i;

	limits(0, 10);
	fd = dfl_ctx(&H.guest, 1 << 20);
	h_rate(0, 50000); /* an event, and a sample, every 20 us */
	sample_ev0(&H.guest, fd, 1);
	for (i = 0; i < 12; i++) { /* 12.24 ms of vCPU time, 0.24 of run */
		vpmu_cpu_charge(H.cpu0, 1000000);
		h_run(20000);
	}
	st = stats(&H.guest, fd);
	cr_assert(lt(u64, 0, st.gap_ns), "throttled after one window");
}
