/* SPDX-License-Identifier: MIT */
/*
 * cli_program.h: run the built `vpmu` program as a child with an empty
 * private runtime directory and collect its stdout, stderr and status.
 */
#ifndef TEST_CLI_PROGRAM_H
#define TEST_CLI_PROGRAM_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define VPMU_PROG VPMU_BUILD_DIR "/vmm/vpmu"

struct vpmu_out {
	char out[16384], err[4096];
	int status; /* exit status, or 128 + signal */
};

static inline void vpmu_slurp(FILE *f, char *buf, size_t len)
{
	size_t n;

	rewind(f);
	n      = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* Run vpmu (argv...) with runtime directory (dir), stdin /dev/null. */
static inline void vpmu_prog_in(const char *dir, const char *const *argv,
				struct vpmu_out *r)
{
	FILE *out = tmpfile(), *err = tmpfile();
	const char *args[32] = {VPMU_PROG};
	int i, st;
	pid_t pid;

	cr_assert(out && err);
	for (i = 0; argv[i] && i < 30; i++)
		args[i + 1] = argv[i];
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		freopen("/dev/null", "r", stdin);
		dup2(fileno(out), STDOUT_FILENO);
		dup2(fileno(err), STDERR_FILENO);
		setenv("VPMU_RUNTIME_DIR", dir, 1);
		execv(VPMU_PROG, (char *const *)args);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	vpmu_slurp(out, r->out, sizeof(r->out));
	vpmu_slurp(err, r->err, sizeof(r->err));
}

/* vpmu_prog_in() with a fresh empty runtime directory. */
static inline void vpmu_prog(const char *const *argv, struct vpmu_out *r)
{
	char dir[] = "/tmp/vpmu-cli-test-XXXXXX";

	cr_assert_not_null(mkdtemp(dir));
	vpmu_prog_in(dir, argv, r);
	rmdir(dir);
}

#endif /* TEST_CLI_PROGRAM_H */
