// SPDX-License-Identifier: MIT
/*
 * sdk_calls.c: every libpvpmu call and its error paths through the real
 * hypercall path, from ring 3 (image sdk_calls; tests/kvm/test_sdk.c).
 *
 *   - configuration and register info (GET/SET_CONFIG, GETINFO_PMCS/PMDS);
 *   - a vCPU-wide context through its whole life, each command in a wrong
 *     state too (EBUSY), event sets, per-element RETFL flags;
 *   - bad handles (EBADF) for every context call; bad guest addresses
 *     (EFAULT); element counts over the limit or not positive; format
 *     argument sizes (E2BIG); the context limit (ENOMEM);
 *   - a per-thread context: SCHED in/out/exit and the PFM_MSG_END message;
 *   - the notification vector, the shared page, NOP and ECHO.
 */
#include "check.h"

#include "pvpmu_core.h"
#include "pvpmu_hc.h"

#define BAD_FD   12345
#define NR_NOPS  10
#define MAX_ARGS 65536

static struct checker c = {.name = "sdk_calls"};

/* Big enough for one element more than the largest vector the VMM takes. */
static pfarg_pmd_t big[MAX_ARGS / sizeof(pfarg_pmd_t) + 1];
static struct {
	pfarg_ctx_t ctx;
	uint8_t arg[MAX_ARGS + 64];
} huge;
static struct pvpmu_shared_page page __attribute__((aligned(4096)));

static void nops(unsigned int n)
{
	while (n--)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
}

static uint64_t evsel(const char *name)
{
	uint64_t v = 0;

	EXPECT(&c, name, pvpmu_event_encode(name, &v, 0), 0);
	return v;
}

static void config_and_info(pfarg_config_t *cfg)
{
	pfarg_pmcinfo_t pi = {.reg_num = 0};
	pfarg_pmdinfo_t di = {.reg_num = 16};

	EXPECT(&c, "get_config", pfm_get_config(cfg), 0);
	EXPECT(&c, "version major", PFM_VERSION_MAJOR(cfg->cf_version), 1);
	EXPECT(&c, "8 counting PMCs", cfg->cf_impl_pmcs[0] & 0xff, 0xff);
	EXPECT_TRUE(&c, "arg size max",
		    cfg->cf_arg_size_max >= 4096 &&
			    cfg->cf_arg_size_max <= MAX_ARGS);
	EXPECT(&c, "set_config is the host's", pfm_set_config(cfg),
	       -PVPMU_EPERM);
	EXPECT(&c, "get_config NULL", pfm_get_config(0), -PVPMU_EFAULT);
	EXPECT(&c, "getinfo_pmcs", pfm_getinfo_pmcs(&pi, 1), 0);
	EXPECT(&c, "PMC0 type", pi.reg_type, PFM_REG_TYPE_MSR);
	EXPECT(&c, "PMC0 index", pi.reg_index, 0x186);
	EXPECT(&c, "getinfo_pmds", pfm_getinfo_pmds(&di, 1), 0);
	EXPECT(&c, "PMD16 type", di.reg_type, PFM_REG_TYPE_VIRT);
	pi = (pfarg_pmcinfo_t){.reg_num = 8};
	EXPECT(&c, "getinfo_pmcs unimplemented", pfm_getinfo_pmcs(&pi, 1),
	       -PVPMU_EINVAL);
	EXPECT_TRUE(&c, "RETFL_EINVAL", pi.reg_flags & PFM_REG_RETFL_EINVAL);
	EXPECT(&c, "getinfo_pmcs n=0", pfm_getinfo_pmcs(&pi, 0), -PVPMU_EINVAL);
	EXPECT(&c, "getinfo_pmds n=-1", pfm_getinfo_pmds(&di, -1),
	       -PVPMU_EINVAL);
}

/* Every command in the UNLOADED state that needs a loaded context. */
static void unloaded_state(int fd)
{
	EXPECT(&c, "start unloaded", pfm_start(fd, 0), -PVPMU_EBUSY);
	EXPECT(&c, "stop unloaded", pfm_stop(fd), -PVPMU_EBUSY);
	EXPECT(&c, "restart unloaded", pfm_restart(fd), -PVPMU_EBUSY);
	EXPECT(&c, "unload unloaded", pfm_unload_context(fd), -PVPMU_EBUSY);
}

