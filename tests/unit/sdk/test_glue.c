// SPDX-License-Identifier: MIT
/*
 * test_glue.c: the SDK's built-in identity-mapped glue (address checks
 * only; its doorbell needs a guest) and driver selection.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>

#include "sdk_priv.h"

Test(sdk_glue, identity_translation)
{
	const struct pvpmu_glue_ops *o = pvpmu_identity_drv.ops;
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

Test(sdk_glue, driver_selection)
{
	static const struct pvpmu_drv other = {.ops = NULL};

	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&pvpmu_identity_drv));
	pvpmu_set_driver(&other);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&other));
	pvpmu_set_driver(NULL);
	cr_assert(eq(ptr, (void *)pvpmu_driver(), (void *)&pvpmu_identity_drv));
}
