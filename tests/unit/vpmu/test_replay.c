// SPDX-License-Identifier: MIT
/*
 * test_replay.c: the replay backend through its ops table (vpmu_backend.h):
 * exact rates with carried remainders, arm() deadlines, explicit steps, and
 * describe/enumerate of the declared events.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>

#include "backends/replay.h"

static struct vpmu_replay *rp;
static struct vpmu_backend be;

static void setup(void)
{
	cr_assert(eq(int, vpmu_replay_create(&rp), 0));
	cr_assert(eq(int, vpmu_replay_add_event(rp, 0x3c, "cycles"), 0));
	cr_assert(eq(int, vpmu_replay_add_event(rp, 0xc0, "insns"), 0));
	vpmu_replay_instance(rp, &be);
}

static void teardown(void)
{
	vpmu_replay_destroy(rp);
}

TestSuite(vpmu_replay, .init = setup, .fini = teardown);

static void open_ev(struct vpmu_bevent *e, uint16_t code, uint64_t now)
{
	*e = (struct vpmu_bevent){.be = &be, .ev = {.code = code}};
	cr_assert(eq(int, be.ops->open(e, now), 0));
}

static uint64_t rd(struct vpmu_bevent *e, uint64_t now)
{
	uint64_t d = 0;

	cr_assert(eq(int, be.ops->read(e, now, &d), 0));
	return d;
}

/* Rates are exact over any split of run time (remainders carried). */
Test(vpmu_replay, rate_is_exact_across_reads)
{
	struct vpmu_bevent e;
	uint64_t total = 0, t = 0, i;

	cr_assert(eq(int, vpmu_replay_set_rate(rp, 0, 0x3c, 333333333ULL), 0));
	open_ev(&e, 0x3c, 0);
	for (i = 1; i <= 1000; i++) {
		t += i * 7 + 1; /* irregular slices */
		total += rd(&e, t);
	}
	cr_assert(eq(u64, total, t * 333333333ULL / 1000000000ULL));
	be.ops->close(&e);
}

/* arm(): the least run time after which n more events have happened. */
Test(vpmu_replay, arm_gives_exact_deadline)
{
	struct vpmu_bevent e;
	uint64_t in_ns = 0, n;

	cr_assert(eq(int, vpmu_replay_set_rate(rp, 0, 0x3c, 3000000000ULL), 0));
	open_ev(&e, 0x3c, 0);
	rd(&e, 1); /* 3 events, no remainder */
	for (n = 1; n < 50; n += 7) {
		cr_assert(eq(int, be.ops->arm(&e, n, &in_ns), 0));
		cr_assert(ge(u64, in_ns * 3, n), "n events by then");
		cr_assert(lt(u64, (in_ns - 1) * 3, n), "and not before");
	}
	/* 2^64 - 1 events at 3/ns: exactly (2^64 - 1) / 3 ns, no overflow. */
	cr_assert(eq(int, be.ops->arm(&e, UINT64_MAX, &in_ns), 0));
	cr_assert(eq(u64, in_ns, UINT64_MAX / 3));
	be.ops->close(&e);
	/* At 1 event/s the same count is beyond any run time. */
	cr_assert(eq(int, vpmu_replay_set_rate(rp, 0, 0xc0, 1), 0));
	open_ev(&e, 0xc0, 0);
	cr_assert(eq(int, be.ops->arm(&e, UINT64_MAX, &in_ns), 0));
	cr_assert(eq(u64, in_ns, VPMU_NO_DEADLINE), "centuries away");
}

/* Steps: one delta per read over run time, zeros after; a reopened
 * event continues the script. */
Test(vpmu_replay, steps_then_zeros)
{
	const uint64_t d[] = {5, 0, 9};
	struct vpmu_bevent e;
	uint64_t in_ns;

	cr_assert(eq(int, vpmu_replay_set_steps(rp, 2, 0xc0, d, 3), 0));
	e = (struct vpmu_bevent){.be = &be,
				 .ev = {.code = 0xc0, .cpu_index = 2}};
	cr_assert(eq(int, be.ops->open(&e, 10), 0));
	cr_assert(eq(u64, rd(&e, 10), 0), "no run time, no step");
	cr_assert(eq(u64, rd(&e, 11), 5));
	be.ops->close(&e);
	cr_assert(eq(int, be.ops->open(&e, 11), 0));
	cr_assert(eq(u64, rd(&e, 12), 0));
	cr_assert(eq(u64, rd(&e, 13), 9));
	cr_assert(eq(u64, rd(&e, 14), 0));
	cr_assert(eq(int, be.ops->arm(&e, 1, &in_ns), 0));
	cr_assert(eq(u64, in_ns, VPMU_NO_DEADLINE), "steps have no clock");
}

/* Streams are per vCPU: another vCPU sees nothing. */
Test(vpmu_replay, streams_are_per_vcpu)
{
	struct vpmu_bevent e;

	cr_assert(eq(int, vpmu_replay_set_rate(rp, 1, 0x3c, 1000000000ULL), 0));
	open_ev(&e, 0x3c, 0);
	cr_assert(eq(u64, rd(&e, 100), 0));
}

/* vpmu_backend.h: describe() refuses codes it cannot count (-ENOENT). */
Test(vpmu_replay, describe_and_enumerate)
{
	struct vpmu_event_info info;

	cr_assert(eq(int, be.ops->describe(&be, 0xc0, &info), 0));
	cr_assert(eq(str, (char *)info.name, "insns"));
	cr_assert(eq(int, be.ops->describe(&be, 0x12, NULL), -ENOENT));
	cr_assert(eq(int, be.ops->enumerate(&be, 0, &info), 0));
	cr_assert(eq(u16, info.code, 0x3c));
	cr_assert(eq(int, be.ops->enumerate(&be, 2, &info), -ENOENT));
	cr_assert(eq(str, (char *)be.ops->name, "replay"));
}

/* replay.h: the scripting API rejects what it cannot replay. */
Test(vpmu_replay, scripting_errors)
{
	uint64_t d = 1;

	cr_assert(eq(int, vpmu_replay_add_event(rp, 0x3c, "again"), -EEXIST));
	cr_assert(eq(int, vpmu_replay_set_rate(rp, 0, 0x99, 1), -ENOENT));
	cr_assert(
		eq(int,
		   vpmu_replay_set_rate(rp, 0, 0x3c, VPMU_REPLAY_MAX_RATE + 1),
		   -EINVAL));
	cr_assert(eq(int, vpmu_replay_set_steps(rp, 0, 0x3c, &d, 0), -EINVAL));
}
