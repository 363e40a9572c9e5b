// SPDX-License-Identifier: MIT
/*
 * test_sample_rate.c: the achieved-vs-requested judgement that
 * `vpmu record` and `vpmu top` share (ops/client/sample_rate.c). Given a
 * window's samples, throttled and missed counts, run time and wall time,
 * which rate, which warning and which reason; the requested rate from -F
 * or -c; windows taken from cumulative drain counts.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>

#include "ctl_client.h"
#include "pvpmu/abi.h"

#define S 1000000000ULL /* ns per second */

/* One window, judged (libpfm4 validate style: rows with their line). */
struct rate_case {
	int line;
	struct ops_rate_win w;
	double wall_s, want_hz;
	enum ops_rate_why why;
	double got_hz, ran;
	const char *phrase; /* in the reason, NULL: no reason */
};

static const struct rate_case cases[] = {
	/* 2 vCPUs, 2 s, 1000 Hz asked: 3800 samples = 950/s: 95 %, fine */
	{__LINE__,
	 {3800, 0, 0, 4 * S, 1024, 2},
	 2.0,
	 1000,
	 OPS_RATE_OK,
	 950,
	 1.0,
	 NULL},
	/* exactly 90 % is not below it */
	{__LINE__,
	 {900, 0, 0, 1 * S, 1024, 1},
	 1.0,
	 1000,
	 OPS_RATE_OK,
	 900,
	 1.0,
	 NULL},
	/* dropped by the throttle: throttled wins over everything else */
	{__LINE__,
	 {500, 700, 3, S / 2, 1024, 1},
	 1.0,
	 1000,
	 OPS_RATE_THROTTLED,
	 500,
	 0.5,
	 "700 samples dropped;"},
	/* -F: the period raised (scale above 1024), nothing dropped */
	{__LINE__,
	 {400, 0, 0, 1 * S, 2048, 1},
	 1.0,
	 1000,
	 OPS_RATE_THROTTLED,
	 400,
	 1.0,
	 "period raised"},
	/* vCPUs ran 40 % of the time (halted): not the host's fault */
	{__LINE__,
	 {800, 0, 0, 8 * S / 10, 1024, 2},
	 1.0,
	 1000,
	 OPS_RATE_NOT_RUNNING,
	 400,
	 0.4,
	 "not running (40 %"},
	/* 50 % run but 10 % of the rate: running less does not explain it */
	{__LINE__,
	 {100, 0, 900, S / 2, 1024, 1},
	 1.0,
	 1000,
	 OPS_RATE_HOST,
	 100,
	 0.5,
	 "900 periods missed"},
	/* they ran all the time, nothing throttled, periods missed: host */
	{__LINE__,
	 {3000, 0, 2000, 10 * S, 1024, 1},
	 10.0,
	 1000,
	 OPS_RATE_HOST,
	 300,
	 1.0,
	 "2000 periods missed"},
	/*
	 * The limits raised the period at some point, but nothing was
	 * dropped and the missed periods account for the shortfall: the
	 * host, by its count, not the limits.
	 */
	{__LINE__,
	 {3000, 0, 1768, 2 * S, 2048, 1},
	 2.0,
	 2000,
	 OPS_RATE_HOST,
	 1500,
	 1.0,
	 "1768 periods missed"},
	/* a few dropped beside many missed: the larger count is the cause */
	{__LINE__,
	 {3000, 3, 1768, 2 * S, 1024, 1},
	 2.0,
	 2000,
	 OPS_RATE_HOST,
	 1500,
	 1.0,
	 "1768 periods missed"},
	/* run time read a moment after the wall time: never above 100 % */
	{__LINE__,
	 {1000, 0, 0, 119 * S / 100, 1024, 1},
	 1.0,
	 1000,
	 OPS_RATE_OK,
	 1000,
	 1.0,
	 NULL},
	/* a period longer than the window: no sample due, none missing */
	{__LINE__,
	 {0, 0, 0, S / 2, 1024, 1},
	 1.0,
	 0.2,
	 OPS_RATE_OK,
	 0,
	 0.5,
	 NULL},
	/* nothing requested that can be known (a count event): no warning */
	{__LINE__,
	 {10, 0, 0, 1 * S, 1024, 1},
	 1.0,
	 0,
	 OPS_RATE_OK,
	 10,
	 1.0,
	 NULL},
	/* no vCPU reported, or no time: nothing to judge */
	{__LINE__, {10, 0, 0, 0, 0, 0}, 1.0, 1000, OPS_RATE_NONE, 0, 0, NULL},
	{__LINE__,
	 {10, 0, 0, 1 * S, 1024, 1},
	 0.0,
	 1000,
	 OPS_RATE_NONE,
	 0,
	 0,
	 NULL},
};

Test(sample_rate, judges_each_window)
{
	struct ops_rate r;
	const char *why;
	char buf[256];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rate_case *c = &cases[i];

		ops_rate_judge(&c->w, c->wall_s, c->want_hz, &r);
		cr_expect(eq(int, r.why, c->why), "line %d", c->line);
		cr_expect(ieee_ulp_eq(dbl, r.got_hz, c->got_hz, 4), "line %d",
			  c->line);
		cr_expect(ieee_ulp_eq(dbl, r.ran, c->ran, 4), "line %d",
			  c->line);
		why = ops_rate_reason(&c->w, &r, buf, sizeof(buf));
		if (!c->phrase) {
			cr_expect(eq(ptr, (void *)why, NULL), "line %d: %s",
				  c->line, why);
			continue;
		}
		cr_assert(not(eq(ptr, (void *)why, NULL)), "line %d", c->line);
		cr_expect(not(eq(ptr, strstr(why, c->phrase), NULL)),
			  "line %d: '%s' lacks '%s'", c->line, why, c->phrase);
	}
}

