// SPDX-License-Identifier: MIT
/*
 * ulib.c: ring-3 helpers of user.h (uprintf and friends).
 *
 * This code runs in ring 3: it may call kvsnprintf(), which is pure
 * computation, but nothing that touches ports or kernel state.
 */
#include "user.h"

#include "kernel.h"

int uvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return kvsnprintf(buf, size, fmt, ap);
}

int usnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int uprintf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	return (int)user_write(buf, (size_t)n);
}
