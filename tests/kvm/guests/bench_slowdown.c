// SPDX-License-Identifier: MIT
/*
 * bench_slowdown.c: what monitoring costs a CPU-bound ring-3 guest
 * workload, all figures from one run, guest TSC cycles:
 *
 *   none      no context: the floor
 *   exits1k   no context; the workload itself makes a NOP hypercall
 *             after each 1/BENCH_MS of it (1000 ring-3 exits per second):
 *             the floor of a 1 kHz monitoring rate if each event cost one
 *             guest-made exit
 *   count8    8 hv counters counting (one set; nothing armed: no kick)
 *             target <= 1 %
 *   mux1ms    16 hv events in 2 sets of 8, PFM_SETFL_TIME_SWITCH every
 *             1 ms of run time (a kick per switch)        target <= 2 %
 *   smpl1k    default-format sampling on hv_guest_cycles with a period
 *             of tsc_khz cycles (1000 samples per second of run time; a
 *             kick per sample), hv_exits in each sample    target <= 2 %
 *
 * The workload is a fixed number of tool_spin() rounds (about BENCH_MS,
 * calibrated once), timed with the TSC, which also runs during exits, so
 * their cost shows. Each round runs every configuration once, in an order
 * rotated per round; context set-up and tear-down are outside the timed
 * part. Per configuration the median and the best of BENCH_ROUNDS rounds
 * are printed, and their ratios to none's. mux1ms is also the kick floor
 * of smpl1k (the same kick rate without samples): smpl1k / mux1ms is what
 * the samples themselves cost. The achieved switch and sample rates are
 * printed too, and the cost of one exit (from exits1k) and of one kick
 * (from mux1ms), from the best rounds; tests/bench/timing/bench_kick.c
 * measures the host-side part of a kick (timer signal, re-arm). Last,
 * the vCPU thread's CPU share over the run (share_start()).
 *
 * With the VM name "bench_slowdown-quick" it runs QUICK_ROUNDS rounds of
 * QUICK_MS (tests/kvm/test_timing.c checks that it runs; no figure is
 * asserted).
 *
 * Every figure is a ratio of TSC times in the same run; host preemption
 * of the vCPU thread lands in whichever round it hits (medians and best
 * rounds damp it). Fixed point throughout (no FPU in guests).
 */
#include "smpl_setup.h"
#include "tm.h"

#include "pvpmu_hc.h"

#define BENCH_ROUNDS 11
#define BENCH_MS     100
#define QUICK_ROUNDS 3 /* --name bench_slowdown-quick: a smoke run */
#define QUICK_MS     10
#define BENCH_BUF    (64 * 1024)
#define NR_HV        8

enum kind { K_NONE, K_EXITS, K_COUNT8, K_MUX, K_SMPL, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"none (floor)",    "1k NOP exits/s", "8 hv counters",
	"mux 2x8 at 1 ms", "sampling 1 kHz",
};
static const char *const targets[NR_KINDS] = {"", "(floor)", "<= 1.01",
					      "<= 1.02", "<= 1.02"};

static const char *const hv_a[NR_HV] = {
	"hv_guest_cycles", "hv_run_ns", "hv_exits", "hv_hypercalls",
	"hv_pio",          "hv_irqs",   "hv_halts", "hv_mmio"};
static const char *const hv_b[NR_HV] = {"hv_msr_reads",
					"hv_msr_writes",
					"hv_halted_ns",
					"hv_exit_reason:umask=2",
					"hv_exit_reason:umask=5",
					"hv_exit_reason:umask=29",
					"hv_exit_reason:umask=30",
					"hv_exit_reason:umask=17"};

static uint64_t cycles[NR_KINDS][BENCH_ROUNDS];
static uint64_t events[NR_KINDS]; /* switches / samples, all rounds */
static uint64_t run_ns[NR_KINDS]; /* run time they were counted over */
static unsigned int nr_rounds = BENCH_ROUNDS;
static unsigned int nr_ms     = BENCH_MS; /* workload chunks (exits1k) */

static int sampler(unsigned int vcpu, int *fd)
{
	struct smpl_ctx a;
	pfarg_pmc_t pmc[3] = {{.reg_num = 0, .reg_smpl_pmds = {2}},
			      {.reg_num = 1},
			      {.reg_num = 2}};
	pfarg_pmd_t pmd    = smpl_pmd0(tm_khz());
	int ret;

	ret = smpl_create_context(&a, BENCH_BUF);
	if (ret)
		return tool_err("bench_slowdown", "PFM_CREATE_CONTEXT", ret);
	*fd = a.ctx.ctx_fd;
	ret = pvpmu_event_encode("hv_guest_cycles", &pmc[0].reg_value, 0);
	if (!ret)
		ret = pvpmu_event_encode("hv_run_ns", &pmc[1].reg_value, 0);
	if (!ret)
		ret = pvpmu_event_encode("hv_exits", &pmc[2].reg_value, 0);
	if (!ret)
		ret = pfm_write_pmcs(*fd, pmc, 3);
	if (!ret)
		ret = pfm_write_pmds(*fd, &pmd, 1);
	if (ret)
		return tool_err("bench_slowdown", "sampling set-up", ret);
	return tm_load_start("bench_slowdown", *fd, vcpu);
}

