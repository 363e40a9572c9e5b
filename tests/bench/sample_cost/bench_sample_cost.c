// SPDX-License-Identifier: MIT
/*
 * bench_sample_cost.c: what one sample of a guest costs under
 * vpmu, next to its floor and its peer, at each rate, in one run.
 *
 * Every side runs the same instructions (work_loop.h) in rounds timed with
 * the TSC, alternating not-sampled and sampled phases of BENCH_SECONDS,
 * BENCH_PHASES times; medians of the rounds. The cost of one event is the
 * share of time lost, (1 - M_off / M_on), over the events per second:
 *
 *   floor  bare_kvm floor: a bare KVM_RUN loop (no vpmu code) kicked by a
 *          one-shot timer signal re-armed after each kick, at the rate
 *   vpmu   the bench_work guest under `vpmu record -F RATE` (hv_guest_cycles),
 *          rounds inside record's sampling window (after its start-up),
 *          events per s as record reports them achieved
 *   peer   `perf record -F RATE -e cpu-clock` of the same loop as a native
 *          process (bare_kvm native); skipped with a line when perf is
 *          missing or perf_event_open is refused
 *
 * and events per second achieved against requested; beside the kicks, the
 * floor's kick path (exit, timer_settime: what no sampler avoids) and the
 * CPU time per sample of vpmu's operator pipeline (record client, control
 * thread) with the vCPU thread's involuntary switches. Then the overhead
 * budget at 50 kHz: `vpmu record -F 50000 --max-overhead 5, 10, 25 and 50`
 * (the VM runs with a budget of 50 %, which record's may not exceed; it
 * applies to the rates above too), the measured overhead (the share of
 * time lost, 1 - off/on, against the unsampled rounds of the same phases,
 * and the VMM's own cost / (run + cost) as record prints it) beside the
 * budget, the rate achieved, and per sample what the VMM charged beside
 * what the guest lost. A rate the floor itself cannot reach is named with
 * the rate it reached and its cost per kick there. Then the resident set
 * of an idle VM (1 vCPU, 64 MiB) and per extra vCPU, against bare_kvm's.
 *
 * Usage: bench_sample_cost [RATE...]   (default 1000 10000 50000);
 * BENCH_SECONDS (3), BENCH_PHASES (2). Exit 77 without /dev/kvm.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"
#include "vm_registry.h"

#define BARE     VPMU_BUILD_DIR "/bench/bare_kvm"
#define MAX_RATE 8
#define ROUNDS   4096

struct side {
	uint64_t off, on;    /* median round cycles */
	double events, secs; /* events in the sampled phases, their length */
	bool ok;
};

static struct side fl[MAX_RATE], vp[MAX_RATE], pf[MAX_RATE];
/*
 * Where the time goes beside the kicks: the floor's own kick path (its
 * "floor-path:" line) and, for vpmu, the CPU time per sample of the
 * operator's pipeline (the record client, the VMM's control thread) and
 * the vCPU thread's involuntary switches: on a host with fewer CPUs than
 * threads they compete with the guest.
 */
static char fl_path[MAX_RATE][256];
/* The floor's kicked rounds too long to time: "on" is from its work. */
static bool fl_from_work[MAX_RATE];
static double vp_client_us[MAX_RATE], vp_ctl_us[MAX_RATE], vp_nivcsw[MAX_RATE];
/* The record client's CPU inside the sampling window only, per sample. */
static double vp_window_us[MAX_RATE];
/* The overhead budget cases, --max-overhead PCT (0: the VM's). */
#define BUDGET_RATE 50000
#define BUDGET_VM   "50" /* the VM's own budget: record's may not exceed it */
static const unsigned int budgets[] = {5, 10, 25, 50};
#define NR_BUDGETS (sizeof(budgets) / sizeof(budgets[0]))
static struct side bg[NR_BUDGETS];
static double bg_cost[NR_BUDGETS];    /* VMM's cost / wall, %, mean */
static char bg_line[NR_BUDGETS][320]; /* record's rate line, last phase */
static unsigned long rates[MAX_RATE];
static unsigned int nr_rates;
static double secs = 3;
static int phases  = 2;
static char rundir[64];
static char buf[1 << 20];

