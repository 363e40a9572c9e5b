// SPDX-License-Identifier: MIT
/*
 * ulib.c: ring-3 helpers of user.h (uprintf and friends).
 *
 * This code runs in ring 3: it may call the formatter (printf.c, which
 * also holds uvsnprintf and usnprintf), which is pure computation, but
 * nothing that touches ports or kernel state.
 */
#include "user.h"

#include "kernel.h"

int uprintf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = kvsnprintf_cut(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return (int)user_write(buf, n);
}
