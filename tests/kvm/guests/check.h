/* SPDX-License-Identifier: MIT */
/*
 * check.h: expectations for the SDK's KVM test guests (sdk_*.c). Each
 * failed expectation prints one line naming it; the guest prints
 * "<name>: ok (N checks)" and exits 0 when none failed, else exits 1.
 */
#ifndef PVPMU_CHECK_H
#define PVPMU_CHECK_H

#include "tool_bare.h"

struct checker {
	const char *name;
	unsigned int nr, nr_failed;
};

/* (got) must equal (want) (PVPMU_E* codes printed by name). */
#define EXPECT(c, what, got, want)                                             \
	check_eq((c), (what), __LINE__, (long long)(got), (long long)(want))

/* (cond) must hold. */
#define EXPECT_TRUE(c, what, cond) check_eq((c), (what), __LINE__, !!(cond), 1)

static inline void check_eq(struct checker *c, const char *what, int line,
			    long long got, long long want)
{
	c->nr++;
	if (got == want)
		return;
	c->nr_failed++;
	if (got < 0 && got > -200 && want <= 0 && want > -200)
		uprintf("%s: FAIL line %d: %s: got %lld (%s), want %lld "
			"(%s)\n",
			c->name, line, what, got, pvpmu_strerror((int)got),
			want, pvpmu_strerror((int)want));
	else
		uprintf("%s: FAIL line %d: %s: got %lld (0x%llx), want %lld "
			"(0x%llx)\n",
			c->name, line, what, got, (unsigned long long)got, want,
			(unsigned long long)want);
}

/* The guest's exit status: 0 when every expectation held. */
static inline int check_done(struct checker *c)
{
	if (c->nr_failed) {
		uprintf("%s: FAILED %u of %u checks\n", c->name, c->nr_failed,
			c->nr);
		return 1;
	}
	uprintf("%s: ok (%u checks)\n", c->name, c->nr);
	return 0;
}

#endif /* PVPMU_CHECK_H */