/*
 * The VMs here run in a runtime directory of their own, but charge kicks
 * as a VM of this user on this host would: with the host's recent kick
 * probes, kept in the user's runtime directory ("" when it has none),
 * which the VM's own probe is added to and carried back into.
 */
static char home_probes[PATH_MAX];

static void copy_probes(const char *from, const char *to)
{
	static char text[16384];
	FILE *f;

	if (!from[0] || !to[0] || slurp_file(from, text, sizeof(text)))
		return;
	f = fopen(to, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void probes_path(char *path, size_t len, const char *dir)
{
	if (snprintf(path, len, "%s/%s", dir, VMM_KICK_PROBES) >= (int)len)
		path[0] = '\0'; /* none: the VM's probe alone */
}

static double cost_us(const struct side *s)
{
	if (!s->ok || !s->on || !s->events || !s->secs)
		return 0;
	return (1.0 - (double)s->off / (double)s->on) / (s->events / s->secs) *
	       1e6;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *c, unsigned int n)
{
	qsort(c, n, sizeof(*c), cmp_u64);
	return n ? c[n / 2] : 0;
}

/* --- floor: bare_kvm floor SECONDS PHASES RATE... */
static int run_floor(void)
{
	char cmd[512], line[256];
	unsigned long long r, off, on, kicks;
	unsigned int i;
	double s;
	FILE *p;
	int st, n = snprintf(cmd, sizeof(cmd), "%s floor %g %d", BARE, secs,
			     phases);

	for (i = 0; i < nr_rates; i++)
		n += snprintf(cmd + n, sizeof(cmd) - (size_t)n, " %lu",
			      rates[i]);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		if (sscanf(line, "floor-path: rate %llu", &r) == 1) {
			for (i = 0; i < nr_rates; i++) {
				if (rates[i] == r)
					snprintf(fl_path[i], sizeof(fl_path[i]),
						 "%s", line + 12);
			}
			continue;
		}
		if (sscanf(line,
			   "floor: rate %llu off %llu on %llu kicks %llu "
			   "seconds %lf",
			   &r, &off, &on, &kicks, &s) != 5)
			continue;
		for (i = 0; i < nr_rates; i++) {
			if (rates[i] != r)
				continue;
			fl[i] = (struct side){off, on, (double)kicks, s, true};
			fl_from_work[i] = strstr(line, "(on: kicked time over "
						       "work done)") != NULL;
		}
	}
	st = p ? pclose(p) : -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* --- vpmu: rounds printed by bench_work.elf while a phase lasts. */
static struct vm_bg vm;
static char vm_err[96];
static const char *const vm_argv[] = {
	"run",     GUEST("bench_work"), "--name",  "bench",
	"--stats", "--max-overhead",    BUDGET_VM, NULL};

static void collect(uint64_t *c, unsigned int *n, size_t *off, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	unsigned long long round, cycles;
	bool first = true;
	char *p, *nl;

	while (now_ms() < end) {
		usleep(20000);
		slurp_file(vm.console, buf, sizeof(buf));
		for (p = buf + *off; (nl = strchr(p, '\n')); p = nl + 1) {
			if (sscanf(p, "work: round %llu cycles %llu", &round,
				   &cycles) == 2) {
				if (!first && *n < ROUNDS)
					c[(*n)++] = cycles;
				first = false;
			}
		}
		*off = (size_t)(p - buf);
	}
}

static unsigned long long record_samples(const char *err)
{
	char text[4096];
	unsigned long long n = 0;
	char *p;

	if (!slurp_file(err, text, sizeof(text)) &&
	    (p = strstr(text, ".rec: ")))
		sscanf(p + 6, "%llu", &n);
	return n;
}

/* ns of CPU of task (tid) of (pid) (schedstat), 0 if unknown. */
static uint64_t task_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64], text[128];
	unsigned long long ns = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 (int)tid);
	if (!slurp_file(path, text, sizeof(text)))
		sscanf(text, "%llu", &ns);
	return ns;
}

