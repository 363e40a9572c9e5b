// SPDX-License-Identifier: MIT
/*
 * hot.c: the workload of the pvpmu-pfrecord check (pvpmu_checks.c) and of
 * the guest's perf tests: for about HOT_SECS seconds, rounds of hot_work()
 * (8 units) and cold_work() (1 unit), the same loop in both, so a profile
 * by function must put hot_work first. Built static, non-PIE and not
 * stripped: pfrecord and perf read its .symtab (scripts/build-linux.sh).
 * `pvpmu-hot ROUNDS` does a fixed amount of work instead and prints the
 * time it took (scripts/bench_linux.sh: perf record's slowdown).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static int64_t ns_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)(t.tv_sec - t0->tv_sec) * 1000000000LL +
	       (t.tv_nsec - t0->tv_nsec);
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], 0, 10) : 0, r;
	struct timespec t0;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rounds) {
		for (r = 0; r < rounds; r++)
			x = cold_work(hot_work(x));
		sink = x;
		printf("pvpmu-hot: %lu rounds in %lld us\n", rounds,
		       (long long)(ns_since(&t0) / 1000));
		return 0;
	}
	do {
		x = hot_work(x);
		x = cold_work(x);
	} while (ns_since(&t0) < HOT_SECS * 1000000000LL);
	sink = x;
	return 0;
}
