// SPDX-License-Identifier: MIT
/*
 * test_perf_generic.c: the perf backend loads libpfm4 only where
 * it is used. The catalogue's perf events are the kernel's generic events
 * (vpmu_perf_generic, checked here against libpfm4's own "perf::NAME"
 * encoding), so a host without a hardware PMU, where no raw host-PMU event
 * can count, never maps libpfm4 (/proc/self/maps); a host with one loads
 * it when the backend is created. Criterion runs each test in its own
 * process, so each sees its own maps.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pvpmu/catalog.h>

#include "backends/perf.h"
#include "backends/pfm_load.h"

#define RAW_CODE 0x00c2 /* not a catalogue code: a raw host-PMU event */

/* Does this process map a file whose path contains (what)? */
static bool maps_has(const char *what)
{
	char line[512];
	bool found = false;
	FILE *f    = fopen("/proc/self/maps", "re");

	cr_assert(not(eq(ptr, f, NULL)));
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

static bool host_has_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

Test(perf_generic, catalogue_events_match_libpfm4)
{
	const struct pfm_lib *pfm;
	const char *why;
	unsigned int i, n = 0;

	pfm = pfm_lib_load(&why);
	cr_assert(not(eq(ptr, (void *)pfm, NULL)), "%s", why);
	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);
		struct perf_event_attr attr      = {0};
		pfm_perf_encode_arg_t arg        = {0};
		uint64_t config;
		uint32_t type;
		char fstr[64];

		if (d->source != PVPMU_SRC_PERF_HW &&
		    d->source != PVPMU_SRC_PERF_SW)
			continue;
		n++;
		cr_assert(
			eq(int, vpmu_perf_generic(d->code, &type, &config), 0),
			"%s has no generic event", d->name);
		snprintf(fstr, sizeof(fstr), "perf::%s", d->name);
		arg.attr = &attr;
		arg.size = sizeof(arg);
		cr_assert(eq(int,
			     pfm->get_os_event_encoding(fstr, PFM_PLM3,
							PFM_OS_PERF_EVENT_EXT,
							&arg),
			     PFM_SUCCESS),
			  "libpfm4 does not know %s", fstr);
		cr_expect(eq(u32, type, attr.type), "%s", d->name);
		cr_expect(eq(u64, config, attr.config), "%s", d->name);
	}
	cr_expect(ge(uint, n, 11), "only %u perf events in the catalogue", n);
	cr_expect(
		eq(int,
		   vpmu_perf_generic(RAW_CODE, &(uint32_t){0}, &(uint64_t){0}),
		   -ENOENT));
}

Test(perf_generic, libpfm4_mapped_only_with_a_host_pmu)
{
	struct vpmu_perf_source src = {0};
	struct vpmu_perf *perf;
	const char *why;

	cr_assert(not(maps_has("libpfm")), "mapped before the backend");
	cr_assert(eq(int, vpmu_perf_create(&src, &perf), 0));
	/* What a VM's CPUID set-up and an operator's raw event ask. */
	vpmu_perf_unavailable_reason(perf, PVPMU_EV_CYCLES);
	vpmu_perf_unavailable_reason(perf, PVPMU_EV_SW_TASK_CLOCK);
	why = vpmu_perf_unavailable_reason(perf, RAW_CODE);
	if (host_has_pmu()) {
		cr_expect(maps_has("libpfm"), "a host PMU, libpfm4 not loaded");
	} else {
		cr_expect(not(maps_has("libpfm")),
			  "no host PMU, yet libpfm4 is mapped");
		cr_assert(not(eq(ptr, (void *)why, NULL)));
		cr_expect(not(eq(ptr, strstr(why, "no hardware PMU"), NULL)),
			  "%s", why);
	}
	vpmu_perf_destroy(perf);
}
