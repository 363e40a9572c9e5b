// SPDX-License-Identifier: MIT
/*
 * glue_identity.c: the SDK's built-in OS glue for the minimal guest kernel,
 * whose first 4 GiB are identity mapped for ring 0 and ring 3 alike: a
 * pointer is its guest-physical address. Other OSes pass their own glue
 * with pvpmu_set_driver().
 */
#include "sdk_priv.h"

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

const struct pvpmu_drv pvpmu_identity_drv = {.ops = &identity_ops};
