// SPDX-License-Identifier: MIT
/*
 * spin.c: every vCPU spins forever without exits, so only the VMM can end
 * the VM (stop request, signal, kick). vCPU 0 says so first.
 */
#include "kernel.h"

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu == 0)
		kprintf("spin: all vcpus spinning\n");
	for (;;)
		__asm__ __volatile__("" : : : "memory");
}
