// SPDX-License-Identifier: MIT
/*
 * pffast.c: the exit-free read, shown live (part of the demo). A
 * vCPU-wide context counts guest cycles, run time and hypercalls while
 * ring 3 spins; the shared page answers reads without leaving the guest
 * (time events are extended with the TSC), and the same values come back
 * from pfm_read_pmds() once stopped. Prints what each read costs.
 */
#include "tool.h"

#define NR       3
#define FAST_N   10000
#define SLOW_N   50
#define STEP     20000000ULL /* spin rounds between live reads */
#define NR_STEPS 3

static struct pvpmu_shared_page page __attribute__((aligned(4096)));
static const char *const ev[NR] = {"hv_guest_cycles", "hv_run_ns",
				   "hv_hypercalls"};

static void prep(pfarg_pmd_t *p)
{
	unsigned int i;

	for (i = 0; i < NR; i++)
		p[i] = (pfarg_pmd_t){.reg_num = (uint16_t)i};
}

static int setup(unsigned int vcpu, int *fd)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_load_t ld = {.load_pid = vcpu};
	pfarg_pmc_t pmc[NR];
	unsigned int i;
	int ret;

	ret = pvpmu_shared_attach(&page);
	if (!ret)
		ret = pfm_create_context(&ctx, 0, 0);
	for (i = 0; !ret && i < NR; i++) {
		pmc[i] = (pfarg_pmc_t){.reg_num = (uint16_t)i};
		ret    = pvpmu_event_encode(ev[i], &pmc[i].reg_value, 0);
	}
	if (!ret)
		ret = pfm_write_pmcs(ctx.ctx_fd, pmc, NR);
	if (!ret)
		ret = pfm_load_context(ctx.ctx_fd, &ld);
	if (!ret)
		ret = pfm_start(ctx.ctx_fd, 0);
	/*
	 * The VMM publishes the page at an exit, before handling it: one
	 * more exit makes the page show the started context.
	 */
	if (!ret)
		ret = pvpmu_hc_nop(pvpmu_driver());
	*fd = ctx.ctx_fd;
	return ret ? tool_err("pffast", "setup", ret) : 0;
}

int pffast_run(unsigned int vcpu)
{
	const uint64_t khz = user_boot_info()->tsc_khz;
	pfarg_pmd_t f[NR], r[NR];
	uint64_t t0, fast, slow;
	char a[32], b[32], c[32], x[16];
	unsigned int i, bad = 0;
	int fd;

	if (setup(vcpu, &fd))
		return 1;
	for (i = 0; i < NR_STEPS; i++) {
		tool_sink = tool_spin(STEP);
		prep(f);
		if (pvpmu_read_fast(&page, fd, f, NR))
			bad++;
		uprintf("pffast: live, no exit: %s cycles, %s ns, %s "
			"hypercalls\n",
			tool_u64(a, sizeof(a), f[0].reg_value),
			tool_u64(b, sizeof(b), f[1].reg_value),
			tool_u64(c, sizeof(c), f[2].reg_value));
	}
	t0 = rdtsc();
	for (i = 0; i < FAST_N; i++)
		pvpmu_read_fast(&page, fd, f, NR);
	fast = (rdtsc() - t0) / FAST_N;
	t0   = rdtsc();
	for (i = 0; i < SLOW_N; i++)
		pfm_read_pmds(fd, r, NR);
	slow = (rdtsc() - t0) / SLOW_N;
	uprintf("pffast: a read of %u PMDs: %llu cycles (%llu ns) from the "
		"shared page, %llu cycles (%llu ns) by hypercall: %sx\n",
		NR, (unsigned long long)fast,
		(unsigned long long)(khz ? fast * 1000000 / khz : 0),
		(unsigned long long)slow,
		(unsigned long long)(khz ? slow * 1000000 / khz : 0),
		tool_fix2(x, sizeof(x), slow, fast ? fast : 1));
	/* Stopped: both reads give the same values. */
	if (pfm_stop(fd))
		bad++;
	prep(r);
	prep(f);
	if (pfm_read_pmds(fd, r, NR) || pvpmu_read_fast(&page, fd, f, NR))
		bad++;
	for (i = 0; i < NR; i++)
		bad += f[i].reg_value != r[i].reg_value;
	uprintf("pffast: stopped: fast read %s pfm_read_pmds (%s cycles)\n",
		bad ? "DISAGREES with" : "equals",
		tool_u64(a, sizeof(a), r[0].reg_value));
	pfm_close(fd);
	pvpmu_shared_attach(0);
	return bad ? 1 : 0;
}
