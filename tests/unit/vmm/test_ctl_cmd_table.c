// SPDX-License-Identifier: MIT
/*
 * test_ctl_cmd_table.c: the control server's command table against the
 * protocol's schema table: every command has exactly one handler row,
 * which points at that command's schema; unknown commands are refused;
 * the schema's limits are the VMM_CTL_* constants the server's arrays use;
 * context and session commands refuse handles the connection does not
 * own before touching any VM; session_open's vCPU list is checked.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_priv.h"

#include "vpmu_common.h"

Test(vmm_ctl_table, every_command_has_one_handler_and_its_schema)
{
	const struct vmm_ctl_handler *h;
	unsigned int id, j;

	for (id = 0; id < VMM_CTL_NR_CMDS; id++) {
		h = vmm_ctl_handler_of(id);
		cr_assert(not(eq(ptr, (void *)h, NULL)), "command %u", id);
		cr_assert(not(eq(ptr, (void *)vmm_ctl_cmds[id].name, NULL)),
			  "command %u has no schema row", id);
		cr_expect(eq(ptr, (void *)h->cmd, (void *)&vmm_ctl_cmds[id]),
			  "%s: handler row names another schema",
			  vmm_ctl_cmds[id].name);
		cr_expect(eq(int, (int)vmm_ctl_cmds[id].id, (int)id), "%s",
			  vmm_ctl_cmds[id].name);
		cr_expect(not(eq(ptr, (void *)vmm_ctl_cmds[id].fields, NULL)),
			  "%s", vmm_ctl_cmds[id].name);
		cr_expect(h->fn != NULL, "%s has no handler",
			  vmm_ctl_cmds[id].name);
		/* One handler per command: no two rows share a function. */
		for (j = 0; j < id; j++)
			cr_expect(vmm_ctl_handler_of(j)->fn != h->fn,
				  "%s and %s share a handler",
				  vmm_ctl_cmds[j].name, vmm_ctl_cmds[id].name);
	}
	cr_expect(eq(ptr, (void *)vmm_ctl_handler_of(VMM_CTL_NR_CMDS), NULL));
}

Test(vmm_ctl_table, names_find_their_own_row)
{
	unsigned int id, j;

	for (id = 0; id < VMM_CTL_NR_CMDS; id++) {
		cr_expect(eq(ptr,
			     (void *)vmm_ctl_cmd_find(vmm_ctl_cmds[id].name),
			     (void *)&vmm_ctl_cmds[id]),
			  "%s", vmm_ctl_cmds[id].name);
		for (j = 0; j < id; j++)
			cr_expect(strcmp(vmm_ctl_cmds[j].name,
					 vmm_ctl_cmds[id].name) != 0,
				  "%s twice", vmm_ctl_cmds[id].name);
	}
}

Test(vmm_ctl_table, unknown_command_refused)
{
	const char *text = "{\"v\":1,\"id\":3,\"cmd\":\"session_reopen\"}";
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req;
	char err[256] = "";
	int64_t id;

	cr_expect(eq(ptr, (void *)vmm_ctl_cmd_find("session_reopen"), NULL));
	cr_expect(eq(ptr, (void *)vmm_ctl_cmd_find(""), NULL));
	cr_assert(eq(int,
		     vmm_ctl_parse_request(text, strlen(text), &req, &cmd, &id,
					   err, sizeof(err)),
		     -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "unknown command 'session_reopen'"),
			 NULL)),
		  "%s", err);
	cr_expect(eq(i64, id, 3), "the error reply carries the request id");
}

static const struct vmm_ctl_field *field(const struct vmm_ctl_field *t,
					 const char *name)
{
	for (; t && t->name; t++) {
		if (!strcmp(t->name, name))
			return t;
	}
	return NULL;
}

/* A field of command (cmd), or of the elements of its array (arr). */
static const struct vmm_ctl_field *
schema_field(const char *cmd, const char *arr, const char *name)
{
	const struct vmm_ctl_cmd *c = vmm_ctl_cmd_find(cmd);
	const struct vmm_ctl_field *f;

	cr_assert(not(eq(ptr, (void *)c, NULL)), "%s", cmd);
	if (!arr)
		return field(c->fields, name);
	f = field(c->fields, arr);
	cr_assert(not(eq(ptr, (void *)f, NULL)), "%s.%s", cmd, arr);
	return field(f->elem, name);
}

