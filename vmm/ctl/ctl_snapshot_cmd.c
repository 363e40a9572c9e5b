// SPDX-License-Identifier: MIT
/*
 * ctl_snapshot_cmd.c: the `snapshot` command: {"path": FILE,
 * "stop": 0|1}. The main thread pauses the vCPUs and writes the file
 * (vmm/core/vmm_snapshot.h); this thread waits for it and answers with
 * what was written: file_bytes, mem_pages, pause_ns, write_ns,
 * dropped_host_contexts (operator contexts are not saved) and stopped.
 * The pause is counted for smpl_drain's snap_pauses/snap_pause_ns.
 */
#include "ctl_priv.h"
#include "vmm_snapshot.h"

#include <json-c/json.h>

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

int vmm_ctl_do_snapshot(struct vmm_ctl_call *x)
{
	struct vmm_snapshot_result res = {0};
	struct json_object *jp;
	const char *path;
	bool stop = vmm_ctl_get_int(x->req, "stop", 0) != 0;
	int ret;

	json_object_object_get_ex(x->req, "path", &jp);
	path = json_object_get_string(jp);
	ret  = vmm_snapshot_request(x->ctl->vm, path, stop, &res, x->err,
				    sizeof(x->err));
	if (ret)
		return ret;
	x->ctl->snap_pauses++;
	x->ctl->snap_pause_ns += res.pause_ns;
	add_u64(x->rep, "file_bytes", res.file_bytes);
	add_u64(x->rep, "mem_pages", res.mem_pages);
	add_u64(x->rep, "pause_ns", res.pause_ns);
	add_u64(x->rep, "write_ns", res.write_ns);
	add_u64(x->rep, "dropped_host_contexts", res.dropped);
	json_object_object_add(x->rep, "stopped",
			       json_object_new_boolean(res.stopped));
	return 0;
}