static void registers(int fd)
{
	pfarg_pmc_t pmc[2] = {
		{.reg_num = 0, .reg_value = evsel("hv_hypercalls")},
		{.reg_num = 1, .reg_value = evsel("instructions")},
	};
	pfarg_pmd_t pmd = {.reg_num = 0, .reg_value = 5};

	/* Abort at the first bad element; earlier ones are applied. */
	EXPECT(&c, "write_pmcs NOTAVAIL event", pfm_write_pmcs(fd, pmc, 2),
	       -PVPMU_EINVAL);
	EXPECT(&c, "first element applied", pmc[0].reg_flags, 0);
	EXPECT_TRUE(&c, "RETFL_NOTAVAIL",
		    pmc[1].reg_flags & PFM_REG_RETFL_NOTAVAIL);
	pmc[1] = (pfarg_pmc_t){.reg_num = 9, .reg_value = evsel("hv_exits")};
	EXPECT(&c, "write_pmcs bad PMC", pfm_write_pmcs(fd, &pmc[1], 1),
	       -PVPMU_EINVAL);
	EXPECT_TRUE(&c, "bad PMC flagged", PFM_REG_HAS_ERROR(pmc[1].reg_flags));
	pmc[1] = (pfarg_pmc_t){
		.reg_num = 1, .reg_set = 7, .reg_value = evsel("hv_exits")};
	EXPECT(&c, "write_pmcs no such set", pfm_write_pmcs(fd, &pmc[1], 1),
	       -PVPMU_EINVAL);
	EXPECT_TRUE(&c, "RETFL_NOSET", pmc[1].reg_flags & PFM_REG_RETFL_NOSET);
	EXPECT(&c, "write_pmds", pfm_write_pmds(fd, &pmd, 1), 0);
	pmd.reg_flags = 1;
	EXPECT(&c, "write_pmds input flag", pfm_write_pmds(fd, &pmd, 1),
	       -PVPMU_EINVAL);
	pmd = (pfarg_pmd_t){.reg_num = 0};
	EXPECT(&c, "read_pmds", pfm_read_pmds(fd, &pmd, 1), 0);
	EXPECT(&c, "read back", pmd.reg_value, 5);
	pmd = (pfarg_pmd_t){.reg_num = 40};
	EXPECT(&c, "read_pmds unimplemented", pfm_read_pmds(fd, &pmd, 1),
	       -PVPMU_EINVAL);
	EXPECT(&c, "write_pmcs n=0", pfm_write_pmcs(fd, pmc, 0), -PVPMU_EINVAL);
	EXPECT(&c, "write_pmcs NULL", pfm_write_pmcs(fd, 0, 1), -PVPMU_EFAULT);
}

static void event_sets(int fd)
{
	pfarg_setdesc_t sd = {.set_id = 1};
	pfarg_setinfo_t si = {.set_id = 1};

	EXPECT(&c, "create set 1", pfm_create_evtsets(fd, &sd, 1), 0);
	EXPECT(&c, "getinfo set 1", pfm_getinfo_evtsets(fd, &si, 1), 0);
	EXPECT(&c, "set 1 never ran", si.set_runs, 0);
	si = (pfarg_setinfo_t){.set_id = 9};
	EXPECT(&c, "getinfo no such set", pfm_getinfo_evtsets(fd, &si, 1),
	       -PVPMU_EINVAL);
	EXPECT_TRUE(&c, "SET_RETFL_NOSET", si.set_flags & PFM_SET_RETFL_NOSET);
	sd = (pfarg_setdesc_t){.set_id    = 2,
			       .set_flags = PFM_SETFL_TIME_SWITCH |
					    PFM_SETFL_OVFL_SWITCH};
	EXPECT(&c, "two switch methods", pfm_create_evtsets(fd, &sd, 1),
	       -PVPMU_EINVAL);
	EXPECT_TRUE(&c, "SET_RETFL_EINVAL", PFM_SET_HAS_ERROR(sd.set_flags));
	sd = (pfarg_setdesc_t){.set_id = 0};
	EXPECT(&c, "delete set0", pfm_delete_evtsets(fd, &sd, 1),
	       -PVPMU_EINVAL);
	sd = (pfarg_setdesc_t){.set_id = 9};
	EXPECT(&c, "delete no such set", pfm_delete_evtsets(fd, &sd, 1),
	       -PVPMU_EINVAL);
	sd = (pfarg_setdesc_t){.set_id = 3};
	EXPECT(&c, "create set 3", pfm_create_evtsets(fd, &sd, 1), 0);
	EXPECT(&c, "delete set 3", pfm_delete_evtsets(fd, &sd, 1), 0);
}