/* Involuntary context switches of task (tid) of (pid). */
static uint64_t task_nivcsw(pid_t pid, pid_t tid)
{
	char path[64], text[2048], *p;
	unsigned long long n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid,
		 (int)tid);
	if (!slurp_file(path, text, sizeof(text)) &&
	    (p = strstr(text, "nonvoluntary_ctxt_switches:")))
		sscanf(p + 27, "%llu", &n);
	return n;
}

/*
 * The VM's control thread (named vpmu-ctl) in (*ctl) and its busiest
 * other thread, the working vCPU, in (*vcpu).
 */
static void vm_tasks(pid_t pid, pid_t *ctl, pid_t *vcpu)
{
	char path[64], comm[32];
	uint64_t best = 0, ns;
	struct dirent *e;
	pid_t tid;
	DIR *d;

	*ctl = *vcpu = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
			 (int)tid);
		if (!slurp_file(path, comm, sizeof(comm)) &&
		    !strncmp(comm, "vpmu-ctl", 8)) {
			*ctl = tid;
			continue;
		}
		ns = task_cpu_ns(pid, tid);
		if (ns >= best) {
			best  = ns;
			*vcpu = tid;
		}
	}
	if (d)
		closedir(d);
}

static double children_cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* The rate `vpmu record` says it achieved (samples/s per vCPU), or 0. */
static double record_rate(const char *err)
{
	char text[4096], *p, *q;

	if (slurp_file(err, text, sizeof(text)) ||
	    !(q = strstr(text, " samples/s per vCPU achieved")))
		return 0;
	*q = '\0';
	p  = strrchr(text, ' ');
	return p ? atof(p + 1) : 0;
}

/*
 * Wait until record (rec) has its output file open (it is connected and
 * about to start sampling; its start-up, a one-time cost like perf's
 * before it execs the workload, is not part of a sample's cost), then
 * 0.5 s more for its sessions to open. False if it ended first.
 */
static bool record_started(pid_t rec, const char *file)
{
	char tmp[128];
	unsigned int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	for (i = 0; i < 3000; i++) {
		if (!access(tmp, F_OK)) {
			usleep(500000);
			return true;
		}
		if (waitpid(rec, NULL, WNOHANG) == rec)
			return false;
		usleep(10000);
	}
	return false;
}

/* The VMM's cost / (run + cost) that record prints, %; -1 if none. */
static double record_cost(const char *err)
{
	char text[4096], *p;
	double pct = -1;

	if (!slurp_file(err, text, sizeof(text)) &&
	    (p = strstr(text, "monitoring cost ")))
		sscanf(p + 16, "%lf", &pct);
	return pct;
}

