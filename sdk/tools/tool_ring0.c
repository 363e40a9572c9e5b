// SPDX-License-Identifier: MIT
/*
 * tool_ring0.c: the ring-0 start of every tool image: route the
 * notification vector to pfrecord_notify() (a counter ring 3 watches),
 * then run the image's ring-3 program (user_main) on every vCPU.
 */
#include "kernel.h"
#include "tool.h"

_Static_assert(TOOL_NOTIFY_VECTOR == KERNEL_NOTIFY_VECTOR,
	       "tools and kernel agree on the notification vector");

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu == 0 &&
	    kernel_set_notify_handler(KERNEL_NOTIFY_VECTOR, pfrecord_notify))
		guest_exit(1);
	kernel_user_run(vcpu);
}
