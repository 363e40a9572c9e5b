// SPDX-License-Identifier: MIT
/*
 * bench_core.c: libvpmu core costs, each printed next to a floor measured
 * in the same run (a memcpy of the same bytes) and the ratio:
 *   - per-exit accounting with 8 active counters (vpmu_cpu_account);
 *   - one set switch (an account call whose timeout switches sets, and
 *     its difference to the same call without a switch);
 *   - one overflow with a default-format sample (account + handler).
 * Count source: the replay backend (rates), so no host PMU is needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vpmu_core.h"
#include "vpmu_priv.h"
#include "backends/replay.h"

#define ROUNDS 7

struct bench {
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_domain *d;
	struct vpmu_cpu *cpu;
	struct vpmu_caller who;
	int fd;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int check(int ret, const char *what)
{
	if (ret)
		fprintf(stderr, "bench_vpmu_core: %s: %s\n", what,
			strerror(-ret));
	return ret;
}

/* A started vCPU-wide context with 8 counters in (nr_sets) sets. */
static int setup(struct bench *b, unsigned int nr_sets, uint64_t timeout)
{
	struct vpmu_domain_config cfg = {0};
	struct pfarg_pmc pmc[8];
	unsigned int i, s;
	int ret;

	memset(b, 0, sizeof(*b));
	ret = check(vpmu_replay_create(&b->rp), "replay");
	for (i = 0; !ret && i < 8; i++) {
		ret = vpmu_replay_add_event(b->rp, (uint16_t)(0x10 + i), "e");
		ret = ret ? ret
			  : vpmu_replay_set_rate(b->rp, 0, (uint16_t)(0x10 + i),
						 1000000000ULL + i * 7919);
	}
	if (ret)
		return ret;
	vpmu_replay_instance(b->rp, &b->be);
	vpmu_limits_default(&cfg.limits);
	cfg.limits.timer_gran_ns = 1;
	cfg.backends             = &b->be;
	cfg.nr_backends          = 1;
	ret = check(vpmu_domain_create(&cfg, &b->d), "domain");
	ret = ret ? ret : check(vpmu_cpu_create(b->d, 0, &b->cpu), "cpu");
	if (ret)
		return ret;
	b->who = (struct vpmu_caller){.owner = VPMU_OWNER_GUEST, .cpu = b->cpu};
	{
		struct pfarg_ctx c = {.ctx_flags = PFM_FL_SYSTEM_WIDE};

		ret   = check(vpmu_ctx_create(b->d, &b->who, &c, 1, NULL, 0),
			      "create");
		b->fd = c.ctx_fd;
	}
	for (s = 0; !ret && s < nr_sets; s++) {
		struct pfarg_setdesc sd = {
			.set_id      = (uint16_t)s,
			.set_flags   = timeout ? PFM_SETFL_TIME_SWITCH : 0,
			.set_timeout = {.tv_nsec = timeout}};

		ret = check(
			vpmu_ctx_create_evtsets(b->d, &b->who, b->fd, &sd, 1),
			"sets");
		for (i = 0; i < 8; i++)
			pmc[i] = (struct pfarg_pmc){
				.reg_num   = (uint16_t)i,
				.reg_set   = (uint16_t)s,
				.reg_value = VPMU_EVSEL(0x10 + i, 0)};
		ret = ret ? ret
			  : check(vpmu_ctx_write_pmcs(b->d, &b->who, b->fd, pmc,
						      8),
				  "pmcs");
	}
	if (ret)
		return ret;
	ret = check(
		vpmu_ctx_load(b->d, &b->who, b->fd, &(struct pfarg_load){0}, 1),
		"load");
	return ret ? ret
		   : check(vpmu_ctx_start(b->d, &b->who, b->fd, NULL, 0),
			   "start");
}

/*
 * One sampling counter (period 1000 events at 1 event/ns) in a
 * default-format context: every 1 us account call takes one overflow,
 * writes one sample and short-resets. The buffer is emptied by an active
 * RESTART whenever it fills.
 */