/* Record's rate line ("... achieved ..."), for the budget table. */
static void record_line(const char *err, char *line, size_t len)
{
	char text[4096], *p, *nl;

	line[0] = '\0';
	if (slurp_file(err, text, sizeof(text)) ||
	    !(p = strstr(text, "samples/s per vCPU achieved")))
		return;
	while (p > text && p[-1] != '\n')
		p--;
	nl = strchr(p, '\n');
	snprintf(line, len, "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
}

/*
 * `record -F 50000` under each budget, phases of unsampled then
 * sampled rounds as for the rates; (file, out, err, sec) as run_vpmu's.
 */
static void run_budgets(size_t *pos, const char *file, const char *out,
			const char *err, const char *sec)
{
	static uint64_t off[ROUNDS], on[ROUNDS];
	uint64_t on_ms = secs > 1.6 ? (uint64_t)(secs * 1000) - 1000 : 600;
	char hz[24], pct[16];
	const char *argv[] = {"record", "-m", "bench", "-F",
			      hz,       "-o", file,    "--max-overhead",
			      pct,      "--", sec,     NULL};
	unsigned int i, n_off, n_on, n_cost;
	double samples, c, sum;
	int k;

	snprintf(hz, sizeof(hz), "%d", BUDGET_RATE);
	for (i = 0; i < NR_BUDGETS; i++) {
		snprintf(pct, sizeof(pct), "%u", budgets[i]);
		n_off = n_on = n_cost = 0;
		samples = sum = 0;
		for (k = 0; k < phases; k++) {
			pid_t rec;

			collect(off, &n_off, pos, (uint64_t)(secs * 1000));
			rec = vpmu_bg(argv, out, err);
			if (record_started(rec, file))
				collect(on, &n_on, pos, on_ms);
			if (vpmu_bg_wait(rec, 30000))
				fprintf(stderr,
					"bench_sample_cost: record "
					"--max-overhead %s failed\n",
					pct);
			samples += (double)record_samples(err);
			c = record_cost(err);
			if (c >= 0) {
				sum += c;
				n_cost++;
			}
		}
		bg[i]      = (struct side){median(off, n_off), median(on, n_on),
					   samples, secs * phases, n_on > 0};
		bg_cost[i] = n_cost ? sum / n_cost : -1;
		record_line(err, bg_line[i], sizeof(bg_line[i]));
	}
}

/*
 * The measured overhead against each budget, and per sample what the VMM
 * charged (its cost share over the samples per second) beside what the
 * guest lost (the measured share over the same rate).
 */
static void print_budgets(void)
{
	unsigned int i, pct;
	double lost, rate;

	printf("overhead budget at %d Hz (record -F: the period is raised "
	       "when it bites): measured overhead = 1 - off/on median "
	       "round (same phases), VMM's = its cost / (run + cost); per "
	       "sample: what the VMM charged beside what the guest lost\n",
	       BUDGET_RATE);
	printf("  %-22s | %9s %9s | %9s | %9s | %10s %10s\n", "budget",
	       "overhead", "vs budget", "VMM's", "smpl/s", "charged us",
	       "lost us");
	for (i = 0; i < NR_BUDGETS; i++) {
		pct  = budgets[i];
		lost = bg[i].ok && bg[i].on
			       ? 100.0 * (1.0 -
					  (double)bg[i].off / (double)bg[i].on)
			       : 0;
		rate = bg[i].secs ? bg[i].events / bg[i].secs : 0;
		printf("  %3u %% %-16s | %7.2f %% %+6.2f pt | %7.2f %% | "
		       "%9.0f | %10.2f %10.2f\n",
		       pct, "(--max-overhead)", lost, lost - pct, bg_cost[i],
		       rate,
		       rate && bg_cost[i] >= 0 ? bg_cost[i] / 100 / rate * 1e6
					       : 0.0,
		       rate ? lost / 100 / rate * 1e6 : 0.0);
		printf("    median round off %llu on %llu cycles; %s\n",
		       (unsigned long long)bg[i].off,
		       (unsigned long long)bg[i].on, bg_line[i]);
	}
	printf("  goal: overhead within 1 pt of the budget\n");
}

static void run_vpmu(void)
{
	static uint64_t off[ROUNDS], on[ROUNDS];
	char file[96], out[96], err[96], hz[24], sec[24];
	const char *argv[] = {"record", "-m", "bench", "-F", hz,
			      "-o",     file, "--",    sec,  NULL};
	unsigned int i, n_off, n_on;
	size_t pos = 0;
	double samples, client, ctl_ns, sw, rate, win_ns, win_smpl;
	uint64_t on_ms = secs > 1.6 ? (uint64_t)(secs * 1000) - 1000 : 600;
	pid_t ctl, vcpu;
	int k;

	snprintf(file, sizeof(file), "%s/bench.rec", rundir);
	snprintf(out, sizeof(out), "%s/record.out", rundir);
	snprintf(err, sizeof(err), "%s/record.err", rundir);
	snprintf(sec, sizeof(sec), "%g", secs);
	/* --stats: the kick path's breakdown, printed when it ends. */
	snprintf(vm.console, sizeof(vm.console), "%s/bench.console", rundir);
	snprintf(vm.name, sizeof(vm.name), "bench");
	snprintf(vm_err, sizeof(vm_err), "%s/bench.stderr", rundir);
	vm.pid = vpmu_bg(vm_argv, vm.console, vm_err);
	if (vm.pid <= 0 || vm_bg_wait(&vm, rundir, "work: round", 2, 60000)) {
		fprintf(stderr, "bench_sample_cost: the VM did not start\n");
		return;
	}
	slurp_file(vm.console, buf, sizeof(buf));
	pos = strlen(buf);
	vm_tasks(vm.pid, &ctl, &vcpu);
	for (i = 0; i < nr_rates; i++) {
		snprintf(hz, sizeof(hz), "%lu", rates[i]);
		n_off = n_on = 0;
		samples = client = ctl_ns = sw = rate = win_ns = win_smpl = 0;
		for (k = 0; k < phases; k++) {
			pid_t rec;

			collect(off, &n_off, &pos, (uint64_t)(secs * 1000));
			client -= children_cpu_us();
			ctl_ns -= (double)task_cpu_ns(vm.pid, ctl);
			sw -= (double)task_nivcsw(vm.pid, vcpu);
			rec = vpmu_bg(argv, out, err);
			/* Rounds inside record's sampling window only. */
			if (record_started(rec, file)) {
				win_ns -= (double)task_cpu_ns(rec, rec);
				collect(on, &n_on, &pos, on_ms);
				win_ns += (double)task_cpu_ns(rec, rec);
			}
			if (vpmu_bg_wait(rec, 30000))
				fprintf(stderr,
					"bench_sample_cost: record "
					"-F %s failed\n",
					hz);
			win_smpl += record_rate(err) * (double)on_ms / 1e3;
			client += children_cpu_us();
			ctl_ns += (double)task_cpu_ns(vm.pid, ctl);
			sw += (double)task_nivcsw(vm.pid, vcpu);
			samples += (double)record_samples(err);
			rate += record_rate(err);
		}
		/* Events per s: the rate record achieved, else its count. */
		vp[i] = (struct side){median(off, n_off), median(on, n_on),
				      rate ? rate * secs : samples,
				      secs * phases, n_on > 0};
		if (samples) {
			vp_client_us[i] = client / samples;
			vp_ctl_us[i]    = ctl_ns / 1e3 / samples;
			vp_nivcsw[i]    = sw / samples;
		}
		if (win_smpl)
			vp_window_us[i] = win_ns / 1e3 / win_smpl;
	}
	run_budgets(&pos, file, out, err, sec);
}

/*
 * The VM's own stamps of its kicks (`vpmu run --stats`), all rates: its
 * kicks, and its kick path with the kernel part it charged per kick.
 */
static void kick_breakdown(void)
{
	char *p, *path, *nl;

	if (slurp_file(vm_err, buf, sizeof(buf)))
		return;
	p    = strstr(buf, "(kicks)");
	path = strstr(buf, "kick path, mean us:");
	if (p && (nl = strchr(p, '\n')))
		*nl = '\0';
	if (path && (nl = strchr(path, '\n')))
		*nl = '\0';
	printf("vpmu's kicks over the whole run (vpmu run --stats):\n  %s\n  "
	       "%s\n",
	       p ? p : "(not printed)", path ? path : "(no kick path)");
}

/* VmRSS of (pid) in KiB, 0 if unknown. */
static unsigned long rss_kib(pid_t pid)
{
	char path[64], text[4096], *p;
	unsigned long kib = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!slurp_file(path, text, sizeof(text)) &&
	    (p = strstr(text, "VmRSS:")))
		sscanf(p + 6, "%lu", &kib);
	return kib;
}

