// SPDX-License-Identifier: MIT
/*
 * cmd_list.c: `vpmu list`, the running VMs: every vpmu VM registered in the
 * runtime directory (asked over its control socket for uptime and active
 * contexts), then the libvirt-managed domains, through libvirt's C API
 * (read-only connection to --libvirt-uri, $LIBVIRT_DEFAULT_URI or
 * qemu:///system). Without a reachable libvirtd one note line says so and
 * the vpmu VMs are still listed (exit 0).
 */
#include "ops_cmd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_parse.h"
#include "ctl_client.h"

#ifdef VPMU_HAVE_LIBVIRT
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#endif

struct list_opts {
	bool json, no_libvirt;
	const char *uri;
};

static const struct cli_opt list_opts[] = {
	CLI_FLAG('j', "json", struct list_opts, json, "one JSON object"),
	CLI_STR(0, "libvirt-uri", "URI", struct list_opts, uri,
		"libvirt to ask (default $LIBVIRT_DEFAULT_URI,\n"
		"else qemu:///system)"),
	CLI_FLAG(0, "no-libvirt", struct list_opts, no_libvirt,
		 "do not list libvirt's domains"),
	{0},
};

static const struct cli_cmd list_cmd = {
	.name    = "list",
	.summary = "the running VMs: vpmu's, then libvirt's",
	.opts    = list_opts,
	.help = "  Every vpmu VM of the runtime directory ($VPMU_RUNTIME_DIR, "
		"/run/vpmu\n"
		"  for root, else $XDG_RUNTIME_DIR/vpmu; root also scans\n"
		"  /run/user/*/vpmu): uuid, name, pid, vCPUs, uptime, PMU "
		"model "
		"and its\n"
		"  active guest and host contexts; then the domains libvirt "
		"manages.\n"
		"  Stale entries of dead VMs are removed.\n",
};

struct vm_info {
	int64_t guest_ctx, host_ctx;
	bool ok;
};

static void query(const struct vmm_reg_entry *e, struct vm_info *in)
{
	struct json_object *rep, *v;
	struct ops_client c;

	*in = (struct vm_info){.ok = false};
	if (ops_client_connect(&c, e->socket))
		return;
	if (!ops_client_call(&c, ops_client_req("info"), &rep)) {
		in->ok = true;
		json_object_object_get_ex(rep, "guest_contexts", &v);
		in->guest_ctx = json_object_get_int64(v);
		json_object_object_get_ex(rep, "host_contexts", &v);
		/* Our own connection holds none. */
		in->host_ctx = json_object_get_int64(v);
		json_object_put(rep);
	}
	ops_client_close(&c);
}

static void fmt_uptime(char *buf, size_t len, int64_t started)
{
	int64_t s = (int64_t)time(NULL) - started;

	if (s < 0)
		s = 0;
	if (s >= 86400)
		snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400),
			 (long long)(s % 86400 / 3600));
	else
		snprintf(buf, len, "%02lld:%02lld:%02lld",
			 (long long)(s / 3600), (long long)(s % 3600 / 60),
			 (long long)(s % 60));
}

static struct json_object *vm_json(const struct vmm_reg_entry *e,
				   const struct vm_info *in)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uuid", json_object_new_string(e->uuid));
	json_object_object_add(o, "name", json_object_new_string(e->name));
	json_object_object_add(o, "pid", json_object_new_int(e->pid));
	json_object_object_add(o, "vcpus",
			       json_object_new_int((int)e->nr_vcpus));
	json_object_object_add(
		o, "uptime_s",
		json_object_new_int64((int64_t)time(NULL) - e->started));
	json_object_object_add(o, "pmu", json_object_new_string(e->pmu));
	json_object_object_add(o, "image", json_object_new_string(e->image));
	json_object_object_add(o, "guest_contexts",
			       in->ok ? json_object_new_int64(in->guest_ctx)
				      : NULL);
	json_object_object_add(o, "host_contexts",
			       in->ok ? json_object_new_int64(in->host_ctx)
				      : NULL);
	return o;
}

static void print_vms(const struct vmm_reg_entry *e, unsigned int n,
		      struct json_object *jvms)
{
	struct vm_info in;
	char up[32], g[16], h[16];
	unsigned int i;

	if (!jvms)
		printf("%-36s %-16s %7s %5s %9s %-9s %5s %5s\n", "UUID", "NAME",
		       "PID", "VCPUS", "UPTIME", "PMU", "GCTX", "HCTX");
	for (i = 0; i < n; i++) {
		query(&e[i], &in);
		if (jvms) {
			json_object_array_add(jvms, vm_json(&e[i], &in));
			continue;
		}
		fmt_uptime(up, sizeof(up), e[i].started);
		snprintf(g, sizeof(g), in.ok ? "%lld" : "-",
			 (long long)in.guest_ctx);
		snprintf(h, sizeof(h), in.ok ? "%lld" : "-",
			 (long long)in.host_ctx);
		printf("%-36s %-16s %7d %5u %9s %-9s %5s %5s\n", e[i].uuid,
		       e[i].name, (int)e[i].pid, e[i].nr_vcpus, up, e[i].pmu,
		       in.ok ? g : "?", in.ok ? h : "?");
	}
	if (!jvms && !n)
		printf("(no vpmu VM running)\n");
}

