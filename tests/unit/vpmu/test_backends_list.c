// SPDX-License-Identifier: MIT
/*
 * test_backends_list.c: the standard backend list and the event listing
 * without KVM or perf: hv, and a kvmstat instance whose VMM has no vCPU
 * fd (so it never reaches KVM), and a list without perf. Reasons must say
 * why each unavailable event is unavailable. With perf: a ring filter on
 * cycles that are task-clock (no host PMU) is refused, with the reason.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pvpmu/catalog.h>

#include "backends/backends.h"

static uint64_t hv_read(void *opaque, uint32_t cpu, uint16_t code)
{
	(void)opaque;
	(void)cpu;
	return code;
}

static int no_vcpu(void *opaque, uint32_t cpu)
{
	(void)opaque;
	(void)cpu;
	return -1;
}

static struct vpmu_hv_source hv            = {.read = hv_read};
static const struct vpmu_kvmstat_source ks = {.vcpu_fd = no_vcpu};
static struct vpmu_backend_list bl;

static void setup(void)
{
	hv.tsc_khz = 0;
	cr_assert(eq(int, vpmu_backends_build(&bl, &hv, &ks, NULL), 0));
}

static void teardown(void)
{
	vpmu_backends_release(&bl);
}

TestSuite(vpmu_backends, .init = setup, .fini = teardown);

#define MAX_SEEN 128

struct seen {
	unsigned int nr;
	struct vpmu_event_avail ev[MAX_SEEN];
	unsigned int stop_at; /* return 7 at this event (1-based), 0 never */
};

static int collect(void *opaque, const struct vpmu_event_avail *ev)
{
	struct seen *s = opaque;

	if (s->nr < MAX_SEEN)
		s->ev[s->nr] = *ev;
	s->nr++;
	return s->stop_at && s->nr == s->stop_at ? 7 : 0;
}

static const struct vpmu_event_avail *find(const struct seen *s, uint16_t code)
{
	unsigned int i;

	for (i = 0; i < s->nr && i < MAX_SEEN; i++) {
		if (s->ev[i].code == code)
			return &s->ev[i];
	}
	cr_fail("code 0x%04x not listed", code);
	return NULL;
}

Test(vpmu_backends, list_order_and_ownership)
{
	cr_assert(eq(uint, bl.nr, 2));
	cr_assert(eq(str, (char *)bl.be[0].ops->name, "hv"));
	cr_assert(eq(str, (char *)bl.be[1].ops->name, "kvmstat"));
	cr_assert(eq(ptr, bl.be[0].priv, &hv));
	cr_assert(not(eq(ptr, bl.kvmstat, NULL)));
	cr_assert(eq(ptr, bl.perf, NULL));
}

Test(vpmu_backends, every_catalogue_event_is_listed_once)
{
	static struct seen s;
	unsigned int i;

	cr_assert(eq(int, vpmu_backends_list_events(bl.be, bl.nr, collect, &s),
		     0));
	/* No statistics discovered: the kvmstat family stays one entry. */
	cr_assert(eq(uint, s.nr, pvpmu_catalog_size()));
	for (i = 0; i < s.nr; i++) {
		cr_assert(eq(u16, s.ev[i].code, pvpmu_catalog_at(i)->code));
		cr_assert(eq(int, s.ev[i].available, s.ev[i].reason == NULL),
			  "%s", s.ev[i].name);
	}
}

Test(vpmu_backends, reasons_name_the_missing_piece)
{
	static struct seen s;
	const struct vpmu_event_avail *ev;

	vpmu_backends_list_events(bl.be, bl.nr, collect, &s);
	ev = find(&s, PVPMU_EV_HV_EXITS);
	cr_assert(ev->available);
	cr_assert(eq(str, (char *)ev->backend, "hv"));
	cr_assert(eq(str, (char *)ev->name, "hv_exits"));

	ev = find(&s, PVPMU_EV_HV_GUEST_CYCLES);
	cr_assert(not(ev->available));
	cr_assert(not(eq(ptr, strstr(ev->reason, "TSC"), NULL)), "%s",
		  ev->reason);

	ev = find(&s, PVPMU_EV_CYCLES);
	cr_assert(not(ev->available));
	cr_assert(eq(str, (char *)ev->backend, "perf"));
	cr_assert(eq(str, (char *)ev->reason, "no such backend in this list"));

	ev = find(&s, PVPMU_EV_KVMSTAT(0));
	cr_assert(not(ev->available));
	cr_assert(eq(str, (char *)ev->backend, "kvmstat"));
	cr_assert(not(eq(ptr, strstr(ev->reason, "no KVM vCPU"), NULL)), "%s",
		  ev->reason);
}

