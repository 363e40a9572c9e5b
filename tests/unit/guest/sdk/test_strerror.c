// SPDX-License-Identifier: MIT
/*
 * test_strerror.c: a distinct message for every PVPMU_E* code.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include <pvpmu/pvpmu.h>

static const int codes[] = {
	PVPMU_OK,     PVPMU_EPERM, PVPMU_ENOENT, PVPMU_ESRCH,   PVPMU_EINTR,
	PVPMU_EIO,    PVPMU_EBADF, PVPMU_EAGAIN, PVPMU_ENOMEM,  PVPMU_EACCES,
	PVPMU_EFAULT, PVPMU_EBUSY, PVPMU_EEXIST, PVPMU_ENODEV,  PVPMU_EINVAL,
	PVPMU_ENOSPC, PVPMU_E2BIG, PVPMU_ENOSYS, PVPMU_ENOTSUP, PVPMU_ETIMEDOUT,
};
#define NR_CODES (sizeof(codes) / sizeof(codes[0]))

Test(sdk_strerror, every_code_is_known_and_distinct)
{
	unsigned int i, j;

	for (i = 0; i < NR_CODES; i++) {
		const char *m = pvpmu_strerror(-codes[i]);

		cr_assert(not(eq(ptr, (void *)m, NULL)));
		cr_assert(strcmp(m, "unknown error") != 0, "code %d", codes[i]);
		cr_assert(eq(str, (char *)m, (char *)pvpmu_strerror(codes[i])));
		for (j = 0; j < i; j++)
			cr_assert(strcmp(m, pvpmu_strerror(codes[j])) != 0,
				  "codes %d and %d", codes[i], codes[j]);
	}
}

Test(sdk_strerror, perfmon_meanings)
{
	cr_assert(eq(str, (char *)pvpmu_strerror(-PVPMU_EBADF),
		     "bad context handle"));
	cr_assert(eq(str, (char *)pvpmu_strerror(-PVPMU_EBUSY),
		     "not possible in the context's current state"));
}

Test(sdk_strerror, unknown)
{
	cr_assert(eq(str, (char *)pvpmu_strerror(-1000), "unknown error"));
	cr_assert(eq(str, (char *)pvpmu_strerror(-2147483647 - 1),
		     "unknown error"));
}
