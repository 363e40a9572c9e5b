// SPDX-License-Identifier: MIT
/*
 * metrics.c: the /metrics exposition and the /debug/vpmu/vms JSON, both
 * rendered by the collector thread from the VMs it follows (HTTP threads
 * only copy the result).
 *
 * Families (labels vm, uuid; vcpu and event where per vCPU and event):
 *   vpmu_vm_info                 gauge 1, with pid, pmu and image labels
 *   vpmu_vm_start_time_seconds   gauge: when the VMM started (Unix time);
 *                                a restarted VM shows a new value
 *   vpmu_vm_vcpus                gauge
 *   vpmu_events_seconds          counter: what a time event counted on
 *                                the vCPU since vpmu serve attached, in
 *                                seconds (never lower than before:
 *                                serve_counter)
 *   vpmu_events_cycles           the same for cycle events, in cycles
 *   vpmu_events                  the same for the other events (counts)
 *   vpmu_vcpu_pmis               counter: PMIs the VMM injected into the
 *                                vCPU since the VM started (notification
 *                                vectors and architectural PMIs)
 *   vpmu_vcpu_stale              gauge 1 when the last read was stale
 *                                or its reply missed the deadline
 *   vpmu_serve_vms, vpmu_serve_collect_duration_seconds   the daemon
 *
 * Every label value and JSON string is valid UTF-8, whatever the bytes of
 * the names (om_escape, json_str).
 */
#include "serve_priv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A JSON string of (s) as valid UTF-8 (json-c copies bytes as they are,
 * and an image file name may be in any encoding); NULL without memory.
 */
static struct json_object *json_str(const char *s)
{
	char *clean = vmm_ctl_utf8_clean(s, strlen(s), NULL);
	struct json_object *o;

	if (!clean)
		return NULL;
	o = json_object_new_string(clean);
	free(clean);
	return o;
}

static void vm_gauges(struct om_buf *b, enum om_format f, struct serve_vm **vms,
		      unsigned int nr)
{
	struct om_label l[5];
	char pid[16];
	unsigned int i;

	om_family(b, f, "vpmu_vm_info", "gauge",
		  "A VM vpmu serve follows (value 1).");
	for (i = 0; i < nr; i++) {
		const struct vmm_reg_entry *e = &vms[i]->s.vms[0].e;

		snprintf(pid, sizeof(pid), "%d", (int)e->pid);
		l[0] = (struct om_label){"vm", e->name};
		l[1] = (struct om_label){"uuid", e->uuid};
		l[2] = (struct om_label){"pid", pid};
		l[3] = (struct om_label){"pmu", e->pmu};
		l[4] = (struct om_label){"image", e->image};
		om_sample_u64(b, "vpmu_vm_info", NULL, l, 5, 1);
	}
	om_family(b, f, "vpmu_vm_start_time_seconds", "gauge",
		  "Start time of the VM's VMM process, Unix seconds.");
	for (i = 0; i < nr; i++) {
		const struct vmm_reg_entry *e = &vms[i]->s.vms[0].e;

		l[0] = (struct om_label){"vm", e->name};
		l[1] = (struct om_label){"uuid", e->uuid};
		om_sample_u64(b, "vpmu_vm_start_time_seconds", NULL, l, 2,
			      (uint64_t)e->started);
	}
	om_family(b, f, "vpmu_vm_vcpus", "gauge", "vCPUs of the VM.");
	for (i = 0; i < nr; i++) {
		const struct vmm_reg_entry *e = &vms[i]->s.vms[0].e;

		l[0] = (struct om_label){"vm", e->name};
		l[1] = (struct om_label){"uuid", e->uuid};
		om_sample_u64(b, "vpmu_vm_vcpus", NULL, l, 2, e->nr_vcpus);
	}
}

/*
 * The event families, one per unit (Prometheus: one unit per family, in
 * base units, named in the family's name): time events in seconds,
 * cycle events in cycles, the rest counts. (unit) is pprof_unit_of()'s.
 */