static unsigned long vm_rss(unsigned int vcpus)
{
	struct vm_bg v;
	unsigned long kib = 0;
	char name[16];

	snprintf(name, sizeof(name), "rss%u", vcpus);
	if (!vm_bg_start(&v, rundir, GUEST("bench_work"), name, vcpus) &&
	    !vm_bg_wait(&v, rundir, "work: round", 2, 60000))
		kib = rss_kib(v.pid);
	vm_bg_kill(&v, SIGTERM);
	return kib;
}

static void run_rss(void)
{
	unsigned long bare = 0, one, four;
	pid_t pid          = fork();

	if (pid == 0) {
		execl(BARE, "bare_kvm", "spin", "64", (char *)NULL);
		_exit(127);
	}
	if (pid > 0) {
		sleep(2);
		bare = rss_kib(pid);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	one  = vm_rss(1);
	four = vm_rss(4);
	printf("\nresident set (VmRSS), 64 MiB guest, the guest working:\n");
	printf("  bare KVM loop (floor)      %8lu KiB\n", bare);
	printf("  vpmu run, 1 vCPU           %8lu KiB  (%.2f x floor; "
	       "target <= 8192 KiB)\n",
	       one, bare ? (double)one / (double)bare : 0.0);
	printf("  per extra vCPU (4 vs 1)    %8.0f KiB\n",
	       (double)((long)four - (long)one) / 3.0);
}

/* --- peer: perf record of the native loop. */
static bool native_median(const char *prefix, uint64_t *m, const char *out)
{
	char cmd[1024], line[256];
	unsigned int n;
	unsigned long long med;
	bool ok = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s native %g 2>>%s", prefix, BARE, secs,
		 out);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		if (sscanf(line, "native: rounds %u median %llu", &n, &med) ==
		    2) {
			*m = med;
			ok = true;
		}
	}
	if (p)
		pclose(p);
	return ok;
}

