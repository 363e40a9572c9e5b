// SPDX-License-Identifier: MIT
/*
 * sdk_xvm.c: context handles are per VM (image sdk_xvm; tests/kvm/test_sdk.c
 * runs it in several VMs). The VM name (boot info) selects the role:
 *   "probe-H"  before creating anything, handle H (a live handle of another
 *              VM) must be -PVPMU_EBADF for every context call; then this
 *              VM's own first context is created and used;
 *   "hold"     create a context, use it, and keep it alive for a while so
 *              that a probe VM runs while it exists;
 *   otherwise  create a context, use it, print its handle.
 * Prints "sdk_xvm: handle H" for the context it created.
 */
#include "check.h"

#define HOLD_SPIN 1500000000ULL /* ~1.5 s of ring-3 spinning */

static struct checker c = {.name = "sdk_xvm"};

static int starts_with(const char *s, const char *p)
{
	while (*p && *s == *p) {
		s++;
		p++;
	}
	return !*p;
}

static long parse_handle(const char *s)
{
	long v = 0;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	return v;
}

static void probe(int fd)
{
	pfarg_pmd_t pmd = {0};
	pfarg_pmc_t pmc = {0};
	pfarg_load_t ld = {0};
	pfm_msg_t msg;

	EXPECT(&c, "foreign handle: read_pmds", pfm_read_pmds(fd, &pmd, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "foreign handle: write_pmcs", pfm_write_pmcs(fd, &pmc, 1),
	       -PVPMU_EBADF);
	EXPECT(&c, "foreign handle: load", pfm_load_context(fd, &ld),
	       -PVPMU_EBADF);
	EXPECT(&c, "foreign handle: stop", pfm_stop(fd), -PVPMU_EBADF);
	EXPECT(&c, "foreign handle: read_msg", pfm_read_msg(fd, &msg, 0),
	       -PVPMU_EBADF);
	EXPECT(&c, "foreign handle: close", pfm_close(fd), -PVPMU_EBADF);
	uprintf("sdk_xvm: foreign handle %d is EBADF here\n", fd);
}

/* Create a context and use it; returns its handle. */
static int own(unsigned int vcpu)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmc_t pmc = {.reg_num = 0};
	pfarg_pmd_t pmd = {.reg_num = 0};
	pfarg_load_t ld = {.load_pid = vcpu};

	EXPECT(&c, "create", pfm_create_context(&ctx, 0, 0), 0);
	EXPECT(&c, "encode",
	       pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0), 0);
	EXPECT(&c, "write_pmcs", pfm_write_pmcs(ctx.ctx_fd, &pmc, 1), 0);
	EXPECT(&c, "load", pfm_load_context(ctx.ctx_fd, &ld), 0);
	EXPECT(&c, "start", pfm_start(ctx.ctx_fd, 0), 0);
	EXPECT(&c, "stop", pfm_stop(ctx.ctx_fd), 0);
	EXPECT(&c, "read_pmds", pfm_read_pmds(ctx.ctx_fd, &pmd, 1), 0);
	EXPECT(&c, "STOP counted", pmd.reg_value, 1);
	uprintf("sdk_xvm: handle %d\n", ctx.ctx_fd);
	return ctx.ctx_fd;
}

int user_main(unsigned int vcpu)
{
	const char *name = (const char *)user_boot_info()->name;
	int fd;

	if (vcpu)
		return 0;
	if (starts_with(name, "probe-"))
		probe((int)parse_handle(name + 6));
	fd = own(vcpu);
	if (starts_with(name, "hold")) {
		uprintf("sdk_xvm: holding handle %d\n", fd);
		tool_sink = tool_spin(HOLD_SPIN);
		EXPECT(&c, "still mine after the hold", pfm_stop(fd), 0);
	}
	EXPECT(&c, "close", pfm_close(fd), 0);
	return check_done(&c);
}