static const struct event_family {
	const char *name, *unit, *help;
	double scale; /* the published value per unit counted */
} event_families[] = {
	{"vpmu_events_seconds", "nanoseconds",
	 "Time counted on the vCPU by vpmu serve's host context since it "
	 "attached, in seconds (event hv_run_ns: time inside KVM_RUN; "
	 "hv_cpu_ns: the vCPU thread's CPU time; task-clock), monotonic.",
	 1e-9},
	{"vpmu_events_cycles", "cycles",
	 "Cycles counted on the vCPU by vpmu serve's host context since it "
	 "attached (event hv_guest_cycles: TSC cycles inside KVM_RUN; "
	 "cycles: the host PMU's), monotonic.",
	 1},
	{"vpmu_events", "count",
	 "Events counted on the vCPU by vpmu serve's host context since it "
	 "attached (exits, exits by reason, hypercalls, MSR accesses, the -e "
	 "count events), monotonic.",
	 1},
};

static bool in_family(const struct event_family *fam, const char *event)
{
	return !strcmp(pprof_unit_of(event), fam->unit);
}

static void event_family(struct om_buf *b, enum om_format f,
			 struct serve_vm **vms, unsigned int nr,
			 const struct event_family *fam)
{
	struct om_label l[4];
	unsigned int i, cpu, k;
	char vcpu[16];
	uint64_t pub;

	om_family(b, f, fam->name, "counter", fam->help);
	for (i = 0; i < nr; i++) {
		const struct serve_vm *v      = vms[i];
		const struct vmm_reg_entry *e = &v->s.vms[0].e;

		l[0] = (struct om_label){"vm", e->name};
		l[1] = (struct om_label){"uuid", e->uuid};
		for (cpu = 0; cpu < e->nr_vcpus; cpu++) {
			snprintf(vcpu, sizeof(vcpu), "%u", cpu);
			l[2] = (struct om_label){"vcpu", vcpu};
			for (k = 0; k < v->nr_metric; k++) {
				if (!in_family(fam, v->metric[k].name))
					continue;
				l[3] = (struct om_label){"event",
							 v->metric[k].name};
				pub  = v->ctr[cpu * v->nr_metric + k].pub;
				if (fam->scale == 1)
					om_sample_u64(b, fam->name, "_total", l,
						      4, pub);
				else
					om_sample_f64(b, fam->name, "_total", l,
						      4,
						      (double)pub * fam->scale);
				if (f == OM_OPENMETRICS_1)
					om_sample_u64(b, fam->name, "_created",
						      l, 4,
						      (uint64_t)v->created);
			}
		}
	}
}

static void vm_counters(struct om_buf *b, enum om_format f,
			struct serve_vm **vms, unsigned int nr)
{
	size_t i;

	for (i = 0; i < sizeof(event_families) / sizeof(event_families[0]); i++)
		event_family(b, f, vms, nr, &event_families[i]);
}

static uint64_t vcpu_pmis(const struct serve_vm *v, unsigned int cpu)
{
	return v->pmis[cpu];
}

static uint64_t vcpu_stale(const struct serve_vm *v, unsigned int cpu)
{
	return v->stale[cpu];
}

/*
 * The families with one sample per vCPU (labels vm, uuid, vcpu) and the
 * value of each; a counter's samples are NAME_total, with NAME_created
 * (the VM's start) in OpenMetrics.
 */
static const struct vcpu_family {
	const char *name, *type, *help;
	uint64_t (*value)(const struct serve_vm *v, unsigned int cpu);
} vcpu_families[] = {
	{"vpmu_vcpu_pmis", "counter",
	 "PMIs the VMM injected into the vCPU since the VM started "
	 "(perfmon2 notification vector, architectural PMIs).",
	 vcpu_pmis},
	{"vpmu_vcpu_stale", "gauge",
	 "1 when the vCPU could not be brought up to date at the "
	 "last read (its counts are older).",
	 vcpu_stale},
};

