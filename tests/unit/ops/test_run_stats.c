// SPDX-License-Identifier: MIT
/*
 * test_run_stats.c: mean and spread of `vpmu stat -r N`
 * (ops/cmd/run_stats.h), checked against the textbook two-pass formulas:
 * sample standard deviation (n - 1) and perf stat's "+- x.xx%", the
 * standard deviation of the mean in percent of the mean.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "run_stats.h"

/* Two-pass reference over (x). */
static void reference(const double *x, unsigned int n, double *mean, double *sd,
		      double *rel)
{
	double sum = 0, sq = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += x[i];
	*mean = sum / n;
	for (i = 0; i < n; i++)
		sq += (x[i] - *mean) * (x[i] - *mean);
	*sd  = n > 1 ? sqrt(sq / (n - 1)) : 0;
	*rel = n > 1 && *mean ? 100 * *sd / sqrt(n) / *mean : 0;
}

static void check(const double *x, unsigned int n)
{
	struct run_stats s = {0};
	double mean, sd, rel;
	unsigned int i;

	for (i = 0; i < n; i++)
		run_stats_add(&s, x[i]);
	reference(x, n, &mean, &sd, &rel);
	cr_expect_eq(s.n, n);
	cr_expect_float_eq(s.mean, mean, 1e-9 * fabs(mean) + 1e-12);
	cr_expect_float_eq(run_stats_stddev(&s), sd, 1e-9 * sd + 1e-12);
	cr_expect_float_eq(run_stats_rel_stddev_pct(&s), rel,
			   1e-9 * rel + 1e-12);
}

Test(run_stats, matches_the_two_pass_formulas)
{
	const double a[] = {10, 12, 14};
	const double b[] = {1000000007, 999999991, 1000000003, 1000000000};
	const double c[] = {3.5, 3.5, 3.5, 3.5, 3.5};

	check(a, 3);
	check(b, 4);
	check(c, 5);
}

/* 10, 12, 14: mean 12, stddev 2, +- 2/sqrt(3)/12 = 9.62 %. */
Test(run_stats, perf_style_relative_spread)
{
	struct run_stats s = {0};

	run_stats_add(&s, 10);
	run_stats_add(&s, 12);
	run_stats_add(&s, 14);
	cr_expect_float_eq(s.mean, 12.0, 1e-12);
	cr_expect_float_eq(run_stats_stddev(&s), 2.0, 1e-12);
	cr_expect_float_eq(run_stats_rel_stddev_pct(&s),
			   100.0 * 2.0 / sqrt(3.0) / 12.0, 1e-9);
}

Test(run_stats, one_run_or_zero_mean_has_no_spread)
{
	struct run_stats s = {0}, z = {0};

	run_stats_add(&s, 42);
	cr_expect_float_eq(s.mean, 42.0, 1e-12);
	cr_expect_float_eq(run_stats_stddev(&s), 0.0, 1e-12);
	cr_expect_float_eq(run_stats_rel_stddev_pct(&s), 0.0, 1e-12);
	run_stats_add(&z, 0);
	run_stats_add(&z, 0);
	cr_expect_float_eq(run_stats_rel_stddev_pct(&z), 0.0, 1e-12);
}

/* Large counts: Welford keeps the spread of values near 2^53. */
Test(run_stats, large_counts_keep_their_spread)
{
	const double x[] = {9.0e15 + 2, 9.0e15 + 4, 9.0e15 + 6};

	check(x, 3);
}
