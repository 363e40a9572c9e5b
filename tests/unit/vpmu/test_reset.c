// SPDX-License-Identifier: MIT
/*
 * test_reset.c: reset values (initial, short, long), reg_reset_pmds and
 * randomization (spec 3.1.2, 3.1.3, 3.1.9, 3.4.1-3.4.3; digest 6.3-6.5).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <string.h>

#include "harness.h"
#include "vpmu_mech.h"

TestSuite(vpmu_reset, .init = h_setup, .fini = h_teardown);

/* A loaded, started vCPU-wide context; PMC0 counts H_EV(0). */
static int started(uint32_t pmc0_flags, uint64_t reset_pmds)
{
	int fd             = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_pmc p = {.reg_num        = 0,
			      .reg_flags      = pmc0_flags,
			      .reg_value      = H_EVSEL(0),
			      .reg_reset_pmds = {reset_pmds}};

	h_pmc_full(fd, &p);
	return fd;
}

static void go(int fd)
{
	h_load(fd, 0);
	h_start(fd);
}

/* 3.1.3: without notification the short reset value is reloaded. */
Test(vpmu_reset, short_reset_on_overflow_without_notify)
{
	uint64_t steps[] = {10, 100};
	int fd           = started(0, 0);
	struct pfarg_pmd r;

	h_steps(0, steps, 2);
	h_pmd(fd, 0, 0, (uint64_t)-10, (uint64_t)-100, (uint64_t)-5000);
	cr_assert(eq(u64, h_read(fd, 0, 0).reg_last_reset_val, 0),
		  "no reset yet: 0 (vpmu.h)");
	go(fd);
	h_run(1);
	r = h_read(fd, 0, 0);
	cr_assert(eq(u64, r.reg_value, (uint64_t)-100));
	cr_assert(eq(u64, r.reg_last_reset_val, (uint64_t)-100));
	h_run(1);
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-100), "again");
	cr_assert(eq(u32, H.nr_notes, 0), "no notification (3.4.3)");
}

/* 3.4.3: a short reset of 0 is a plain wrap. */
Test(vpmu_reset, zero_short_reset_wraps)
{
	uint64_t steps[] = {7};
	int fd           = started(0, 0);

	h_steps(0, steps, 1);
	h_pmd(fd, 0, 0, (uint64_t)-3, 0, 0);
	go(fd);
	h_run(1);
	cr_assert(eq(u64, h_val(fd, 0, 0), 4), "wrapped, still counting");
}

/*
 * 3.1.9: after a notification, RESTART long-resets the overflowed PMD and
 * the PMDs of its reg_reset_pmds (each with its own value); others keep.
 */
Test(vpmu_reset, restart_long_resets_overflowed_and_reset_pmds)
{
	uint64_t steps[] = {5};
	int fd           = started(PFM_REGFL_OVFL_NOTIFY, 1ULL << 1);

	h_steps(0, steps, 1);
	h_pmd(fd, 0, 0, (uint64_t)-5, (uint64_t)-7, (uint64_t)-900);
	h_pmd(fd, 0, 1, 1234, 11, 22);
	h_pmd(fd, 0, 2, 4321, 33, 44);
	go(fd);
	h_run(1);
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(eq(u64, h_val(fd, 0, 0), 0), "masking wins over reset");
	cr_assert(eq(u64, h_val(fd, 0, 1), 1234));
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-900));
	cr_assert(eq(u64, h_read(fd, 0, 0).reg_last_reset_val, (uint64_t)-900));
	cr_assert(eq(u64, h_val(fd, 0, 1), 22), "own long reset");
	cr_assert(eq(u64, h_val(fd, 0, 2), 4321), "not in the reset list");
}

/* 3.1.2: reg_reset_pmds is honoured on short resets too (digest 6.4). */
Test(vpmu_reset, reset_pmds_short_reset_without_notify)
{
	uint64_t steps[] = {1};
	int fd           = started(0, 1ULL << 3);

	h_steps(0, steps, 1);
	h_pmd(fd, 0, 0, (uint64_t)-1, (uint64_t)-50, 0);
	h_pmd(fd, 0, 3, 999, 3, 4);
	go(fd);
	h_run(1);
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-50));
	cr_assert(eq(u64, h_val(fd, 0, 3), 3));
}

/* Park & Miller (1988): from seed 1 the 10000th value is 1043618065. */
Test(vpmu_reset, carta_prng_matches_minimal_standard)
{
	uint32_t state = 1, v = 0;
	unsigned int i;

	for (i = 0; i < 10000; i++)
		v = vpmu_prng_next(&state);
	cr_assert(eq(u32, v, 1043618065U));
}

/* Run to the next predicted overflow; return the period just loaded. */
static uint64_t next_period(int fd)
{
	uint64_t dl = vpmu_cpu_next_deadline(H.cpu0);

	cr_assert(ne(u64, dl, VPMU_NO_DEADLINE));
	h_run(dl - vpmu_cpu_run_ns(H.cpu0));
	return 0 - h_read(fd, 0, 0).reg_last_reset_val;
}