static int muxer(unsigned int vcpu, int *fd)
{
	pfarg_setdesc_t sd[2] = {0};
	pfarg_ctx_t ctx       = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	unsigned int i;
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("bench_slowdown", "PFM_CREATE_CONTEXT", ret);
	*fd = ctx.ctx_fd;
	for (i = 0; i < 2; i++) {
		sd[i].set_id              = (uint16_t)i;
		sd[i].set_flags           = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout.tv_nsec = 1000000;
	}
	ret = pfm_create_evtsets(*fd, sd, 2);
	if (ret)
		return tool_err("bench_slowdown", "PFM_CREATE_EVTSETS", ret);
	if (tm_program("bench_slowdown", fd, 0, hv_a, NR_HV) ||
	    tm_program("bench_slowdown", fd, 1, hv_b, NR_HV))
		return 1;
	return tm_load_start("bench_slowdown", *fd, vcpu);
}

static int setup(enum kind k, unsigned int vcpu, int *fd)
{
	*fd = -1;
	switch (k) {
	case K_COUNT8:
		if (tm_program("bench_slowdown", fd, 0, hv_a, NR_HV))
			return 1;
		return tm_load_start("bench_slowdown", *fd, vcpu);
	case K_MUX:
		return muxer(vcpu, fd);
	case K_SMPL:
		return sampler(vcpu, fd);
	default:
		return 0;
	}
}

/* Stop and close (fd); add its switches or samples to events[k]. */
static void teardown(enum kind k, int fd)
{
	pfarg_setinfo_t si[2] = {{.set_id = 0}, {.set_id = 1}};
	pfarg_pmd_t pmd       = {.reg_num = 1};
	const struct pfm_default_smpl_hdr *h;
	const void *buf;
	uint64_t size;

	if (fd < 0)
		return;
	pfm_stop(fd);
	if (k == K_MUX && pfm_getinfo_evtsets(fd, si, 2) == 0) {
		/* LOAD's activation is not a switch. */
		events[k] += si[0].set_runs + si[1].set_runs - 1;
		run_ns[k] += si[0].set_act_duration.tv_sec * 1000000000ULL +
			     si[0].set_act_duration.tv_nsec +
			     si[1].set_act_duration.tv_sec * 1000000000ULL +
			     si[1].set_act_duration.tv_nsec;
	}
	if (k == K_SMPL && pfm_smpl_buf(fd, &buf, &size) == 0 &&
	    pfm_read_pmds(fd, &pmd, 1) == 0) {
		h = buf;
		events[k] += h->hdr_count;
		run_ns[k] += pmd.reg_value;
	}
	pfm_close(fd);
}

/* tool_spin() rounds for about (ms) of TSC time (best of 3 probes). */
static uint64_t calibrate(uint64_t ms)
{
	uint64_t n = 1000000, t, best = ~0ULL;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		t         = rdtsc_ordered();
		tool_sink = tool_spin(n);
		t         = rdtsc_ordered() - t;
		best      = t < best ? t : best;
	}
	return pvpmu_muldiv(n, tm_khz() * ms, best ? best : 1);
}

static void report(void)
{
	uint64_t med[NR_KINDS], best[NR_KINDS];
	char b1[32], b2[32], r1[16], r2[16];
	unsigned int k;

	for (k = 0; k < NR_KINDS; k++) {
		med[k]  = tm_median(cycles[k], nr_rounds);
		best[k] = cycles[k][0]; /* sorted by tm_median() */
	}
	uprintf("bench_slowdown: %-16s %16s %16s %8s %8s  %s\n", "config",
		"median cycles", "best cycles", "median", "best", "target");
	for (k = 0; k < NR_KINDS; k++)
		uprintf("bench_slowdown: %-16s %16s %16s %8s %8s  %s\n",
			kind_names[k], tool_u64(b1, sizeof(b1), med[k]),
			tool_u64(b2, sizeof(b2), best[k]),
			tm_fix4(r1, sizeof(r1), tm_ppm(med[k], med[K_NONE])),
			tm_fix4(r2, sizeof(r2), tm_ppm(best[k], best[K_NONE])),
			targets[k]);
	uprintf("bench_slowdown: achieved: mux %llu switches/s, sampling "
		"%llu samples/s (of run time)\n",
		(unsigned long long)pvpmu_muldiv(events[K_MUX], 1000000000ULL,
						 run_ns[K_MUX]),
		(unsigned long long)pvpmu_muldiv(events[K_SMPL], 1000000000ULL,
						 run_ns[K_SMPL]));
	uprintf("bench_slowdown: sampling 1 kHz / its kick floor (mux 1 ms): "
		"median %s, best %s\n",
		tm_fix4(r1, sizeof(r1), tm_ppm(med[K_SMPL], med[K_MUX])),
		tm_fix4(r2, sizeof(r2), tm_ppm(best[K_SMPL], best[K_MUX])));
	uprintf("bench_slowdown: sampling 1 kHz / 1k guest-made exits/s: "
		"median %s, best %s\n",
		tm_fix4(r1, sizeof(r1), tm_ppm(med[K_SMPL], med[K_EXITS])),
		tm_fix4(r2, sizeof(r2), tm_ppm(best[K_SMPL], best[K_EXITS])));
	/* What one exit and one kick cost the guest (best rounds). */
	uprintf("bench_slowdown: one ring-3 NOP hypercall costs the guest "
		"%llu ns (best exits1k - best none, over %u per round); one "
		"kick (timer signal, exit, VMM, entry) %llu ns (best mux - "
		"best none, over %llu switches per round)\n",
		(unsigned long long)(best[K_EXITS] > best[K_NONE]
					     ? tm_cyc_to_ns(best[K_EXITS] -
							    best[K_NONE]) /
						       nr_ms
					     : 0),
		nr_ms,
		(unsigned long long)(best[K_MUX] > best[K_NONE] && events[K_MUX]
					     ? pvpmu_muldiv(
						       tm_cyc_to_ns(
							       best[K_MUX] -
							       best[K_NONE]),
						       nr_rounds, events[K_MUX])
					     : 0),
		(unsigned long long)(events[K_MUX] / nr_rounds));
}