struct limit_case {
	int line;
	const char *cmd, *arr, *name;
	int64_t max;
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

/* Every limit in the schema is the constant the server's arrays use. */
static const struct limit_case limits[] = {
	ROW(.cmd = "write_pmcs", .name = "pmcs", .max = VMM_CTL_REGS_MAX),
	ROW(.cmd = "write_pmds", .name = "pmds", .max = VMM_CTL_REGS_MAX),
	ROW(.cmd = "read_pmds", .name = "pmds", .max = VMM_CTL_REGS_MAX),
	ROW(.cmd = "session_open", .name = "pmcs", .max = VMM_CTL_REGS_MAX),
	ROW(.cmd = "session_open", .name = "pmds", .max = VMM_CTL_REGS_MAX),
	ROW(.cmd = "write_pmcs", .arr = "pmcs", .name = "num",
	    .max = VMM_CTL_REG_NUM_MAX),
	ROW(.cmd = "read_pmds", .arr = "pmds", .name = "num",
	    .max = VMM_CTL_REG_NUM_MAX),
	ROW(.cmd = "create_evtsets", .name = "sets", .max = VMM_CTL_SETS_MAX),
	ROW(.cmd = "getinfo_evtsets", .name = "sets", .max = VMM_CTL_SETS_MAX),
	ROW(.cmd = "session_open", .name = "sets", .max = VMM_CTL_SETS_MAX),
	ROW(.cmd = "create_evtsets", .arr = "sets", .name = "id",
	    .max = VMM_CTL_SET_ID_MAX),
	ROW(.cmd = "session_open", .name = "vcpus",
	    .max = VMM_CTL_SESSION_VCPUS),
	ROW(.cmd = "session_read", .name = "session",
	    .max = VMM_CTL_SESSIONS_MAX - 1),
	ROW(.cmd = "ctx_create", .name = "vcpu", .max = VMM_CTL_VCPU_ID_MAX),
	ROW(.cmd = "load", .name = "vcpu", .max = VMM_CTL_VCPU_ID_MAX),
	ROW(.cmd = "resolve", .name = "name", .max = VMM_CTL_NAME_MAX),
	ROW(.cmd = "smpl_drain", .name = "max", .max = VMM_CTL_DRAIN_MAX),
};

Test(vmm_ctl_table, schema_limits_are_the_shared_constants)
{
	const struct vmm_ctl_field *f;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(limits); i++) {
		f = schema_field(limits[i].cmd, limits[i].arr, limits[i].name);
		cr_assert(not(eq(ptr, (void *)f, NULL)), "row at line %d",
			  limits[i].line);
		cr_expect(eq(i64, f->max, limits[i].max), "row at line %d",
			  limits[i].line);
	}
	/* The server's PMC/PMD arrays are indexed by register number. */
	cr_expect(lt(int, VMM_CTL_REG_NUM_MAX, PFM_MAX_PMCS));
	cr_expect(le(int, VMM_CTL_REGS_MAX, PFM_MAX_PMDS));
	cr_expect(le(int, VMM_CTL_SESSION_VCPUS, VMM_CTL_CTX_MAX));
}

/* A write_pmcs request with (n) PMCs. */
static char *pmcs_request(unsigned int n)
{
	size_t cap = 64 + (size_t)n * 32, len;
	char *t    = malloc(cap);
	unsigned int i;

	cr_assert(not(eq(ptr, t, NULL)));
	len = (size_t)snprintf(t, cap,
			       "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\","
			       "\"ctx\":1,\"pmcs\":[");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len,
					"%s{\"num\":%u,\"value\":1}",
					i ? "," : "", i % 8);
	snprintf(t + len, cap - len, "]}");
	return t;
}

static int parse(const char *text, char *err, size_t errlen)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req;
	int64_t id;
	int ret;

	ret = vmm_ctl_parse_request(text, strlen(text), &req, &cmd, &id, err,
				    errlen);
	if (!ret)
		json_object_put(req);
	return ret;
}

Test(vmm_ctl_table, request_arrays_end_at_the_shared_limit)
{
	char err[256] = "";
	char *t;

	t = pmcs_request(VMM_CTL_REGS_MAX);
	cr_expect(eq(int, parse(t, err, sizeof(err)), 0), "%s", err);
	free(t);
	t = pmcs_request(VMM_CTL_REGS_MAX + 1);
	cr_expect(eq(int, parse(t, err, sizeof(err)), -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "elements"), NULL)), "%s", err);
	free(t);
}

/* A control server with one client and no VM: enough for handle checks. */
static struct vmm_control ctl;

static void no_vm(void)
{
	unsigned int i;

	memset(&ctl, 0, sizeof(ctl));
	ctl.clients[0].fd = 3;
	for (i = 0; i < VMM_CTL_CTX_MAX; i++)
		ctl.clients[0].ctx[i].handle = -1;
}

/* Run (text) through the table; the reply's errno (0 if ok). */
static int handle(const char *text, char *msg, size_t len)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req, *rep, *v;
	char err[256];
	int64_t id;
	int e = 0;

	cr_assert(eq(int,
		     vmm_ctl_parse_request(text, strlen(text), &req, &cmd, &id,
					   err, sizeof(err)),
		     0),
		  "%s: %s", text, err);
	rep = vmm_ctl_handle(&ctl, &ctl.clients[0], cmd, req, id);
	json_object_put(req);
	if (json_object_object_get_ex(rep, "errno", &v))
		e = json_object_get_int(v);
	if (json_object_object_get_ex(rep, "error", &v))
		snprintf(msg, len, "%s", json_object_get_string(v));
	json_object_put(rep);
	return e;
}