static double perf_samples(const char *data)
{
	char cmd[256], line[64];
	double n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "perf script -i %s -F ip 2>/dev/null | wc -l", data);
	p = popen(cmd, "r");
	if (p && fgets(line, sizeof(line), p))
		n = atof(line);
	if (p)
		pclose(p);
	return n;
}

static void run_perf(void)
{
	static uint64_t off[64], on[64];
	char prefix[512], data[96], log[96];
	unsigned int i, n_off, n_on;
	double samples;
	int k;

	snprintf(data, sizeof(data), "%s/perf.data", rundir);
	snprintf(log, sizeof(log), "%s/perf.log", rundir);
	for (i = 0; i < nr_rates; i++) {
		n_off = n_on = 0;
		samples      = 0;
		snprintf(prefix, sizeof(prefix),
			 "perf record -q -F %lu -e cpu-clock -o %s --",
			 rates[i], data);
		for (k = 0; k < phases && k < 64; k++) {
			if (native_median("", &off[n_off], log))
				n_off++;
			if (native_median(prefix, &on[n_on], log)) {
				n_on++;
				samples += perf_samples(data);
			}
		}
		pf[i] = (struct side){median(off, n_off), median(on, n_on),
				      samples, secs * phases,
				      n_on > 0 && samples > 0};
	}
	if (!pf[0].ok) {
		char text[512] = "";

		slurp_file(log, text, sizeof(text));
		printf("peer: host perf record skipped (perf missing or "
		       "perf_event_open refused): %.200s\n",
		       text);
	}
}

