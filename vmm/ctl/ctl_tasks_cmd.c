// SPDX-License-Identifier: MIT
/*
 * ctl_tasks_cmd.c: the `guest_tasks` command: {"since": GEN} answers the
 * guest's process records newer than GEN (vmm/pv/pv_tasks.c), oldest
 * first, at most VMM_CTL_TASKS_MAX per reply ("more" says whether newer
 * ones wait), with the counters of the stream:
 *   {"gen": newest, "taken": N, "refused": N, "dropped": N, "held": N,
 *    "more": bool, "tasks": [{"gen", "op": "comm"|"mmap"|"exit", "pid",
 *    "tid", "exec", "comm", "start", "len", "pgoff", "path"}, ...]}
 * Names and paths are the guest's bytes, made valid UTF-8 for the reply.
 */
#include "ctl_priv.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "vmm_pv.h"

struct tasks_reply {
	struct json_object *arr;
	uint64_t last_gen;
	bool oom;
};

static void add_text(struct tasks_reply *t, struct json_object *o,
		     const char *key, const char *s, size_t max)
{
	size_t n    = strnlen(s, max), len;
	char *clean = vmm_ctl_utf8_clean(s, n, &len);

	if (!clean) {
		t->oom = true;
		return;
	}
	json_object_object_add(o, key,
			       json_object_new_string_len(clean, (int)len));
	free(clean);
}

static void add_rec(void *opaque, const struct vmm_pv_task_rec *r)
{
	struct tasks_reply *t = opaque;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "gen", json_object_new_uint64(r->gen));
	json_object_object_add(
		o, "op", json_object_new_string(vmm_ctl_task_op_name(r->op)));
	json_object_object_add(o, "pid", json_object_new_int(r->pid));
	if (r->op == PVPMU_TASK_COMM) {
		json_object_object_add(o, "tid", json_object_new_int(r->tid));
		json_object_object_add(
			o, "exec",
			json_object_new_boolean(r->flags & PVPMU_TASK_EXEC));
		add_text(t, o, "comm", r->comm, sizeof(r->comm));
	} else if (r->op == PVPMU_TASK_MMAP) {
		json_object_object_add(o, "start",
				       json_object_new_uint64(r->start));
		json_object_object_add(o, "len",
				       json_object_new_uint64(r->len));
		json_object_object_add(o, "pgoff",
				       json_object_new_uint64(r->pgoff));
		add_text(t, o, "path", r->path, PVPMU_TASK_PATH_MAX);
	}
	json_object_array_add(t->arr, o);
	t->last_gen = r->gen;
}

int vmm_ctl_do_guest_tasks(struct vmm_ctl_call *x)
{
	uint64_t since       = vmm_ctl_get_u64(x->req, "since", 0);
	struct tasks_reply t = {.arr = json_object_new_array()};
	struct vmm_pv_task_stats st;
	unsigned int n;

	n = vmm_pv_tasks_since(x->ctl->vm, since, VMM_CTL_TASKS_MAX, add_rec,
			       &t, &st);
	if (t.oom) {
		json_object_put(t.arr);
		snprintf(x->err, sizeof(x->err), "no memory for guest tasks");
		return -ENOMEM;
	}
	json_object_object_add(x->rep, "tasks", t.arr);
	json_object_object_add(x->rep, "gen", json_object_new_uint64(st.gen));
	json_object_object_add(x->rep, "taken",
			       json_object_new_uint64(st.taken));
	json_object_object_add(x->rep, "refused",
			       json_object_new_uint64(st.refused));
	json_object_object_add(x->rep, "dropped",
			       json_object_new_uint64(st.dropped));
	json_object_object_add(x->rep, "held", json_object_new_int(st.held));
	json_object_object_add(x->rep, "more",
			       json_object_new_boolean(n == VMM_CTL_TASKS_MAX &&
						       t.last_gen < st.gen));
	return 0;
}
