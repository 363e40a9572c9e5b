// SPDX-License-Identifier: MIT
/*
 * fake_vm_bench.c: fake VMs and task CPU time for the control-plane
 * benchmarks (see fake_vm_bench.h).
 */
#include "fake_vm_bench.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int bench_dir(char dir[64], const char *tag)
{
	char run[96];

	snprintf(dir, 64, "/tmp/vpmu-%s-XXXXXX", tag);
	if (!mkdtemp(dir))
		return -1;
	snprintf(run, sizeof(run), "%s/run", dir);
	if (mkdir(run, 0700))
		return -1;
	return setenv("VPMU_RUNTIME_DIR", run, 1);
}

int find_task(pid_t pid, const char *comm)
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

unsigned long long run_ns(pid_t pid, int tid)
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

/* Has (log) said "ready"? */
static bool said_ready(const char *log)
{
	char line[128];
	FILE *f    = fopen(log, "re");
	bool ready = false;

	while (f && fgets(line, sizeof(line), f))
		ready |= strstr(line, "ready") != NULL;
	if (f)
		fclose(f);
	return ready;
}

pid_t start_fake_vms(const char *dir, unsigned int nr, char *const specs[])
{
	char go[96], log[96], name[] = "fake_vms", zero[] = "0";
	char *argv[FAKE_MAX_VMS + 4];
	unsigned int i;
	pid_t pid;

	if (!nr || nr > FAKE_MAX_VMS)
		return -1;
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(log, sizeof(log), "%s/fake.log", dir);
	unlink(log); /* "ready" is these VMs' */
	argv[0] = name;
	argv[1] = go;
	argv[2] = zero; /* hypercalls */
	for (i = 0; i < nr; i++)
		argv[3 + i] = specs[i];
	argv[3 + nr] = NULL;
	pid          = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(FAKE, argv);
		_exit(127);
	}
	/* A hundred VMs take a while to register on a loaded host. */
	for (i = 0; pid > 0 && i < 600; i++) {
		if (said_ready(log))
			return pid;
		sleep_ms(50);
	}
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

pid_t start_fake(const char *dir, unsigned int vcpus)
{
	char spec[32], *specs[1] = {spec};

	snprintf(spec, sizeof(spec), "vm:%u", vcpus);
	return start_fake_vms(dir, 1, specs);
}

double cpu_ms(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec * 1e3 +
	       (double)ru->ru_utime.tv_usec / 1e3 +
	       (double)ru->ru_stime.tv_sec * 1e3 +
	       (double)ru->ru_stime.tv_usec / 1e3;
}
