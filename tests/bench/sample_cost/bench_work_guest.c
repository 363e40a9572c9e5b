// SPDX-License-Identifier: MIT
/*
 * bench_work_guest.c: the vpmu side of bench_sample_cost. vCPU 0
 * runs rounds of work_loop() (work_loop.h: the same instructions as the
 * bare KVM floor's guest and the native process) in ring 3 forever and
 * prints "work: round R cycles C", C the round's TSC cycles (the TSC runs
 * during exits, so sampling costs show up in C). Other vCPUs halt.
 */
#include "user.h"
#include "work_loop.h"

int user_main(unsigned int vcpu)
{
	volatile uint64_t sink;
	uint64_t t0, round;

	if (vcpu)
		return 0;
	uprintf("work: ready\n");
	for (round = 0;; round++) {
		t0   = rdtsc_ordered();
		sink = work_loop(WORK_ITERS, 88172645463325252ULL ^ round);
		uprintf("work: round %llu cycles %llu\n",
			(unsigned long long)round,
			(unsigned long long)(rdtsc_ordered() - t0));
	}
	(void)sink;
	return 0;
}
