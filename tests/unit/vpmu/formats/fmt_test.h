/* SPDX-License-Identifier: MIT */
/*
 * fmt_test.h: helpers for the sampling-format tests: create a buffer of a
 * built-in format and build overflow descriptions.
 */
#ifndef FMT_TEST_H
#define FMT_TEST_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

#include "vpmu_smpl.h"

/* Implemented PMDs of the PMU the tests pretend to have. */
#define FT_NUM_PMDS 8

static inline size_t ft_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Create (buf) of format (fmt) with arguments (arg); asserts success. */
static inline void ft_create(const struct vpmu_smpl_fmt *fmt, const void *arg,
			     uint16_t num_pmds, struct vpmu_smpl_buf *buf)
{
	struct vpmu_smpl_create_arg a = {
		.ctx_flags = 0,
		.num_pmds  = num_pmds,
		.arg       = arg,
		.size_max  = SIZE_MAX,
	};

	memset(buf, 0, sizeof(*buf));
	cr_assert(eq(int, vpmu_smpl_create(fmt, &a, buf), 0));
}

/*
 * An overflow of PMD (pmd) recording the PMDs in (smpl_pmds); the value of
 * PMD n is 1000 * n + tstamp so that order and origin are checkable.
 */
static inline struct vpmu_smpl_ovfl_arg
ft_ovfl(uint16_t pmd, uint64_t smpl_pmds, uint64_t tstamp)
{
	struct vpmu_smpl_ovfl_arg a = {
		.ovfl_pmd       = pmd,
		.active_set     = 3,
		.cpu            = 1,
		.ovfl_notify    = true,
		.pid            = 1234,
		.tid            = 1235,
		.pmd_last_reset = 0xfffffffffffe7960ULL, /* -100000, §3.4.1 */
		.ip             = 0x401000 + tstamp,
		.tstamp         = tstamp,
	};
	unsigned int n, k = 0;

	a.smpl_pmds[0] = smpl_pmds;
	for (n = 0; n < 64; n++) {
		if (smpl_pmds & (1ULL << n))
			a.smpl_pmds_values[k++] = 1000ULL * n + tstamp;
	}
	return a;
}

/* Read a u64 / u32 / u16 at byte offset (off) of (base). */
static inline uint64_t ft_u64(const void *base, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

static inline uint32_t ft_u32(const void *base, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

static inline uint16_t ft_u16(const void *base, size_t off)
{
	uint16_t v;

	memcpy(&v, (const char *)base + off, sizeof(v));
	return v;
}

#endif /* FMT_TEST_H */
