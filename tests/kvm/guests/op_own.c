// SPDX-License-Identifier: MIT
/*
 * op_own.c: a guest that uses the PMU itself while a host operator counts
 * it. vCPU 0 creates its own vCPU-wide context counting
 * hv_hypercalls through the SDK, starts it, prints "op_own: ready", waits
 * for the go signal (op_go.h), makes OP_CALLS NOP hypercalls, reads its count
 * and prints "op_own: own count N", then spins without exits. The read is a
 * hypercall whose exit is counted before it is served, so an undisturbed
 * count is OP_CALLS + 1, and an operator counting over the same window
 * sees the same number.
 */
#include "user.h"

#include <pvpmu/pvpmu.h>

#include "op_go.h"
#include "pvpmu_hc.h"

#define OP_CALLS 300

static int own_context(unsigned int vcpu, int *fd)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmc_t pmc = {.reg_num = 0};
	pfarg_load_t ld = {.load_pid = vcpu};
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (!ret)
		ret = pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0);
	if (!ret)
		ret = pfm_write_pmcs(ctx.ctx_fd, &pmc, 1);
	if (!ret)
		ret = pfm_load_context(ctx.ctx_fd, &ld);
	if (!ret)
		ret = pfm_start(ctx.ctx_fd, 0);
	*fd = ctx.ctx_fd;
	return ret;
}

int user_main(unsigned int vcpu)
{
	pfarg_pmd_t pmd = {.reg_num = 0};
	unsigned int i;
	int fd, ret;

	if (vcpu)
		return 0;
	ret = own_context(vcpu, &fd);
	if (ret) {
		uprintf("op_own: own context: error %d\n", ret);
		return 1;
	}
	uprintf("op_own: ready\n");
	op_wait_go();
	for (i = 0; i < OP_CALLS; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	ret = pfm_read_pmds(fd, &pmd, 1);
	uprintf("op_own: own count %llu (read %d)\n",
		(unsigned long long)pmd.reg_value, ret);
	for (;;)
		__asm__ __volatile__("pause");
	return 0;
}
