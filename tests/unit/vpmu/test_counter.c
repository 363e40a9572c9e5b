// SPDX-License-Identifier: MIT
/*
 * test_counter.c: 64-bit counter emulation over a narrow hardware width
 * (spec 2.2.1, 3.1.3, 3.1.4, 3.4.1, 3.5.14, Fig. 3.3) and the NO_EMUL64
 * opt-out (6.2.1), with replay steps placing every event exactly.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>

#include "harness.h"

static void init_width(unsigned int width)
{
	struct vpmu_limits l;

	vpmu_limits_default(&l);
	l.counter_width = width;
	h_init(&l);
}

/* A started vCPU-wide context counting H_EV(0) in PMD0 from (value). */
static int counting(uint32_t pmc_flags, uint64_t value)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_pmc(fd, 0, 0, H_EVSEL(0), pmc_flags);
	h_pmd(fd, 0, 0, value, 0, 0);
	h_load(fd, 0);
	h_start(fd);
	return fd;
}

static uint64_t folds(int fd)
{
	struct vpmu_ctx_stats st;

	cr_assert(eq(int, vpmu_ctx_stats(H.d, &H.guest, fd, &st), 0));
	return st.nr_folds;
}

struct wrap_row {
	int line;
	unsigned int width;
	uint64_t start;    /* PMD0 written value */
	uint64_t steps[3]; /* deltas of three run slices */
	uint64_t want;     /* value after the three slices */
	unsigned int ovfl; /* slice (1-based) that overflows, 0 = none */
	uint64_t nfolds;   /* narrow wraps folded */
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}
#define W32 (1ULL << 32)
#define W48 (1ULL << 48)

ParameterizedTestParameters(vpmu_counter, wraps)
{
	static struct wrap_row rows[] = {
		/* 3.4.1: -p overflows after exactly p events. */
		ROW(.width = 32, .start = -100ULL, .steps = {60, 39, 1},
		    .want = 0, .ovfl = 3, .nfolds = 1),
		ROW(.width = 48, .start = -100ULL, .steps = {60, 39, 1},
		    .want = 0, .ovfl = 3, .nfolds = 1),
		/* Fig. 3.3: narrow wraps fold into the software part. */
		ROW(.width = 32, .start = W32 - 0x100, .steps = {0x200, 0, 0},
		    .want = W32 + 0x100, .ovfl = 0, .nfolds = 1),
		ROW(.width = 48, .start = W48 - 0x100, .steps = {0x200, 0, 0},
		    .want = W48 + 0x100, .ovfl = 0, .nfolds = 1),
		/* Several narrow wraps in one slice. */
		ROW(.width = 32, .start = 0, .steps = {5 * W32 + 7, 0, 0},
		    .want = 5 * W32 + 7, .ovfl = 0, .nfolds = 5),
		ROW(.width = 48, .start = 3, .steps = {W48, W48, 1},
		    .want = 2 * W48 + 4, .ovfl = 0, .nfolds = 2),
		/* The 64-bit wrap leaves the excess (skid) in the counter. */
		ROW(.width = 32, .start = -10ULL, .steps = {4, 16, 0},
		    .want = 10, .ovfl = 2, .nfolds = 1),
		ROW(.width = 48, .start = -(W48 + 10), .steps = {10, W48, 5},
		    .want = 0, .ovfl = 2, .nfolds = 2),
	};

	return cr_make_param_array(struct wrap_row, rows,
				   sizeof(rows) / sizeof(rows[0]));
}

/* 3.4.1, 3.5.14, Fig. 3.3: one row per placement of events. */
ParameterizedTest(struct wrap_row *r, vpmu_counter, wraps, .fini = h_teardown)
{
	unsigned int i;
	int fd;

	init_width(r->width);
	h_steps(0, r->steps, 3);
	fd = counting(PFM_REGFL_OVFL_NOTIFY, r->start);
	for (i = 1; i <= 3; i++) {
		h_run(1000);
		/* Only the 64-bit wrap is a perfmon2 overflow (3.5.14). */
		cr_assert(eq(u32, H.nr_notes, r->ovfl && i >= r->ovfl),
			  "row at line %d, slice %u", r->line, i);
		if (i == r->ovfl)
			break; /* masked from here on (3.1.9) */
	}
	cr_assert(eq(u64, h_val(fd, 0, 0), r->want), "row at line %d", r->line);
	cr_assert(eq(u64, folds(fd), r->nfolds), "row at line %d", r->line);
}

/* 6.2.1: without emulation the PMD is hw wide and wraps there. */
Test(vpmu_counter, no_emul64_overflows_at_hardware_width, .fini = h_teardown)
{
	uint64_t steps[] = {0x0f, 0x01};
	int fd;

	init_width(32);
	h_steps(0, steps, 2);
	fd = counting(PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_NO_EMUL64,
		      W32 * 3 + 0xfffffff0ULL);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0xfffffff0ULL),
		  "value truncated to the width");
	h_run(10);
	cr_assert(eq(u32, H.nr_notes, 0));
	h_run(10);
	cr_assert(eq(u32, H.nr_notes, 1), "the narrow wrap is the overflow");
	cr_assert(eq(u64, h_val(fd, 0, 0), 0));
}

/* 3.1.17: cf_counter_width reports the emulated hardware width. */
Test(vpmu_counter, get_config_reports_width, .fini = h_teardown)
{
	struct pfarg_config cf;

	init_width(40);
	cr_assert(eq(int, vpmu_get_config(H.d, &H.guest, &cf, 1), 0));
	cr_assert(eq(u16, cf.cf_counter_width, 40));
	cr_assert(eq(u32, PFM_VERSION_MAJOR(cf.cf_version), 1));
}

/* 3.4.1: p = 100000 is written as 0xFFFFFFFFFFFE7960 (digest 14.14). */
Test(vpmu_counter, period_deadline_places_overflow_exactly, .fini = h_teardown)
{
	uint64_t p = 100000, dl;
	int fd;

	init_width(48);
	h_rate(0, 1000000000ULL); /* one event per ns of run time */
	fd = counting(PFM_REGFL_OVFL_NOTIFY, 0xFFFFFFFFFFFE7960ULL);
	cr_assert(eq(u64, 0 - p, 0xFFFFFFFFFFFE7960ULL));
	dl = vpmu_cpu_next_deadline(H.cpu0);
	cr_assert(eq(u64, dl, vpmu_cpu_run_ns(H.cpu0) + p));
	h_run(p - 1);
	cr_assert(eq(u32, H.nr_notes, 0));
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-1));
	h_run(1);
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(eq(u64, h_val(fd, 0, 0), 0));
}

/* 3.1.4: a detached context reads the software counter. */
Test(vpmu_counter, read_after_unload_is_whole_value, .fini = h_teardown)
{
	uint64_t steps[] = {W32 + 5};
	int fd;

	init_width(32);
	h_steps(0, steps, 1);
	fd = counting(0, W32 - 1);
	h_run(1);
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(u64, h_val(fd, 0, 0), 2 * W32 + 4));
}
