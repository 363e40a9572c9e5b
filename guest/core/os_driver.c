// SPDX-License-Identifier: MIT
/*
 * os_driver.c: the driver the guest OS registers with the core (its glue:
 * address translation, doorbell, thread ids), and the null driver that
 * answers every call with -PVPMU_ENODEV until one is registered.
 */
#include "pvpmu_core.h"

static int null_virt_to_gpa(void *opaque, const void *p, pvpmu_u64 len,
			    pvpmu_u64 *gpa)
{
	(void)opaque;
	(void)p;
	(void)len;
	(void)gpa;
	return -PVPMU_ENODEV;
}

static int null_map_gpa(void *opaque, pvpmu_u64 gpa, pvpmu_u64 len,
			const void **out)
{
	(void)opaque;
	(void)gpa;
	(void)len;
	(void)out;
	return -PVPMU_ENODEV;
}

static long null_doorbell(void *opaque, unsigned int nr, pvpmu_u32 gpa)
{
	(void)opaque;
	(void)nr;
	(void)gpa;
	return -PVPMU_ENODEV;
}

static const struct pvpmu_glue_ops null_ops = {
	.virt_to_gpa = null_virt_to_gpa,
	.map_gpa     = null_map_gpa,
	.doorbell    = null_doorbell,
};

const struct pvpmu_drv pvpmu_null_drv = {.ops = &null_ops};

/* Written once at OS start-up, read by every vCPU: atomics, no lock. */
static const struct pvpmu_drv *os_drv;

void pvpmu_os_register(const struct pvpmu_drv *drv)
{
	__atomic_store_n(&os_drv, drv, __ATOMIC_RELEASE);
}

const struct pvpmu_drv *pvpmu_os_driver(void)
{
	const struct pvpmu_drv *drv =
		__atomic_load_n(&os_drv, __ATOMIC_ACQUIRE);

	return drv ? drv : &pvpmu_null_drv;
}