static void loaded_state(int fd, unsigned int vcpu)
{
	pfarg_load_t ld    = {.load_pid = vcpu};
	pfarg_start_t st   = {.start_set = 9};
	pfarg_setdesc_t sd = {.set_id = 4};
	pfarg_pmd_t pmd    = {.reg_num = 0};
	pfm_msg_t msg;
	const void *buf;
	uint64_t size;
	int i;

	EXPECT(&c, "load", pfm_load_context(fd, &ld), 0);
	EXPECT(&c, "load twice", pfm_load_context(fd, &ld), -PVPMU_EBUSY);
	EXPECT(&c, "create set while loaded", pfm_create_evtsets(fd, &sd, 1),
	       -PVPMU_EBUSY);
	EXPECT(&c, "start no such set", pfm_start(fd, &st), -PVPMU_EINVAL);
	EXPECT(&c, "start", pfm_start(fd, 0), 0);
	for (i = 0; i < NR_NOPS; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	EXPECT(&c, "stop", pfm_stop(fd), 0);
	EXPECT(&c, "read_pmds loaded", pfm_read_pmds(fd, &pmd, 1), 0);
	/* 5 written, the NOPs, and the STOP call counted at its exit. */
	EXPECT(&c, "hv_hypercalls exact", pmd.reg_value, 5 + NR_NOPS + 1);
	EXPECT(&c, "restart not masked", pfm_restart(fd), -PVPMU_EBUSY);
	EXPECT(&c, "read_msg empty", pfm_read_msg(fd, &msg, 0), -PVPMU_EAGAIN);
	EXPECT(&c, "read_msg timeout", pfm_read_msg(fd, &msg, 1000000),
	       -PVPMU_ETIMEDOUT);
	EXPECT(&c, "read_msg NULL", pfm_read_msg(fd, 0, 0), -PVPMU_EFAULT);
	EXPECT(&c, "no sampling buffer", pfm_smpl_buf(fd, &buf, &size),
	       -PVPMU_ENOENT);
	EXPECT(&c, "sched on a vCPU-wide context",
	       pvpmu_sched(fd, PVPMU_SCHED_IN, 1), -PVPMU_EINVAL);
	EXPECT(&c, "unload", pfm_unload_context(fd), 0);
	EXPECT(&c, "read_pmds after unload", pfm_read_pmds(fd, &pmd, 1), 0);
	EXPECT(&c, "value kept at unload", pmd.reg_value, 5 + NR_NOPS + 1);
	/* A vCPU-wide context is loaded by the vCPU it names. */
	ld.load_pid = vcpu + 1;
	EXPECT(&c, "load another vCPU", pfm_load_context(fd, &ld),
	       -PVPMU_EINVAL);
}

/*
 * Cascading (spec 3.7.6): set 0 switches to set 1 after PMD0 overflows
 * once (period NR_NOPS / 2 hypercalls); set 1 counts the rest.
 */
static void cascade(unsigned int vcpu)
{
	pfarg_ctx_t ctx       = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_setdesc_t sd[2] = {
		{.set_id = 0, .set_flags = PFM_SETFL_OVFL_SWITCH},
		{.set_id = 1}};
	pfarg_pmc_t pmc[2]    = {{.reg_num = 0, .reg_set = 0},
				 {.reg_num = 0, .reg_set = 1}};
	pfarg_pmd_t pmd       = {.reg_num          = 0,
				 .reg_value        = -(uint64_t)(NR_NOPS / 2),
				 .reg_short_reset  = -(uint64_t)(NR_NOPS / 2),
				 .reg_ovflsw_thres = 1};
	pfarg_setinfo_t si[2] = {{.set_id = 0}, {.set_id = 1}};
	pfarg_load_t ld       = {.load_pid = vcpu};
	int fd;

	EXPECT(&c, "create", pfm_create_context(&ctx, 0, 0), 0);
	fd               = ctx.ctx_fd;
	pmc[0].reg_value = evsel("hv_hypercalls");
	pmc[1].reg_value = pmc[0].reg_value;
	EXPECT(&c, "cascade sets", pfm_create_evtsets(fd, sd, 2), 0);
	EXPECT(&c, "cascade pmcs", pfm_write_pmcs(fd, pmc, 2), 0);
	EXPECT(&c, "cascade trigger", pfm_write_pmds(fd, &pmd, 1), 0);
	EXPECT(&c, "cascade load", pfm_load_context(fd, &ld), 0);
	EXPECT(&c, "cascade start", pfm_start(fd, 0), 0);
	nops(NR_NOPS);
	EXPECT(&c, "cascade stop", pfm_stop(fd), 0);
	EXPECT(&c, "cascade getinfo", pfm_getinfo_evtsets(fd, si, 2), 0);
	EXPECT(&c, "set 0 switched on PMD0", si[0].set_switch_pmds[0], 1);
	EXPECT(&c, "set 1 became active", si[1].set_runs, 1);
	pmd = (pfarg_pmd_t){.reg_num = 0, .reg_set = 1};
	EXPECT(&c, "cascade read set 1", pfm_read_pmds(fd, &pmd, 1), 0);
	/* The second half of the NOPs and the STOP call. */
	EXPECT(&c, "set 1 counted after the switch", pmd.reg_value,
	       NR_NOPS / 2 + 1);
	EXPECT(&c, "close cascade", pfm_close(fd), 0);
}

static void bad_handles(void)
{
	pfarg_pmc_t pmc    = {0};
	pfarg_pmd_t pmd    = {0};
	pfarg_load_t ld    = {0};
	pfarg_setdesc_t sd = {.set_id = 1};
	pfarg_setinfo_t si = {0};
	pfm_msg_t msg;
	const void *buf;
	uint64_t size;

	EXPECT(&c, "write_pmcs bad fd", pfm_write_pmcs(BAD_FD, &pmc, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "write_pmds bad fd", pfm_write_pmds(BAD_FD, &pmd, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "read_pmds bad fd", pfm_read_pmds(BAD_FD, &pmd, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "load bad fd", pfm_load_context(BAD_FD, &ld), -PVPMU_EBADF);
	EXPECT(&c, "start bad fd", pfm_start(BAD_FD, 0), -PVPMU_EBADF);
	EXPECT(&c, "stop bad fd", pfm_stop(BAD_FD), -PVPMU_EBADF);
	EXPECT(&c, "restart bad fd", pfm_restart(BAD_FD), -PVPMU_EBADF);
	EXPECT(&c, "unload bad fd", pfm_unload_context(BAD_FD), -PVPMU_EBADF);
	EXPECT(&c, "create_evtsets bad fd", pfm_create_evtsets(BAD_FD, &sd, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "delete_evtsets bad fd", pfm_delete_evtsets(BAD_FD, &sd, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "getinfo_evtsets bad fd",
	       pfm_getinfo_evtsets(BAD_FD, &si, 1), -PVPMU_EBADF);
	EXPECT(&c, "read_msg bad fd", pfm_read_msg(BAD_FD, &msg, 0),
	       -PVPMU_EBADF);
	EXPECT(&c, "smpl_buf bad fd", pfm_smpl_buf(BAD_FD, &buf, &size),
	       -PVPMU_EBADF);
	EXPECT(&c, "sched bad fd", pvpmu_sched(BAD_FD, PVPMU_SCHED_IN, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "close bad fd", pfm_close(BAD_FD), -PVPMU_EBADF);
	EXPECT(&c, "negative fd", pfm_stop(-1), -PVPMU_EBADF);
}

/* Addresses the VMM cannot use, through the core's raw calls. */
static void bad_addresses(int fd)
{
	const struct pvpmu_drv *drv = pvpmu_driver();
	struct pvpmu_pfm_req r      = {
		     .fd       = fd,
		     .cmd      = PFM_READ_PMDS,
		     .nargs    = 1,
		     .arg_gpa  = 0xfffff000ULL,
		     .arg_size = sizeof(pfarg_pmd_t),
        };

	EXPECT(&c, "argument outside RAM", pvpmu_pfm_gpa(drv, &r),
	       -PVPMU_EFAULT);
	r.arg_gpa = 1ULL << 40;
	EXPECT(&c, "argument beyond 4 GiB", pvpmu_pfm_gpa(drv, &r),
	       -PVPMU_EFAULT);
	r.arg_gpa  = (uintptr_t)big;
	r.arg_size = sizeof(pfarg_pmd_t) + 8;
	EXPECT(&c, "size != nargs * element", pvpmu_pfm_gpa(drv, &r),
	       -PVPMU_EFAULT);
	EXPECT(&c, "request block outside RAM",
	       pvpmu_hypercall(PVPMU_HC_PFM, 0xfffff000U), -PVPMU_EFAULT);
	r = (struct pvpmu_pfm_req){.fd = fd, .cmd = 0x7f};
	EXPECT(&c, "unknown command", pvpmu_pfm_gpa(drv, &r), -PVPMU_ENOSYS);
}

static void limits(const pfarg_config_t *cfg, int fd)
{
	int n = (int)(cfg->cf_arg_size_max / sizeof(pfarg_pmd_t)), i, ret;
	uint8_t uuid[16] = PFM_DEFAULT_SMPL_UUID;
	int fds[256], nr = 0;

	if (cfg->cf_arg_size_max > MAX_ARGS)
		return;
	EXPECT(&c, "read_pmds one over the limit",
	       pfm_read_pmds(fd, big, n + 1), -PVPMU_EFAULT);
	for (i = 0; i < n; i++)
		big[i] = (pfarg_pmd_t){.reg_num = 0};
	EXPECT(&c, "read_pmds at the limit", pfm_read_pmds(fd, big, n), 0);

	/* Format arguments: more than cf_arg_size_max bytes. */
	huge.ctx = (pfarg_ctx_t){0};
	for (i = 0; i < 16; i++)
		huge.ctx.ctx_smpl_buf_id[i] = uuid[i];
	EXPECT(&c, "format args too big",
	       pfm_create_context(&huge.ctx, huge.arg, sizeof(huge.arg)),
	       -PVPMU_E2BIG);
	huge.ctx.ctx_smpl_buf_id[0] ^= 1;
	EXPECT(&c, "unknown format",
	       pfm_create_context(&huge.ctx, huge.arg, 16), -PVPMU_EINVAL);
	huge.ctx = (pfarg_ctx_t){.ctx_flags = 0x8000};
	EXPECT(&c, "reserved ctx flag", pfm_create_context(&huge.ctx, 0, 0),
	       -PVPMU_EINVAL);

	/* Contexts until the VM's limit. */
	for (ret = 0; nr < 256; nr++) {
		pfarg_ctx_t x = {0};

		ret = pfm_create_context(&x, 0, 0);
		if (ret)
			break;
		fds[nr] = x.ctx_fd;
	}
	EXPECT(&c, "context limit", ret, -PVPMU_ENOMEM);
	EXPECT_TRUE(&c, "some contexts", nr > 0);
	for (i = 0; i < nr; i++)
		EXPECT(&c, "close", pfm_close(fds[i]), 0);
}

/* A per-thread context: scheduled in and out, then its thread exits. */
/*
 * A per-thread context: counted only while its thread is scheduled in;
 * then the thread exits (PFM_MSG_END).
 */
static void per_thread(void)
{
	pfarg_ctx_t ctx = {0};
	pfarg_load_t ld = {.load_pid = 7};
	pfarg_pmc_t pmc = {.reg_num = 0};
	pfarg_pmd_t pmd = {.reg_num = 0};
	pvpmu_u32 counting;
	pfm_msg_t msg;
	int fd;

	EXPECT(&c, "create per-thread", pfm_create_context(&ctx, 0, 0), 0);
	fd            = ctx.ctx_fd;
	pmc.reg_value = evsel("hv_hypercalls");
	EXPECT(&c, "write_pmcs per-thread", pfm_write_pmcs(fd, &pmc, 1), 0);
	EXPECT(&c, "sched in unloaded", pvpmu_sched(fd, PVPMU_SCHED_IN, 7),
	       -PVPMU_EBUSY);
	EXPECT(&c, "load thread 7", pfm_load_context(fd, &ld), 0);
	EXPECT(&c, "start per-thread", pfm_start(fd, 0), 0);
	nops(NR_NOPS); /* thread 7 is not on the vCPU: not counted */
	EXPECT(&c, "sched in", pvpmu_sched(fd, PVPMU_SCHED_IN, 7), 0);
	nops(NR_NOPS);
	EXPECT(&c, "sched in twice", pvpmu_sched(fd, PVPMU_SCHED_IN, 7),
	       -PVPMU_EBUSY);
	EXPECT(&c, "sched bad op", pvpmu_sched(fd, 99, 7), -PVPMU_EINVAL);
	EXPECT(&c, "sched out",
	       pvpmu_hc_sched(pvpmu_driver(), fd, PVPMU_SCHED_OUT, 7,
			      &counting),
	       0);
	EXPECT(&c, "sched out while started: counted", counting, 1);
	nops(NR_NOPS);
	EXPECT(&c, "read_pmds per-thread", pfm_read_pmds(fd, &pmd, 1), 0);
	/* The NOPs while in, the 2 failed SCHED calls and SCHED OUT itself. */
	EXPECT(&c, "counted only while scheduled in", pmd.reg_value,
	       NR_NOPS + 3);
	/* Stopped, a switch-out is not in the counts, and says so. */
	EXPECT(&c, "stop per-thread", pfm_stop(fd), 0);
	EXPECT(&c, "sched in stopped", pvpmu_sched(fd, PVPMU_SCHED_IN, 7), 0);
	EXPECT(&c, "sched out stopped",
	       pvpmu_hc_sched(pvpmu_driver(), fd, PVPMU_SCHED_OUT, 7,
			      &counting),
	       0);
	EXPECT(&c, "sched out while stopped: not counted", counting, 0);
	EXPECT(&c, "read_pmds stopped", pfm_read_pmds(fd, &pmd, 1), 0);
	EXPECT(&c, "nothing counted while stopped", pmd.reg_value, NR_NOPS + 3);
	EXPECT(&c, "thread exit", pvpmu_sched(fd, PVPMU_SCHED_EXIT, 7), 0);
	EXPECT(&c, "PFM_MSG_END queued", pfm_read_msg(fd, &msg, 0), 0);
	EXPECT(&c, "message type", msg.msg_type, PFM_MSG_END);
	EXPECT(&c, "unloaded by the exit", pfm_unload_context(fd),
	       -PVPMU_EBUSY);
	EXPECT(&c, "close per-thread", pfm_close(fd), 0);
}

static void misc(void)
{
	uint64_t out = 0;

	EXPECT(&c, "vector below 32", pvpmu_set_vector(5), -PVPMU_EINVAL);
	EXPECT(&c, "vector above 255", pvpmu_set_vector(256), -PVPMU_EINVAL);
	EXPECT(&c, "vector", pvpmu_set_vector(TOOL_NOTIFY_VECTOR), 0);
	EXPECT(&c, "vector off", pvpmu_set_vector(0), 0);
	EXPECT(&c, "shared page misaligned",
	       pvpmu_shared_attach(
		       (struct pvpmu_shared_page *)((char *)&page + 64)),
	       -PVPMU_EINVAL);
	EXPECT(&c, "shared page", pvpmu_shared_attach(&page), 0);
	EXPECT(&c, "shared page says no context", page.fd, -1);
	EXPECT(&c, "shared page abi", page.abi, PVPMU_ABI_VERSION);
	EXPECT(&c, "shared page off", pvpmu_shared_attach(0), 0);
	EXPECT(&c, "nop", pvpmu_hc_nop(pvpmu_driver()), 0);
	EXPECT(&c, "echo", pvpmu_hc_echo(pvpmu_driver(), 42, &out), 0);
	EXPECT(&c, "echo value", out, ~42ULL);
}

int user_main(unsigned int vcpu)
{
	pfarg_ctx_t ctx    = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_config_t cfg = {0};
	int fd;

	if (vcpu)
		return 0;
	config_and_info(&cfg);
	EXPECT(&c, "create", pfm_create_context(&ctx, 0, 0), 0);
	fd = ctx.ctx_fd;
	uprintf("sdk_calls: context %d (ring %u)\n", fd, user_cpl());
	unloaded_state(fd);
	registers(fd);
	event_sets(fd);
	loaded_state(fd, vcpu);
	cascade(vcpu);
	bad_handles();
	bad_addresses(fd);
	limits(&cfg, fd);
	per_thread();
	misc();
	EXPECT(&c, "close", pfm_close(fd), 0);
	EXPECT(&c, "close twice", pfm_close(fd), -PVPMU_EBADF);
	EXPECT(&c, "stop closed", pfm_stop(fd), -PVPMU_EBADF);
	return check_done(&c);
}
