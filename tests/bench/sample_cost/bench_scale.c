// SPDX-License-Identifier: MIT
/*
 * bench_scale.c: what the operator commands cost per VM as a host runs
 * more of them: 1, 8, 32 and 128 fake VMs (fake_vms: the VMM's real
 * control servers, threads as vCPUs; no KVM). VM i has 1 + (i + 3) % 8
 * vCPUs: the lone VM has 4, every larger fleet 4.5 on average. For each
 * fleet it measures the CPU time (user + system, rusage of the child) of
 *
 *   stat     vpmu stat -a -e hv_run_ns,hv_exits,hv_hypercalls -I 100
 *   top      vpmu top -a -e hv_run_ns -d 0.1 (not a terminal: no keys)
 *   record   vpmu record -a -e hv_run_ns -F 1000 (packed drains every 100 ms)
 *
 * per VM and per interval, steady: a (1 + SECONDS) s run minus a 1 s run; of
 * `vpmu serve --interval 1` (its threads' schedstat: it does not exit) per
 * VM per collection round while nobody scrapes, and per VM per scrape of
 * /metrics; and the wall time of `vpmu list --no-libvirt` (best of 5).
 * Each per-VM figure is printed with its ratio to the 1-VM figure of the
 * same run (the floor: flat is 1.0), per VM and per vCPU.
 *
 *   bench_scale [NR_VMS...]   (default 1 8 32 128; the first is the floor)
 *   BENCH_SECONDS (5); VPMU_FAKE_TICK_MS (10: 128 VMs of 1 kHz vCPU
 *   threads would take the host's CPUs from the commands measured)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_vm_bench.h"

#define EVENTS     "hv_run_ns,hv_exits,hv_hypercalls"
#define MAX_SIZES  8
#define NR_SCRAPES 10
#define RUNS       2 /* of each command and length: the least counts */

enum { STAT, TOP, RECORD, ROUND, SCRAPE, NR_FIGS };

static const char *const fig_name[NR_FIGS] = {
	"stat -I 100 (per interval)",  "top -d 0.1 (per refresh)",
	"record -F 1000 (per drain)",  "serve (per collection round)",
	"serve (per /metrics scrape)",
};

struct size {
	unsigned int nr_vms, nr_vcpus;
	double us[NR_FIGS];    /* CPU us per VM per interval; NAN: failed */
	double start[NR_FIGS]; /* CPU us per VM of a 1 s run; serve: none */
	double list_ms;        /* wall time of `vpmu list` */
	int serve_threads, serve_fds;
};

static char dir[64];
static double secs = 5;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Start vpmu with (args), its output to (out); its pid, or -1. */
static pid_t spawn_vpmu(const char *const args[], const char *out)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(VPMU, (char *const *)args);
		_exit(127);
	}
	return pid;
}

/* Run vpmu with (args), output to (out); its CPU ms, -1 if it failed. */
static double run_vpmu(const char *const args[], const char *out)
{
	struct rusage ru;
	int st;
	pid_t pid = spawn_vpmu(args, out);

	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || st) {
		fprintf(stderr, "bench_scale: vpmu %s failed (see %s)\n",
			args[1], out);
		return -1;
	}
	return cpu_ms(&ru);
}

/* CPU time (ns) of every thread of (pid), from their schedstat. */
static unsigned long long proc_ns(pid_t pid, int *nr_threads)
{
	char path[64];
	unsigned long long ns = 0;
	struct dirent *d;
	DIR *dp;

	*nr_threads = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dp = opendir(path);
	while (dp && (d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		ns += run_ns(pid, atoi(d->d_name));
		++*nr_threads;
	}
	if (dp)
		closedir(dp);
	return ns;
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dp = opendir(path);
	while (dp && (d = readdir(dp)))
		n += d->d_name[0] != '.';
	if (dp)
		closedir(dp);
	return n;
}

/* How many lines of (path) contain (what), and the port it logged. */
static int count_lines(const char *path, const char *what, int *port)
{
	char line[512], *p;
	FILE *f = fopen(path, "re");
	int n   = 0;

	while (f && fgets(line, sizeof(line), f)) {
		n += strstr(line, what) != NULL;
		p = strstr(line, "(port ");
		if (p && port)
			*port = atoi(p + 6);
	}
	if (f)
		fclose(f);
	return n;
}

/* GET /metrics on 127.0.0.1:(port), read to the end; 0 or -1. */
static int scrape(int port)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: bench\r\n"
				  "Connection: close\r\n\r\n";
	struct sockaddr_in a    = {.sin_family = AF_INET,
				   .sin_port   = htons((uint16_t)port)};
	char buf[65536], head[16] = "";
	size_t total = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (!total)
			snprintf(head, sizeof(head), "%.*s", (int)n, buf);
		total += (size_t)n;
	}
	close(fd);
	return !strncmp(head, "HTTP/1.1 200", 12) ? 0 : -1;
}

