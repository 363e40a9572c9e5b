// SPDX-License-Identifier: MIT
/*
 * printf.c: ksnprintf against expected strings, one table row per case
 * (with its line). Exit 0 if every row matches, 1 otherwise.
 */
#include "kernel.h"

#include <stdbool.h>

static bool check(int line, const char *got, int n, const char *want)
{
	if (n == (int)strlen(want) && !memcmp(got, want, (size_t)n + 1))
		return true;
	kprintf("printf: line %d: got \"%s\" (%d), want \"%s\"\n", line, got, n,
		want);
	return false;
}

#define CHECK(want, ...)                                                       \
	do {                                                                   \
		n = ksnprintf(buf, sizeof(buf), __VA_ARGS__);                  \
		nr_bad += !check(__LINE__, buf, n, want);                      \
		nr++;                                                          \
	} while (0)

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	unsigned int nr = 0, nr_bad = 0;
	/* volatile: hide the NULL from -Wformat-overflow. */
	const char *volatile nullstr = NULL;
	char buf[64], small[4];
	int n;

	(void)bi;
	if (vcpu != 0)
		return;
	CHECK("42 -7 0", "%d %i %u", 42, -7, 0U);
	CHECK("-2147483648", "%d", (int)0x80000000U);
	CHECK("4294967295", "%u", 0xffffffffU);
	CHECK("ff FF", "%x %X", 255U, 255U);
	CHECK("-9223372036854775808", "%ld", (long)(1UL << 63));
	CHECK("18446744073709551615", "%lu", ~0UL);
	CHECK("123456789abcdef0", "%lx", 0x123456789abcdef0UL);
	CHECK("fedcba9876543210", "%llx", 0xfedcba9876543210ULL);
	CHECK("12345678901234", "%llu", 12345678901234ULL);
	CHECK("-5", "%lld", -5LL);
	CHECK("7", "%zu", (size_t)7);
	CHECK("0x1000", "%p", (void *)0x1000);
	CHECK("[   42]", "[%5d]", 42);
	CHECK("[00042]", "[%05d]", 42);
	CHECK("[-0042]", "[%05d]", -42);
	CHECK("[42   ]", "[%-5d]", 42);
	CHECK("[0000beef]", "[%08x]", 0xbeefU);
	CHECK("[  ab]", "[%*s]", 4, "ab");
	CHECK("[ab  ]", "[%-4s]", "ab");
	CHECK("[abc]", "[%.3s]", "abcdef");
	CHECK("[ab]", "[%.*s]", 2, "abcdef");
	CHECK("x%y", "%c%%%c", 'x', 'y');
	CHECK("(null)", "%s", nullstr);
	n = ksnprintf(small, sizeof(small), "%s", "truncate");
	nr_bad += !(n == 8 && !memcmp(small, "tru", 4));
	nr++;
	kprintf("printf: %u of %u cases ok\n", nr - nr_bad, nr);
	guest_exit(nr_bad ? 1 : 0);
}
