// SPDX-License-Identifier: MIT
/* fake_vms_run.c: see fake_vms_run.h. */
#include "fake_vms_run.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAKE_VMS VPMU_BUILD_DIR "/tests/serve/fake_vms"

void fake_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

bool fake_file_has(const char *path, const char *what)
{
	char line[512];
	bool found = false;
	FILE *f    = fopen(path, "re");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return found;
}

void fake_vms_start(struct fake_vms_run *f, const char *tag, const char *vm)
{
	char go[96], run[96];
	int i;

	snprintf(f->dir, sizeof(f->dir), "/tmp/vpmu-%s-XXXXXX", tag);
	cr_assert(not(eq(ptr, mkdtemp(f->dir), NULL)));
	snprintf(run, sizeof(run), "%s/run", f->dir);
	cr_assert(eq(int, mkdir(run, 0700), 0));
	setenv("VPMU_RUNTIME_DIR", run, 1);
	snprintf(f->log, sizeof(f->log), "%s/fake.log", f->dir);
	snprintf(go, sizeof(go), "%s/go", f->dir);
	fflush(NULL);
	f->pid = fork();
	cr_assert(ge(int, f->pid, 0));
	if (f->pid == 0) {
		int fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execl(FAKE_VMS, "fake_vms", go, "0", vm, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200 && !fake_file_has(f->log, "fake_vms: ready"); i++)
		fake_sleep_ms(50);
	cr_assert(fake_file_has(f->log, "fake_vms: ready"),
		  "fake_vms did not start");
}

void fake_vms_stop(struct fake_vms_run *f)
{
	char cmd[96];

	kill(f->pid, SIGTERM);
	waitpid(f->pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	cr_expect(eq(int, system(cmd), 0));
}

long fake_run(char *const argv[], const char *out, int *status)
{
	struct rusage ru;
	pid_t pid = fork();

	cr_assert(ge(int, pid, 0));
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			      0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	cr_assert(eq(int, wait4(pid, status, 0, &ru), pid));
	cr_log_info("%s %s: %ld voluntary context switches", argv[0], argv[1],
		    ru.ru_nvcsw);
	return ru.ru_nvcsw;
}

char *fake_slurp(const char *path)
{
	static char buf[4096];
	FILE *f  = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}
