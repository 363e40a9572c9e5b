/* SPDX-License-Identifier: MIT */
/*
 * vpmu_common.h: the few helpers every host component shares (header only,
 * no state): ARRAY_SIZE and the monotonic clock in nanoseconds. Guest code
 * (freestanding) does not use it.
 */
#ifndef VPMU_COMMON_H
#define VPMU_COMMON_H

#include <stdint.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define VPMU_NS_PER_SEC 1000000000ULL

/* CLOCK_MONOTONIC in nanoseconds (vDSO: no system call). */
static inline uint64_t vpmu_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * VPMU_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif /* VPMU_COMMON_H */
