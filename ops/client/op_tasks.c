// SPDX-License-Identifier: MIT
/*
 * op_tasks.c: the guest's process records of one VM (`guest_tasks`), for
 * profiles that name guest processes. Each reply is checked before use:
 * a record without its fields, or with an unknown op, is skipped.
 */
#include "ctl_client.h"

#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include <pvpmu/abi.h>

static uint64_t u64_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_uint64(v)
						   : 0;
}

static const char *str_of(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) &&
			       json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static int one(struct json_object *o, unsigned int vm, ops_task_fn_t fn,
	       void *opaque, uint64_t *gen)
{
	struct rec_task t;

	/* Past this one even if it is skipped: the next fetch goes on. */
	if (u64_of(o, "gen") > *gen)
		*gen = u64_of(o, "gen");
	if (rec_task_fields(o, vmm_ctl_task_op(str_of(o, "op")), &t))
		return 0; /* skipped: not one this client knows */
	t.vm = vm;
	return fn(opaque, &t);
}

int ops_guest_tasks(struct ops_session *s, unsigned int vm, uint64_t *since,
		    ops_task_fn_t fn, void *opaque, struct ops_task_stats *st)
{
	struct ops_vm *v = &s->vms[vm];
	struct json_object *req, *rep, *arr, *more;
	size_t i, n;
	bool again;
	int ret;

	do {
		if (v->gone)
			return -ENOTCONN;
		req = ops_client_req("guest_tasks");
		json_object_object_add(req, "since",
				       json_object_new_uint64(*since));
		ret = ops_client_call(&v->cl, req, &rep);
		if (ret == -ECONNRESET || ret == -EPIPE || ret == -ETIMEDOUT ||
		    ret == -ENOTCONN) {
			ops_vm_gone(s, vm, v->cl.err);
			return ret;
		}
		if (ret)
			return -ENOSYS; /* an older VMM: no such command */
		st->gen     = u64_of(rep, "gen");
		st->taken   = u64_of(rep, "taken");
		st->refused = u64_of(rep, "refused");
		st->dropped = u64_of(rep, "dropped");
		again       = json_object_object_get_ex(rep, "more", &more) &&
			json_object_get_boolean(more);
		n = 0;
		if (json_object_object_get_ex(rep, "tasks", &arr) &&
		    json_object_is_type(arr, json_type_array)) {
			n = json_object_array_length(arr);
			for (i = 0; i < n && !ret; i++)
				ret = one(json_object_array_get_idx(arr, i), vm,
					  fn, opaque, since);
		}
		json_object_put(rep);
		/* "more" with nothing in the reply would loop for ever. */
	} while (!ret && again && n);
	return ret;
}
