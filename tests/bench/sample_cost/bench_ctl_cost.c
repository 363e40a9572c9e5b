// SPDX-License-Identifier: MIT
/*
 * bench_ctl_cost.c (issue 15): what `vpmu stat -I 100` costs the control
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
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAKE   VPMU_BUILD_DIR "/tests/serve/fake_vms"
#define VPMU   VPMU_BUILD_DIR "/vmm/vpmu"
#define EVENTS "hv_run_ns,hv_exits,hv_hypercalls"

static char dir[64];

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The task of (pid) named (comm); -1 if none. */
static int find_task(pid_t pid, const char *comm)
{
	char path[320], name[32];
	struct dirent *d;
	DIR *dp;
	FILE *f;
	int tid = -1;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dp = opendir(path);
	while (dp && tid < 0 && (d = readdir(dp))) {
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid,
			 d->d_name);
		f = fopen(path, "re");
		if (f && fgets(name, sizeof(name), f) &&
		    !strncmp(name, comm, strlen(comm)))
			tid = atoi(d->d_name);
		if (f)
			fclose(f);
	}
	if (dp)
		closedir(dp);
	return tid;
}

/* Run time (ns) of task (tid) of (pid), from its schedstat. */
static unsigned long long run_ns(pid_t pid, int tid)
{
	char path[96];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid,
		 tid);
	f = fopen(path, "re");
	if (f && fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	if (f)
		fclose(f);
	return ns;
}

static pid_t start_fake(unsigned int vcpus)
{
	char spec[32], go[96], log[96], line[128];
	pid_t pid;
	int i;

	snprintf(spec, sizeof(spec), "vm:%u", vcpus);
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(log, sizeof(log), "%s/fake.log", dir);
	unlink(log); /* "ready" is this VM's */
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execl(FAKE, "fake_vms", go, "0", spec, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200; i++) {
		FILE *f    = fopen(log, "re");
		bool ready = false;

		while (f && fgets(line, sizeof(line), f))
			ready |= strstr(line, "ready") != NULL;
		if (f)
			fclose(f);
		if (ready)
			return pid;
		sleep_ms(50);
	}
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return -1;
}

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
			      interval, "-x", ",", "--", sec, (char *)NULL);
		else
			execl(VPMU, "vpmu", "stat", "-a", "-e", EVENTS, "-x",
			      ",", "--", sec, (char *)NULL);
		_exit(127);
	}
	wait4(cl, st, 0, &ru);
	return (double)ru.ru_utime.tv_sec * 1e3 +
	       (double)ru.ru_utime.tv_usec / 1e3 +
	       (double)ru.ru_stime.tv_sec * 1e3 +
	       (double)ru.ru_stime.tv_usec / 1e3;
}

int main(void)
{
	static const unsigned int sizes[] = {1, 2, 4, 8};
	double secs =
		getenv("BENCH_SECONDS") ? atof(getenv("BENCH_SECONDS")) : 5.0;
	char run[96], sec[24];
	unsigned int i;

	snprintf(dir, sizeof(dir), "/tmp/vpmu-ctlcost-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(run, sizeof(run), "%s/run", dir);
	mkdir(run, 0700);
	setenv("VPMU_RUNTIME_DIR", run, 1);
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
		pid_t fake = start_fake(sizes[i]);
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
