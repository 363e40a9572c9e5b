// SPDX-License-Identifier: MIT
/*
 * cmd_events.c: `vpmu events`, the events this host can count.
 *
 * The KVM statistics are discovered at run time, so the command creates a
 * scratch VM with one vCPU (never run) and a libvpmu domain over it (which
 * builds the standard backends: hv, kvmstat, perf), then prints every event
 * with its code, backend, availability and the reason when unavailable. Perf
 * events are probed by opening them on this thread. Without a usable /dev/kvm
 * the listing still runs: KVM statistics are then unavailable, with the reason.
 */
#include "ops_cmd.h"
#include "cli_parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include <vpmu/vpmu.h>

#include "event_spec.h"
#include "vmm_core.h"
#include "ctl_server.h"
#include "vm_config.h"

/* The VM vpmu-vmm assembles (vmm/vmm_main.c). */
static const struct vmm_module *const vmm_modules[] = {&vmm_pv_module,
						       &vmm_ctl_module, NULL};

struct events_opts {
	bool json;
	const char *fmt_dir;
};

static const struct cli_opt events_opts[] = {
	CLI_FLAG('j', "json", struct events_opts, json,
		 "one JSON object {\"events\": [...], \"raw\": {...}, "
		 "\"formats\": [...]}"),
	CLI_STR(0, "format-dir", "DIR", struct events_opts, fmt_dir,
		"also load the run-time sampling formats of DIR, as\n"
		"`vpmu run --format-dir` does (refusals on stderr);\n"
		"default: an installed vpmu's LIBDIR/vpmu/formats"),
	{0},
};

static const struct cli_cmd events_cmd = {
	.name    = "events",
	.summary = "every event of the virtual PMU and every KVM statistic "
		   "of this host",
	.opts    = events_opts,
	.help = "  Columns: code (the PMC event select, umask << 8 | event), "
		"name,\n"
		"  backend, whether this host can count it, who can count it "
		"(WHO:\n"
		"  'all' = guests (SDK) and host operators (vpmu stat, record, "
		"top);\n"
		"  'guest' = guests only: KVM statistics), and why not; then "
		"the\n  sampling formats a guest can name by UUID (spec "
		"3.5.2).\n"
		"  JSON: \"operators\": false for the events only guests can "
		"count.\n"
		"  First, the kind of KVM host (hardware VT-x/SVM, PVM, "
		"nested) "
		"and\n  what it implies for guests.\n",
};

struct listing {
	FILE *out;
	bool json;
	unsigned int nr;
};

static int vcpu_fd(void *opaque, uint32_t cpu)
{
	struct vmm_vm *vm = opaque;

	if (!vm || cpu >= vmm_vm_nr_vcpus(vm))
		return -1;
	return vmm_vcpu_fd(vmm_vm_vcpu(vm, cpu));
}

static pid_t self_tid(void *opaque, uint32_t cpu)
{
	(void)opaque;
	(void)cpu;
	return gettid();
}

static uint64_t hv_zero(void *opaque, uint32_t cpu, unsigned int stat)
{
	(void)opaque;
	(void)cpu;
	(void)stat;
	return 0;
}

static const struct vpmu_host_ops listing_ops = {
	.vcpu_fd  = vcpu_fd,
	.vcpu_tid = self_tid,
	.hv_stat  = hv_zero,
};

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_json(struct listing *l, const struct vpmu_event_avail *ev)
{
	FILE *out = l->out;

	fprintf(out,
		"%s\n    {\"code\": \"0x%04x\", \"name\": ", l->nr ? "," : "",
		ev->code);
	json_str(out, ev->name);
	fputs(", \"backend\": ", out);
	json_str(out, ev->backend);
	fprintf(out, ", \"available\": %s, \"operators\": %s, \"reason\": ",
		ev->available ? "true" : "false",
		ev_spec_operator_refusal(ev->code) ? "false" : "true");
	if (ev->reason)
		json_str(out, ev->reason);
	else
		fputs("null", out);
	fputs(", \"description\": ", out);
	json_str(out, ev->desc ? ev->desc : "");
	fputc('}', out);
}

static int print_event(void *opaque, const struct vpmu_event_avail *ev)
{
	struct listing *l = opaque;

	if (l->json)
		print_json(l, ev);
	else
		fprintf(l->out, "0x%04x  %-34s %-8s %-5s %-5s %s\n", ev->code,
			ev->name, ev->backend, ev->available ? "yes" : "no",
			ev_spec_operator_refusal(ev->code) ? "guest" : "all",
			ev->available ? (ev->desc ? ev->desc : "")
				      : ev->reason);
	l->nr++;
	return 0;
}

/*
 * Any other code is a raw host PMU event (perf backend): one line says
 * whether this host counts them, probed with (RAW_EXAMPLE), a code outside
 * the catalogue.
 */
#define RAW_EXAMPLE 0x00c2