int main(int argc, char **argv)
{
	char home[PATH_MAX], here[PATH_MAX];
	unsigned int i;
	int st;

	for (i = 1; i < (unsigned int)argc && nr_rates < MAX_RATE; i++)
		rates[nr_rates++] = strtoul(argv[i], NULL, 10);
	if (!nr_rates) {
		rates[0] = 1000;
		rates[1] = 10000;
		rates[2] = 50000;
		nr_rates = 3;
	}
	if (getenv("BENCH_SECONDS"))
		secs = atof(getenv("BENCH_SECONDS"));
	if (getenv("BENCH_PHASES"))
		phases = atoi(getenv("BENCH_PHASES"));
	if (!vmm_runtime_dir(home, sizeof(home)) &&
	    !vmm_runtime_dir_create(home))
		probes_path(home_probes, sizeof(home_probes), home);
	if (rundir_make(rundir, sizeof(rundir)))
		return 1;
	probes_path(here, sizeof(here), rundir);
	copy_probes(home_probes, here);
	st = run_floor();
	if (st == 77) {
		printf("bench_sample_cost: skipped, /dev/kvm cannot be used\n");
		rundir_remove(rundir);
		return 77;
	}
	run_vpmu();
	vm_bg_kill(&vm, SIGTERM);
	copy_probes(here, home_probes); /* not the idle VMs' of the RSS */
	kick_breakdown();
	run_perf();
	printf("beside the kicks (means; CPU time competes with the guest "
	       "where threads outnumber CPUs):\n");
	for (i = 0; i < nr_rates; i++)
		printf("  %lu Hz: floor kick path: %s"
		       "         vpmu: record client %.1f us (%.1f inside the "
		       "sampling window) and control thread %.1f us of CPU "
		       "per sample, vCPU thread involuntary switches per "
		       "sample %.2f\n",
		       rates[i], fl_path[i][0] ? fl_path[i] : "(none)\n",
		       vp_client_us[i], vp_window_us[i], vp_ctl_us[i],
		       vp_nivcsw[i]);
	printf("bench_sample_cost: cost of one sample (us) = (1 - off/on "
	       "median round) / events per s\n");
	printf("  %7s | %9s %9s | %9s %9s %6s | %9s %9s\n", "rate", "floor us",
	       "kicks/s", "vpmu us", "smpl/s", "x flr", "perf us", "smpl/s");
	for (i = 0; i < nr_rates; i++) {
		double flr = cost_us(&fl[i]), vpu = cost_us(&vp[i]);
		char ratio[16] = "   n/a";

		/*
		 * Where the floor's kicks left its guest almost no time, they
		 * mostly came before it ran again and cost less than a kick
		 * of a running guest: no ratio (the line below says why).
		 */
		if (flr > 0 && vpu > 0 && !fl_from_work[i])
			snprintf(ratio, sizeof(ratio), "%6.2f", vpu / flr);
		printf("  %7lu | %9.2f %9.0f | %9.2f %9.0f %s | %9.2f "
		       "%9.0f\n",
		       rates[i], flr,
		       fl[i].secs ? fl[i].events / fl[i].secs : 0, vpu,
		       vp[i].secs ? vp[i].events / vp[i].secs : 0, ratio,
		       cost_us(&pf[i]),
		       pf[i].secs ? pf[i].events / pf[i].secs : 0);
	}
	/*
	 * Where the floor itself cannot keep up, its row is what this host
	 * sustains: the rate it reached and what each kick cost the guest
	 * there (a kick-driven sampler cannot go faster than one per that
	 * cost plus the run between kicks).
	 */
	for (i = 0; i < nr_rates; i++) {
		double got    = fl[i].secs ? fl[i].events / fl[i].secs : 0;
		char why[160] = "";

		if (got >= 0.9 * (double)rates[i])
			continue;
		if (fl_from_work[i])
			snprintf(why, sizeof(why),
				 " (its guest ended too few rounds to time: "
				 "it did %.1f %% of its free pace's work, so "
				 "most kicks came before it ran again: no "
				 "ratio)",
				 fl[i].on ? 100.0 * (double)fl[i].off /
						    (double)fl[i].on
					  : 0.0);
		printf("  floor at %lu Hz: kicked %.0f times per s (%.0f %% of "
		       "the rate): one kick cost the guest %.2f us there, so "
		       "a kick-driven sampler on this host reaches at most "
		       "~%.0f kicks per s%s%s\n",
		       rates[i], got, 100.0 * got / (double)rates[i],
		       cost_us(&fl[i]),
		       cost_us(&fl[i]) > 0 ? 1e6 / cost_us(&fl[i]) : 0.0,
		       cost_us(&fl[i]) > 0 ? "" : " (no cost measured: n/a)",
		       why);
	}
	for (i = 0; i < nr_rates; i++) {
		double floor_x =
			fl[i].off ? (double)fl[i].on / (double)fl[i].off : 0;
		char floor_s[48];

		if (floor_x > 1000)
			snprintf(floor_s, sizeof(floor_s),
				 "above x1000 (no work done)");
		else
			snprintf(floor_s, sizeof(floor_s), "x%.3f", floor_x);
		printf("  slowdown at %lu Hz: floor %s  vpmu x%.3f  perf "
		       "x%.3f\n",
		       rates[i], floor_s,
		       vp[i].off ? (double)vp[i].on / (double)vp[i].off : 0,
		       pf[i].off ? (double)pf[i].on / (double)pf[i].off : 0);
	}
	printf("  goal: vpmu us <= 1.1 x floor us at every rate\n");
	print_budgets();
	run_rss();
	rundir_remove(rundir);
	return 0;
}
