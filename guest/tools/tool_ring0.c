// SPDX-License-Identifier: MIT
/*
 * tool_ring0.c: the ring-0 start of the tool images: detect vpmu with the
 * driver core's CPUID probe (a few instructions and three CPUID exits;
 * ring 3 may not see the leaves), then run the image's ring-3 program on
 * every vCPU. Linked as a source (not from the library) so that it
 * replaces the kernel's weak guest_main().
 */
#include "kernel.h"
#include "tool_bare.h"

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	(void)bi;
	if (vcpu == 0)
		tool_ring0_detect = pvpmu_detect(&tool_ring0_features);
	kernel_user_run(vcpu);
}