static void vcpu_family(struct om_buf *b, enum om_format f,
			struct serve_vm **vms, unsigned int nr,
			const struct vcpu_family *fam)
{
	bool counter = !strcmp(fam->type, "counter");
	struct om_label l[3];
	unsigned int i, cpu;
	char vcpu[16];

	om_family(b, f, fam->name, fam->type, fam->help);
	for (i = 0; i < nr; i++) {
		const struct vmm_reg_entry *e = &vms[i]->s.vms[0].e;

		l[0] = (struct om_label){"vm", e->name};
		l[1] = (struct om_label){"uuid", e->uuid};
		for (cpu = 0; cpu < e->nr_vcpus; cpu++) {
			snprintf(vcpu, sizeof(vcpu), "%u", cpu);
			l[2] = (struct om_label){"vcpu", vcpu};
			om_sample_u64(b, fam->name, counter ? "_total" : NULL,
				      l, 3, fam->value(vms[i], cpu));
			if (counter && f == OM_OPENMETRICS_1)
				om_sample_u64(b, fam->name, "_created", l, 3,
					      (uint64_t)e->started);
		}
	}
}

char *serve_render_metrics(struct serve *sv, enum om_format f)
{
	struct om_buf b = {0};
	size_t i;

	vm_gauges(&b, f, sv->vms, sv->nr_vms);
	vm_counters(&b, f, sv->vms, sv->nr_vms);
	for (i = 0; i < sizeof(vcpu_families) / sizeof(vcpu_families[0]); i++)
		vcpu_family(&b, f, sv->vms, sv->nr_vms, &vcpu_families[i]);
	om_family(&b, f, "vpmu_serve_vms", "gauge",
		  "VMs vpmu serve is attached to.");
	om_sample_u64(&b, "vpmu_serve_vms", NULL, NULL, 0, sv->nr_vms);
	om_family(&b, f, "vpmu_serve_collect_duration_seconds", "gauge",
		  "Time the previous collection round took.");
	om_sample_f64(&b, "vpmu_serve_collect_duration_seconds", NULL, NULL, 0,
		      sv->last_collect_s);
	om_end(&b, f);
	if (b.err) {
		om_buf_free(&b);
		return NULL;
	}
	return b.s;
}

char *serve_render_vms(struct serve *sv)
{
	struct json_object *arr = json_object_new_array(), *o, *ev;
	unsigned int i, k;
	char *text;

	for (i = 0; i < sv->nr_vms; i++) {
		const struct serve_vm *v      = sv->vms[i];
		const struct vmm_reg_entry *e = &v->s.vms[0].e;

		o  = json_object_new_object();
		ev = json_object_new_array();
		json_object_object_add(o, "name", json_str(e->name));
		json_object_object_add(o, "uuid", json_str(e->uuid));
		json_object_object_add(o, "pid", json_object_new_int(e->pid));
		json_object_object_add(o, "nr_vcpus",
				       json_object_new_int((int)e->nr_vcpus));
		json_object_object_add(o, "pmu", json_str(e->pmu));
		json_object_object_add(o, "image", json_str(e->image));
		json_object_object_add(o, "tsc_khz",
				       json_object_new_uint64(e->tsc_khz));
		json_object_object_add(o, "started",
				       json_object_new_int64(e->started));
		json_object_object_add(o, "attached",
				       json_object_new_int64(v->created));
		for (k = 0; k < v->nr_metric; k++)
			json_object_array_add(ev, json_str(v->metric[k].name));
		json_object_object_add(o, "events", ev);
		json_object_object_add(o, "profiling",
				       json_object_new_boolean(v->sampling));
		json_object_array_add(arr, o);
	}
	text = strdup(json_object_to_json_string_ext(
		arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(arr);
	return text;
}
