// SPDX-License-Identifier: MIT
/*
 * bench_pfm.c: what the SDK's reads cost, in one run, guest TSC cycles
 * (image bench_pfm; scripts/bench.sh style output):
 *
 *   floor0  `outl` to PVPMU_PORT_NULL from ring 0 (a bare PIO exit),
 *           measured by guest_main() before ring 3 starts
 *   floor3  the same bare exit from ring 3: `outl` to PVPMU_PORT_NULL if
 *           the kernel grants it to ring 3, else the NOP doorbell (which
 *           the VMM answers without work: about 1x the null port,
 *           docs/benchmarks.md).
 *           On PVM a ring-3 OUT traps and its I/O bitmap check is
 *           emulated, so floor3 > floor0; the SDK runs in ring 3, so
 *           floor3 is the floor its hypercalls are held to. Both
 *           go through vpmu's PIO dispatch: floor3 is not a bare KVM
 *           exit (tests/bench/sample_cost/bare_kvm.c is).
 *   read1/4/8   pfm_read_pmds() of 1, 4 and 8 PMDs (one hypercall)
 *   fast1/8     pvpmu_read_fast() of 1 and 8 PMDs (shared page, no exit)
 *   ssr         pfm_start() + pfm_stop() + pfm_read_pmds() of 8 PMDs
 *
 * BENCH_ROUNDS rounds run every kind once, in an order rotated by one each
 * round. Per kind, the mean over all rounds and the best round are
 * printed; the ratios read/floor3 (target <= 1.2 for 1 PMD) and
 * read1/fast1 (target >= 100) are paired within each round (measured
 * moments apart, so host load drifts cancel) and their median over the
 * rounds is reported, in two-decimal fixed point (no FPU).
 */
#include "bench.h"
#include "kernel.h"
#include "tool_bare.h"

#include "pvpmu_hc.h"

#define BENCH_ROUNDS 16
#define HC_ITERS     200   /* hypercall kinds, per round */
#define FAST_ITERS   20000 /* fast reads, per round */
#define NR_PMDS      8

enum kind {
	K_FLOOR3,
	K_READ1,
	K_READ4,
	K_READ8,
	K_FAST1,
	K_FAST8,
	K_SSR,
	NR_KINDS
};

static const char *const names[NR_KINDS] = {
	"floor3 vpmu exit", "read_pmds 1", "read_pmds 4",       "read_pmds 8",
	"fast read 1",      "fast read 8", "start+stop+read 8",
};

static uint64_t floor0_best = ~0ULL; /* written in ring 0 */
static struct pvpmu_shared_page page __attribute__((aligned(4096)));
static pfarg_pmd_t pmds[NR_PMDS];
static int null_in_ring3;

/* Ring 0: the bare-exit floor, then the ring-3 program. */
void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	unsigned int r;
	uint64_t c;

	(void)bi;
	if (vcpu == 0) {
		for (r = 0; r < BENCH_ROUNDS; r++) {
			c = bench_outl_loop(PVPMU_PORT_NULL, 0, 64) / 64;
			if (c < floor0_best)
				floor0_best = c;
		}
	}
	kernel_user_run(vcpu);
}

static uint64_t run(enum kind k, int fd)
{
	uint64_t t0 = rdtsc_ordered();
	unsigned int i;

	switch (k) {
	case K_FLOOR3:
		if (null_in_ring3)
			return bench_outl_loop(PVPMU_PORT_NULL, 0, HC_ITERS);
		for (i = 0; i < HC_ITERS; i++)
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
		break;
	case K_READ1:
	case K_READ4:
	case K_READ8:
		for (i = 0; i < HC_ITERS; i++)
			pfm_read_pmds(fd, pmds,
				      k == K_READ1   ? 1
				      : k == K_READ4 ? 4
						     : 8);
		break;
	case K_FAST1:
	case K_FAST8:
		for (i = 0; i < FAST_ITERS; i++)
			pvpmu_read_fast(&page, fd, pmds, k == K_FAST1 ? 1 : 8);
		break;
	default:
		for (i = 0; i < HC_ITERS; i++) {
			pfm_start(fd, 0);
			pfm_stop(fd);
			pfm_read_pmds(fd, pmds, NR_PMDS);
		}
		break;
	}
	return rdtsc_ordered() - t0;
}

