// SPDX-License-Identifier: MIT
/*
 * bench_drain_cost.c: what one sample costs the control plane
 * on its way from a VM to `vpmu record`, in the JSON form of smpl_drain
 * (VPMU_DRAIN_JSON=1: a json-c array per sample, built by the control
 * thread and parsed back by the client) and in the packed binary form
 * (the default), measured in the same run against the same fake VM
 * (fake_vms: the VMM's real control server and sampling buffers, threads
 * as vCPUs exiting every millisecond; no KVM).
 *
 * Each round runs `vpmu record -g -a -e hv_run_ns,hv_exits -F 1000 -o F --
 * SECONDS` once per form (JSON first in odd rounds, packed first in even
 * ones) and takes the control thread's CPU time ("vpmu-ctl", schedstat)
 * and the client's (rusage of the whole process: start-up, session,
 * drains, file) per recorded sample. The idle control thread over the
 * same time is the floor; the ratios JSON / packed are the result.
 *
 *   BENCH_SECONDS (4), BENCH_VCPUS (4), BENCH_ROUNDS (2)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_vm_bench.h"

static char dir[64];

struct cost {
	double ctl_ms, cli_ms; /* CPU of the control thread, the client */
	unsigned long long samples;
};

/* The sample count `vpmu record` printed into (path), 0 if none. */
static unsigned long long samples_of(const char *path)
{
	unsigned long long n = 0;
	char line[512], *p;
	FILE *f = fopen(path, "re");

	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, ".rec: ");
		if (p && strstr(p, " samples ("))
			n = strtoull(p + 6, NULL, 10);
	}
	if (f)
		fclose(f);
	return n;
}

/* One `vpmu record` of (sec) seconds in the (json) form into (*c). */
static int record(pid_t fake, int tid, bool json, const char *sec,
		  struct cost *c)
{
	char rec[96], out[96];
	unsigned long long a, b;
	struct rusage ru;
	int st;
	pid_t cl;

	snprintf(rec, sizeof(rec), "%s/r.rec", dir);
	snprintf(out, sizeof(out), "%s/record.out", dir);
	a  = run_ns(fake, tid);
	cl = fork();
	if (cl == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		if (json)
			setenv("VPMU_DRAIN_JSON", "1", 1);
		else
			unsetenv("VPMU_DRAIN_JSON");
		execl(VPMU, "vpmu", "record", "-g", "-a", "-e",
		      "hv_run_ns,hv_exits", "-F", "1000", "-o", rec, "--", sec,
		      (char *)NULL);
		_exit(127);
	}
	if (cl < 0 || wait4(cl, &st, 0, &ru) != cl || st) {
		fprintf(stderr, "bench_drain_cost: vpmu record failed\n");
		return -1;
	}
	b          = run_ns(fake, tid);
	c->ctl_ms  = (double)(b - a) / 1e6;
	c->cli_ms  = cpu_ms(&ru);
	c->samples = samples_of(out);
	return c->samples ? 0 : -1;
}

static void print_row(const char *form, const struct cost *c)
{
	printf("  %-7s | %9llu | %9.1f %9.1f | %9.2f %9.2f %9.2f\n", form,
	       c->samples, c->ctl_ms, c->cli_ms,
	       c->ctl_ms * 1e3 / (double)c->samples,
	       c->cli_ms * 1e3 / (double)c->samples,
	       (c->ctl_ms + c->cli_ms) * 1e3 / (double)c->samples);
}

static double per(const struct cost *c, bool ctl, bool cli)
{
	return ((ctl ? c->ctl_ms : 0) + (cli ? c->cli_ms : 0)) /
	       (double)c->samples;
}

int main(void)
{
	const char *e   = getenv("BENCH_SECONDS");
	double secs     = e ? atof(e) : 4.0;
	unsigned int nv = getenv("BENCH_VCPUS")
				  ? (unsigned int)atoi(getenv("BENCH_VCPUS"))
				  : 4;
	unsigned int rounds =
		getenv("BENCH_ROUNDS")
			? (unsigned int)atoi(getenv("BENCH_ROUNDS"))
			: 2;
	struct cost json = {0}, packed = {0}, c;
	unsigned long long a, b;
	char run[96], sec[24];
	unsigned int r, k;
	int tid, ret = 0;
	pid_t fake;

	if (bench_dir(dir, "draincost"))
		return 1;
	snprintf(sec, sizeof(sec), "%g", secs);
	fake = start_fake(dir, nv);
	tid  = fake > 0 ? find_task(fake, "vpmu-ctl") : -1;
	if (tid < 0) {
		fprintf(stderr, "bench_drain_cost: no fake VM\n");
		return 1;
	}
	printf("bench_drain_cost: vpmu record -g -a -e hv_run_ns,hv_exits "
	       "-F 1000 -- %s on a fake VM of %u vCPUs\n"
	       "  (the VMM's control server, threads as vCPUs); smpl_drain "
	       "in JSON (VPMU_DRAIN_JSON=1) vs packed\n",
	       sec, nv);
	a = run_ns(fake, tid);
	sleep_ms((long)(secs * 1000));
	b = run_ns(fake, tid);
	printf("  floor: idle control thread %.3f ms CPU in %s s\n",
	       (double)(b - a) / 1e6, sec);
	printf("  %-7s | %9s | %9s %9s | %9s %9s %9s\n", "form", "samples",
	       "ctl ms", "cli ms", "ctl us", "cli us", "sum us");
	for (r = 0; r < rounds && !ret; r++) {
		for (k = 0; k < 2 && !ret; k++) {
			bool is_json = (r + k) % 2 == 0;

			ret = record(fake, tid, is_json, sec, &c);
			if (ret)
				break;
			print_row(is_json ? "json" : "packed", &c);
			if (is_json) {
				json.ctl_ms += c.ctl_ms;
				json.cli_ms += c.cli_ms;
				json.samples += c.samples;
			} else {
				packed.ctl_ms += c.ctl_ms;
				packed.cli_ms += c.cli_ms;
				packed.samples += c.samples;
			}
		}
	}
	if (!ret) {
		printf("  (ctl, cli, sum us: CPU microseconds per sample; "
		       "totals:)\n");
		print_row("JSON", &json);
		print_row("PACKED", &packed);
		printf("  ratio JSON / packed per sample: control thread "
		       "%.2f, client %.2f, both %.2f\n",
		       per(&json, true, false) / per(&packed, true, false),
		       per(&json, false, true) / per(&packed, false, true),
		       per(&json, true, true) / per(&packed, true, true));
	}
	kill(fake, SIGTERM);
	waitpid(fake, NULL, 0);
	snprintf(run, sizeof(run), "rm -rf %s", dir);
	return system(run) || ret ? 1 : 0;
}
