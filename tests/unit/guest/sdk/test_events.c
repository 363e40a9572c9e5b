// SPDX-License-Identifier: MIT
/*
 * test_events.c: event names and modifiers -> PMC values
 * (pvpmu_event_encode), table driven.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <stdint.h>

#include <pvpmu/pvpmu.h>

#define BASE (PVPMU_EVSEL_EN | PVPMU_EVSEL_INT)
#define BOTH (PVPMU_EVSEL_USR | PVPMU_EVSEL_OS)

struct enc_case {
	int line;
	char spec[48]; /* inline: parameters are copied between processes */
	int ret;
	uint64_t value;
	char name[24]; /* catalogue entry, "" for none */
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

ParameterizedTestParameters(sdk_events, encode)
{
	static struct enc_case cases[] = {
		ROW(.spec  = "hv_exits",
		    .value = PVPMU_EV_HV_EXITS | BASE | BOTH,
		    .name  = "hv_exits"),
		ROW(.spec  = "hv_guest_cycles:u",
		    .value = PVPMU_EV_HV_GUEST_CYCLES | BASE | PVPMU_EVSEL_USR,
		    .name  = "hv_guest_cycles"),
		ROW(.spec  = "hv_run_ns:k",
		    .value = PVPMU_EV_HV_RUN_NS | BASE | PVPMU_EVSEL_OS,
		    .name  = "hv_run_ns"),
		ROW(.spec  = "hv_run_ns:os",
		    .value = PVPMU_EV_HV_RUN_NS | BASE | PVPMU_EVSEL_OS,
		    .name  = "hv_run_ns"),
		ROW(.spec  = "hv_exits:u:k",
		    .value = PVPMU_EV_HV_EXITS | BASE | BOTH,
		    .name  = "hv_exits"),
		ROW(.spec  = "hv_exits:e:i",
		    .value = PVPMU_EV_HV_EXITS | BASE | BOTH |
			     PVPMU_EVSEL_EDGE | PVPMU_EVSEL_INV,
		    .name = "hv_exits"),
		ROW(.spec  = "hv_exits:c=2",
		    .value = (2ULL << PVPMU_EVSEL_CMASK_SHIFT) |
			     PVPMU_EV_HV_EXITS | BASE | BOTH,
		    .name = "hv_exits"),
		ROW(.spec  = "hv_exits:cmask=0xff",
		    .value = (0xffULL << PVPMU_EVSEL_CMASK_SHIFT) |
			     PVPMU_EV_HV_EXITS | BASE | BOTH,
		    .name = "hv_exits"),
		ROW(.spec  = "hv_exit_reason:umask=2",
		    .value = PVPMU_EV_HV_EXIT_REASON(2) | BASE | BOTH,
		    .name  = "hv_exit_reason"),
		ROW(.spec  = "hv_exit_reason:umask=0x1e:u",
		    .value = PVPMU_EV_HV_EXIT_REASON(0x1e) | BASE |
			     PVPMU_EVSEL_USR,
		    .name = "hv_exit_reason"),
		ROW(.spec  = "kvmstat:umask=3",
		    .value = PVPMU_EV_KVMSTAT(3) | BASE | BOTH,
		    .name  = "kvmstat"),
		ROW(.spec = "cycles", .value = 0x003c | BASE | BOTH,
		    .name = "cycles"),
		ROW(.spec  = "task-clock",
		    .value = PVPMU_EV_SW_TASK_CLOCK | BASE | BOTH,
		    .name  = "task-clock"),
		ROW(.spec = "r02e0", .value = PVPMU_EV_HV_EXITS | BASE | BOTH),
		ROW(.spec = "r3c:u", .value = 0x003c | BASE | PVPMU_EVSEL_USR),
		ROW(.spec = "nosuch", .ret = -PVPMU_ENOENT),
		ROW(.spec = "", .ret = -PVPMU_ENOENT),
		ROW(.spec = ":u", .ret = -PVPMU_ENOENT),
		ROW(.spec = "r", .ret = -PVPMU_ENOENT),
		ROW(.spec = "r123456", .ret = -PVPMU_ENOENT),
		ROW(.spec = "rxyz", .ret = -PVPMU_ENOENT),
		ROW(.spec = "hv_exits_and_more", .ret = -PVPMU_ENOENT),
		ROW(.spec = "hv_exits:", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:x", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:uk", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:c=", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:c=256", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:c=0x", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:c=12a", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:umask=2", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exit_reason:umask=256", .ret = -PVPMU_EINVAL),
		ROW(.spec = "r1e1:umask=2", .ret = -PVPMU_EINVAL),
		ROW(.spec = "hv_exits:c=99999999999999999999999",
		    .ret  = -PVPMU_EINVAL),
	};
	return cr_make_param_array(struct enc_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct enc_case *tc, sdk_events, encode)
{
	const struct pvpmu_event_desc *d = (const void *)1;
	uint64_t v                       = 0xdead;
	int ret;

	ret = pvpmu_event_encode(tc->spec, &v, &d);
	cr_assert(eq(int, ret, tc->ret), "\"%s\" (row at line %d)", tc->spec,
		  tc->line);
	if (ret)
		return;
	cr_assert(eq(u64, v, tc->value), "\"%s\" (row at line %d)", tc->spec,
		  tc->line);
	if (tc->name[0])
		cr_assert(eq(str, (char *)d->name, (char *)tc->name),
			  "row at line %d", tc->line);
	else
		cr_assert(eq(ptr, (void *)d, NULL), "row at line %d", tc->line);
}

Test(sdk_events, null_arguments)
{
	uint64_t v;

	cr_assert(eq(int, pvpmu_event_encode(NULL, &v, NULL), -PVPMU_EFAULT));
	cr_assert(eq(int, pvpmu_event_encode("hv_exits", NULL, NULL),
		     -PVPMU_EFAULT));
	cr_assert(eq(int, pvpmu_event_encode("hv_exits", &v, NULL), 0));
}

/* Every catalogue name encodes to its own code, both rings. */
Test(sdk_events, whole_catalogue)
{
	unsigned int i;

	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *e = pvpmu_catalog_at(i), *d;
		uint64_t v;

		cr_assert(eq(int, pvpmu_event_encode(e->name, &v, &d), 0), "%s",
			  e->name);
		cr_assert(eq(u64, v & 0xffff, e->code), "%s", e->name);
		cr_assert(eq(ptr, (void *)d, (void *)e));
		cr_assert(eq(u64, v & BOTH, BOTH));
	}
}
