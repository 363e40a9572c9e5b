// SPDX-License-Identifier: MIT
/*
 * test_timing.c: the timing measurements (backends, timers) on real
 * guests (tests/kvm/guests/tm_*.c, which document each method):
 *
 *   exact hv counts   hypercalls, PIO, trapped MSR reads and writes,
 *                     halts, injected interrupts, exits and exits by
 *                     reason of a ring-0 guest, exactly, also while
 *                     another vCPU makes hypercalls (tm_exact);
 *   guest cycles      hv_guest_cycles and hv_run_ns over a CPU-bound
 *                     ring-3 loop within 2 % of the guest TSC, on each
 *                     of 2 vCPUs at once (tm_cycles);
 *   skid              exit-driven overflows (hv_hypercalls) with skid 0
 *                     and an exact sample count; timer-driven ones
 *                     (hv_guest_cycles) with a median skid below the
 *                     VMM's timer minimum plus two exits, every period
 *                     delivered at a full CPU share (tm_skid);
 *   set switching     1 ms time-switched sets: the average achieved
 *                     period within 10 % of 1 ms, and the 100 us
 *                     granularity given back in set_timeout, and the
 *                     VMM's kicks per switch (tm_switch).
 *
 * kvmstat monotonicity and its consistency with the hv exit counts, and
 * perf software events, are test_backends.c's and test_backends_perf.c's.
 *
 * Robustness. The measurements of one binary run one at a time (a file
 * lock), each up to TM_ATTEMPTS times until one is within its bound; all
 * attempts are printed. Guest run time is time inside KVM_RUN, which
 * includes host preemption of the vCPU thread: no kick is taken while it
 * waits for a CPU, so on an overloaded host timer-driven figures stretch
 * (measured: a 1 ms set period of 2.07 ms at a 46 % CPU share, 1.14 ms
 * at 90 %: roughly the period over the share). The guests therefore print
 * the vCPU thread's CPU share inside KVM_RUN (task-clock / hv_run_ns).
 * When no attempt meets a timer bound and no attempt had TM_MIN_SHARE of
 * the CPU (or the share is unknown: no perf), the skid test is skipped with
 * that reason instead of failing, and the set-switch test asserts the median
 * single period (seen on the shared page; robust to the few periods preemption
 * stretched: 1.03 ms at a 49 % share whose average was 1.97 ms) instead of the
 * average (and is skipped, with the load and share, when even the median
 * waited for a CPU); with the CPU available, a miss fails. The ctest test
 * runs alone (RUN_SERIAL) so that the suite's own guests do not take the
 * CPU it measures. The cycles/TSC comparison is
 * immune (both clocks run while preempted) and always asserted.
 *
 * Measured on the development host (PVM, 2 cores, load 3-4): cycles/TSC
 * 1.0005-1.0009 (the two half exits of the reads, ~85 us in 100 ms);
 * exit-driven skid 0 in 50 of 50 samples; timer-driven median skid
 * 23-45 us (bound 74-100 us; the ring-3 NOP round trip is 32-45 us),
 * p90 31-57 us at a full CPU share, milliseconds when overloaded; every
 * 1 ms period delivered at a full share (196 of 196; 178 of 193 at a 91 %
 * share, 91 of 203 when overloaded); set period 1.025-1.05 ms at a full
 * CPU share (single-period median 1.03-1.04 ms, also when overloaded);
 * set_timeout comes back rounded up to 100 us (1.05 ms -> 1.1 ms, 1 ns
 * -> 100 us).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"

#define TM_ATTEMPTS  5
#define TM_MIN_SHARE 970000ULL /* ppm: the vCPU thread had 97 % of a CPU */
#define TM_PPM       1000000ULL
#define TM_TIMER_MIN 10000ULL /* VMM_TIMER_MIN_NS (vmm/pv/vm_pmu.c) */

static struct vpmu_result res;
static int lock_fd = -1;

