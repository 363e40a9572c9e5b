// SPDX-License-Identifier: MIT
/*
 * test_scale.c: multiplexing scaling (raw * enabled / running) in 128-bit
 * integer math: exact, scaled, not counted, saturation.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <stdint.h>

#include <pvpmu/pvpmu.h>

struct scale_case {
	int line;
	uint64_t raw, enabled, running;
	int ret;
	uint64_t scaled;
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

ParameterizedTestParameters(sdk_scale, scale)
{
	static struct scale_case cases[] = {
		ROW(.raw = 100, .ret = PVPMU_SCALE_NOT_COUNTED),
		ROW(.raw = 100, .enabled = 1000,
		    .ret = PVPMU_SCALE_NOT_COUNTED),
		ROW(.raw = 100, .enabled = 1000, .running = 1000,
		    .ret = PVPMU_SCALE_EXACT, .scaled = 100),
		/* running > enabled (clock skew): never scale down */
		ROW(.raw = 100, .enabled = 1000, .running = 2000,
		    .ret = PVPMU_SCALE_EXACT, .scaled = 100),
		ROW(.raw = 100, .enabled = 1000, .running = 500,
		    .ret = PVPMU_SCALE_SCALED, .scaled = 200),
		/* spec Fig. 3.32: A = 16 over 3 of 6 slices -> 32 */
		ROW(.raw = 16, .enabled = 6, .running = 3,
		    .ret = PVPMU_SCALE_SCALED, .scaled = 32),
		ROW(.raw = 10, .enabled = 3, .running = 2,
		    .ret = PVPMU_SCALE_SCALED, .scaled = 15),
		ROW(.raw = 0, .enabled = 3, .running = 2,
		    .ret = PVPMU_SCALE_SCALED, .scaled = 0),
		/* the product needs 128 bits, the quotient fits */
		ROW(.raw = 1ULL << 62, .enabled = 3, .running = 2,
		    .ret = PVPMU_SCALE_SCALED, .scaled = 0x6000000000000000ULL),
		ROW(.raw = UINT64_MAX / 2, .enabled = UINT64_MAX,
		    .running = UINT64_MAX - 1, .ret = PVPMU_SCALE_SCALED,
		    .scaled = UINT64_MAX / 2),
		/* the quotient does not fit: saturate */
		ROW(.raw = UINT64_MAX, .enabled = 3, .running = 2,
		    .ret = PVPMU_SCALE_SCALED, .scaled = UINT64_MAX),
		ROW(.raw = UINT64_MAX, .enabled = UINT64_MAX, .running = 1,
		    .ret = PVPMU_SCALE_SCALED, .scaled = UINT64_MAX),
	};
	return cr_make_param_array(struct scale_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct scale_case *tc, sdk_scale, scale)
{
	uint64_t s = 0xdead;

	cr_assert(eq(int, pvpmu_scale(tc->raw, tc->enabled, tc->running, &s),
		     tc->ret),
		  "row at line %d", tc->line);
	cr_assert(eq(u64, s, tc->scaled), "row at line %d", tc->line);
}

Test(sdk_scale, muldiv)
{
	cr_assert(eq(u64, pvpmu_muldiv(7, 0, 3), 0));
	cr_assert(eq(u64, pvpmu_muldiv(7, 5, 0), 0));
	cr_assert(eq(u64, pvpmu_muldiv(7, 5, 3), 11));
	cr_assert(eq(u64, pvpmu_muldiv(UINT64_MAX, UINT64_MAX, UINT64_MAX),
		     UINT64_MAX));
	cr_assert(eq(u64, pvpmu_muldiv(UINT64_MAX, UINT64_MAX - 1, UINT64_MAX),
		     UINT64_MAX - 1));
	cr_assert(eq(u64, pvpmu_muldiv(1ULL << 63, 2, 4), 1ULL << 62));
	cr_assert(eq(u64, pvpmu_muldiv(1ULL << 63, 4, 2), UINT64_MAX));
}
