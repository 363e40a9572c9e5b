// SPDX-License-Identifier: MIT
/*
 * snap_count.c: the guest of tests/kvm/test_snapshot.c. On
 * vCPU 0, in ring 0:
 *   A  vCPU-wide context counting hv_hypercalls in PMD0;
 *   M  per-thread context (thread SNAP_TID, scheduled in and left so;
 *      perfmon2 allows one vCPU-wide context per CPU) counting
 *      hv_hypercalls with OVFL_NOTIFY and a period of 5: the 10
 *      hypercalls below overflow it once (masked until PFM_RESTART, one
 *      PFM_MSG_OVFL queued, not read yet).
 * Then it prints "snap_count: go" (the test snapshots it from here on),
 * makes SNAP_HC NOP hypercalls, reads A and M's message and prints
 * "snap_count: total N" and "snap_count: msg TYPE PMDS". The numbers do
 * not depend on when (or whether) the VM was snapshotted and restored in
 * between: the test compares them with an uninterrupted run.
 */
#include "kernel.h"

#include <pvpmu/pvpmu.h>

#include "pvpmu_hc.h"

#define SNAP_HC  20000
#define SNAP_TID 7

static int ctx(uint32_t ctx_flags, uint32_t load_pid, uint32_t flags,
	       uint64_t start)
{
	pfarg_ctx_t c   = {.ctx_flags = ctx_flags};
	pfarg_pmc_t pmc = {.reg_num = 0, .reg_flags = flags};
	pfarg_pmd_t pmd = {.reg_num         = 0,
			   .reg_value       = start,
			   .reg_short_reset = start,
			   .reg_long_reset  = start};
	pfarg_load_t ld = {.load_pid = load_pid};

	if (pfm_create_context(&c, 0, 0) ||
	    pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0) ||
	    pfm_write_pmcs(c.ctx_fd, &pmc, 1) ||
	    pfm_write_pmds(c.ctx_fd, &pmd, 1) ||
	    pfm_load_context(c.ctx_fd, &ld) || pfm_start(c.ctx_fd, 0)) {
		kprintf("snap_count: FAIL setting up a context\n");
		guest_exit(1);
	}
	return c.ctx_fd;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	pfarg_pmd_t pmd = {.reg_num = 0};
	pfm_msg_t msg   = {0};
	unsigned int i;
	int a, m;

	(void)bi;
	if (vcpu)
		guest_halt();
	a = ctx(PFM_FL_SYSTEM_WIDE, vcpu, 0, 0);
	m = ctx(0, SNAP_TID, PFM_REGFL_OVFL_NOTIFY, (uint64_t)-5);
	if (pvpmu_sched(m, PVPMU_SCHED_IN, SNAP_TID)) {
		kprintf("snap_count: FAIL sched in\n");
		guest_exit(1);
	}
	for (i = 0; i < 10; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	kprintf("snap_count: go\n");
	for (i = 0; i < SNAP_HC; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	if (pfm_read_pmds(a, &pmd, 1) || pfm_read_msg(m, &msg, 0)) {
		kprintf("snap_count: FAIL reading\n");
		guest_exit(1);
	}
	kprintf("snap_count: total %llu\n", (unsigned long long)pmd.reg_value);
	kprintf("snap_count: msg %u %llx\n", msg.msg_type,
		(unsigned long long)msg.pfm_ovfl_msg.msg_ovfl_pmds[0]);
	guest_exit(0);
}
