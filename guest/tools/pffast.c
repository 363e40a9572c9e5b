// SPDX-License-Identifier: MIT
/*
 * pffast: the exit-free read, shown live. A context on the tool itself
 * (bare: its vCPU; Linux: its thread) counts guest cycles, run time and
 * hypercalls while it spins; the shared page answers pvpmu_read_fast()
 * without leaving the guest (time events are extended with the TSC),
 * pfm_read_pmds() by hypercall (Linux: ioctl and hypercall). Prints what
 * each read costs, both measured in the same run, and checks that once
 * stopped both reads give the same values.
 *
 *   pffast [-h]
 */
#include "tool.h"

#define NR       3
#define FAST_N   10000
#define SLOW_N   200
#define SPIN_NS  50000000ULL /* between live reads */
#define NR_STEPS 3

static const char usage[] =
	"Usage: pffast [-h]\n"
	"\n"
	"Count hv_guest_cycles, hv_run_ns and hv_hypercalls for this program\n"
	"and read them while it runs from the shared page (no exit) and with\n"
	"pfm_read_pmds() (a hypercall); print the cost of each read and\n"
	"their ratio, then check that both agree once the context is\n"
	"stopped.\n"
	"\n"
	"Exit status: 0, 1 when the PMU cannot be reached or the reads\n"
	"disagree, 2 on a bad option.\n";

static const char *const ev[NR] = {"hv_guest_cycles", "hv_run_ns",
				   "hv_hypercalls"};

static void prep(pfarg_pmd_t *p)
{
	unsigned int i;

	for (i = 0; i < NR; i++)
		p[i] = (pfarg_pmd_t){.reg_num = (pvpmu_u16)i};
}

static int setup(int *fd)
{
	struct tool_target t;
	pfarg_ctx_t ctx;
	pfarg_load_t ld;
	pfarg_pmc_t pmc[NR];
	unsigned int i;
	int ret;

	tool_target_self(&t);
	ctx = (pfarg_ctx_t){.ctx_flags = t.ctx_flags};
	ld  = (pfarg_load_t){.load_pid = t.load_pid};
	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("pffast",
				"PFM_CREATE_CONTEXT (is pvpmu.ko "
				"loaded?)",
				ret);
	*fd = ctx.ctx_fd;
	for (i = 0; !ret && i < NR; i++) {
		pmc[i] = (pfarg_pmc_t){.reg_num = (pvpmu_u16)i};
		ret    = pvpmu_event_encode(ev[i], &pmc[i].reg_value, 0);
	}
	if (!ret)
		ret = pfm_write_pmcs(*fd, pmc, NR);
	if (!ret)
		ret = pfm_load_context(*fd, &ld);
	if (!ret)
		ret = pfm_start(*fd, 0);
	if (!ret)
		ret = tool_shared_publish();
	if (ret)
		goto out_close;
	return 0;

out_close:
	pfm_close(*fd);
	return tool_err("pffast", "setup", ret);
}

static int live_reads(const struct pvpmu_shared_page *page, int fd)
{
	char a[32], b[32], c[32];
	pfarg_pmd_t f[NR];
	unsigned int i;
	int ret;

	for (i = 0; i < NR_STEPS; i++) {
		tool_spin_ns(SPIN_NS);
		prep(f);
		ret = pvpmu_read_fast(page, fd, f, NR);
		if (ret)
			return tool_err("pffast", "live fast read", ret);
		tool_printf("pffast: live, no exit: %s cycles, %s ns, %s "
			    "hypercalls\n",
			    tool_u64(a, sizeof(a), f[0].reg_value),
			    tool_u64(b, sizeof(b), f[1].reg_value),
			    tool_u64(c, sizeof(c), f[2].reg_value));
	}
	return 0;
}

/* The cost of each read, measured here, and their ratio. */
static void costs(const struct pvpmu_shared_page *page, int fd)
{
	pfarg_pmd_t f[NR], r[NR];
	uint64_t t0, fast, slow;
	char a[24], b[24], x[24];
	unsigned int i;

	prep(f);
	prep(r);
	t0 = tool_now_ns();
	for (i = 0; i < FAST_N; i++)
		pvpmu_read_fast(page, fd, f, NR);
	fast = tool_now_ns() - t0;
	t0   = tool_now_ns();
	for (i = 0; i < SLOW_N; i++)
		pfm_read_pmds(fd, r, NR);
	slow = tool_now_ns() - t0;
	tool_printf("pffast: a read of %u PMDs: %s ns from the shared page, "
		    "%s ns by pfm_read_pmds(): %sx\n",
		    NR, tool_fix2(a, sizeof(a), fast, FAST_N),
		    tool_fix2(b, sizeof(b), slow, SLOW_N),
		    tool_fix2(x, sizeof(x), slow * FAST_N,
			      (fast ? fast : 1) * SLOW_N));
}

/* Stopped: both reads give the same values. */
static int agree(const struct pvpmu_shared_page *page, int fd)
{
	pfarg_pmd_t f[NR], r[NR];
	char a[32], b[32];
	unsigned int i, bad = 0;
	int ret;

	ret = pfm_stop(fd);
	if (ret)
		return tool_err("pffast", "PFM_STOP", ret);
	prep(r);
	prep(f);
	ret = pfm_read_pmds(fd, r, NR);
	if (!ret)
		ret = pvpmu_read_fast(page, fd, f, NR);
	if (ret)
		return tool_err("pffast", "reads after stop", ret);
	for (i = 0; i < NR; i++)
		bad += f[i].reg_value != r[i].reg_value;
	tool_printf("pffast: stopped: fast read %s pfm_read_pmds (%s cycles, "
		    "%s hypercalls)\n",
		    bad ? "DISAGREES with" : "equals",
		    tool_u64(a, sizeof(a), r[0].reg_value),
		    tool_u64(b, sizeof(b), r[2].reg_value));
	return bad ? 1 : 0;
}

int pffast_main(int argc, char **argv)
{
	const struct pvpmu_shared_page *page;
	int fd = -1, ret;

	if (argc == 2 &&
	    (tool_streq(argv[1], "-h") || tool_streq(argv[1], "--help")))
		return tool_usage(usage, 1);
	if (argc != 1)
		return tool_usage(usage, 0) ? 2 : 0;
	ret = tool_shared_open(&page);
	if (ret) {
		tool_err("pffast", "shared page", ret);
		return 1;
	}
	if (setup(&fd)) {
		ret = 1;
		goto out_shared;
	}
	ret = live_reads(page, fd);
	if (!ret) {
		costs(page, fd);
		ret = agree(page, fd);
	}
	pfm_close(fd);
out_shared:
	tool_shared_close();
	return ret ? 1 : 0;
}
