// SPDX-License-Identifier: MIT
/*
 * ctl_schema.c: the command table of the control socket protocol
 * (ctl_proto.h): for every command, by id, the fields it takes, their
 * types, whether they are required and their ranges. Every limit is a
 * VMM_CTL_* constant of ctl_proto.h, which the server's arrays use too.
 * vmm_ctl_parse_request() checks every request against it before any
 * command runs.
 */
#include "ctl_proto.h"

#include <string.h>

#include <pvpmu/abi.h>

#define F_INT(n, req, lo, hi)                                                  \
	{                                                                      \
		.name = (n), .type = VMM_CTL_INT, .required = (req),           \
		.min = (lo), .max = (hi)                                       \
	}
#define F_U64(n, req)                                                          \
	{                                                                      \
		.name = (n), .type = VMM_CTL_U64, .required = (req)            \
	}
#define F_STR(n, lo, hi)                                                       \
	{                                                                      \
		.name = (n), .type = VMM_CTL_STR, .required = true,            \
		.min = (lo), .max = (hi)                                       \
	}
#define F_OBJS(n, req, hi, e)                                                  \
	{                                                                      \
		.name = (n), .type = VMM_CTL_OBJS, .required = (req),          \
		.min = 1, .max = (hi), .elem = (e)                             \
	}
#define F_INTS(n, req, hi)                                                     \
	{                                                                      \
		.name = (n), .type = VMM_CTL_INTS, .required = (req),          \
		.min = 1, .max = (hi)                                          \
	}
#define F_END                                                                  \
	{                                                                      \
		.name = NULL                                                   \
	}

#define CTX      F_INT("ctx", true, 0, VMM_CTL_CTX_HANDLE_MAX)
#define REG(req) F_INT("num", req, 0, VMM_CTL_REG_NUM_MAX)
#define SET      F_INT("set", false, 0, VMM_CTL_SET_ID_MAX)
#define VCPU     F_INT("vcpu", true, 0, VMM_CTL_VCPU_ID_MAX)
#define SESSION  F_INT("session", true, 0, VMM_CTL_SESSIONS_MAX - 1)
#define SMPL_BUF F_INT("smpl_buf_size", false, 0, VMM_CTL_SMPL_BUF_MAX)
#define CHAIN    F_INT("callchain", false, 0, VMM_CTL_CHAIN_MAX)

static const struct vmm_ctl_field no_fields[] = {F_END};

static const struct vmm_ctl_field f_resolve[] = {
	F_STR("name", 1, VMM_CTL_NAME_MAX), F_END};

static const struct vmm_ctl_field f_create[] = {VCPU, SMPL_BUF, CHAIN, F_END};

static const struct vmm_ctl_field f_ctx[] = {CTX, F_END};

static const struct vmm_ctl_field f_pmc[] = {
	REG(true),
	SET,
	F_U64("value", true),
	F_INT("flags", false, 0, 0xffff),
	F_U64("reset_pmds", false),
	F_U64("smpl_pmds", false),
	F_U64("eventid", false),
	F_END,
};

static const struct vmm_ctl_field f_pmd[] = {
	REG(true),
	SET,
	F_U64("value", false),
	F_U64("long_reset", false),
	F_U64("short_reset", false),
	F_END,
};

static const struct vmm_ctl_field f_pmd_ref[] = {REG(true), SET, F_END};

static const struct vmm_ctl_field f_set[] = {
	F_INT("id", true, 0, VMM_CTL_SET_ID_MAX),
	F_INT("flags", false, 0, 0xff),
	F_INT("next", false, 0, VMM_CTL_SET_ID_MAX),
	F_INT("timeout_ns", false, 0, VMM_CTL_SET_TIMEOUT_MAX_NS),
	F_END,
};

static const struct vmm_ctl_field f_write_pmcs[] = {
	CTX, F_OBJS("pmcs", true, VMM_CTL_REGS_MAX, f_pmc), F_END};

static const struct vmm_ctl_field f_write_pmds[] = {
	CTX, F_OBJS("pmds", true, VMM_CTL_REGS_MAX, f_pmd), F_END};

static const struct vmm_ctl_field f_read_pmds[] = {
	CTX, F_OBJS("pmds", true, VMM_CTL_REGS_MAX, f_pmd_ref), F_END};

static const struct vmm_ctl_field f_evtsets[] = {
	CTX, F_OBJS("sets", true, VMM_CTL_SETS_MAX, f_set), F_END};

