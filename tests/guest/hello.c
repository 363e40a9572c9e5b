// SPDX-License-Identifier: MIT
/*
 * hello.c: the smallest guest. vCPU 0 prints one line; every vCPU returns
 * and halts, so the VMM ends the VM with status 0.
 */
#include "kernel.h"

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu == 0)
		kprintf("hello from vcpu 0\n");
}