static int setup_sampling(struct bench *b)
{
	static const uint8_t uuid[16] = PFM_DEFAULT_SMPL_UUID;
	struct pfm_default_smpl_arg a = {.buf_size = 1 << 20};
	struct pfarg_ctx c            = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_pmc pmc          = {.reg_value = VPMU_EVSEL(0x10, 0)};
	struct pfarg_pmd pmd          = {.reg_value       = (uint64_t)-1000,
					 .reg_short_reset = (uint64_t)-1000,
					 .reg_long_reset  = (uint64_t)-1000};
	struct vpmu_domain_config cfg = {0};
	int ret;

	memset(b, 0, sizeof(*b));
	ret = check(vpmu_replay_create(&b->rp), "replay");
	ret = ret ? ret : vpmu_replay_add_event(b->rp, 0x10, "e");
	ret = ret ? ret : vpmu_replay_set_rate(b->rp, 0, 0x10, 1000000000ULL);
	if (ret)
		return ret;
	vpmu_replay_instance(b->rp, &b->be);
	vpmu_limits_default(&cfg.limits);
	cfg.limits.smpl_mem_max = 2 << 20;
	cfg.backends            = &b->be;
	cfg.nr_backends         = 1;
	ret = check(vpmu_domain_create(&cfg, &b->d), "domain");
	ret = ret ? ret : check(vpmu_cpu_create(b->d, 0, &b->cpu), "cpu");
	if (ret)
		return ret;
	b->who = (struct vpmu_caller){.owner = VPMU_OWNER_GUEST, .cpu = b->cpu};
	memcpy(c.ctx_smpl_buf_id, uuid, 16);
	ret   = check(vpmu_ctx_create(b->d, &b->who, &c, 1, &a, sizeof(a)),
		      "create");
	b->fd = c.ctx_fd;
	ret   = ret ? ret : vpmu_ctx_write_pmcs(b->d, &b->who, b->fd, &pmc, 1);
	ret   = ret ? ret : vpmu_ctx_write_pmds(b->d, &b->who, b->fd, &pmd, 1);
	ret   = ret ? ret
		    : vpmu_ctx_load(b->d, &b->who, b->fd, &(struct pfarg_load){0},
				    1);
	return ret ? check(ret, "program")
		   : check(vpmu_ctx_start(b->d, &b->who, b->fd, NULL, 0),
			   "start");
}

/* Best-of-ROUNDS ns per overflowing account call (restart when full). */
static double time_sampling(struct bench *b, unsigned int n)
{
	struct vpmu_guest_state gs = {.ip = 0x1000};
	double best                = 1e30;
	unsigned int r, i;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (i = 0; i < n; i++) {
			vpmu_cpu_account(b->cpu, 1000, &gs);
			if ((i & 4095) == 4095)
				vpmu_ctx_restart(b->d, &b->who, b->fd, 0);
		}
		double per = (double)(now_ns() - t0) / n;

		best = per < best ? per : best;
	}
	return best;
}

static void teardown(struct bench *b)
{
	vpmu_domain_destroy(b->d);
	vpmu_replay_destroy(b->rp);
}

/* Best-of-ROUNDS ns per vpmu_cpu_account(cpu, (dns)) call. */
static double time_account(struct bench *b, uint64_t dns, unsigned int n)
{
	struct vpmu_guest_state gs = {.ip = 0x1000};
	double best                = 1e30;
	unsigned int r, i;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (i = 0; i < n; i++)
			vpmu_cpu_account(b->cpu, dns, &gs);
		double per = (double)(now_ns() - t0) / n;

		best = per < best ? per : best;
	}
	return best;
}

/* Best-of-ROUNDS ns per memcpy of (bytes) (the floor). */
static double time_memcpy(size_t bytes, unsigned int n)
{
	static char src[65536], dst[65536];
	double best = 1e30;
	unsigned int r, i;

	for (r = 0; r < ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (i = 0; i < n; i++) {
			src[i & 63]++;
			memcpy(dst, src, bytes);
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		double per = (double)(now_ns() - t0) / n;

		best = per < best ? per : best;
	}
	return best;
}

static void report(const char *what, double ns, size_t bytes, double floor)
{
	printf("%-40s %9.1f ns   floor memcpy %5zu B %7.1f ns   ratio %6.1f\n",
	       what, ns, bytes, floor, ns / floor);
}

int main(void)
{
	/* Per exit: the 8 counters' state (PMC, PMD, backend event). */
	size_t acct_bytes =
		8 * (sizeof(struct vpmu_pmc) + sizeof(struct vpmu_pmd) +
		     sizeof(struct vpmu_bevent));
	/* Per switch: save one set's counters and load another's. */
	size_t sw_bytes =
		2 * 8 * (sizeof(struct vpmu_pmc) + sizeof(struct vpmu_pmd));
	struct bench b;
	double acct, sw, plain2;
	unsigned int n = 200000;

	if (setup(&b, 1, 0))
		return 1;
	acct = time_account(&b, 1000, n);
	teardown(&b);
	report("account, 8 counters (per exit)", acct, acct_bytes,
	       time_memcpy(acct_bytes, n));

	/* Two sets, 1 ns timeouts: every 1 ns account call switches. */
	if (setup(&b, 2, 1))
		return 1;
	sw = time_account(&b, 1, n);
	teardown(&b);
	if (setup(&b, 2, 0))
		return 1;
	plain2 = time_account(&b, 1, n);
	teardown(&b);
	report("account + set switch (per exit)", sw, sw_bytes,
	       time_memcpy(sw_bytes, n));
	report("set switch alone (difference)", sw - plain2, sw_bytes,
	       time_memcpy(sw_bytes, n));

	if (setup_sampling(&b))
		return 1;
	report("account + overflow + sample (default)", time_sampling(&b, n),
	       sizeof(struct pfm_default_smpl_entry),
	       time_memcpy(sizeof(struct pfm_default_smpl_entry), n));
	teardown(&b);
	return 0;
}
