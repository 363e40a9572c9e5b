// SPDX-License-Identifier: MIT
/*
 * op_calls.c: an exact number of hypercalls at a known time, for `vpmu
 * stat`. Every vCPU prints "op_calls: ready vcpu N", waits for
 * the go signal (one byte of console input, op_go.h), makes
 * OP_CALLS * (N + 1) NOP hypercalls from ring 3, prints "op_calls: done
 * vcpu N" and spins forever without exits. An operator counting
 * hv_hypercalls from before the go signal to after "done" gets exactly
 * OP_CALLS * (N + 1) on vCPU N.
 */
#include "user.h"

#include "op_go.h"
#include "pvpmu_hc.h"

#define OP_CALLS 500

int user_main(unsigned int vcpu)
{
	unsigned int i;

	uprintf("op_calls: ready vcpu %u\n", vcpu);
	op_wait_go();
	for (i = 0; i < OP_CALLS * (vcpu + 1); i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	uprintf("op_calls: done vcpu %u\n", vcpu);
	for (;;)
		__asm__ __volatile__("pause");
	return 0;
}