#ifdef VPMU_HAVE_LIBVIRT
static void quiet(void *opaque, virErrorPtr err)
{
	(void)opaque;
	(void)err;
}

static const char *state_name(unsigned char st)
{
	static const char *const names[] = {"nostate", "running",  "blocked",
					    "paused",  "shutdown", "shutoff",
					    "crashed", "suspended"};

	return st < ARRAY_SIZE(names) ? names[st] : "unknown";
}

static void print_domain(virDomainPtr d, struct json_object *jdoms)
{
	char uuid[VIR_UUID_STRING_BUFLEN] = "";
	virDomainInfo info                = {0};
	const char *name                  = virDomainGetName(d);
	struct json_object *o;

	virDomainGetUUIDString(d, uuid);
	virDomainGetInfo(d, &info);
	if (!jdoms) {
		printf("%-36s %-16s %-9s %5u %8lluM %12.3fs\n", uuid,
		       name ? name : "?", state_name(info.state),
		       info.nrVirtCpu, (unsigned long long)(info.memory >> 10),
		       (double)info.cpuTime / 1e9);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "uuid", json_object_new_string(uuid));
	json_object_object_add(o, "name",
			       json_object_new_string(name ? name : ""));
	json_object_object_add(o, "state",
			       json_object_new_string(state_name(info.state)));
	json_object_object_add(o, "vcpus", json_object_new_int(info.nrVirtCpu));
	json_object_object_add(o, "memory_kib",
			       json_object_new_uint64(info.memory));
	json_object_object_add(o, "cpu_time_ns",
			       json_object_new_uint64(info.cpuTime));
	json_object_array_add(jdoms, o);
}

static void list_libvirt(const char *uri, struct json_object *top)
{
	struct json_object *jdoms = top ? json_object_new_array() : NULL;
	virDomainPtr *doms        = NULL;
	virConnectPtr conn;
	virErrorPtr e;
	int i, n;

	virSetErrorFunc(NULL, quiet);
	conn = virConnectOpenReadOnly(uri);
	if (!conn) {
		e = virGetLastError();
		if (top) {
			json_object_object_add(
				top, "libvirt_error",
				json_object_new_string(
					e && e->message ? e->message
							: "unreachable"));
			json_object_put(jdoms);
		} else {
			printf("\nnote: libvirt at %s is not reachable (%s): "
			       "no "
			       "libvirt domains listed\n",
			       uri,
			       e && e->message ? e->message : "unknown error");
		}
		return;
	}
	n = virConnectListAllDomains(conn, &doms, 0);
	if (!top)
		printf("\nlibvirt domains (%s):\n%-36s %-16s %-9s %5s %9s "
		       "%13s\n",
		       uri, "UUID", "NAME", "STATE", "VCPUS", "MEMORY",
		       "CPU-TIME");
	for (i = 0; i < n; i++) {
		print_domain(doms[i], jdoms);
		virDomainFree(doms[i]);
	}
	if (!top && n <= 0)
		printf("(none)\n");
	free(doms);
	virConnectClose(conn);
	if (top)
		json_object_object_add(top, "libvirt", jdoms);
}
#else
static void list_libvirt(const char *uri, struct json_object *top)
{
	if (top)
		json_object_object_add(top, "libvirt_error",
				       json_object_new_string("built without "
							      "libvirt"));
	else
		printf("\nnote: vpmu was built without libvirt: domains at %s "
		       "not listed\n",
		       uri);
}
#endif

int ops_cmd_list(int argc, char **argv)
{
	struct list_opts o      = {.uri = getenv("LIBVIRT_DEFAULT_URI")};
	struct json_object *top = NULL, *jvms = NULL;
	struct vmm_reg_entry *e;
	char dir[PATH_MAX] = "";
	struct cli_rest rest;
	unsigned int n;
	int ret;

	ret = cli_parse(&list_cmd, &o, argc, argv, &rest);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	cli_rest_free(&rest);
	if (!o.uri || !o.uri[0])
		o.uri = "qemu:///system";
	ret = ops_client_discover_all(dir, sizeof(dir), &e, &n, stderr, true);
	if (ret == -EACCES || ret == -EPERM) {
		fprintf(stderr,
			"vpmu list: cannot read the runtime directory %s: %s "
			"(uid %u may not read it or its entries; the VMs of "
			"another user are listed by that user or by root)\n",
			dir, strerror(-ret), (unsigned int)geteuid());
		return 1;
	}
	if (ret) {
		fprintf(stderr, "vpmu list: %s%s%s%s\n",
			dir[0] ? "runtime directory " : "", dir,
			dir[0] ? ": " : "", vmm_runtime_strerror(ret));
		return 1;
	}
	if (o.json) {
		top  = json_object_new_object();
		jvms = json_object_new_array();
		json_object_object_add(top, "runtime_dir",
				       json_object_new_string(dir));
	}
	print_vms(e, n, jvms);
	free(e);
	if (top)
		json_object_object_add(top, "vms", jvms);
	if (!o.no_libvirt)
		list_libvirt(o.uri, top);
	if (top) {
		puts(json_object_to_json_string_ext(top,
						    JSON_C_TO_STRING_PRETTY));
		json_object_put(top);
	}
	return fflush(stdout) ? 1 : 0;
}
