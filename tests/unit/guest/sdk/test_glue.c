// SPDX-License-Identifier: MIT
/*
 * test_glue.c: the minimal guest kernel's glue for the driver core
 * (guest/kernel/pvpmu_glue.c; address checks only, its doorbell
 * needs a guest) and which driver the SDK calls: the one the OS registered
 * with the core, the SDK's override, or the null driver.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>

#include "pvpmu_core.h"
#include "sdk_priv.h"

/* The kernel's glue (kernel.h declares it for guest code). */
extern const struct pvpmu_drv kernel_pvpmu_drv;

Test(sdk_glue, kernel_identity_translation)
{
	const struct pvpmu_glue_ops *o = kernel_pvpmu_drv.ops;
	pvpmu_u64 gpa                  = 0;
	const void *p                  = NULL;

	cr_assert(eq(int, o->virt_to_gpa(NULL, (void *)0x123000, 64, &gpa), 0));
	cr_assert(eq(u64, gpa, 0x123000));
	cr_assert(eq(int, o->virt_to_gpa(NULL, (void *)UINTPTR_MAX, 2, &gpa),
		     -PVPMU_EFAULT));
	cr_assert(eq(int, o->map_gpa(NULL, 0xc0000000ULL, 8192, &p), 0));
	cr_assert(eq(ptr, (void *)p, (void *)0xc0000000ULL));
	/* The identity map covers the first 4 GiB only. */
	cr_assert(eq(int, o->map_gpa(NULL, 0xfffff000ULL, 8192, &p),
		     -PVPMU_EFAULT));
	cr_assert(eq(int, o->map_gpa(NULL, ~0ULL, 2, &p), -PVPMU_EFAULT));
}

Test(sdk_glue, without_an_os_driver_every_call_is_enodev)
{
	pfarg_pmd_t pmd = {.reg_num = 0};

	pvpmu_set_driver(NULL);
	pvpmu_os_register(NULL);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&pvpmu_null_drv));
	cr_assert(eq(int, pfm_stop(1), -PVPMU_ENODEV));
	cr_assert(eq(int, pfm_read_pmds(1, &pmd, 1), -PVPMU_ENODEV));
	cr_assert(eq(int, pvpmu_set_vector(0), -PVPMU_ENODEV));
}

Test(sdk_glue, sdk_calls_the_driver_the_os_registered)
{
	static const struct pvpmu_drv other = {.ops = NULL};

	pvpmu_os_register(&kernel_pvpmu_drv);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&kernel_pvpmu_drv));
	/* pvpmu_set_driver() overrides it; NULL goes back to the OS's. */
	pvpmu_set_driver(&other);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&other));
	pvpmu_set_driver(NULL);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&kernel_pvpmu_drv));
	pvpmu_os_register(NULL);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&pvpmu_null_drv));
}
