/* SPDX-License-Identifier: MIT */
/*
 * op_go.h: a go signal for the operator test guests. A test that
 * needs the guest's work to fall inside an operator's window (an exact
 * count) attaches the operator first, then writes one byte to the VM's
 * console input (tests/kvm/vm_bg.h: vm_bg_input). Every vCPU that calls
 * op_wait_go() waits for that one byte, whichever vCPU reads it; the wait
 * polls the console every ~1 ms of TSC time (a port read, not a hypercall).
 */
#ifndef OP_GO_H
#define OP_GO_H

#include "user.h"

static volatile int op_go;

static inline void op_wait_go(void)
{
	uint64_t khz = user_boot_info()->tsc_khz, t0;
	char c;

	if (!khz)
		khz = 1000000;
	while (!__atomic_load_n(&op_go, __ATOMIC_ACQUIRE)) {
		if (user_read(&c, 1) > 0) {
			__atomic_store_n(&op_go, 1, __ATOMIC_RELEASE);
			break;
		}
		t0 = rdtsc();
		while (rdtsc() - t0 < khz)
			__asm__ __volatile__("pause");
	}
}

#endif /* OP_GO_H */