/* One measurement of this binary at a time (Criterion runs --jobs=2). */
static void setup(void)
{
	kvm_require();
	lock_fd = open(VPMU_BUILD_DIR "/tests/kvm/test_timing.lock",
		       O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	cr_assert(ge(int, lock_fd, 0), "lock file");
	cr_assert(eq(int, flock(lock_fd, LOCK_EX), 0));
}

static void teardown(void)
{
	if (lock_fd >= 0)
		close(lock_fd);
}

TestSuite(timing, .init = setup, .fini = teardown, .timeout = 240);

/* The value of "key=" on the guest's "<prog>: summary" line. */
static unsigned long long field(const char *prog, const char *key)
{
	char tag[64], k[64];
	const char *line, *p;

	snprintf(tag, sizeof(tag), "%s: summary ", prog);
	line = strstr(res.out, tag);
	cr_assert(not(eq(ptr, (void *)line, NULL)), "no summary in:\n%s",
		  res.out);
	snprintf(k, sizeof(k), " %s=", key);
	p = strstr(line, k);
	cr_assert(not(eq(ptr, (void *)p, NULL)), "no %s in:\n%s", key, res.out);
	return strtoull(p + strlen(k), NULL, 10);
}

static unsigned long long dist(unsigned long long a, unsigned long long b)
{
	return a > b ? a - b : b - a;
}

/* Host load, for messages. */
static const char *loadavg(void)
{
	static char buf[128];
	FILE *f = fopen("/proc/loadavg", "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Why a timer figure may not hold: the host's load and the CPU share. */
static const char *why_unmet(unsigned long long best_share)
{
	static char buf[256];

	if (!best_share)
		snprintf(buf, sizeof(buf),
			 "CPU share unknown (perf task-clock unavailable), "
			 "load %s",
			 loadavg());
	else
		snprintf(buf, sizeof(buf),
			 "host overloaded (load %s): the vCPU thread had at "
			 "most %llu ppm of a CPU inside KVM_RUN",
			 loadavg(), best_share);
	return buf;
}

/*
 * Two contexts make every halt end at once (tm_exact.c); a per-thread
 * context counts all of it exactly: 25 halts, 25 interrupts, 30 MSR reads
 * and 20 writes that #GP under --pmu none, 126 hypercalls, 166 PIO exits,
 * 241 exits.
 * The halts end on notifications of a context that overflows at every
 * hypercall: where each exit costs the VMM much (an ASan build on a PVM
 * host) that passes the default 25 % overhead limit, whose throttle then
 * drops the notification a halt waits for (a halted vCPU's run time stands
 * still: nothing else ends it). These tests count, they do not throttle.
 */
Test(timing, exact_hv_counts_of_hypercalls_pio_msrs_and_halts)
{
	RUN("run", GUEST("tm_exact"), "--pmu", "none", "--max-overhead", "100");
	STATUS(0);
	HAS(res.out, "tm_exact: hv_halts 25 (want 25)");
	HAS(res.out, "tm_exact: hv_msr_reads 30 (want 30)");
	HAS(res.out, "tm_exact: hv_msr_writes 20 (want 20)");
	HAS(res.out, "tm_exact: hv_exits 241 (want 241)");
	HAS(res.out, "tm_exact: ok (35 checks)");
}

/* The same on vCPU 0 while vCPU 1 makes hypercalls under its own context. */
Test(timing, exact_hv_counts_are_per_vcpu)
{
	RUN("run", GUEST("tm_exact"), "--pmu", "none", "--vcpus", "2",
	    "--max-overhead", "100");
	STATUS(0);
	HAS(res.out, "tm_exact: hv_halts 25 (want 25)");
	HAS(res.out, "tm_exact: hv_exits 241 (want 241)");
	HAS(res.out, "hv_halts 0 (want 0)");
	HAS(res.out, "tm_exact: ok (38 checks)");
}

Test(timing, guest_cycles_within_2pct_of_the_tsc)
{
	unsigned long long cyc = 0, ns = 0;
	unsigned int a;

	for (a = 0; a < TM_ATTEMPTS; a++) {
		RUN("run", GUEST("tm_cycles"), "--vcpus", "2");
		STATUS(0);
		cyc = field("tm_cycles", "cycles_ppm");
		ns  = field("tm_cycles", "run_ns_ppm");
		fprintf(stderr,
			"guest cycles: attempt %u: hv_guest_cycles / TSC "
			"%llu ppm, hv_run_ns / TSC ns %llu ppm\n",
			a, cyc, ns);
		if (dist(cyc, TM_PPM) <= TM_PPM / 50 &&
		    dist(ns, TM_PPM) <= TM_PPM / 50)
			return;
	}
	cr_fail("hv_guest_cycles / TSC = %llu ppm, hv_run_ns / TSC ns = %llu "
		"ppm: not within 2 %% in %u attempts (load: %s)\n%s",
		cyc, ns, TM_ATTEMPTS, loadavg(), res.out);
}

Test(timing, overflow_skid_exit_driven_0_timer_driven_bounded)
{
	unsigned long long rt, med, p90, max, share, best_share = 0, got, want;
	unsigned int a;

	for (a = 0; a < TM_ATTEMPTS; a++) {
		/* The timer's precision: no overhead budget dropping
		 * samples (100 % never bites). */
		RUN("run", GUEST("tm_skid"), "--max-overhead", "100");
		/* Exit-driven skid 0 and the exact count: checked inside. */
		STATUS(0);
		HAS(res.out, "skid median 0 p90 0 max 0 events");
		rt    = field("tm_skid", "rt_ns");
		med   = field("tm_skid", "timer_median_ns");
		p90   = field("tm_skid", "timer_p90_ns");
		max   = field("tm_skid", "timer_max_ns");
		share = field("tm_skid", "share_ppm");
		got   = field("tm_skid", "timer_samples");
		want  = field("tm_skid", "timer_expected");
		if (share > best_share)
			best_share = share;
		fprintf(stderr,
			"skid: attempt %u: timer-driven median %llu ns, p90 "
			"%llu ns, max %llu ns; bound %llu ns (timer minimum "
			"%llu + 2 x exit %llu); %llu of %llu periods "
			"delivered; CPU share %llu ppm\n",
			a, med, p90, max, TM_TIMER_MIN + 2 * rt, TM_TIMER_MIN,
			rt, got, want, share);
		/*
		 * At a full CPU share no skid reaches a whole period (1 ms):
		 * every period is delivered (one of slack for the edges).
		 */
		if (med <= TM_TIMER_MIN + 2 * rt &&
		    (share < TM_MIN_SHARE || got + 1 >= want))
			return;
	}
	if (best_share < TM_MIN_SHARE)
		cr_skip_test("%s; median skid %llu ns not asserted",
			     why_unmet(best_share), med);
	cr_fail("timer-driven median skid %llu ns (bound %llu ns), %llu of "
		"%llu periods delivered, in %u attempts (load %s)\n%s",
		med, TM_TIMER_MIN + 2 * rt, got, want, TM_ATTEMPTS, loadavg(),
		res.out);
}

Test(timing, set_switch_period_within_10pct_of_1ms)
{
	unsigned long long ppm = 0, med = 0, share, best_share = 0;
	unsigned int a;
	bool med_ok = true;

	for (a = 0; a < TM_ATTEMPTS; a++) {
		/* The spec's timing: no overhead budget lengthening the
		 * switch interval (100 % never bites). */
		RUN("run", GUEST("tm_switch"), "--max-overhead", "100");
		STATUS(0);
		HAS(res.out, "tm_switch: granularity: 1 ns -> 100000 ns, "
			     "1000000 ns -> 1000000 ns, 1050000 ns -> 1100000 "
			     "ns, 1234500 ns -> 1300000 ns");
		ppm   = field("tm_switch", "period_ppm");
		med   = field("tm_switch", "median_ppm");
		share = field("tm_switch", "share_ppm");
		/* The shared page shows the interval in force. */
		cr_expect(eq(u64, field("tm_switch", "switch_ns"), 1000000),
			  "shared page switch_ns\n%s", res.out);
		if (share > best_share)
			best_share = share;
		med_ok = med_ok && dist(med, TM_PPM) <= TM_PPM / 10;
		fprintf(stderr,
			"set switching: attempt %u: average period %llu ns "
			"over %llu runs (1 ms requested), single-period "
			"median %llu ppm, CPU share %llu ppm\n",
			a, field("tm_switch", "period_ns"),
			field("tm_switch", "runs"), med, share);
		if (dist(ppm, TM_PPM) <= TM_PPM / 10)
			return;
	}
	/*
	 * Overloaded: preemption inside KVM_RUN stretched a few periods and
	 * with them the average; the median single period still shows the
	 * VMM's own precision and must hold in every attempt.
	 */
	if (best_share < TM_MIN_SHARE && med_ok) {
		/* Not cr_log_warn(): Criterion 2.4 then exits non-zero. */
		fprintf(stderr,
			"[WARN] %s; average %llu ppm of 1 ms not asserted, the "
			"median single period (%llu ppm) is within 10 %%\n",
			why_unmet(best_share), ppm, med);
		return;
	}
	/*
	 * So overloaded that most periods waited for a CPU (seen at a load
	 * of 18 on 2 cores: a 18-24 % share, median 1.04-4.7 ms): what is
	 * measured is the host's scheduler, not the VMM's timer.
	 */
	if (best_share < TM_MIN_SHARE)
		cr_skip_test("%s; average %llu ppm and median single period "
			     "%llu ppm of 1 ms not asserted",
			     why_unmet(best_share), ppm, med);
	cr_fail("average set period %llu ppm of 1 ms (median single period "
		"%llu ppm): not within 10 %% in %u attempts (load %s, best CPU "
		"share %llu ppm)\n%s",
		ppm, med, TM_ATTEMPTS, loadavg(), best_share, res.out);
}

/* The VMM's kicks in `--stats` (stderr): "  (kicks)   N"; 0 if none. */
static unsigned long long kicks(void)
{
	const char *p = strstr(res.err, "(kicks)");

	return p ? strtoull(p + strlen("(kicks)"), NULL, 10) : 0;
}

/*
 * How many times the VMM interrupts the vCPU per set switch. A CPU-bound
 * loop: one kick per switch (asserted at a full CPU share, within 10 %).
 * A loop that exits every ~50 us: run time lags the wall-clock timer by
 * the time spent handling exits, so the timer fires early, the deadline
 * is not reached yet and a second kick would follow; the VMM re-arms the
 * timer once that drift passes 20 us, and re-arms it without a kick when
 * it fires while an exit is handled, so both loops get at most about one
 * kick per switch (asserted when the vCPU had the CPU to itself).
 */
Test(timing, kicks_per_set_switch)
{
	unsigned long long k, sw, share;

	/* Kicks per switch, not the budget: where kicks are slow (nested
	 * virtualization) the default 25 % would stretch the switches. */
	RUN("run", GUEST("tm_switch"), "--stats", "--max-overhead", "100");
	STATUS(0);
	k     = kicks();
	sw    = field("tm_switch", "runs") - 1; /* LOAD's run: no switch */
	share = field("tm_switch", "share_ppm");
	fprintf(stderr,
		"kicks per switch: CPU-bound loop %llu kicks / %llu switches "
		"(CPU share %llu ppm)\n",
		k, sw, share);
	if (share >= TM_MIN_SHARE)
		cr_expect(le(u64, k, sw + sw / 10 + 2),
			  "%llu kicks for %llu switches", k, sw);
	RUN("run", GUEST("tm_switch"), "--stats", "--max-overhead", "100",
	    "--name", "tm_switch-mixed");
	STATUS(0);
	HAS(res.out, "tm_switch: mixed workload:");
	k     = kicks();
	sw    = field("tm_switch", "runs") - 1;
	share = field("tm_switch", "share_ppm");
	fprintf(stderr,
		"kicks per switch: loop with exits %llu kicks / %llu "
		"switches (CPU share %llu ppm)\n",
		k, sw, share);
	/*
	 * Exits push the wall-clock timer early; the VMM re-arms it once the
	 * drift passes 20 us, or when it fired during an exit's handling, so
	 * frequent exits must not double the kicks.
	 * A preempted vCPU misses deadlines and takes extra kicks: only a
	 * run with the CPU to itself is judged.
	 */
	if (share >= TM_MIN_SHARE)
		cr_expect(le(u64, k, sw + sw / 10 + 2),
			  "%llu kicks for %llu switches", k, sw);
}

/*
 * The kernel's part of a kick is measured when the VM starts (a bare
 * vCPU counting with its TSC what each kick took from it) and charged for
 * every kick that came inside KVM_RUN, scaled by that kick's exit against
 * the probe's: none is charged more than twice, some (timers that fired
 * outside KVM_RUN) nothing. What is charged per ns of exit is the mean of
 * the host's recent probes, kept in the runtime directory: the second VM
 * of a fresh directory charges the mean of two. Where the host does not
 * trust its TSC there is no probe, and --stats says so.
 */
static unsigned int kick_probe_run(double *ratio)
{
	double charged = -1, lost = -1, user = -1, still = -1, exit = -1;
	unsigned int probes = 0;
	const char *p;

	RUN("run", GUEST("tm_switch"), "--stats", "--max-overhead", "100");
	STATUS(0);
	p = strstr(res.err, "kernel part charged ");
	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", res.err);
	sscanf(p, "kernel part charged %lf us", &charged);
	if (!strstr(res.err, "TSC: stable")) {
		HAS(res.err, "(no probe: twice the exit's length)");
		return 0;
	}
	p = strstr(res.err, "(probed at start: a kick cost a bare guest ");
	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", res.err);
	cr_assert(eq(int,
		     sscanf(p,
			    "(probed at start: a kick cost a bare guest %lf "
			    "us, %lf of it in user space; it stood still %lf; "
			    "exit %lf, scaled by each kick's; the kernel part "
			    "per ns of exit %lf, from %u probe",
			    &lost, &user, &still, &exit, ratio, &probes),
		     6),
		  "%s", p);
	fprintf(stderr,
		"kick probe: %.2f us a kick, %.2f in user space, %.2f standing "
		"still, exit %.2f, %.3f ns kernel per ns of exit from %u "
		"probes; charged %.2f us per kick\n",
		lost, user, still, exit, *ratio, probes, charged);
	cr_expect(lt(dbl, 0.0, user), "%s", p);
	cr_expect(lt(dbl, 0.0, still), "%s", p);
	cr_expect(lt(dbl, user, lost), "%s", p);
	cr_expect(lt(dbl, 0.0, charged), "%s", res.err);
	cr_expect(lt(dbl, 0.0, exit), "%s", p);
	cr_expect(lt(dbl, 0.0, *ratio), "%s", p);
	/* Scaled by each kick's exit: at most twice the probed part. */
	cr_expect(le(dbl, charged, 2 * (lost - user) + 0.01), "%s", res.err);
	return probes;
}

/* The last run's own probe waited for a CPU (a loaded host): not kept. */
static bool probe_waited(void)
{
	return strstr(res.err, "this VM's own probe waited for a CPU") != NULL;
}

Test(timing, kick_cost_is_probed_when_the_vm_starts)
{
	char dir[64], path[128], text[4096] = "";
	double first = 0, second = 0;
	unsigned int n, kept;

	cr_assert(eq(int, rundir_make(dir, sizeof(dir)), 0));
	n = kick_probe_run(&first);
	if (!n) { /* no probe on this host, and --stats said so */
		rundir_remove(dir);
		return;
	}
	cr_expect(eq(u32, n, 1), "a fresh runtime directory");
	kept = !probe_waited();
	n    = kick_probe_run(&second);
	/* The mean of the kept ones, its own among them if it was kept. */
	if (probe_waited())
		cr_expect(eq(u32, n, kept ? kept : 1), "%s", res.err);
	else
		cr_expect(eq(u32, n, ++kept), "%s", res.err);
	snprintf(path, sizeof(path), "%s/kick-probes", dir);
	slurp_file(path, text, sizeof(text));
	cr_expect(eq(u32, count_str(text, "\"exit_ns\":"), kept), "%s", text);
	fprintf(stderr, "kick probes kept in the runtime directory: %u of 2\n",
		kept);
	rundir_remove(dir);
}

/* The slowdown benchmark (scripts/bench.sh) runs; no figure asserted. */
Test(timing, slowdown_benchmark_runs)
{
	RUN("run", GUEST("bench_slowdown"), "--name", "bench_slowdown-quick");
	STATUS(0);
	HAS(res.out, "3 interleaved rounds");
	HAS(res.out, "bench_slowdown: sampling 1 kHz ");
	HAS(res.out, "samples/s (of run time)");
}
