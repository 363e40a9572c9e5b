// SPDX-License-Identifier: MIT
/*
 * test_live.c: commands on a loaded, running context (spec 3.1.2-3.1.4
 * "when attached"), guest and host contexts sharing a vCPU, LOAD-time
 * resets of set state (3.1.12), and concurrent callers (the domain lock).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>

#include "harness.h"

TestSuite(vpmu_live, .init = h_setup, .fini = h_teardown);

static int running(void)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_rate(0, 1000000000ULL);
	h_rate(1, 2000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_load(fd, 0);
	h_start(fd);
	return fd;
}

/* 3.1.2: writing a PMC while attached re-programs the live counter. */
Test(vpmu_live, write_pmc_reprograms_live_counter)
{
	int fd = running();

	h_run(100);
	h_pmc(fd, 0, 0, H_EVSEL(1), 0); /* now the 2/ns event */
	h_run(100);
	cr_assert(eq(u64, h_val(fd, 0, 0), 100 + 200));
	h_pmc(fd, 0, 0, 0, 0); /* disabled: measures nothing */
	h_run(100);
	cr_assert(eq(u64, h_val(fd, 0, 0), 300));
}

/* 3.1.3: writing a PMD while attached updates the actual PMD. */
Test(vpmu_live, write_pmd_updates_live_value)
{
	int fd = running();

	h_run(100);
	h_pmd(fd, 0, 0, 5000, 0, 0);
	cr_assert(eq(u64, h_val(fd, 0, 0), 5000));
	h_run(10);
	cr_assert(eq(u64, h_val(fd, 0, 0), 5010));
}

/* 3.1.12: set_switch_pmds is reset at every LOAD. */
Test(vpmu_live, load_resets_switch_pmds)
{
	int fd             = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct pfarg_pmd p = {
		.reg_num = 0, .reg_value = (uint64_t)-5, .reg_ovflsw_thres = 1};

	h_set(fd, 0, PFM_SETFL_OVFL_SWITCH, 0, 0);
	h_set(fd, 1, 0, 0, 0);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd_full(fd, &p);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(5);
	cr_assert(eq(u64, h_setinfo(fd, 0).set_switch_pmds[0], 1));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(u64, h_setinfo(fd, 0).set_switch_pmds[0], 1),
		  "kept while detached");
	h_load(fd, 0);
	cr_assert(eq(u64, h_setinfo(fd, 0).set_switch_pmds[0], 0));
}

/* DESIGN.md 7: host contexts count independently of the guest's. */
Test(vpmu_live, host_and_guest_contexts_share_a_vcpu)
{
	struct pfarg_pmc pmc = {.reg_num = 0, .reg_value = H_EVSEL(1)};
	struct pfarg_pmd rd  = {.reg_num = 0};
	struct pfarg_load l  = {.load_pid = 0};
	int g = running(), h = -1;

	cr_assert(eq(int, h_ctx_raw(&H.host, PFM_FL_SYSTEM_WIDE, &h), 0));
	cr_assert(eq(int, vpmu_ctx_write_pmcs(H.d, &H.host, h, &pmc, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, h, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(H.d, &H.host, h, NULL, 0), 0));
	h_run(100);
	cr_assert(eq(int, vpmu_ctx_stop(H.d, &H.guest, g), 0));
	h_run(100);
	cr_assert(eq(int, vpmu_ctx_read_pmds(H.d, &H.host, h, &rd, 1), 0));
	cr_assert(eq(u64, rd.reg_value, 400), "host kept counting");
	cr_assert(eq(u64, h_val(g, 0, 0), 100), "guest stopped");
}

struct reader {
	int fd;
	unsigned int reads;
	uint64_t last;
	bool monotonic;
};

static void *read_loop(void *arg)
{
	struct reader *r      = arg;
	struct vpmu_caller op = {.owner = VPMU_OWNER_GUEST};
	unsigned int i;

	r->monotonic = true;
	for (i = 0; i < 20000; i++) {
		struct pfarg_pmd p = {.reg_num = 0};

		if (vpmu_ctx_read_pmds(H.d, &op, r->fd, &p, 1))
			continue;
		r->monotonic &= p.reg_value >= r->last;
		r->last = p.reg_value;
		r->reads++;
	}
	return NULL;
}

/* Commands from another thread see consistent, monotonic counters. */
Test(vpmu_live, concurrent_reads_during_accounting)
{
	struct reader r = {.fd = running()};
	pthread_t t;
	unsigned int i;

	cr_assert(eq(int, pthread_create(&t, NULL, read_loop, &r), 0));
	for (i = 0; i < 20000; i++)
		cr_assert(eq(int, vpmu_cpu_account(H.cpu0, 10, NULL), 0));
	cr_assert(eq(int, pthread_join(t, NULL), 0));
	cr_assert(eq(u32, r.reads, 20000));
	cr_assert(r.monotonic);
	cr_assert(eq(u64, h_val(r.fd, 0, 0), 200000));
}
