// SPDX-License-Identifier: MIT
/*
 * cmd_snapshot.c: `vpmu snapshot VM FILE [--stop]`. Asks the VM's
 * VMM over its control socket to pause the vCPUs, write the VM and its
 * whole logical PMU to FILE (docs/snapshot-format.md), then resume or stop
 * it; prints what was written. `vpmu run --restore FILE` continues it.
 */
#include "ctl_client.h"
#include "ops_cmd.h"

#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writing a large guest may take a while: wait up to 10 minutes. */
#define SNAPSHOT_TIMEOUT_MS (10 * 60 * 1000)

struct snapshot_opts {
	bool stop;
};

static const struct cli_opt snapshot_opts[] = {
	CLI_FLAG(0, "stop", struct snapshot_opts, stop,
		 "stop the VM once the file is written (exit\n"
		 "status 252) instead of resuming it"),
	{0},
};

static const struct cli_cmd snapshot_cmd = {
	.name     = "snapshot",
	.args     = "VM FILE",
	.summary  = "save a running VM and its whole virtual PMU to FILE",
	.opts     = snapshot_opts,
	.operands = 2,
	.help = "  VM is a name, uuid, uuid prefix or pid (see 'vpmu list'). "
		"Every vCPU\n"
		"  is paused while guest memory (zero pages skipped), vCPU "
		"and device\n"
		"  state and every guest context of the vPMU (counters, sets, "
		"messages,\n"
		"  sampling buffers) are written; host contexts of operators "
		"are not.\n"
		"  Continue it with 'vpmu run --restore FILE'. Freestanding "
		"guests only.\n",
};

/* FILE made absolute: the VMM runs elsewhere. Its directory must exist. */
static int absolute(const char *file, char *out, size_t len)
{
	char dirbuf[PATH_MAX], basebuf[PATH_MAX], real[PATH_MAX];

	snprintf(dirbuf, sizeof(dirbuf), "%s", file);
	snprintf(basebuf, sizeof(basebuf), "%s", file);
	if (!realpath(dirname(dirbuf), real))
		return -errno;
	if (snprintf(out, len, "%s/%s", real, basename(basebuf)) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static int find_vm(const char *sel, struct vmm_reg_entry *out)
{
	struct vmm_reg_entry *all = NULL;
	char dir[PATH_MAX]        = "";
	unsigned int i, n = 0, hits = 0;
	int ret;

	ret = ops_client_discover_all(dir, sizeof(dir), &all, &n, stderr, true);
	if (ret) {
		fprintf(stderr, "vpmu snapshot: runtime directory %s: %s\n",
			dir, vmm_runtime_strerror(ret));
		return ret;
	}
	for (i = 0; i < n; i++) {
		if (ops_client_match(&all[i], sel) && hits++ == 0)
			*out = all[i];
	}
	free(all);
	if (hits != 1)
		fprintf(stderr, "vpmu snapshot: %s VM matches '%s'\n",
			hits ? "more than one" : "no running", sel);
	return hits == 1 ? 0 : -ENOENT;
}

static uint64_t get_u64(struct json_object *rep, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(rep, key, &v)
		       ? (uint64_t)json_object_get_int64(v)
		       : 0;
}

int ops_cmd_snapshot(int argc, char **argv)
{
	struct snapshot_opts o = {0};
	struct json_object *req, *rep;
	struct vmm_reg_entry e;
	struct ops_client c;
	struct cli_rest rest;
	char path[PATH_MAX];
	int ret;

	ret = cli_parse(&snapshot_cmd, &o, argc, argv, &rest);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	ret = absolute(rest.argv[1], path, sizeof(path));
	if (ret) {
		fprintf(stderr, "vpmu snapshot: %s: %s\n", rest.argv[1],
			strerror(-ret));
		goto out;
	}
	ret = find_vm(rest.argv[0], &e);
	if (ret)
		goto out;
	ret = ops_client_connect(&c, e.socket);
	if (ret) {
		fprintf(stderr, "vpmu snapshot: %s\n", c.err);
		goto out;
	}
	c.timeout_ms = SNAPSHOT_TIMEOUT_MS;
	req          = ops_client_req("snapshot");
	json_object_object_add(req, "path", json_object_new_string(path));
	json_object_object_add(req, "stop", json_object_new_int(o.stop));
	ret = ops_client_call(&c, req, &rep);
	if (ret) {
		fprintf(stderr, "vpmu snapshot: %s: %s\n", e.name, c.err);
	} else {
		printf("%s: %s: %llu bytes (%llu memory pages), paused "
		       "%.1f ms, written in %.1f ms\n",
		       e.name, path,
		       (unsigned long long)get_u64(rep, "file_bytes"),
		       (unsigned long long)get_u64(rep, "mem_pages"),
		       get_u64(rep, "pause_ns") / 1e6,
		       get_u64(rep, "write_ns") / 1e6);
		if (get_u64(rep, "dropped_host_contexts"))
			printf("%s: note: %llu operator (host) contexts are "
			       "not in the snapshot\n",
			       e.name,
			       (unsigned long long)get_u64(
				       rep, "dropped_host_contexts"));
		if (o.stop)
			printf("%s: stopped\n", e.name);
		json_object_put(rep);
	}
	ops_client_close(&c);
out:
	cli_rest_free(&rest);
	return ret ? 1 : 0;
}
