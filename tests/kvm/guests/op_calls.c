// SPDX-License-Identifier: MIT
/*
 * op_calls.c: an exact number of hypercalls at a known time, for `vpmu
 * stat` (issue 7). Every vCPU prints "op_calls: ready vcpu N", waits
 * OP_DELAY_MS of TSC time, makes OP_CALLS * (N + 1) NOP hypercalls from
 * ring 3, prints "op_calls: done vcpu N" and spins forever without exits.
 * An operator counting hv_hypercalls over a window that covers the calls
 * (from "ready" + a little to the end) gets exactly OP_CALLS * (N + 1) on
 * vCPU N.
 */
#include "user.h"

#include "pvpmu_hc.h"

#define OP_CALLS    500
#define OP_DELAY_MS 2000

int user_main(unsigned int vcpu)
{
	uint64_t khz = user_boot_info()->tsc_khz, t0;
	unsigned int i;

	if (!khz)
		khz = 1000000;
	uprintf("op_calls: ready vcpu %u\n", vcpu);
	t0 = rdtsc();
	while (rdtsc() - t0 < khz * OP_DELAY_MS)
		__asm__ __volatile__("pause");
	for (i = 0; i < OP_CALLS * (vcpu + 1); i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	uprintf("op_calls: done vcpu %u\n", vcpu);
	for (;;)
		__asm__ __volatile__("pause");
	return 0;
}
