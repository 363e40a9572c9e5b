// SPDX-License-Identifier: MIT
/*
 * ctl_cmd_table.c: the server's command table: one row per command of the
 * protocol, indexed by its id (enum vmm_ctl_cmd_id), holding the command's
 * schema (vmm_ctl_cmds[id], which the request was checked against) and its
 * handler. The request's command is found by name once, in the schema
 * table (vmm_ctl_parse_request); dispatch is an index.
 */
#include "ctl_priv.h"
#include "vpmu_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ROW(id_, fn_, takes_ctx_)                                              \
	[VMM_CTL_CMD_##id_] = {.cmd       = &vmm_ctl_cmds[VMM_CTL_CMD_##id_],  \
			       .fn        = (fn_),                             \
			       .takes_ctx = (takes_ctx_)}

static const struct vmm_ctl_handler handlers[] = {
	ROW(HELLO, vmm_ctl_do_hello, false),
	ROW(INFO, vmm_ctl_do_info, false),
	ROW(RESOLVE, vmm_ctl_do_resolve, false),
	ROW(CTX_CREATE, vmm_ctl_do_create, false),
	ROW(DESTROY, vmm_ctl_do_destroy, true),
	ROW(WRITE_PMCS, vmm_ctl_do_write_pmcs, true),
	ROW(WRITE_PMDS, vmm_ctl_do_write_pmds, true),
	ROW(CREATE_EVTSETS, vmm_ctl_do_create_evtsets, true),
	ROW(LOAD, vmm_ctl_do_load, true),
	ROW(UNLOAD, vmm_ctl_do_unload, true),
	ROW(START, vmm_ctl_do_start, true),
	ROW(STOP, vmm_ctl_do_stop, true),
	ROW(READ_PMDS, vmm_ctl_do_read_pmds, true),
	ROW(GETINFO_EVTSETS, vmm_ctl_do_getinfo_evtsets, true),
	ROW(SMPL_DRAIN, vmm_ctl_do_smpl_drain, true),
	ROW(SESSION_OPEN, vmm_ctl_do_session_open, false),
	ROW(SESSION_READ, vmm_ctl_do_session_read, false),
	ROW(SESSION_CLOSE, vmm_ctl_do_session_close, false),
	ROW(SNAPSHOT, vmm_ctl_do_snapshot, false),
	ROW(GUEST_TASKS, vmm_ctl_do_guest_tasks, false),
};

/*
 * A command added to the protocol without a row here fails to build; a
 * row left empty in the middle is caught by the unit test
 * (test_ctl_cmd_table.c), which checks every row's handler and schema.
 */
_Static_assert(ARRAY_SIZE(handlers) == VMM_CTL_NR_CMDS,
	       "every protocol command needs one handler row");

const struct vmm_ctl_handler *vmm_ctl_handler_of(unsigned int id)
{
	return id < VMM_CTL_NR_CMDS ? &handlers[id] : NULL;
}

/* The request's "ctx", which the schema made present and in range. */
static int resolve_ctx(struct vmm_ctl_call *x)
{
	int h = (int)vmm_ctl_get_int(x->req, "ctx", -1);

	x->hc = vmm_ctl_hctx_find(x->c, h);
	if (x->hc && h >= 0)
		return 0;
	x->hc = NULL;
	snprintf(x->err, sizeof(x->err),
		 "no host context %d on this connection", h);
	return -EBADF;
}

struct json_object *vmm_ctl_handle(struct vmm_control *ctl,
				   struct vmm_ctl_client *c,
				   const struct vmm_ctl_cmd *cmd,
				   struct json_object *req, int64_t id)
{
	const struct vmm_ctl_handler *h = vmm_ctl_handler_of(cmd->id);
	struct vmm_ctl_call x           = {.ctl = ctl, .c = c, .req = req};
	int ret;

	if (!h || !h->fn)
		return vmm_ctl_reply_err(id, ENOSYS, "command not implemented");
	x.rep = vmm_ctl_reply_ok(id);
	ret   = h->takes_ctx ? resolve_ctx(&x) : 0;
	if (!ret)
		ret = h->fn(&x);
	if (!ret)
		return x.rep;
	json_object_put(x.rep);
	if (!x.err[0])
		snprintf(x.err, sizeof(x.err), "%s: %s", cmd->name,
			 strerror(-ret));
	return vmm_ctl_reply_err(id, -ret, x.err);
}
