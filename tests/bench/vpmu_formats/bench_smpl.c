// SPDX-License-Identifier: MIT
/*
 * bench_smpl.c: cost of recording one sample with the default and n-way
 * formats (the handler call the core makes on every 64-bit overflow),
 * next to a floor measured in the same run: a memcpy of the same bytes
 * into the same buffer. Prints ns per sample and the ratio; it asserts
 * nothing about time.
 *
 * Usage: bench_vpmu_fmt [samples-per-run]   (default 2000000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vpmu_smpl.h"

#define RUNS     7
#define NUM_PMDS 8
#define BUF_SIZE (1u << 20)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static struct vpmu_smpl_ovfl_arg mkovfl(void)
{
	struct vpmu_smpl_ovfl_arg a = {
		.ovfl_pmd       = 1,
		.active_set     = 0,
		.pid            = 42,
		.tid            = 43,
		.pmd_last_reset = 0xfffffffffffe7960ULL,
		.ip             = 0x401000,
	};

	a.smpl_pmds[0]        = 0x6; /* two values: a 56-byte sample */
	a.smpl_pmds_values[0] = 11;
	a.smpl_pmds_values[1] = 22;
	return a;
}

/* ns per sample recorded by (fmt), restarting whenever it masks. */
static double run_format(const struct vpmu_smpl_fmt *fmt, const void *arg,
			 long n)
{
	struct vpmu_smpl_create_arg ca = {
		.num_pmds = NUM_PMDS, .arg = arg, .size_max = BUF_SIZE};
	struct vpmu_smpl_buf b      = {0};
	struct vpmu_smpl_ovfl_arg a = mkovfl();
	uint32_t ctrl;
	double t0, t1;
	long i;

	if (vpmu_smpl_create(fmt, &ca, &b))
		return -1;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		a.tstamp = (uint64_t)i;
		ctrl     = 0;
		fmt->handler(&b, &a, &ctrl);
		if (ctrl & VPMU_SMPL_CTRL_NOTIFY_USER)
			fmt->restart(&b,
				     !(ctrl & VPMU_SMPL_CTRL_MASK_MONITORING),
				     0, &ctrl);
	}
	t1 = now_ns();
	vpmu_smpl_destroy(&b);
	return (t1 - t0) / (double)n;
}

/* The floor: memcpy of the same bytes, wrapping in a buffer as big. */
static double run_memcpy(size_t bytes, long n)
{
	struct vpmu_smpl_ovfl_arg a = mkovfl();
	char *buf                   = calloc(1, BUF_SIZE);
	size_t off = 0, end = BUF_SIZE - bytes;
	double t0, t1;
	long i;

	if (!buf)
		return -1;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		a.tstamp = (uint64_t)i;
		memcpy(buf + off, &a.pid, bytes);
		__asm__ volatile("" : : "r"(buf) : "memory");
		off += bytes;
		if (off > end)
			off = 0;
	}
	t1 = now_ns();
	free(buf);
	return (t1 - t0) / (double)n;
}

static double best(double (*fn)(const struct vpmu_smpl_fmt *, const void *,
				long),
		   const struct vpmu_smpl_fmt *fmt, const void *arg, long n)
{
	double m = 1e30, t;
	int r;

	for (r = 0; r < RUNS; r++) {
		t = fn(fmt, arg, n);
		if (t >= 0 && t < m)
			m = t;
	}
	return m;
}

int main(int argc, char **argv)
{
	long n                         = argc > 1 ? atol(argv[1]) : 2000000;
	struct pfm_default_smpl_arg da = {.buf_size = BUF_SIZE};
	struct pvpmu_nway_smpl_arg na = {.buf_size = BUF_SIZE, .nr_regions = 4};
	size_t bytes = sizeof(struct pfm_default_smpl_entry) + 2 * 8;
	double floor = 1e30, dfl, nway, t;
	int r;

	if (n <= 0)
		n = 2000000;
	for (r = 0; r < RUNS; r++) {
		t = run_memcpy(bytes, n);
		if (t >= 0 && t < floor)
			floor = t;
	}
	dfl  = best(run_format, &vpmu_smpl_fmt_default, &da, n);
	nway = best(run_format, &vpmu_smpl_fmt_nway, &na, n);
	printf("sample bytes            %zu\n", bytes);
	printf("floor memcpy            %.2f ns\n", floor);
	printf("default format sample   %.2f ns  ratio %.2f\n", dfl,
	       dfl / floor);
	printf("n-way (4) format sample %.2f ns  ratio %.2f\n", nway,
	       nway / floor);
	return 0;
}
