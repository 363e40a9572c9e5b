// SPDX-License-Identifier: MIT
/*
 * bench_operator.c: the guest's slowdown while a host operator records it
 * at 1 kHz (target <= 2%), in one run.
 *
 * One VM runs op_work (tests/kvm/guests/op_work.c): rounds of fixed
 * ring-3 work on vCPU 0, each timed with the guest TSC (which also runs
 * during exits, so sampling overhead shows up in the round time). The
 * bench cycles through phases of BENCH_PHASE_S seconds: not monitored,
 * `vpmu record -F 1000` on that VM, and the kick floor (`vpmu stat` with
 * event sets switched every 1 ms: 1000 vCPU kicks a second, no samples),
 * BENCH_PHASES times each, reading the console as it goes; the first round
 * after each switch is dropped (it straddles the switch). It prints the
 * median round of each kind, the ratios to the unmonitored rounds, and
 * the sample rate record achieved.
 *
 * Usage: bench_operator [HZ]   (default 1000; as root, or with a usable
 * runtime directory)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"

#define BENCH_PHASE_S 3
#define BENCH_PHASES  3
#define BENCH_MAX     4096

struct rounds {
	uint64_t c[BENCH_MAX];
	unsigned int n;
};

static char rundir[64];
static struct vm_bg vm;
static char buf[1 << 20];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(struct rounds *r)
{
	qsort(r->c, r->n, sizeof(r->c[0]), cmp_u64);
	return r->n ? r->c[r->n / 2] : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Collect the rounds printed while the phase lasts (ms) into (r); the
 * console offset (*off) moves on. The first new round is dropped.
 */
static void collect(struct rounds *r, size_t *off, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	unsigned long long round, cycles;
	bool first = true;
	char *p, *nl;

	while (now_ms() < end) {
		usleep(10000);
		slurp_file(vm.console, buf, sizeof(buf));
		for (p = buf + *off; (nl = strchr(p, '\n')); p = nl + 1) {
			if (sscanf(p, "op_work: round %llu cycles %llu", &round,
				   &cycles) == 2) {
				if (!first && r->n < BENCH_MAX)
					r->c[r->n++] = cycles;
				first = false;
			}
		}
		*off = (size_t)(p - buf);
	}
}

static const char *hz = "1000";

static pid_t start_record(const char *file)
{
	char secs[16], out[96], err[96];
	const char *argv[] = {"record", "-m", "bench", "-F", hz,
			      "-o",     file, "--",    secs, NULL};

	snprintf(secs, sizeof(secs), "%d", BENCH_PHASE_S);
	snprintf(out, sizeof(out), "%s/record.out", rundir);
	snprintf(err, sizeof(err), "%s/record.err", rundir);
	return vpmu_bg(argv, out, err);
}

/*
 * The kick floor: `vpmu stat` with two event sets switched every 1 ms of
 * run time kicks the vCPU 1000 times a second without taking samples.
 */
static pid_t start_kicks(void)
{
	char secs[16], out[96], err[96];
	const char *argv[] = {
		"stat",
		"-m",
		"bench",
		"--switch-ms",
		"1",
		"-e",
		"hv_run_ns,hv_exits,hv_pio,hv_mmio,hv_irqs,hv_halts,"
		"hv_msr_reads,hv_msr_writes,hv_hypercalls",
		"--",
		secs,
		NULL,
	};

	snprintf(secs, sizeof(secs), "%d", BENCH_PHASE_S);
	snprintf(out, sizeof(out), "%s/stat.out", rundir);
	snprintf(err, sizeof(err), "%s/stat.err", rundir);
	return vpmu_bg(argv, out, err);
}

static void ratio(const char *what, uint64_t m, uint64_t m_off)
{
	printf("  ratio %-17s %12.4f  (slowdown %.2f%%)\n", what,
	       (double)m / (double)m_off,
	       100.0 * ((double)m / (double)m_off - 1.0));
}

/* Samples in the record (from its summary line on stderr). */
static unsigned long long samples_of(void)
{
	char path[96], text[4096];
	unsigned long long n = 0;
	char *p;

	snprintf(path, sizeof(path), "%s/record.err", rundir);
	if (!slurp_file(path, text, sizeof(text)) &&
	    (p = strstr(text, ".rec: ")))
		sscanf(p + 6, "%llu", &n);
	return n;
}

int main(int argc, char **argv)
{
	static struct rounds off, on, kicks;
	unsigned long long samples = 0;
	uint64_t m_off, m_on, m_kick;
	char file[96];
	size_t pos = 0;
	unsigned int i;
	pid_t rec;
	int st;

	if (argc > 1)
		hz = argv[1];
	if (rundir_make(rundir, sizeof(rundir)) ||
	    vm_bg_start(&vm, rundir, GUEST("op_work"), "bench", 1) ||
	    vm_bg_wait(&vm, rundir, "op_work: round", 3, 20000)) {
		fprintf(stderr, "bench_operator: cannot start the VM\n");
		vm_bg_kill(&vm, SIGKILL);
		rundir_remove(rundir);
		return 1;
	}
	snprintf(file, sizeof(file), "%s/bench.rec", rundir);
	for (i = 0; i < BENCH_PHASES; i++) {
		collect(&off, &pos, BENCH_PHASE_S * 1000);
		rec = start_record(file);
		collect(&on, &pos, BENCH_PHASE_S * 1000);
		st = vpmu_bg_wait(rec, 10000);
		samples += samples_of();
		if (st)
			fprintf(stderr, "bench_operator: record exited %d\n",
				st);
		rec = start_kicks();
		collect(&kicks, &pos, BENCH_PHASE_S * 1000);
		vpmu_bg_wait(rec, 10000);
	}
	vm_bg_kill(&vm, SIGKILL);
	rundir_remove(rundir);
	m_off  = median(&off);
	m_on   = median(&on);
	m_kick = median(&kicks);
	printf("bench_operator: guest work round (TSC cycles, median)\n");
	printf("  not recorded            %12llu  (%u rounds)\n",
	       (unsigned long long)m_off, off.n);
	printf("  vpmu record -F %-8s %12llu  (%u rounds, %llu samples, "
	       "%.0f/s)\n",
	       hz, (unsigned long long)m_on, on.n, samples,
	       (double)samples / (BENCH_PHASES * BENCH_PHASE_S));
	printf("  kick floor (1000/s)     %12llu  (%u rounds: stat, sets "
	       "switched every 1 ms)\n",
	       (unsigned long long)m_kick, kicks.n);
	if (!m_off)
		return 1;
	ratio("recorded/not", m_on, m_off);
	ratio("kick floor/not", m_kick, m_off);
	printf("  target: recorded/not <= 1.02\n");
	return m_on ? 0 : 1;
}
