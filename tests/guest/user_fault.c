// SPDX-License-Identifier: MIT
/*
 * user_fault.c: a ring-3 NULL dereference on the last vCPU. The kernel
 * dumps the page fault with its registers (cs 0023, cr2 0) and ends the VM
 * with status 128 + 14. The other vCPUs exit 0 and halt.
 */
#include "user.h"

#define USER_FAULT_MARK 0x5eed5eedULL /* in RBX of the dump */

int user_main(unsigned int vcpu)
{
	const struct pvpmu_boot_info *bi = user_boot_info();
	volatile uint32_t *null          = NULL;
	uint32_t v;

	if (vcpu != bi->nr_vcpus - 1)
		return 0;
	uprintf("user_fault: vcpu %u reads NULL from ring 3\n", vcpu);
	__asm__ __volatile__("mov %1, %%rbx\n\t"
			     "movl (%2), %0"
			     : "=r"(v)
			     : "i"(USER_FAULT_MARK), "r"(null)
			     : "rbx", "memory");
	uprintf("user_fault: survived, read 0x%x\n", v);
	return 1;
}
