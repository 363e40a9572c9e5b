// SPDX-License-Identifier: MIT
/*
 * pvpmu_glue.c: the minimal guest kernel's glue for the paravirtual driver
 * core (pvpmu_core.h), registered at boot (kernel_main()): the first 4 GiB
 * are identity mapped for ring 0 and ring 3 alike, so a pointer is its
 * guest-physical address; the doorbell is the core's `outl`. Another OS
 * registers its own glue the same way.
 */
#include "kernel.h"

#include "pvpmu_core.h"

static int identity_virt_to_gpa(void *opaque, const void *p, pvpmu_u64 len,
				pvpmu_u64 *gpa)
{
	pvpmu_u64 a = (pvpmu_u64)(unsigned long)p;

	(void)opaque;
	if (a + len < a)
		return -PVPMU_EFAULT;
	*gpa = a;
	return 0;
}

static int identity_map_gpa(void *opaque, pvpmu_u64 gpa, pvpmu_u64 len,
			    const void **out)
{
	(void)opaque;
	if (gpa + len < gpa || gpa + len > 0x100000000ULL)
		return -PVPMU_EFAULT;
	*out = (const void *)(unsigned long)gpa;
	return 0;
}

static const struct pvpmu_glue_ops identity_ops = {
	.virt_to_gpa = identity_virt_to_gpa,
	.map_gpa     = identity_map_gpa,
	.doorbell    = pvpmu_doorbell,
};

const struct pvpmu_drv kernel_pvpmu_drv = {.ops = &identity_ops};
