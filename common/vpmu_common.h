/* SPDX-License-Identifier: MIT */
/*
 * vpmu_common.h: the few helpers every host component shares (header only,
 * no state): ARRAY_SIZE, the monotonic clock in nanoseconds, and the two
 * ways a host program reports bad input: an error text for the caller
 * (vpmu_fail) and a fatal message (vpmu_die). Guest code (freestanding)
 * does not use it.
 */
#ifndef VPMU_COMMON_H
#define VPMU_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Format an error text into (err) (may be NULL or 0 bytes: the text is then
 * dropped) and return (ret), a -errno, so that a parser says why and fails
 * in one statement: `return vpmu_fail(err, errlen, -EINVAL, "...", ...);`.
 */
__attribute__((format(printf, 4, 5))) static inline int
vpmu_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/*
 * A program's fatal error on its command line or set-up: one line
 * "vpmu: ..." on stderr, exit status 1.
 */
__attribute__((noreturn, format(printf, 1, 2))) static inline void
vpmu_die(const char *fmt, ...)
{
	va_list ap;

	fputs("vpmu: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#endif /* VPMU_COMMON_H */
