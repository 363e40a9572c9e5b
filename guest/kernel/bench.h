/* SPDX-License-Identifier: MIT */
/*
 * bench.h: the timing harness shared by the guest benchmarks (bench_doorbell,
 * bench_syscall, bench_arch_msr, bench_pfm) and the measurement guests (tm.h):
 * a TSC-timed port-exit loop, interleaved rounds with mean and best, sorting
 * and medians, and two-decimal fixed-point ratios.
 *
 * Freestanding inline functions, integer math only (guest code builds with
 * -mgeneral-regs-only). Everything here is pure computation or unprivileged
 * instructions, so it runs in ring 0 and ring 3 alike (as kvsnprintf does,
 * ulib.c).
 */
#ifndef GUEST_BENCH_H
#define GUEST_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

/*
 * (n) calls of `mov val, %eax; outl %eax, port`, unrolled 8 times ((n) a
 * multiple of 8); returns TSC cycles.
 */
static inline uint64_t bench_outl_loop(uint16_t port, uint32_t val,
				       unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();

	__asm__ __volatile__(".balign 16\n"
			     "1:\n\t"
			     ".rept 8\n\t"
			     "mov %[v], %%eax\n\t"
			     "outl %%eax, %%dx\n\t"
			     ".endr\n\t"
			     "sub $8, %[n]\n\t"
			     "jnz 1b"
			     : [n] "+r"(n)
			     : [v] "r"(val), "d"(port)
			     : "rax", "memory");
	return rdtsc_ordered() - t0;
}

/* Interleaved rounds: (run) times (n) iterations of kind (kind). */
struct bench_rounds {
	unsigned int nr_kinds;
	unsigned int rounds;
	unsigned int per_round; /* iterations of each kind in each round */
	uint64_t (*run)(int kind, unsigned int n);
};

/*
 * Run every kind once per round, in kind order, for (b->rounds) rounds, so
 * that drift affects all kinds alike. Fills (mean)[k] with the cycles per
 * iteration over all rounds and (best)[k] with those of the fastest round.
 */
static inline void bench_interleave(const struct bench_rounds *b,
				    uint64_t *mean, uint64_t *best)
{
	unsigned int round, k;
	uint64_t c;

	for (k = 0; k < b->nr_kinds; k++) {
		mean[k] = 0;
		best[k] = UINT64_MAX;
	}
	for (round = 0; round < b->rounds; round++) {
		for (k = 0; k < b->nr_kinds; k++) {
			c = b->run((int)k, b->per_round);
			mean[k] += c;
			if (c < best[k])
				best[k] = c;
		}
	}
	for (k = 0; k < b->nr_kinds; k++) {
		mean[k] /= (uint64_t)b->rounds * b->per_round;
		best[k] /= b->per_round;
	}
}

/* Sort (v) ascending in place (insertion sort: n is small). */
static inline void bench_sort(uint64_t *v, unsigned int n)
{
	unsigned int i, j;
	uint64_t x;

	for (i = 1; i < n; i++) {
		x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Sort (v) and return its median: the mean of the middle two if (n) is even. */
static inline uint64_t bench_median(uint64_t *v, unsigned int n)
{
	bench_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* (a) / (b) times 100, rounded to nearest; 0 when (b) is 0. */
static inline uint64_t bench_ratio_x100(uint64_t a, uint64_t b)
{
	return b ? (a * 100 + b / 2) / b : 0;
}

/* "1.23": (x100) / 100 with two decimals, into (buf). */
static inline char *bench_fix2(char *buf, size_t size, uint64_t x100)
{
	ksnprintf(buf, size, "%llu.%02llu", (unsigned long long)(x100 / 100),
		  (unsigned long long)(x100 % 100));
	return buf;
}

#endif /* GUEST_BENCH_H */
