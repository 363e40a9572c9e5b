// SPDX-License-Identifier: MIT
/*
 * op_chain.c: a known three-deep call path for call graphs.
 * Every vCPU calls outer() -> middle() -> hot() in ring 3 forever; hot()
 * spins ~10 ms of TSC time without exits, so nearly every sample lands in
 * hot() with the callers middle, outer, user_main. vCPU 0 prints
 * "op_chain: ready" first. Only the host ends the VM. The inner loop's
 * lines run from the line after the tag OP_CHAIN_LOOP_FIRST to the line
 * after OP_CHAIN_HOT_LINE, its body (tests look them up).
 */
#include "user.h"

/* noinline: each is its own frame and symbol. */
__attribute__((noinline)) uint64_t hot(uint64_t cycles);
__attribute__((noinline)) uint64_t middle(uint64_t cycles);
__attribute__((noinline)) uint64_t outer(uint64_t cycles);

uint64_t hot(uint64_t cycles)
{
	uint64_t t0 = rdtsc(), n = 0;
	unsigned int i;

	/*
	 * The inner loop is the hot spot, on this file's lines (not rdtsc's).
	 * The empty asm emits no instruction of its own: its line gets what
	 * the compiler puts there (moves for "+r", or nothing), the "for"
	 * line the count and the branch back. Which line a sample names
	 * depends on where the host takes the interrupt (hardware skid, PVM,
	 * an emulator's block boundaries), so tests count the loop's lines
	 * together.
	 */
	while (rdtsc() - t0 < cycles) {
		/* OP_CHAIN_LOOP_FIRST is the next line. */
		for (i = 0; i < 4096; i++)
			/* OP_CHAIN_HOT_LINE is the next line. */
			__asm__ __volatile__("" : "+r"(n));
		n++;
	}
	return n;
}

uint64_t middle(uint64_t cycles)
{
	/* Not a tail call: the frame of middle stays on the stack. */
	return hot(cycles) + 1;
}

uint64_t outer(uint64_t cycles)
{
	return middle(cycles) + 1;
}

int user_main(unsigned int vcpu)
{
	uint64_t khz = user_boot_info()->tsc_khz;
	volatile uint64_t sink;

	if (!khz)
		khz = 1000000;
	if (vcpu == 0)
		uprintf("op_chain: ready\n");
	for (;;)
		sink = outer(khz * 10);
	(void)sink;
	return 0;
}
