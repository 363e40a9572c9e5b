// SPDX-License-Identifier: MIT
/*
 * ctl_schema.c: the command table of the control socket protocol
 * (ctl_proto.h): for every command, the fields it takes, their types,
 * whether they are required and their ranges. vmm_ctl_parse_request()
 * checks every request against it before any command runs.
 */
#include "ctl_proto.h"

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
#define F_OBJS(n, hi, e)                                                       \
	{                                                                      \
		.name = (n), .type = VMM_CTL_OBJS, .required = true, .min = 1, \
		.max = (hi), .elem = (e)                                       \
	}
#define F_INTS(n, hi)                                                          \
	{                                                                      \
		.name = (n), .type = VMM_CTL_INTS, .required = true, .min = 1, \
		.max = (hi)                                                    \
	}
#define F_END                                                                  \
	{                                                                      \
		.name = NULL                                                   \
	}

#define CTX      F_INT("ctx", true, 0, 1 << 30) /* a host context handle */
#define REG(req) F_INT("num", req, 0, 63)       /* PMC/PMD index */
#define SET      F_INT("set", false, 0, 65535)  /* event set id */
#define VCPU     F_INT("vcpu", true, 0, 4095)

static const struct vmm_ctl_field no_fields[] = {F_END};

static const struct vmm_ctl_field f_resolve[] = {F_STR("name", 1, 128), F_END};

static const struct vmm_ctl_field f_create[] = {
	VCPU, F_INT("smpl_buf_size", false, 0, 64LL << 20), F_END};

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
	F_INT("id", true, 0, 65535),
	F_INT("flags", false, 0, 0xff),
	F_INT("next", false, 0, 65535),
	F_INT("timeout_ns", false, 0, 3600LL * 1000000000LL),
	F_END,
};

static const struct vmm_ctl_field f_write_pmcs[] = {
	CTX, F_OBJS("pmcs", 64, f_pmc), F_END};

static const struct vmm_ctl_field f_write_pmds[] = {
	CTX, F_OBJS("pmds", 64, f_pmd), F_END};

static const struct vmm_ctl_field f_read_pmds[] = {
	CTX, F_OBJS("pmds", 64, f_pmd_ref), F_END};

static const struct vmm_ctl_field f_evtsets[] = {CTX, F_OBJS("sets", 64, f_set),
						 F_END};

static const struct vmm_ctl_field f_getinfo[] = {CTX, F_INTS("sets", 64),
						 F_END};

static const struct vmm_ctl_field f_load[] = {CTX, VCPU, SET, F_END};

static const struct vmm_ctl_field f_start[] = {CTX, SET, F_END};

static const struct vmm_ctl_field f_drain[] = {
	CTX, F_INT("max", false, 1, 65536), F_END};

const struct vmm_ctl_cmd vmm_ctl_cmds[] = {
	{"hello", no_fields},
	{"info", no_fields},
	{"resolve", f_resolve},
	{"ctx_create", f_create},
	{"destroy", f_ctx},
	{"write_pmcs", f_write_pmcs},
	{"write_pmds", f_write_pmds},
	{"create_evtsets", f_evtsets},
	{"load", f_load},
	{"unload", f_ctx},
	{"start", f_start},
	{"stop", f_ctx},
	{"read_pmds", f_read_pmds},
	{"getinfo_evtsets", f_getinfo},
	{"smpl_drain", f_drain},
	{NULL, NULL},
};
