/* SPDX-License-Identifier: MIT */
/*
 * fake_vms_run.h: a fake_vms process (fake_vms.c) for a Criterion test of
 * the host commands: a fresh directory holding its runtime dir (exported
 * as VPMU_RUNTIME_DIR), its log and its GO file; started with one VM spec
 * ("NAME:VCPUS") and no hypercalls, ready once it says so.
 */
#ifndef VPMU_TESTS_FAKE_VMS_RUN_H
#define VPMU_TESTS_FAKE_VMS_RUN_H

#include <stdbool.h>
#include <sys/types.h>

struct fake_vms_run {
	char dir[64];  /* /tmp/vpmu-TAG-XXXXXX, removed by fake_vms_stop */
	char log[128]; /* fake_vms's stderr */
	pid_t pid;
};

/* Start it (asserts on failure) with (vm), in a directory named after (tag). */
void fake_vms_start(struct fake_vms_run *f, const char *tag, const char *vm);

/* SIGTERM, wait, remove the directory. */
void fake_vms_stop(struct fake_vms_run *f);

/* Has (path) a line containing (what)? */
bool fake_file_has(const char *path, const char *what);

void fake_sleep_ms(long ms);

/*
 * Run (argv) (argv[0] a path) with stdout and stderr to the file (out);
 * its wait status in (*status). Returns its voluntary context switches.
 */
long fake_run(char *const argv[], const char *out, int *status);

/* The start of file (path), for a failure message (a static buffer). */
char *fake_slurp(const char *path);

#endif
