// SPDX-License-Identifier: MIT
/*
 * bench_syscall.c: cost of a null syscall round trip (ring 3 -> ring 0 ->
 * ring 3) on vCPU 0, measured from ring 3 with the TSC in one run:
 *
 *   (0) the loop itself, no syscall
 *   (a) yield, the null syscall (8 ring-0 entry instructions + 2 in C)
 *   (b) time (adds rdtsc and the conversion in ring 0)
 *   (c) the NOP hypercall doorbell from ring 3 (a PIO exit to the VMM)
 *
 * The kinds are interleaved over BENCH_ROUNDS rounds; the mean over all
 * rounds and the best round are reported, and the ratio of each kind to
 * (c), a VMM exit, in two-decimal fixed point. Exit status 0.
 */
#include "user.h"

#include "pvpmu_hc.h"

#define BENCH_ITERS     4000 /* per kind, over all rounds */
#define BENCH_ROUNDS    4
#define BENCH_PER_ROUND (BENCH_ITERS / BENCH_ROUNDS)

enum kind { K_LOOP, K_YIELD, K_TIME, K_HC_NOP, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"(0) loop, no syscall",
	"(a) syscall yield",
	"(b) syscall time",
	"(c) hypercall NOP",
};

static uint64_t run(enum kind k, unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();
	unsigned int i;

	for (i = 0; i < n; i++) {
		switch (k) {
		case K_LOOP:
			__asm__ __volatile__("" : : : "memory");
			break;
		case K_YIELD:
			user_yield();
			break;
		case K_TIME:
			user_time_ns();
			break;
		default:
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
			break;
		}
	}
	return rdtsc_ordered() - t0;
}

static void ratio(char *buf, size_t size, uint64_t a, uint64_t b)
{
	uint64_t r = b ? (a * 100 + b / 2) / b : 0;

	usnprintf(buf, size, "%llu.%02llu", (unsigned long long)(r / 100),
		  (unsigned long long)(r % 100));
}

static void report(const char *what, const uint64_t *per, uint64_t tsc_khz)
{
	char ry[16], rt[16];
	int k;

	for (k = 0; k < NR_KINDS; k++)
		uprintf("bench: %s %-22s %8llu cycles/iter %8llu ns\n", what,
			kind_names[k], (unsigned long long)per[k],
			(unsigned long long)(tsc_khz ? per[k] * 1000000 /
							       tsc_khz
						     : 0));
	ratio(ry, sizeof(ry), per[K_YIELD], per[K_HC_NOP]);
	ratio(rt, sizeof(rt), per[K_TIME], per[K_HC_NOP]);
	uprintf("bench_syscall: %s iters=%u tsc_khz=%llu loop=%llu "
		"yield=%llu time=%llu hc_nop=%llu yield_ns=%llu "
		"ratio_yield_hc=%s ratio_time_hc=%s\n",
		what, BENCH_ITERS, (unsigned long long)tsc_khz,
		(unsigned long long)per[K_LOOP],
		(unsigned long long)per[K_YIELD],
		(unsigned long long)per[K_TIME],
		(unsigned long long)per[K_HC_NOP],
		(unsigned long long)(tsc_khz ? per[K_YIELD] * 1000000 / tsc_khz
					     : 0),
		ry, rt);
}

int user_main(unsigned int vcpu)
{
	uint64_t sum[NR_KINDS] = {0}, best[NR_KINDS], c;
	uint64_t tsc_khz       = user_boot_info()->tsc_khz;
	int round, k;

	if (vcpu != 0)
		return 0;
	if (user_yield() != 0 || pvpmu_hypercall(PVPMU_HC_NOP, 0) != 0) {
		uprintf("bench_syscall: yield or NOP failed\n");
		return 1;
	}
	for (k = 0; k < NR_KINDS; k++)
		best[k] = UINT64_MAX;
	for (round = 0; round < BENCH_ROUNDS; round++) {
		for (k = 0; k < NR_KINDS; k++) {
			c = run(k, BENCH_PER_ROUND);
			sum[k] += c;
			if (c < best[k])
				best[k] = c;
		}
	}
	for (k = 0; k < NR_KINDS; k++) {
		sum[k] /= BENCH_ITERS;
		best[k] /= BENCH_PER_ROUND;
	}
	report("mean", sum, tsc_khz);
	report("best", best, tsc_khz);
	return 0;
}
