// SPDX-License-Identifier: MIT
/*
 * op_work.c: the CPU-bound ring-3 workload of bench_operator.
 * vCPU 0 runs rounds of a fixed amount of integer work forever and prints
 * "op_work: round R cycles C" with the TSC cycles each round took. The
 * TSC runs during exits too, so a round that an operator's sampling
 * interrupts (timer kicks, overflow processing) takes longer by exactly
 * that overhead. Other vCPUs halt.
 */
#include "user.h"

#define OP_WORK_ITERS 20000000ULL /* ~20-40 ms per round */

/* Seeded per round, so the compiler cannot hoist it out of the loop. */
__attribute__((noinline)) static uint64_t work(uint64_t n, uint64_t seed)
{
	uint64_t x = 88172645463325252ULL ^ seed, i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

int user_main(unsigned int vcpu)
{
	volatile uint64_t sink;
	uint64_t t0, round;

	if (vcpu)
		return 0;
	uprintf("op_work: ready\n");
	for (round = 0;; round++) {
		t0   = rdtsc_ordered();
		sink = work(OP_WORK_ITERS, round);
		uprintf("op_work: round %llu cycles %llu\n",
			(unsigned long long)round,
			(unsigned long long)(rdtsc_ordered() - t0));
	}
	(void)sink;
	return 0;
}
