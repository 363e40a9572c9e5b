// SPDX-License-Identifier: MIT
/*
 * triple_fault.c: vCPU 0 loads an empty IDT (limit 0) and executes ud2.
 * #UD cannot be delivered, nor the #GP and #DF that follow, so the vCPU
 * shuts down (triple fault; KVM_EXIT_SHUTDOWN in the VMM).
 */
#include "kernel.h"

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	static const struct desc_ptr empty_idt = {.limit = 0, .base = 0};

	(void)bi;
	if (vcpu != 0)
		return;
	kprintf("triple_fault: empty IDT, then ud2\n");
	lidt(&empty_idt);
	__asm__ __volatile__("ud2");
	kprintf("triple_fault: still running after ud2\n");
	guest_exit(1);
}