static int setup(unsigned int vcpu, int *fd)
{
	static const char *const ev[NR_PMDS] = {
		"hv_guest_cycles", "hv_run_ns", "hv_exits", "hv_hypercalls",
		"hv_pio",          "hv_irqs",   "hv_halts", "hv_mmio"};
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmc_t pmc[NR_PMDS];
	pfarg_load_t ld = {.load_pid = vcpu};
	unsigned int i;
	int ret;

	ret = pvpmu_shared_attach(&page);
	if (!ret)
		ret = pfm_create_context(&ctx, 0, 0);
	for (i = 0; !ret && i < NR_PMDS; i++) {
		pmc[i]  = (pfarg_pmc_t){.reg_num = (uint16_t)i};
		pmds[i] = (pfarg_pmd_t){.reg_num = (uint16_t)i};
		ret     = pvpmu_event_encode(ev[i], &pmc[i].reg_value, 0);
	}
	if (!ret)
		ret = pfm_write_pmcs(ctx.ctx_fd, pmc, NR_PMDS);
	if (!ret)
		ret = pfm_load_context(ctx.ctx_fd, &ld);
	if (!ret)
		ret = pfm_start(ctx.ctx_fd, 0);
	/* Check the measured calls once, on the success path. */
	if (!ret)
		ret = pfm_read_pmds(ctx.ctx_fd, pmds, NR_PMDS);
	if (!ret)
		ret = pvpmu_read_fast(&page, ctx.ctx_fd, pmds, NR_PMDS);
	*fd = ctx.ctx_fd;
	return ret ? tool_err("bench_pfm", "setup", ret) : 0;
}

static void report(const char *what, const uint64_t *per, uint64_t khz)
{
	int k;

	for (k = 0; k < NR_KINDS; k++)
		uprintf("bench_pfm: %s %-18s %8llu cycles %8llu ns\n", what,
			names[k], (unsigned long long)per[k],
			(unsigned long long)(khz ? per[k] * 1000000 / khz : 0));
}

/* Paired ratios, x100, one per round; NR_RATIOS of them. */
enum { R_READ1, R_READ4, R_READ8, R_READ1_F0, R_FAST, NR_RATIOS };
static uint64_t ratios[NR_RATIOS][BENCH_ROUNDS];

static void pair(unsigned int round, const uint64_t *c)
{
	ratios[R_READ1][round]    = pvpmu_muldiv(c[K_READ1], 100, c[K_FLOOR3]);
	ratios[R_READ4][round]    = pvpmu_muldiv(c[K_READ4], 100, c[K_FLOOR3]);
	ratios[R_READ8][round]    = pvpmu_muldiv(c[K_READ8], 100, c[K_FLOOR3]);
	ratios[R_READ1_F0][round] = pvpmu_muldiv(c[K_READ1], 100, floor0_best);
	ratios[R_FAST][round]     = pvpmu_muldiv(c[K_READ1], 100, c[K_FAST1]);
}

static void report_ratios(void)
{
	static const char *const rn[NR_RATIOS] = {
		"read1/floor3", "read4/floor3", "read8/floor3", "read1/floor0",
		"read1/fast1"};
	char line[256], x[24];
	unsigned int r, len = 0;
	uint64_t m;

	for (r = 0; r < NR_RATIOS; r++) {
		m = bench_median(ratios[r], BENCH_ROUNDS);
		bench_fix2(x, sizeof(x), m);
		len += (unsigned int)usnprintf(line + len, sizeof(line) - len,
					       " %s=%s", rn[r], x);
	}
	uprintf("bench_pfm: median paired ratio%s\n", line);
}

int user_main(unsigned int vcpu)
{
	const struct pvpmu_boot_info *bi = user_boot_info();
	uint64_t sum[NR_KINDS]           = {0}, best[NR_KINDS], cyc, n;
	int round, k, fd;
	unsigned int i;

	if (vcpu)
		return 0;
	null_in_ring3 = user_outl_safe(PVPMU_PORT_NULL, 0) == 0;
	if (setup(vcpu, &fd))
		return 1;
	uprintf("bench_pfm: floor0 (ring 0 null port) %llu cycles; floor3 "
		"is %s from ring 3; tsc %llu kHz\n",
		(unsigned long long)floor0_best,
		null_in_ring3 ? "the null port" : "the NOP doorbell",
		(unsigned long long)bi->tsc_khz);
	for (k = 0; k < NR_KINDS; k++)
		best[k] = ~0ULL;
	for (round = 0; round < BENCH_ROUNDS; round++) {
		uint64_t per[NR_KINDS];

		pfm_start(fd, 0);
		for (i = 0; i < NR_KINDS; i++) {
			/* Rotate the order: no kind always follows another. */
			k      = (int)((i + (unsigned int)round) % NR_KINDS);
			n      = k == K_FAST1 || k == K_FAST8 ? FAST_ITERS
							      : HC_ITERS;
			cyc    = run(k, fd);
			per[k] = cyc / n;
			sum[k] += cyc / BENCH_ROUNDS;
			if (per[k] < best[k])
				best[k] = per[k];
		}
		pair((unsigned int)round, per);
	}
	for (k = 0; k < NR_KINDS; k++)
		sum[k] /= k == K_FAST1 || k == K_FAST8 ? FAST_ITERS : HC_ITERS;
	report("mean", sum, bi->tsc_khz);
	report("best", best, bi->tsc_khz);
	report_ratios();
	pfm_close(fd);
	pvpmu_shared_attach(0);
	return 0;
}
