// SPDX-License-Identifier: MIT
/*
 * sdk_fast.c: the shared-page fast read agrees with pfm_read_pmds (image
 * sdk_fast). While counting, a fast read lies between the hypercall reads
 * around it (time events, extended with the TSC) or equals the one before
 * it (exit-count events: values as of the last exit); time events advance
 * between two fast reads without any exit; once stopped, both reads are
 * identical; a context that is not the loaded one falls back. Where the
 * host's TSC is unstable the VMM publishes no TSC scale (tsc_mult 0): time
 * events are then, like the others, values as of the last exit.
 */
#include "check.h"

#include "pvpmu_core.h"

#define NR_PMDS  4
#define NR_ITERS 200

static struct checker c = {.name = "sdk_fast"};
static struct pvpmu_shared_page page __attribute__((aligned(4096)));

static const char *const events[NR_PMDS] = {"hv_guest_cycles", "hv_run_ns",
					    "hv_hypercalls", "hv_exits"};
static const int is_time[NR_PMDS]        = {1, 1, 0, 0};

static void prep(pfarg_pmd_t *p)
{
	unsigned int i;

	for (i = 0; i < NR_PMDS; i++)
		p[i] = (pfarg_pmd_t){.reg_num = (uint16_t)i};
}

static void while_counting(int fd)
{
	pfarg_pmd_t r1[NR_PMDS], f[NR_PMDS], r2[NR_PMDS], g[NR_PMDS];
	unsigned int i, k, bad = 0;
	int extends = 1;

	for (k = 0; k < NR_ITERS; k++) {
		prep(r1);
		prep(f);
		prep(r2);
		EXPECT(&c, "read_pmds", pfm_read_pmds(fd, r1, NR_PMDS), 0);
		EXPECT(&c, "fast read", pvpmu_read_fast(&page, fd, f, NR_PMDS),
		       0);
		EXPECT(&c, "read_pmds", pfm_read_pmds(fd, r2, NR_PMDS), 0);
		for (i = 0; i < NR_PMDS; i++) {
			if (is_time[i] && !page.pmds[i].tsc_mult)
				extends = 0;
			if (is_time[i] && page.pmds[i].tsc_mult
				    ? (f[i].reg_value < r1[i].reg_value ||
				       f[i].reg_value > r2[i].reg_value)
				    : f[i].reg_value != r1[i].reg_value) {
				if (!bad++)
					uprintf("sdk_fast: %s: read %llu, "
						"fast %llu, read %llu\n",
						events[i],
						(unsigned long long)r1[i]
							.reg_value,
						(unsigned long long)f[i]
							.reg_value,
						(unsigned long long)r2[i]
							.reg_value);
			}
		}
	}
	EXPECT(&c, "fast reads between hypercall reads", bad, 0);
	/* No exit between these two: time still moves, if the page says so. */
	prep(f);
	prep(g);
	pvpmu_read_fast(&page, fd, f, NR_PMDS);
	tool_sink = tool_spin(1000000);
	pvpmu_read_fast(&page, fd, g, NR_PMDS);
	if (extends) {
		EXPECT_TRUE(&c, "guest cycles advance without exits",
			    g[0].reg_value > f[0].reg_value);
		EXPECT_TRUE(&c, "run ns advance without exits",
			    g[1].reg_value > f[1].reg_value);
	} else {
		uprintf("sdk_fast: no TSC scale on the page (the host's TSC "
			"is unstable): time PMDs as of the last exit\n");
		EXPECT(&c, "guest cycles as of the last exit", g[0].reg_value,
		       f[0].reg_value);
	}
	EXPECT(&c, "hypercalls do not", g[2].reg_value, f[2].reg_value);
}

static void when_stopped(int fd)
{
	pfarg_pmd_t r[NR_PMDS], f[NR_PMDS];
	unsigned int i;

	EXPECT(&c, "stop", pfm_stop(fd), 0);
	prep(r);
	prep(f);
	EXPECT(&c, "read_pmds stopped", pfm_read_pmds(fd, r, NR_PMDS), 0);
	tool_sink = tool_spin(1000000);
	EXPECT(&c, "fast read stopped", pvpmu_read_fast(&page, fd, f, NR_PMDS),
	       0);
	for (i = 0; i < NR_PMDS; i++)
		EXPECT(&c, events[i], f[i].reg_value, r[i].reg_value);
	/* Another context, or a set that is not active: the page says so. */
	EXPECT(&c, "not the loaded context",
	       pvpmu_read_fast(&page, fd + 1, f, 1), -PVPMU_EAGAIN);
	prep(f);
	f[0].reg_set = 1;
	EXPECT(&c, "not the active set", pvpmu_read_fast(&page, fd, f, 1),
	       -PVPMU_EAGAIN);
	prep(f);
	f[0].reg_num = 5; /* not programmed */
	EXPECT(&c, "fallback read", pfm_read_pmds_fast(&page, fd, f, 1), 0);
	EXPECT(&c, "unload", pfm_unload_context(fd), 0);
	/* The page is published at exits: the next one shows the unload. */
	EXPECT(&c, "nop", pvpmu_hc_nop(pvpmu_driver()), 0);
	prep(f);
	EXPECT(&c, "unloaded: nothing on the page",
	       pvpmu_read_fast(&page, fd, f, 1), -PVPMU_EAGAIN);
	EXPECT(&c, "fallback after unload",
	       pfm_read_pmds_fast(&page, fd, f, NR_PMDS), 0);
	for (i = 0; i < NR_PMDS; i++)
		EXPECT(&c, events[i], f[i].reg_value, r[i].reg_value);
}

int user_main(unsigned int vcpu)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmc_t pmc[NR_PMDS];
	pfarg_load_t ld = {.load_pid = vcpu};
	unsigned int i;
	int fd;

	if (vcpu)
		return 0;
	EXPECT(&c, "shared page", pvpmu_shared_attach(&page), 0);
	EXPECT(&c, "create", pfm_create_context(&ctx, 0, 0), 0);
	fd = ctx.ctx_fd;
	for (i = 0; i < NR_PMDS; i++) {
		pmc[i] = (pfarg_pmc_t){.reg_num = (uint16_t)i};
		EXPECT(&c, events[i],
		       pvpmu_event_encode(events[i], &pmc[i].reg_value, 0), 0);
	}
	EXPECT(&c, "write_pmcs", pfm_write_pmcs(fd, pmc, NR_PMDS), 0);
	EXPECT(&c, "load", pfm_load_context(fd, &ld), 0);
	EXPECT(&c, "start", pfm_start(fd, 0), 0);
	while_counting(fd);
	when_stopped(fd);
	EXPECT(&c, "close", pfm_close(fd), 0);
	EXPECT(&c, "shared page off", pvpmu_shared_attach(0), 0);
	return check_done(&c);
}
