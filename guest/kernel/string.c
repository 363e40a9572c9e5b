// SPDX-License-Identifier: MIT
/*
 * string.c: memset/memcpy/memmove/memcmp/strlen for freestanding guest
 * code. GCC may emit calls to the mem* functions even with -ffreestanding.
 *
 * The copies use `rep movsb`/`rep stosb`: one instruction instead of a loop,
 * which matters where ring-0 code is emulated instruction by instruction.
 */
#include "kernel.h"

void *memset(void *dst, int c, size_t n)
{
	void *d = dst;

	__asm__ __volatile__("rep stosb"
			     : "+D"(d), "+c"(n)
			     : "a"((unsigned char)c)
			     : "memory");
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ __volatile__("rep movsb"
			     : "+D"(d), "+S"(src), "+c"(n)
			     :
			     : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	const char *s = src;
	char *d       = dst;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	/* Overlap with dst above src: copy backwards (DF=1), then restore. */
	s += n - 1;
	d += n - 1;
	__asm__ __volatile__("std\n\trep movsb\n\tcld"
			     : "+D"(d), "+S"(s), "+c"(n)
			     :
			     : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i] != q[i])
			return p[i] - q[i];
	}
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}
