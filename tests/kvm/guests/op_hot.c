// SPDX-License-Identifier: MIT
/*
 * op_hot.c: a known hot loop for `vpmu record`. Every vCPU runs
 * hot_loop() in ring 3 forever, in slices of ~10 ms measured with the TSC,
 * with no exits: well over 90% of guest time is in hot_loop(). vCPU 0
 * prints "op_hot: ready" first. Only the host ends the VM.
 */
#include "user.h"

/* Spin for (cycles) TSC cycles; noinline so it is its own symbol. */
__attribute__((noinline)) uint64_t hot_loop(uint64_t cycles);

uint64_t hot_loop(uint64_t cycles)
{
	uint64_t t0 = rdtsc(), n = 0;

	while (rdtsc() - t0 < cycles)
		n++;
	return n;
}

int user_main(unsigned int vcpu)
{
	uint64_t khz = user_boot_info()->tsc_khz;
	volatile uint64_t sink;

	if (!khz)
		khz = 1000000;
	if (vcpu == 0)
		uprintf("op_hot: ready\n");
	for (;;)
		sink = hot_loop(khz * 10);
	(void)sink;
	return 0;
}
