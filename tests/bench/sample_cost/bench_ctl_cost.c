// SPDX-License-Identifier: MIT
/*
 * bench_ctl_cost.c: what `vpmu stat -I 100` costs the control
 * plane on 1, 2, 4 and 8 vCPUs, without KVM: the VM is fake_vms (the
 * VMM's real control server and accounting, threads as vCPUs that "exit"
 * every millisecond). For each size it measures, over BENCH_SECONDS (5):
 *
 *   idle     the control thread ("vpmu-ctl") with no client
 *   floor    the control thread and the client during `vpmu stat -a --
 *            SECONDS` (start-up, session_open, one read, close)
 *   -I 100   the same with a report every 100 ms
 *
 * CPU time in ms per second of wall time (the thread's schedstat run time;
 * the client's rusage), and what one report adds over the floor.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_vm_bench.h"

#define EVENTS "hv_run_ns,hv_exits,hv_hypercalls"

static char dir[64];

/* Run `vpmu stat ... -- (sec)` with (interval) ("": none); CPU ms. */
static double run_stat(const char *interval, const char *sec, int *st)
{
	struct rusage ru;
	pid_t cl = fork();

	if (cl == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(fd, 2);
		if (interval[0])
			execl(VPMU, "vpmu", "stat", "-a", "-e", EVENTS, "-I",
			      interval, "-x", ",", "--vpmu-fields", "--", sec,
			      (char *)NULL);
		else
			execl(VPMU, "vpmu", "stat", "-a", "-e", EVENTS, "-x",
			      ",", "--vpmu-fields", "--", sec, (char *)NULL);
		_exit(127);
	}
	wait4(cl, st, 0, &ru);
	return cpu_ms(&ru);
}

int main(void)
{
	static const unsigned int sizes[] = {1, 2, 4, 8};
	double secs =
		getenv("BENCH_SECONDS") ? atof(getenv("BENCH_SECONDS")) : 5.0;
	char run[96], sec[24];
	unsigned int i;

	if (bench_dir(dir, "ctlcost"))
		return 1;
	snprintf(sec, sizeof(sec), "%g", secs);
	printf("bench_ctl_cost: vpmu stat -a -e %s -I 100 -- %s on fake VMs "
	       "(the VMM's control server, threads as vCPUs).\n"
	       "  CPU ms per second; floor: the same stat without -I (start, "
	       "open, one read, close)\n",
	       EVENTS, sec);
	printf("  %5s | %9s | %9s %9s %11s | %9s %9s %11s\n", "vCPUs",
	       "idle ctl", "ctl flr", "ctl -I", "-I/report", "cli flr",
	       "cli -I", "-I/report");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned long long a, b, c, d;
		pid_t fake = start_fake(dir, sizes[i]);
		double cf, ci, n = secs * 10;
		int tid, st1, st2;

		tid = fake > 0 ? find_task(fake, "vpmu-ctl") : -1;
		if (tid < 0) {
			fprintf(stderr, "bench_ctl_cost: no fake VM\n");
			return 1;
		}
		a = run_ns(fake, tid);
		sleep_ms((long)(secs * 1000));
		b  = run_ns(fake, tid);
		cf = run_stat("", sec, &st1);
		c  = run_ns(fake, tid);
		ci = run_stat("100", sec, &st2);
		d  = run_ns(fake, tid);
		printf("  %5u | %9.3f | %9.3f %9.3f %8.1f us | %9.3f %9.3f "
		       "%8.1f us%s\n",
		       sizes[i], (double)(b - a) / 1e6 / secs,
		       (double)(c - b) / 1e6 / secs,
		       (double)(d - c) / 1e6 / secs,
		       ((double)(d - c) - (double)(c - b)) / 1e3 / n, cf / secs,
		       ci / secs, (ci - cf) * 1e3 / n,
		       st1 || st2 ? "  (stat failed)" : "");
		kill(fake, SIGTERM);
		waitpid(fake, NULL, 0);
	}
	snprintf(run, sizeof(run), "rm -rf %s", dir);
	return system(run) ? 1 : 0;
}