static const struct vmm_ctl_field f_getinfo[] = {
	CTX, F_INTS("sets", true, VMM_CTL_SETS_MAX), F_END};

static const struct vmm_ctl_field f_load[] = {CTX, VCPU, SET, F_END};

static const struct vmm_ctl_field f_start[] = {CTX, SET, F_END};

static const struct vmm_ctl_field f_drain[] = {
	CTX, F_INT("max", false, 1, VMM_CTL_DRAIN_MAX),
	/* The samples in a binary frame after the reply. */
	F_INT("packed", false, 0, 1), F_END};

static const struct vmm_ctl_field f_session_open[] = {
	F_INTS("vcpus", false, VMM_CTL_SESSION_VCPUS),
	F_OBJS("pmcs", true, VMM_CTL_REGS_MAX, f_pmc),
	F_OBJS("pmds", false, VMM_CTL_REGS_MAX, f_pmd),
	F_OBJS("sets", false, VMM_CTL_SETS_MAX, f_set),
	SET,
	SMPL_BUF,
	CHAIN,
	/* The operator's overhead budget, frequency mode. */
	F_INT("max_overhead", false, 1, 100),
	F_INT("freq_mode", false, 0, 1),
	F_END,
};

static const struct vmm_ctl_field f_session[] = {SESSION, F_END};

static const struct vmm_ctl_field f_snapshot[] = {
	F_STR("path", 2, VMM_CTL_PATH_MAX), F_INT("stop", false, 0, 1), F_END};

static const struct vmm_ctl_field f_guest_tasks[] = {F_U64("since", false),
						     F_END};

#define CMD(id_, name_, fields_)                                               \
	[VMM_CTL_CMD_##id_] = {                                                \
		.name = (name_), .id = VMM_CTL_CMD_##id_, .fields = (fields_)}

const struct vmm_ctl_cmd vmm_ctl_cmds[VMM_CTL_NR_CMDS] = {
	CMD(HELLO, "hello", no_fields),
	CMD(INFO, "info", no_fields),
	CMD(RESOLVE, "resolve", f_resolve),
	CMD(CTX_CREATE, "ctx_create", f_create),
	CMD(DESTROY, "destroy", f_ctx),
	CMD(WRITE_PMCS, "write_pmcs", f_write_pmcs),
	CMD(WRITE_PMDS, "write_pmds", f_write_pmds),
	CMD(CREATE_EVTSETS, "create_evtsets", f_evtsets),
	CMD(LOAD, "load", f_load),
	CMD(UNLOAD, "unload", f_ctx),
	CMD(START, "start", f_start),
	CMD(STOP, "stop", f_ctx),
	CMD(READ_PMDS, "read_pmds", f_read_pmds),
	CMD(GETINFO_EVTSETS, "getinfo_evtsets", f_getinfo),
	CMD(SMPL_DRAIN, "smpl_drain", f_drain),
	CMD(SESSION_OPEN, "session_open", f_session_open),
	CMD(SESSION_READ, "session_read", f_session),
	CMD(SESSION_CLOSE, "session_close", f_session),
	CMD(SNAPSHOT, "snapshot", f_snapshot),
	CMD(GUEST_TASKS, "guest_tasks", f_guest_tasks),
};

/* The guest's process records by name: guest_tasks and record files. */
static const char *const task_ops[] = {
	[PVPMU_TASK_COMM] = "comm",
	[PVPMU_TASK_MMAP] = "mmap",
	[PVPMU_TASK_EXIT] = "exit",
};

const char *vmm_ctl_task_op_name(uint32_t op)
{
	return op < sizeof(task_ops) / sizeof(task_ops[0]) ? task_ops[op]
							   : NULL;
}

uint32_t vmm_ctl_task_op(const char *name)
{
	uint32_t i;

	for (i = 0; name && i < sizeof(task_ops) / sizeof(task_ops[0]); i++) {
		if (task_ops[i] && !strcmp(task_ops[i], name))
			return i;
	}
	return 0;
}

const struct vmm_ctl_cmd *vmm_ctl_cmd_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < VMM_CTL_NR_CMDS; i++) {
		if (vmm_ctl_cmds[i].name && !strcmp(vmm_ctl_cmds[i].name, name))
			return &vmm_ctl_cmds[i];
	}
	return NULL;
}