/* `vpmu serve`: CPU per VM per collection round, then per scrape. */
static void measure_serve(struct size *z)
{
	char log[96];
	const char *args[] = {"vpmu",       "serve", "--listen",  "127.0.0.1:0",
			      "--interval", "1",     "--no-auth", NULL};
	unsigned long long a, b, c;
	int i, port = 0, bad = 0;
	double t0, t1;
	pid_t pid;

	z->us[ROUND] = z->us[SCRAPE] = NAN;
	snprintf(log, sizeof(log), "%s/serve.log", dir);
	pid = spawn_vpmu(args, log);
	for (i = 0; pid > 0 && i < 600; i++) {
		if (count_lines(log, "attached VM", &port) >= (int)z->nr_vms)
			break;
		sleep_ms(50);
	}
	if (pid < 0 || i == 600 || !port) {
		fprintf(stderr,
			"bench_scale: vpmu serve did not attach %u VMs "
			"(see %s)\n",
			z->nr_vms, log);
		goto out_stop;
	}
	sleep_ms(1500); /* past the first round, which opens the contexts */
	t0 = now_ms();
	a  = proc_ns(pid, &z->serve_threads);
	sleep_ms((long)(secs * 1000));
	b  = proc_ns(pid, &z->serve_threads);
	t1 = now_ms();
	for (i = 0; i < NR_SCRAPES; i++)
		bad |= scrape(port);
	c            = proc_ns(pid, &z->serve_threads);
	z->serve_fds = count_fds(pid);
	/* One round a second (--interval 1). */
	z->us[ROUND] = (double)(b - a) / 1e3 / z->nr_vms / ((t1 - t0) / 1e3);
	z->us[SCRAPE] =
		bad ? NAN : (double)(c - b) / 1e3 / z->nr_vms / NR_SCRAPES;
out_stop:
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* Best wall time of `vpmu list` of 5. */
static double measure_list(void)
{
	char out[96];
	const char *args[] = {"vpmu", "list", "--no-libvirt", NULL};
	double best        = -1, t;
	int i;

	snprintf(out, sizeof(out), "%s/list.out", dir);
	for (i = 0; i < 5; i++) {
		t = now_ms();
		if (run_vpmu(args, out) < 0)
			return -1;
		t    = now_ms() - t;
		best = best < 0 || t < best ? t : best;
	}
	return best;
}

/* The least CPU ms of (n) runs of (args); NAN if one failed. */
static double least(const char *const args[], const char *out, int n)
{
	double best = NAN, t;

	while (n--) {
		t = run_vpmu(args, out);
		if (t < 0)
			return NAN;
		best = isnan(best) || t < best ? t : best;
	}
	return best;
}

/*
 * CPU us per VM per interval of the command (args), whose duration is the
 * string (sec), in seconds or, (is_count), intervals: the difference of a 1 s
 * run and a (1 + secs) s run (the least of RUNS each: a loaded host only adds),
 * so start-up and the first read are not in it; (*startup) the 1 s run's per
 * VM.
 */
static double steady(const char *const args[], char *sec, unsigned int nr_vms,
		     double per_s, bool is_count, double *startup)
{
	char out[96];
	double a, b;

	snprintf(out, sizeof(out), "%s/cmd.out", dir);
	snprintf(sec, 24, "%g", is_count ? per_s : 1);
	a = least(args, out, RUNS);
	snprintf(sec, 24, "%g", (1 + secs) * (is_count ? per_s : 1));
	b        = isnan(a) ? NAN : least(args, out, RUNS);
	*startup = a * 1e3 / nr_vms;
	return (b - a) * 1e3 / nr_vms / (secs * per_s);
}

static int measure(struct size *z)
{
	char *specs[FAKE_MAX_VMS], sec[24], rec[96];
	const char *stat_args[] = {"vpmu", "stat", "-a", "-e", EVENTS, "-I",
				   "100",  "-x",   ",",  "--", sec,    NULL};
	const char *top_args[]  = {"vpmu", "top", "-a", "-e", "hv_run_ns",
				   "-d",   "0.1", "-n", sec,  NULL};
	const char *rec_args[]  = {"vpmu",      "record", "-a",   "-e",
				   "hv_run_ns", "-F",     "1000", "-o",
				   rec,         "--",     sec,    NULL};
	unsigned int i, v;
	pid_t fake;

	z->nr_vcpus = 0;
	for (i = 0; i < z->nr_vms; i++) {
		v = 1 + (i + 3) % 8;
		z->nr_vcpus += v;
		specs[i] = malloc(24);
		if (specs[i])
			snprintf(specs[i], 24, "vm%u:%u", i, v);
	}
	fake = start_fake_vms(dir, z->nr_vms, specs);
	for (i = 0; i < z->nr_vms; i++)
		free(specs[i]);
	if (fake < 0) {
		fprintf(stderr, "bench_scale: %u fake VMs did not start\n",
			z->nr_vms);
		return -1;
	}
	snprintf(rec, sizeof(rec), "%s/r.rec", dir);
	z->list_ms = measure_list();
	z->us[STAT] =
		steady(stat_args, sec, z->nr_vms, 10, false, &z->start[STAT]);
	z->us[TOP] = steady(top_args, sec, z->nr_vms, 10, true, &z->start[TOP]);
	z->us[RECORD] =
		steady(rec_args, sec, z->nr_vms, 10, false, &z->start[RECORD]);
	measure_serve(z);
	kill(fake, SIGTERM);
	waitpid(fake, NULL, 0);
	return 0;
}

static void print_table(const struct size *z, unsigned int nr)
{
	const struct size *f = &z[0];
	unsigned int i, k;

	printf("  %-28s | %4s | %10s | %7s | %7s | %12s\n", "command", "VMs",
	       "CPU us/VM", "x floor", "x /vCPU", "1 s run us/VM");
	for (k = 0; k < NR_FIGS; k++) {
		for (i = 0; i < nr; i++) {
			double r  = z[i].us[k] / f->us[k];
			double rv = r * f->nr_vcpus / f->nr_vms /
				    ((double)z[i].nr_vcpus / z[i].nr_vms);

			printf("  %-28s | %4u | ", i ? "" : fig_name[k],
			       z[i].nr_vms);
			if (isnan(z[i].us[k]) || isnan(f->us[k]))
				printf("%10s |", "failed");
			else
				printf("%10.1f | %7.2f | %7.2f |", z[i].us[k],
				       r, rv);
			if (k < ROUND && !isnan(z[i].start[k]))
				printf(" %12.0f", z[i].start[k]);
			printf("\n");
		}
	}
	for (i = 0; i < nr; i++)
		printf("  %4u VMs (%4u vCPUs): vpmu list %.1f ms wall (best "
		       "of 5); vpmu serve %d threads, %d fds\n",
		       z[i].nr_vms, z[i].nr_vcpus, z[i].list_ms,
		       z[i].serve_threads, z[i].serve_fds);
}

int main(int argc, char **argv)
{
	static const unsigned int def[] = {1, 8, 32, 128};
	struct size z[MAX_SIZES]        = {0};
	unsigned int i, nr = 0;
	char run[96];
	int ret = 0;

	if (getenv("BENCH_SECONDS"))
		secs = atoi(getenv("BENCH_SECONDS"));
	for (i = 1; i < (unsigned int)argc && nr < MAX_SIZES; i++)
		z[nr++].nr_vms = (unsigned int)atoi(argv[i]);
	for (i = 0; argc < 2 && i < sizeof(def) / sizeof(def[0]); i++)
		z[nr++].nr_vms = def[i];
	for (i = 0; i < nr; i++) {
		if (!z[i].nr_vms || z[i].nr_vms > FAKE_MAX_VMS) {
			fprintf(stderr,
				"usage: bench_scale [NR_VMS (1 to "
				"%d)...]\n",
				FAKE_MAX_VMS);
			return 2;
		}
	}
	if (secs < 1 || secs > 600) {
		fprintf(stderr,
			"bench_scale: BENCH_SECONDS: whole seconds, 1 to "
			"600\n");
		return 2;
	}
	if (!getenv("VPMU_FAKE_TICK_MS"))
		setenv("VPMU_FAKE_TICK_MS", "10", 1);
	if (bench_dir(dir, "scale"))
		return 1;
	printf("bench_scale: operator CPU (user+sys) per VM per interval: a "
	       "(1 + %g) s run minus a 1 s run,\n  fake VMs of 1-8 vCPUs (the "
	       "VMM's control servers, threads as vCPUs exiting every %s "
	       "ms);\n  x floor: per-VM cost / the %u-VM figure; x /vCPU: the "
	       "same per vCPU\n",
	       secs, getenv("VPMU_FAKE_TICK_MS"), z[0].nr_vms);
	fflush(stdout);
	for (i = 0; i < nr && !ret; i++)
		ret = measure(&z[i]);
	if (!ret)
		print_table(z, nr);
	snprintf(run, sizeof(run), "rm -rf %s", dir);
	return system(run) || ret ? 1 : 0;
}