static void print_raw(struct listing *l, const char *why)
{
	if (!l->json) {
		printf("\nother codes (umask << 8 | event, event not "
		       "%#x..%#x):"
		       " raw host PMU events, backend perf: %s%s\n",
		       PVPMU_EVSEL_HV, PVPMU_EVSEL_HOST_SW,
		       why ? "unavailable: " : "available", why ? why : "");
		return;
	}
	fputs("\n  ],\n  \"raw\": {\"backend\": \"perf\", \"available\": ",
	      stdout);
	fputs(why ? "false" : "true", stdout);
	fputs(", \"reason\": ", stdout);
	if (why)
		json_str(stdout, why);
	else
		fputs("null", stdout);
	fputs("}", stdout);
}

static void fmt_refused(void *opaque, const char *msg)
{
	(void)opaque;
	fprintf(stderr, "vpmu events: sampling format refused: %s\n", msg);
}

/* Spec 3.5.2: every format with its UUID and logical name. */
static void print_formats(bool json)
{
	struct vpmu_format_info fi[64];
	size_t i, n = vpmu_format_list(fi, 64);
	char id[37];

	if (n > 64)
		n = 64;
	if (json)
		fputs(",\n  \"formats\": [", stdout);
	else
		printf("\nsampling formats (spec 3.5.2):\n%-36s  %-16s %-8s "
		       "%s\n",
		       "UUID", "NAME", "KIND", "FROM");
	for (i = 0; i < n; i++) {
		uuid_unparse(fi[i].uuid, id);
		if (!json) {
			printf("%-36s  %-16s %-8s %s\n", id, fi[i].name,
			       fi[i].builtin ? "built-in" : "run-time",
			       fi[i].builtin ? "vpmu" : fi[i].origin);
			continue;
		}
		printf("%s\n    {\"uuid\": \"%s\", \"name\": ", i ? "," : "",
		       id);
		json_str(stdout, fi[i].name);
		printf(", \"builtin\": %s, \"origin\": ",
		       fi[i].builtin ? "true" : "false");
		if (fi[i].builtin)
			fputs("null", stdout);
		else
			json_str(stdout, fi[i].origin);
		fputs("}", stdout);
	}
	if (json)
		fputs("\n  ]\n}\n", stdout);
}

/* A never-run VM with one vCPU: the source of KVM statistics. */
static struct vmm_vm *scratch_vm(void)
{
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg;
	struct vmm_vm *vm;

	vmm_config_defaults(&cfg);
	cfg.nr_vcpus = 1;
	cfg.mem_size = VMM_MEM_MIN;
	snprintf(cfg.name, sizeof(cfg.name), "vpmu-events");
	if (vmm_vm_create(&cfg, NULL, vmm_modules, &vm, err, sizeof(err))) {
		fprintf(stderr,
			"vpmu events: no scratch VM (%s): KVM statistics "
			"cannot be listed\n",
			err);
		return NULL;
	}
	return vm;
}

static int list(struct vmm_vm *vm, bool json)
{
	struct vpmu_host_config hc = {.ops = &listing_ops, .opaque = vm};
	struct listing l           = {.out = stdout, .json = json};
	struct vmm_host host;
	struct vpmu_domain *d;
	int khz, ret;

	vpmu_limits_default(&hc.limits);
	khz        = vm ? ioctl(vcpu_fd(vm, 0), KVM_GET_TSC_KHZ, 0) : -1;
	hc.tsc_khz = khz > 0 ? (uint64_t)khz : 0;
	ret        = vpmu_domain_create_hosted(&hc, &d);
	if (ret) {
		fprintf(stderr, "vpmu events: %s\n", strerror(-ret));
		return 1;
	}
	vmm_host_probe(&host);
	if (json) {
		fputs("{\n  \"host\": {\"kind\": ", stdout);
		json_str(stdout, vmm_host_kind_name(host.kind));
		printf(", \"nested\": %s, \"hardware_pmu\": %s},\n",
		       host.nested ? "true" : "false",
		       host.hw_pmu ? "true" : "false");
		fputs("  \"events\": [", stdout);
	} else {
		vmm_host_describe(&host, "", stdout);
		putchar('\n');
	}
	if (!json)
		printf("%-6s  %-34s %-8s %-5s %-5s %s\n", "CODE", "NAME",
		       "BACKEND", "AVAIL", "WHO",
		       "DESCRIPTION (or why unavailable)");
	vpmu_domain_list_events(d, print_event, &l);
	print_raw(&l, vpmu_domain_event_unavailable(d, RAW_EXAMPLE));
	print_formats(json);
	vpmu_domain_destroy(d);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "vpmu events: writing the listing: %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}

int ops_cmd_events(int argc, char **argv)
{
	struct events_opts o = {0};
	char installed[PATH_MAX];
	struct cli_rest rest;
	struct vmm_vm *vm;
	int status;

	status = cli_parse(&events_cmd, &o, argc, argv, &rest);
	if (status)
		return status == CLI_HELP ? 0 : 1;
	cli_rest_free(&rest);
	if (!o.fmt_dir &&
	    !vmm_config_installed_format_dir(installed, sizeof(installed)))
		o.fmt_dir = installed; /* what `vpmu run` loads too */
	if (o.fmt_dir && vpmu_format_load_dir(o.fmt_dir, fmt_refused, NULL) < 0)
		return 1;
	vm     = scratch_vm();
	status = list(vm, o.json);
	vmm_vm_destroy(vm);
	return status;
}