static int random_ctx(uint64_t base, uint64_t mask, uint32_t seed)
{
	int fd             = started(PFM_REGFL_RANDOM, 0);
	struct pfarg_pmd p = {.reg_num         = 0,
			      .reg_value       = 0 - base,
			      .reg_short_reset = 0 - base,
			      .reg_random_mask = mask,
			      .reg_random_seed = seed};

	h_pmd_full(fd, &p);
	return fd;
}

/*
 * 3.4.2: value = base + (random & mask), so a period p with mask 0xff is
 * uniform in [p - 255, p]: check range and mean over many draws.
 */
Test(vpmu_reset, randomized_periods_mean_and_range)
{
	const uint64_t p = 1000, mask = 0xff;
	const unsigned int n = 4000;
	uint64_t lo = UINT64_MAX, hi = 0, per;
	double sum = 0, mean, want = (double)p - mask / 2.0;
	unsigned int i;
	int fd = random_ctx(p, mask, 12345);

	h_rate(0, 1000000000ULL);
	go(fd);
	for (i = 0; i < n; i++) {
		per = next_period(fd);
		lo  = per < lo ? per : lo;
		hi  = per > hi ? per : hi;
		sum += (double)per;
	}
	mean = sum / n;
	cr_assert(ge(u64, lo, p - mask));
	cr_assert(le(u64, hi, p));
	/* Uniform over 256 values: sd 73.9, standard error 1.2; 5 sigma. */
	cr_assert(le(dbl, fabs(mean - want), 6.0), "mean %.2f want %.2f", mean,
		  want);
	cr_assert(le(u64, lo, p - mask + 8), "low end reached");
	cr_assert(ge(u64, hi, p - 8), "high end reached");
}

/* 3.4.2: the series is completely determined by the seed. */
Test(vpmu_reset, same_seed_same_series)
{
	uint64_t a[32], b[32];
	unsigned int i;
	int fd;

	h_rate(0, 1000000000ULL);
	fd = random_ctx(5000, 0xfff, 777);
	go(fd);
	for (i = 0; i < 32; i++)
		a[i] = next_period(fd);
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.guest, fd), 0));
	fd = random_ctx(5000, 0xfff, 777);
	go(fd);
	for (i = 0; i < 32; i++)
		b[i] = next_period(fd);
	cr_assert(eq(int, memcmp(a, b, sizeof(a)), 0));
	for (i = 1; i < 32 && a[i] == a[0]; i++)
		;
	cr_assert(lt(u32, i, 32), "the periods vary");
}

/* 3.4.2: long resets are randomized as well (base = long reset). */
Test(vpmu_reset, long_reset_is_randomized)
{
	uint64_t steps[] = {1}, v;
	int fd           = started(PFM_REGFL_RANDOM | PFM_REGFL_OVFL_NOTIFY, 0);
	struct pfarg_pmd p = {.reg_num         = 0,
			      .reg_value       = (uint64_t)-1,
			      .reg_long_reset  = (uint64_t)-100000,
			      .reg_random_mask = 0xffff,
			      .reg_random_seed = 99};

	h_steps(0, steps, 1);
	h_pmd_full(fd, &p);
	go(fd);
	h_run(1);
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	v = h_read(fd, 0, 0).reg_last_reset_val;
	cr_assert(eq(u64, h_val(fd, 0, 0), v));
	cr_assert(ge(u64, v, (uint64_t)-100000));
	cr_assert(le(u64, v, (uint64_t)-100000 + 0xffff));
	{
		uint32_t st = 99;

		cr_assert(eq(u64, v - (uint64_t)-100000,
			     vpmu_prng_next(&st) & 0xffffULL),
			  "first draw of seed 99");
	}
}

/*
 * 3.4.3, vpmu.h: skid of more than a period (a late exit) is kept modulo
 * the period, so the counter never silently passes 2^64 again and the
 * next overflow comes on time; the missed periods are counted.
 */
Test(vpmu_reset, skid_longer_than_period_keeps_phase)
{
	const uint64_t p = 10;
	uint64_t steps[] = {p + 2 * p + 5, p - 5};
	struct vpmu_ctx_stats st;
	int fd = started(0, 0);

	h_steps(0, steps, 2);
	h_pmd(fd, 0, 0, 0 - p, 0 - p, 0);
	go(fd);
	h_run(1);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0 - p + 5));
	cr_assert(eq(int, vpmu_ctx_stats(H.d, &H.guest, fd, &st), 0));
	cr_assert(eq(u64, st.nr_missed, 2));
	cr_assert(eq(u64, st.nr_ovfl, 1));
	h_run(1);
	cr_assert(eq(int, vpmu_ctx_stats(H.d, &H.guest, fd, &st), 0));
	cr_assert(eq(u64, st.nr_ovfl, 2), "next overflow in phase");
}
