// SPDX-License-Identifier: MIT
/* run_stats.c: mean and spread over the runs of `vpmu stat -r N`. */
#include "run_stats.h"

#include <math.h>

void run_stats_add(struct run_stats *s, double x)
{
	double d = x - s->mean;

	s->n++;
	s->mean += d / (double)s->n;
	s->m2 += d * (x - s->mean);
}

double run_stats_stddev(const struct run_stats *s)
{
	return s->n < 2 ? 0.0 : sqrt(s->m2 / (double)(s->n - 1));
}

double run_stats_rel_stddev_pct(const struct run_stats *s)
{
	if (s->n < 2 || s->mean == 0.0)
		return 0.0;
	return 100.0 * run_stats_stddev(s) / sqrt((double)s->n) / s->mean;
}