/* The workload: (spin) rounds; exits1k cuts it into nr_ms chunks. */
static uint64_t workload(enum kind k, uint64_t spin)
{
	uint64_t x = 0;
	unsigned int i;

	if (k != K_EXITS)
		return tool_spin(spin);
	for (i = 0; i < nr_ms; i++) {
		x ^= tool_spin(spin / nr_ms);
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	}
	return x;
}

/*
 * A per-thread context (thread BENCH_TID, scheduled in for the whole run,
 * next to each configuration's vCPU-wide one) counting task-clock and
 * hv_run_ns: the vCPU thread's share of a CPU while inside KVM_RUN. Below
 * ~97 % the host preempted the vCPU and the figures carry that noise.
 * Its perf read at each exit costs every configuration alike.
 */
#define BENCH_TID 1

static int share_start(void)
{
	pfarg_ctx_t ctx = {0};
	pfarg_load_t ld = {.load_pid = BENCH_TID};
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (!ret)
		ret = tm_share_pmcs(ctx.ctx_fd, 0, 0);
	if (!ret)
		ret = pfm_load_context(ctx.ctx_fd, &ld);
	if (!ret)
		ret = pfm_start(ctx.ctx_fd, 0);
	if (!ret)
		ret = pvpmu_sched(ctx.ctx_fd, PVPMU_SCHED_IN, BENCH_TID);
	return ret ? -1 : ctx.ctx_fd;
}

static void share_end(int fd)
{
	pfarg_pmd_t pmd[2] = {{.reg_num = 0}, {.reg_num = 1}};
	char b[16];

	if (fd < 0 || pvpmu_sched(fd, PVPMU_SCHED_OUT, BENCH_TID) ||
	    pfm_read_pmds(fd, pmd, 2))
		return;
	uprintf("bench_slowdown: vCPU thread CPU share inside KVM_RUN %s "
		"(task-clock / hv_run_ns; below ~0.97 the host preempted "
		"the vCPU: noisy figures)\n",
		tm_fix4(b, sizeof(b),
			tm_ppm(pmd[0].reg_value, pmd[1].reg_value)));
	pfm_close(fd);
}

static int is_quick(void)
{
	static const char quick[] = "bench_slowdown-quick";
	const pvpmu_u8 *name      = user_boot_info()->name;
	unsigned int i;

	for (i = 0; i < sizeof(quick); i++) {
		if (name[i] != (pvpmu_u8)quick[i])
			return 0;
	}
	return 1;
}

int user_main(unsigned int vcpu)
{
	unsigned int r, i, ms = BENCH_MS;
	uint64_t spin, t0;
	enum kind k;
	int fd, share;

	if (vcpu)
		return 0;
	if (is_quick()) {
		nr_rounds = QUICK_ROUNDS;
		ms        = QUICK_MS;
	}
	nr_ms = ms;
	spin  = calibrate(ms);
	uprintf("bench_slowdown: workload %llu tool_spin rounds (~%u ms), "
		"%u interleaved rounds, tsc_khz %llu\n",
		(unsigned long long)spin, ms, nr_rounds,
		(unsigned long long)tm_khz());
	share = share_start();
	for (r = 0; r < nr_rounds; r++) {
		for (i = 0; i < NR_KINDS; i++) {
			k = (enum kind)((i + r) % NR_KINDS);
			if (setup(k, vcpu, &fd))
				return 1;
			t0           = rdtsc_ordered();
			tool_sink    = workload(k, spin);
			cycles[k][r] = rdtsc_ordered() - t0;
			teardown(k, fd);
		}
	}
	report();
	share_end(share);
	return 0;
}
