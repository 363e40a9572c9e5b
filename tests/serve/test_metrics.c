// SPDX-License-Identifier: MIT
/*
 * test_metrics.c: the /metrics exposition of vpmu serve
 * (ops/serve/metrics.c) for one VM with two vCPUs, in both formats: the
 * per-vCPU families vpmu_vcpu_pmis (a counter: NAME_total per vCPU, and
 * NAME_created, the VM's start, in OpenMetrics only) and vpmu_vcpu_stale
 * (a gauge: the bare name, no _created), each with labels vm, uuid, vcpu,
 * after the event families and before the daemon's own families; the
 * event families one per unit: time events in seconds
 * (vpmu_events_seconds), cycle events in cycles (vpmu_events_cycles),
 * the others counts (vpmu_events), each event in its unit's only.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>

#include "serve_priv.h"

static uint64_t pmis[2] = {3, 5};
static bool stale[2]    = {false, true};
static struct ops_vm ovm;
static struct serve_vm vm;
static struct serve_vm *vms[1] = {&vm};

/* The exposition of the one VM in format (f); free() it. */
static char *render(enum om_format f)
{
	struct serve *sv = calloc(1, sizeof(*sv));
	char *text;

	cr_assert(not(eq(ptr, sv, NULL)));
	strcpy(ovm.e.name, "vm1");
	strcpy(ovm.e.uuid, "00000000-0000-4000-8000-000000000001");
	ovm.e.nr_vcpus = 2;
	ovm.e.started  = 1700000000;
	vm.s.vms       = &ovm;
	vm.s.nr_vms    = 1;
	vm.pmis        = pmis;
	vm.stale       = stale;
	sv->vms        = vms;
	sv->nr_vms     = 1;
	text           = serve_render_metrics(sv, f);
	free(sv);
	cr_assert(not(eq(ptr, text, NULL)));
	return text;
}

#define LABELS(cpu)                                                            \
	"{vm=\"vm1\",uuid=\"00000000-0000-4000-8000-000000000001\",vcpu="      \
	"\"" cpu "\"}"

/* (want) is in (text), after (after) (or anywhere if NULL): where it is. */
static const char *has_after(const char *text, const char *want,
			     const char *after)
{
	const char *p = strstr(text, want);

	cr_assert(not(eq(ptr, (void *)p, NULL)), "'%s' missing in:\n%s", want,
		  text);
	cr_assert(p > after, "'%s' out of order in:\n%s", want, text);
	return p;
}

Test(serve_metrics, per_vcpu_families_in_openmetrics)
{
	char *t = render(OM_OPENMETRICS_1);
	const char *p;

	p = has_after(t, "# TYPE vpmu_events counter\n", NULL);
	p = has_after(t, "# TYPE vpmu_vcpu_pmis counter\n", p);
	p = has_after(t, "vpmu_vcpu_pmis_total" LABELS("0") " 3\n", p);
	p = has_after(t, "vpmu_vcpu_pmis_created" LABELS("0") " 1700000000\n",
		      p);
	p = has_after(t, "vpmu_vcpu_pmis_total" LABELS("1") " 5\n", p);
	p = has_after(t, "vpmu_vcpu_pmis_created" LABELS("1") " 1700000000\n",
		      p);
	p = has_after(t, "# TYPE vpmu_vcpu_stale gauge\n", p);
	p = has_after(t, "vpmu_vcpu_stale" LABELS("0") " 0\n", p);
	p = has_after(t, "vpmu_vcpu_stale" LABELS("1") " 1\n", p);
	has_after(t, "# TYPE vpmu_serve_vms gauge\n", p);
	cr_expect(eq(ptr, strstr(t, "vpmu_vcpu_stale_"), NULL), "%s", t);
	free(t);
}

Test(serve_metrics, per_vcpu_families_in_text_004)
{
	char *t = render(OM_TEXT_004);
	const char *p;

	p = has_after(t, "# TYPE vpmu_vcpu_pmis_total counter\n", NULL);
	p = has_after(t, "vpmu_vcpu_pmis_total" LABELS("0") " 3\n", p);
	p = has_after(t, "vpmu_vcpu_pmis_total" LABELS("1") " 5\n", p);
	p = has_after(t, "# TYPE vpmu_vcpu_stale gauge\n", p);
	p = has_after(t, "vpmu_vcpu_stale" LABELS("0") " 0\n", p);
	has_after(t, "vpmu_vcpu_stale" LABELS("1") " 1\n", p);
	cr_expect(eq(ptr, strstr(t, "_created"), NULL), "%s", t);
	free(t);
}

#define EV_LABELS(cpu, ev)                                                     \
	"{vm=\"vm1\",uuid=\"00000000-0000-4000-8000-000000000001\",vcpu="      \
	"\"" cpu "\",event=\"" ev "\"}"

/* One family per unit: each event in its own, in base units. */
static void event_families(enum om_format f)
{
	static const char *const names[] = {"hv_run_ns", "hv_guest_cycles",
					    "hv_exits", "hv_cpu_ns"};
	/* [vcpu * 4 + event] */
	struct serve_counter ctr[8] = {{.pub = 1500000000}, {.pub = 7},
				       {.pub = 9},          {.pub = 250000000},
				       {.pub = 2000000000}, {.pub = 8},
				       {.pub = 10},         {.pub = 0}};
	const char *text            = f == OM_TEXT_004 ? "_total" : "";
	char want[256], *t;
	unsigned int k;

	for (k = 0; k < 4; k++)
		snprintf(vm.metric[k].name, sizeof(vm.metric[k].name), "%s",
			 names[k]);
	vm.nr_metric = 4;
	vm.ctr       = ctr;
	t            = render(f);
	snprintf(want, sizeof(want), "# TYPE vpmu_events_seconds%s counter\n",
		 text);
	has_after(t, want, NULL);
	has_after(t,
		  "vpmu_events_seconds_total" EV_LABELS("0",
							"hv_run_ns") " 1.5\n",
		  NULL);
	has_after(
		t,
		"vpmu_events_seconds_total" EV_LABELS("1", "hv_run_ns") " 2\n",
		NULL);
	has_after(t,
		  "vpmu_events_seconds_total" EV_LABELS("0",
							"hv_cpu_ns") " 0.25\n",
		  NULL);
	has_after(t,
		  "vpmu_events_cycles_total" EV_LABELS(
			  "1", "hv_guest_cycles") " 8\n",
		  NULL);
	has_after(t, "vpmu_events_total" EV_LABELS("0", "hv_exits") " 9\n",
		  NULL);
	/* Each event in one family only. */
	cr_expect(eq(ptr,
		     strstr(t, "vpmu_events_total" EV_LABELS("0", "hv_run_ns")),
		     NULL),
		  "%s", t);
	cr_expect(eq(ptr,
		     strstr(t, "vpmu_events_total" EV_LABELS(
				       "0", "hv_guest_cycles")),
		     NULL),
		  "%s", t);
	cr_expect(eq(ptr,
		     strstr(t, "vpmu_events_seconds_total" EV_LABELS(
				       "0", "hv_exits")),
		     NULL),
		  "%s", t);
	free(t);
	vm.nr_metric = 0;
	vm.ctr       = NULL;
}

Test(serve_metrics, event_families_per_unit_in_text_004)
{
	event_families(OM_TEXT_004);
}

Test(serve_metrics, event_families_per_unit_in_openmetrics)
{
	event_families(OM_OPENMETRICS_1);
}