Test(vpmu_backends, tsc_rate_makes_guest_cycles_available)
{
	static struct seen s;

	hv.tsc_khz = 2000000;
	vpmu_backends_list_events(bl.be, bl.nr, collect, &s);
	cr_assert(find(&s, PVPMU_EV_HV_GUEST_CYCLES)->available);
}

Test(vpmu_backends, callback_stops_the_walk)
{
	static struct seen s = {.stop_at = 3};

	cr_assert(eq(int, vpmu_backends_list_events(bl.be, bl.nr, collect, &s),
		     7));
	cr_assert(eq(uint, s.nr, 3));
}

Test(vpmu_backends, kvmstat_without_a_vcpu_refuses_everything)
{
	const struct vpmu_backend *k = &bl.be[1];
	struct vpmu_event_info info;
	uint16_t code;

	cr_assert(eq(int, k->ops->describe(k, PVPMU_EV_KVMSTAT(0), &info),
		     -ENOENT));
	cr_assert(eq(int, k->ops->enumerate(k, 0, &info), -ENOENT));
	cr_assert(eq(int, vpmu_kvmstat_find(bl.kvmstat, "exits", &code),
		     -ENODEV));
	cr_assert(eq(str,
		     (char *)vpmu_kvmstat_unavailable_reason(bl.kvmstat,
							     PVPMU_EV_HV_EXITS),
		     "not a KVM statistic (event 0xe2)"));
}

Test(vpmu_backends, build_without_sources_is_empty)
{
	struct vpmu_backend_list empty;
	static struct seen s;

	cr_assert(eq(int, vpmu_backends_build(&empty, NULL, NULL, NULL), 0));
	cr_assert(eq(uint, empty.nr, 0));
	cr_assert(eq(int,
		     vpmu_backends_list_events(empty.be, empty.nr, collect, &s),
		     0));
	cr_assert(eq(uint, s.nr, pvpmu_catalog_size()));
	cr_assert(not(s.ev[0].available));
	vpmu_backends_release(&empty);
}

static pid_t self_tid(void *opaque, uint32_t cpu)
{
	(void)opaque;
	(void)cpu;
	return gettid();
}

/*
 * Without a host PMU, cycles are the vCPU thread's task-clock, blind to
 * guest rings: cycles:u and cycles:k are refused with that reason instead
 * of counting every ring. With a PMU the filter is honoured.
 */
Test(vpmu_backends, cycles_from_task_clock_refuse_a_ring_filter)
{
	static const struct vpmu_perf_source ps = {.vcpu_tid = self_tid,
						   .tsc_khz  = 2000000};
	const struct vpmu_event all             = {
			    .code = PVPMU_EV_CYCLES, .usr = true, .os = true};
	struct vpmu_event usr = all, os = all;
	struct vpmu_backend_list l;
	const char *why;
	bool pmu;

	usr.os = false;
	os.usr = false;
	pmu    = access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	      access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
	cr_assert(eq(int, vpmu_backends_build(&l, &hv, &ks, &ps), 0));
	why = vpmu_backends_unavailable_reason(l.be, l.nr, PVPMU_EV_CYCLES);
	if (why) {
		vpmu_backends_release(&l);
		cr_skip("cycles cannot be counted here at all: %s", why);
	}
	cr_expect(eq(ptr, (void *)vpmu_backends_event_refusal(l.be, l.nr, &all),
		     NULL));
	why = vpmu_backends_event_refusal(l.be, l.nr, &usr);
	if (pmu) {
		cr_expect(eq(ptr, (void *)why, NULL), "%s", why);
	} else {
		cr_expect(not(eq(ptr, (void *)why, NULL)));
		cr_expect(not(eq(ptr,
				 strstr(why ? why : "", "ring 0 from ring 3"),
				 NULL)),
			  "%s", why);
		cr_expect(not(
			eq(ptr,
			   (void *)vpmu_backends_event_refusal(l.be, l.nr, &os),
			   NULL)));
		printf("cycles:u here: %s\n", why);
	}
	vpmu_backends_release(&l);
}
