// SPDX-License-Identifier: MIT
/*
 * unhandled_gp.c: a #GP with no exception-table entry must be dumped on the
 * console and end the VM with KERNEL_EXIT_TRAP + 13 (141). The fault comes
 * from the last vCPU, so the dump is not tied to vCPU 0.
 */
#include "kernel.h"

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	unsigned int last = bi->nr_vcpus - 1;

	if (last >= KERNEL_MAX_VCPUS)
		last = KERNEL_MAX_VCPUS - 1;
	if (vcpu != last)
		return;
	kprintf("unhandled_gp: vcpu %u reads MSR 0x2fff without a fixup\n",
		vcpu);
	rdmsr(0x2fff);
	kprintf("unhandled_gp: survived the #GP\n");
	guest_exit(1);
}