Test(vmm_ctl_table, context_commands_refuse_foreign_handles, .init = no_vm)
{
	static const char *const reqs[] = {
		"{\"v\":1,\"id\":1,\"cmd\":\"destroy\",\"ctx\":5}",
		"{\"v\":1,\"id\":1,\"cmd\":\"stop\",\"ctx\":5}",
		"{\"v\":1,\"id\":1,\"cmd\":\"read_pmds\",\"ctx\":5,"
		"\"pmds\":[{\"num\":0}]}",
		"{\"v\":1,\"id\":1,\"cmd\":\"smpl_drain\",\"ctx\":0}",
	};
	char msg[256] = "";
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(reqs); i++) {
		cr_expect(eq(int, handle(reqs[i], msg, sizeof(msg)), EBADF),
			  "%s", reqs[i]);
		cr_expect(not(eq(ptr, strstr(msg, "no host context"), NULL)),
			  "%s", msg);
	}
}

Test(vmm_ctl_table, context_flag_matches_schema_ctx_field)
{
	const struct vmm_ctl_handler *h;
	unsigned int id;

	for (id = 0; id < VMM_CTL_NR_CMDS; id++) {
		h = vmm_ctl_handler_of(id);
		cr_expect(eq(int, h->takes_ctx,
			     field(vmm_ctl_cmds[id].fields, "ctx") != NULL),
			  "%s", vmm_ctl_cmds[id].name);
	}
}

Test(vmm_ctl_session, read_and_close_refuse_unknown_session, .init = no_vm)
{
	char msg[256] = "";

	cr_expect(eq(int,
		     handle("{\"v\":1,\"id\":1,\"cmd\":\"session_read\","
			    "\"session\":0}",
			    msg, sizeof(msg)),
		     EBADF));
	cr_expect(not(eq(ptr, strstr(msg, "no session 0"), NULL)), "%s", msg);
	cr_expect(eq(int,
		     handle("{\"v\":1,\"id\":1,\"cmd\":\"session_close\","
			    "\"session\":3}",
			    msg, sizeof(msg)),
		     EBADF));
}

struct vcpus_case {
	int line;
	const char *json; /* the request's fields */
	unsigned int nr_vcpus;
	int want;
	unsigned int n, first, last;
	const char *msg;
};

static const struct vcpus_case vcpus_cases[] = {
	ROW(.json = "{}", .nr_vcpus = 8, .n = 8, .first = 0, .last = 7),
	ROW(.json = "{}", .nr_vcpus = 1, .n = 1, .first = 0, .last = 0),
	ROW(.json = "{}", .nr_vcpus = VMM_CTL_SESSION_VCPUS + 1, .want = -E2BIG,
	    .msg = "name them"),
	ROW(.json = "{\"vcpus\":[3,1]}", .nr_vcpus = 8, .n = 2, .first = 3,
	    .last = 1),
	ROW(.json = "{\"vcpus\":[8]}", .nr_vcpus = 8, .want = -EINVAL,
	    .msg = "no vCPU 8"),
	ROW(.json = "{\"vcpus\":[2,5,2]}", .nr_vcpus = 8, .want = -EINVAL,
	    .msg = "vcpus[2]: vCPU 2 named twice"),
};

Test(vmm_ctl_session, vcpu_list_checked_against_the_vm)
{
	unsigned int vcpus[VMM_CTL_SESSION_VCPUS], n, i;
	struct json_object *req;
	char err[256];
	int ret;

	for (i = 0; i < ARRAY_SIZE(vcpus_cases); i++) {
		const struct vcpus_case *tc = &vcpus_cases[i];

		req    = json_tokener_parse(tc->json);
		n      = 0;
		err[0] = '\0';
		ret = vmm_ctl_session_vcpus(req, tc->nr_vcpus, vcpus, &n, err,
					    sizeof(err));
		json_object_put(req);
		cr_expect(eq(int, ret, tc->want), "row at line %d: %s",
			  tc->line, err);
		if (ret) {
			cr_expect(not(eq(ptr, strstr(err, tc->msg), NULL)),
				  "row at line %d: '%s'", tc->line, err);
			continue;
		}
		cr_expect(eq(u32, n, tc->n), "row at line %d", tc->line);
		cr_expect(eq(u32, vcpus[0], tc->first), "row at line %d",
			  tc->line);
		cr_expect(eq(u32, vcpus[n - 1], tc->last), "row at line %d",
			  tc->line);
	}
}
