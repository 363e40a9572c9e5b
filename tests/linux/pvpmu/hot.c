// SPDX-License-Identifier: MIT
/*
 * hot.c: the workload of the pvpmu-pfrecord check (pvpmu_checks.c): for
 * about HOT_SECS seconds, rounds of hot_work() (8 units) and cold_work()
 * (1 unit), the same loop in both, so a profile by function must put
 * hot_work first. Built static, non-PIE and not stripped: pfrecord reads
 * its .symtab (scripts/build-linux.sh).
 */
#include <stdint.h>
#include <time.h>

#define HOT_SECS 3
#define UNIT     200000

static volatile uint64_t sink;

/* The samples must land in these two. */
__attribute__((noinline)) uint64_t hot_work(uint64_t x)
{
	unsigned int n = 8 * UNIT;

	while (n--)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t cold_work(uint64_t x)
{
	unsigned int n = UNIT;

	while (n--)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(void)
{
	struct timespec t0, t;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = hot_work(x);
		x = cold_work(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < HOT_SECS);
	sink = x;
	return 0;
}
