// SPDX-License-Identifier: MIT
/*
 * tool.c: workloads and formatting shared by the guest tools (tool.h).
 */
#include "tool.h"

#include "pvpmu_hc.h"

volatile uint64_t tool_sink;
int tool_ring0_detect = -PVPMU_EAGAIN;
struct pvpmu_features tool_ring0_features;

/* One xorshift64 step per round: a dependent chain the CPU cannot skip. */
static inline __attribute__((always_inline)) uint64_t chain(uint64_t x,
							    uint64_t n)
{
	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) uint64_t tool_spin(uint64_t n)
{
	return chain(0x9e3779b97f4a7c15ULL, n);
}

uint64_t tool_mixed(unsigned int rounds, uint64_t spin, unsigned int calls)
{
	uint64_t x = 0;
	unsigned int r, c;

	for (r = 0; r < rounds; r++) {
		x ^= tool_spin(spin + r);
		for (c = 0; c < calls; c++)
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
	}
	return x;
}

__attribute__((noinline)) uint64_t work_hot(uint64_t n)
{
	return chain(0x1234567ULL, 6 * n);
}

__attribute__((noinline)) uint64_t work_warm(uint64_t n)
{
	return chain(0x7654321ULL, 3 * n);
}

__attribute__((noinline)) uint64_t work_cold(uint64_t n)
{
	return chain(0xabcdefULL, n);
}

char *tool_u64(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	unsigned int n = 0, i = 0, digits;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	digits = n;
	while (n && i + 2 < size) {
		buf[i++] = tmp[--n];
		if (n && n % 3 == 0 && digits > 3)
			buf[i++] = ',';
	}
	buf[i] = '\0';
	return buf;
}

char *tool_fix2(char *buf, size_t size, uint64_t a, uint64_t b)
{
	uint64_t r;

	if (!b) {
		usnprintf(buf, size, "-");
		return buf;
	}
	r = pvpmu_muldiv(a, 100, b);
	if (pvpmu_muldiv(a, 1000, b) % 10 >= 5)
		r++;
	usnprintf(buf, size, "%llu.%02llu", (unsigned long long)(r / 100),
		  (unsigned long long)(r % 100));
	return buf;
}

char *tool_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		usnprintf(buf, size, "%llu.%03llu s",
			  (unsigned long long)(ns / 1000000000ULL),
			  (unsigned long long)(ns / 1000000 % 1000));
	else if (ns >= 1000000)
		usnprintf(buf, size, "%llu.%03llu ms",
			  (unsigned long long)(ns / 1000000),
			  (unsigned long long)(ns / 1000 % 1000));
	else
		usnprintf(buf, size, "%llu.%03llu us",
			  (unsigned long long)(ns / 1000),
			  (unsigned long long)(ns % 1000));
	return buf;
}

int tool_err(const char *tool, const char *what, int ret)
{
	uprintf("%s: %s: %s (%d)\n", tool, what, pvpmu_strerror(ret), ret);
	return ret;
}

int tool_is_family(const struct pvpmu_event_desc *d)
{
	return d && PVPMU_EV_IS_FAMILY(d->code);
}