Test(sample_rate, requested_rate_from_freq_or_period)
{
	/* -F wins; -c on run time in ns; -c on TSC cycles at 2 GHz */
	cr_expect(eq(dbl, ops_rate_requested(500, 0, PVPMU_EV_HV_RUN_NS, 0),
		     500.0));
	cr_expect(eq(dbl, ops_rate_requested(0, 1000000, PVPMU_EV_HV_RUN_NS, 0),
		     1000.0));
	cr_expect(eq(dbl,
		     ops_rate_requested(0, 4000000, PVPMU_EV_HV_GUEST_CYCLES,
					2000000),
		     500.0));
	/* unknown: cycles without a TSC rate, a count event, no period */
	cr_expect(
		eq(dbl,
		   ops_rate_requested(0, 4000000, PVPMU_EV_HV_GUEST_CYCLES, 0),
		   0.0));
	cr_expect(
		eq(dbl, ops_rate_requested(0, 100, PVPMU_EV_HV_EXITS, 0), 0.0));
	cr_expect(
		eq(dbl, ops_rate_requested(0, 0, PVPMU_EV_HV_RUN_NS, 0), 0.0));
}

/* top's windows: what grew since the last refresh, from cumulative counts */
Test(sample_rate, windows_from_cumulative_counts)
{
	struct ops_vm v              = {0};
	struct ops_rate_win base     = {0}, w;
	const struct ops_thr first[] = {
		{.throttled = 5, .missed = 1, .run_ns = 3 * S, .run0 = 1 * S},
		{.throttled = 1, .missed = 0, .run_ns = 2 * S, .run0 = 1 * S},
	};

	v.thr[0]       = first[0];
	v.thr[0].seen  = true;
	v.thr[0].scale = 1024;
	v.thr[2]       = first[1];
	v.thr[2].seen  = true;
	v.thr[2].scale = 3000;
	/* since the session: vCPUs 0 and 2 (1 never reported) */
	ops_rate_window(&v, 77, NULL, &w);
	cr_expect(eq(u32, w.nr_vcpus, 2));
	cr_expect(eq(u64, w.samples, 77));
	cr_expect(eq(u64, w.throttled, 6));
	cr_expect(eq(u64, w.missed, 1));
	cr_expect(eq(u64, w.run_ns, 3 * S));
	cr_expect(eq(u32, w.scale, 3000));
	/* the first window from a zero base is the same; base follows */
	ops_rate_window(&v, 77, &base, &w);
	cr_expect(eq(u64, w.throttled, 6));
	cr_expect(eq(u64, base.run_ns, 3 * S));
	/* one second later: 2 more dropped, 1 s more run on vCPU 0 */
	v.thr[0].throttled += 2;
	v.thr[0].run_ns += 1 * S;
	ops_rate_window(&v, 10, &base, &w);
	cr_expect(eq(u64, w.samples, 10));
	cr_expect(eq(u64, w.throttled, 2));
	cr_expect(eq(u64, w.missed, 0));
	cr_expect(eq(u64, w.run_ns, 1 * S));
}

/*
 * The run share comes from the vCPU threads' CPU time when the VMM
 * reports it (cpu_ns), not from the time inside KVM_RUN (run_ns).
 */
Test(sample_rate, window_run_time_is_the_threads_cpu_time)
{
	struct ops_vm v = {0};
	struct ops_rate_win w;

	v.thr[0] = (struct ops_thr){.run_ns = 5 * S,
				    .run0   = 1 * S,
				    .cpu_ns = 3 * S,
				    .cpu0   = 2 * S,
				    .scale  = 1024,
				    .seen   = true};
	ops_rate_window(&v, 1, NULL, &w);
	cr_expect(eq(u64, w.run_ns, 1 * S));
	/* an older VMM without cpu_ns: KVM_RUN's time */
	v.thr[0].cpu_ns = v.thr[0].cpu0 = 0;
	ops_rate_window(&v, 1, NULL, &w);
	cr_expect(eq(u64, w.run_ns, 4 * S));
}

/* The two lines both commands print, warning included below 90 %. */
Test(sample_rate, prints_rate_and_warning)
{
	struct ops_rate_win w = {500, 700, 3, S / 2, 1024, 1};
	char buf[1024]        = "";
	struct ops_rate r;
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	cr_assert(not(eq(ptr, f, NULL)));
	ops_rate_judge(&w, 1.0, 1000, &r);
	ops_rate_print(f, "L: ", "W: ", &w, &r);
	fclose(f);
	cr_expect(eq(str, buf,
		     "L: 500 samples/s per vCPU achieved of 1000 requested "
		     "(50 %); vCPUs ran 50 % of the time; throttled 700, "
		     "missed 3\n"
		     "W: below 90 % of the requested rate: throttled by its "
		     "limits (700 samples dropped; see --max-overhead and "
		     "'vpmu run --max-sample-rate')\n"));
}
