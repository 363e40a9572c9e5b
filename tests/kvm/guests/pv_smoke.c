// SPDX-License-Identifier: MIT
/*
 * pv_smoke.c: the perfmon2 hypercalls end to end from ring 0, without the
 * SDK: a vCPU-wide context counting hv_hypercalls and hv_run_ns around N
 * NOP hypercalls, plus the basic error answers. Prints "pv_smoke: ok" and
 * exits 0, or exits 1 after printing what went wrong.
 */
#include "kernel.h"
#include "pvpmu_hc.h"

#define N_CALLS     100
#define EVSEL(code) ((code) | PVPMU_EVSEL_USR | PVPMU_EVSEL_OS | PVPMU_EVSEL_EN)

static struct pvpmu_hc_pfm req;
static struct pfarg_ctx ctx;
static struct pfarg_pmc pmcs[2];
static struct pfarg_pmd pmds[2];
static struct pfarg_load load;

static long pfm(unsigned int cmd, int fd, void *arg, int nargs,
		unsigned int size)
{
	req = (struct pvpmu_hc_pfm){
		.size     = sizeof(req),
		.cmd      = cmd,
		.fd       = fd,
		.nargs    = nargs,
		.arg_gpa  = arg ? virt_to_gpa(arg) : 0,
		.arg_size = size,
	};
	return pvpmu_hypercall(PVPMU_HC_PFM, virt_to_gpa(&req));
}

static int failures;

static void expect(const char *what, long got, long want)
{
	if (got == want)
		return;
	kprintf("pv_smoke: %s: got %ld, want %ld\n", what, got, want);
	failures++;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	struct pvpmu_hc_read_msg rm = {.size = sizeof(rm)};
	int i, fd;

	(void)bi;
	if (vcpu != 0)
		return;
	ctx.ctx_flags = PFM_FL_SYSTEM_WIDE;
	expect("create", pfm(PFM_CREATE_CONTEXT, 0, &ctx, 1, sizeof(ctx)), 0);
	fd      = ctx.ctx_fd;
	pmcs[0] = (struct pfarg_pmc){
		.reg_num = 0, .reg_value = EVSEL(PVPMU_EV_HV_HYPERCALLS)};
	pmcs[1] = (struct pfarg_pmc){.reg_num   = 1,
				     .reg_value = EVSEL(PVPMU_EV_HV_RUN_NS)};
	expect("write_pmcs", pfm(PFM_WRITE_PMCS, fd, pmcs, 2, sizeof(pmcs)), 0);
	load.load_pid = 0;
	expect("load", pfm(PFM_LOAD_CONTEXT, fd, &load, 1, sizeof(load)), 0);
	expect("start", pfm(PFM_START, fd, 0, 0, 0), 0);
	for (i = 0; i < N_CALLS; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	expect("stop", pfm(PFM_STOP, fd, 0, 0, 0), 0);
	pmds[0].reg_num = 0;
	pmds[1].reg_num = 1;
	expect("read_pmds", pfm(PFM_READ_PMDS, fd, pmds, 2, sizeof(pmds)), 0);
	/* The NOPs and the STOP hypercall itself, counted at its exit. */
	expect("hv_hypercalls", (long)pmds[0].reg_value, N_CALLS + 1);
	if (pmds[1].reg_value == 0)
		expect("hv_run_ns > 0", 0, 1);

	expect("bad fd", pfm(PFM_STOP, fd + 7, 0, 0, 0), -PVPMU_EBADF);
	req = (struct pvpmu_hc_pfm){.size     = sizeof(req),
				    .cmd      = PFM_READ_PMDS,
				    .fd       = fd,
				    .nargs    = 1,
				    .arg_gpa  = 0xfffff000ULL,
				    .arg_size = sizeof(struct pfarg_pmd)};
	expect("arg outside RAM",
	       pvpmu_hypercall(PVPMU_HC_PFM, virt_to_gpa(&req)), -PVPMU_EFAULT);
	expect("unknown cmd", pfm(0x7f, fd, 0, 0, 0), -PVPMU_ENOSYS);
	rm.fd = fd;
	expect("read_msg empty",
	       pvpmu_hypercall(PVPMU_HC_READ_MSG, virt_to_gpa(&rm)),
	       -PVPMU_EAGAIN);
	rm.timeout_ns = 2000000;
	expect("read_msg timeout",
	       pvpmu_hypercall(PVPMU_HC_READ_MSG, virt_to_gpa(&rm)),
	       -PVPMU_ETIMEDOUT);
	expect("close",
	       pvpmu_hypercall(PVPMU_HC_CLOSE,
			       virt_to_gpa(&(struct pvpmu_hc_ctx){.size = 8,
								  .fd   = fd})),
	       0);
	expect("closed fd", pfm(PFM_STOP, fd, 0, 0, 0), -PVPMU_EBADF);
	if (failures)
		guest_exit(1);
	kprintf("pv_smoke: ok (hypercalls %lu, run_ns %lu)\n",
		(unsigned long)pmds[0].reg_value,
		(unsigned long)pmds[1].reg_value);
	guest_exit(0);
}
