// SPDX-License-Identifier: MIT
/*
 * test_hv_stats.c: the one table that gives hv events their meaning
 * (vpmu_hv_stat_of()): which VMM statistic each hv event counts, which
 * codes are computed from run time instead, and which are not hv events.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>

#include <pvpmu/catalog.h>

#include "backends/hv.h"

struct stat_case {
	int line;
	uint16_t code;
	int want; /* enum vpmu_hv_stat, or -ENOENT */
};

#define ROW(c, w)                                                              \
	{                                                                      \
		.line = __LINE__, .code = (c), .want = (w)                     \
	}

static const struct stat_case cases[] = {
	ROW(PVPMU_EV_HV_EXITS, VPMU_HV_STAT_EXITS),
	ROW(PVPMU_EV_HV_HYPERCALLS, VPMU_HV_STAT_HYPERCALLS),
	ROW(PVPMU_EV_HV_MSR_READS, VPMU_HV_STAT_MSR_READS),
	ROW(PVPMU_EV_HV_MSR_WRITES, VPMU_HV_STAT_MSR_WRITES),
	ROW(PVPMU_EV_HV_PIO, VPMU_HV_STAT_PIO),
	ROW(PVPMU_EV_HV_MMIO, VPMU_HV_STAT_MMIO),
	ROW(PVPMU_EV_HV_IRQS, VPMU_HV_STAT_IRQS),
	ROW(PVPMU_EV_HV_HALTS, VPMU_HV_STAT_HALTS),
	ROW(PVPMU_EV_HV_HALTED_NS, VPMU_HV_STAT_HALTED_NS),
	ROW(PVPMU_EV_HV_CPU_NS, VPMU_HV_STAT_CPU_NS),
	ROW(PVPMU_EV_HV_EXIT_REASON(0), VPMU_HV_STAT_EXIT_REASON),
	ROW(PVPMU_EV_HV_EXIT_REASON(63), VPMU_HV_STAT_EXIT_REASON + 63),
	ROW(PVPMU_EV_HV_EXIT_REASON(64), -ENOENT),
	/* Computed from the vCPU run time, never read from the VMM. */
	ROW(PVPMU_EV_HV_RUN_NS, -ENOENT),
	ROW(PVPMU_EV_HV_GUEST_CYCLES, -ENOENT),
	/* Unused umask of the fixed family, and other families. */
	ROW(0x7fe0, -ENOENT),
	ROW(PVPMU_EV_KVMSTAT(2), -ENOENT),
	ROW(PVPMU_EV_SW_TASK_CLOCK, -ENOENT),
	ROW(PVPMU_EV_CYCLES, -ENOENT),
};

Test(vpmu_hv_stats, each_hv_event_reads_its_own_statistic)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect(
			eq(int, vpmu_hv_stat_of(cases[i].code), cases[i].want),
			"row at line %d (code 0x%04x)", cases[i].line,
			cases[i].code);
}

/*
 * The catalogue names the hv events, hv.c gives them a meaning: every
 * catalogued hv event is either a time event or reads a statistic.
 */
Test(vpmu_hv_stats, every_catalogued_hv_event_has_a_meaning)
{
	unsigned int i, nr_read = 0;

	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);
		bool is_run_time = d->code == PVPMU_EV_HV_RUN_NS ||
				   d->code == PVPMU_EV_HV_GUEST_CYCLES;

		if (d->source != PVPMU_SRC_HV)
			continue;
		if (is_run_time) {
			cr_expect(eq(int, vpmu_hv_stat_of(d->code), -ENOENT),
				  "%s", d->name);
			continue;
		}
		cr_expect(ge(int, vpmu_hv_stat_of(d->code), 0), "%s", d->name);
		cr_expect(lt(int, vpmu_hv_stat_of(d->code), VPMU_HV_NR_STATS),
			  "%s", d->name);
		nr_read++;
	}
	cr_assert(
		eq(uint, nr_read, 11)); /* 10 fixed + the exit-reason family */
}
