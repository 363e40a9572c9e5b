/* SPDX-License-Identifier: MIT */
/*
 * run_stats.h: mean and spread of a count over the runs of `vpmu stat -r N`,
 * as perf stat -r prints them. Welford's online update (no sum of squares
 * that loses precision on large counts).
 *
 *   mean               the average of the runs
 *   stddev             the sample standard deviation (n - 1)
 *   rel_stddev_pct     perf's "+- x.xx%": the standard deviation of the
 *                      mean (stddev / sqrt(n)) in percent of the mean;
 *                      0 with fewer than 2 runs or a zero mean
 */
#ifndef OPS_RUN_STATS_H
#define OPS_RUN_STATS_H

#include <stdint.h>

struct run_stats {
	uint64_t n;
	double mean, m2; /* m2: sum of squared distances to the mean */
};

void run_stats_add(struct run_stats *s, double x);
double run_stats_stddev(const struct run_stats *s);
double run_stats_rel_stddev_pct(const struct run_stats *s);

#endif /* OPS_RUN_STATS_H */
