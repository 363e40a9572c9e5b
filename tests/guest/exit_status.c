// SPDX-License-Identifier: MIT
/*
 * exit_status.c: ends the VM through PVPMU_PORT_EXIT with status 42, while
 * the other vCPUs may still be running.
 */
#include "kernel.h"

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu != 0)
		return;
	kprintf("exit_status: exiting with status 42\n");
	guest_exit(42);
}
