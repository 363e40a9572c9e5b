// SPDX-License-Identifier: MIT
/*
 * kvm_harness.c: run the vpmu program for integration tests.
 */
#include "kvm_harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void kvm_require(void)
{
	const char *must = getenv("VPMU_REQUIRE_KVM");
	int fd           = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return;
	}
	if (must && strcmp(must, "1") == 0)
		cr_assert_fail(
			"/dev/kvm is not usable here (%s) and "
			"VPMU_REQUIRE_KVM=1 (scripts/test.sh sets it for the "
			"guest labels): a guest test fails, never skips",
			strerror(errno));
	cr_skip_test("/dev/kvm is not usable here (%s): KVM "
		     "integration test skipped",
		     strerror(errno));
}

bool console_wait_for(FILE *console, const char *text, unsigned int timeout_s)
{
	struct timespec tick = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
	unsigned int polls   = timeout_s * 200;
	char buf[OUT_MAX];
	ssize_t n;

	do {
		/* pread: the VM's thread owns the stream's position. */
		n = pread(fileno(console), buf, sizeof(buf) - 1, 0);
		if (n > 0) {
			buf[n] = '\0';
			if (strstr(buf, text))
				return true;
		}
		nanosleep(&tick, NULL);
	} while (polls--);
	return false;
}

static void slurp(FILE *f, char *buf, size_t max)
{
	size_t n;

	rewind(f);
	n      = fread(buf, 1, max - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void child(FILE *out, FILE *err, const char *const *argv)
{
	const char *args[64];
	unsigned int i;

	args[0] = VPMU_BIN;
	for (i = 0; argv[i] && i < 62; i++)
		args[i + 1] = argv[i];
	args[i + 1] = NULL;
	dup2(fileno(out), STDOUT_FILENO);
	dup2(fileno(err), STDERR_FILENO);
	execv(VPMU_BIN, (char *const *)args);
	_exit(127);
}

/* Wall time: sleeps overrun on a loaded host, so they are not counted. */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int vpmu_cmd(struct vpmu_result *res, unsigned int timeout_s,
	     const char *const *argv)
{
	FILE *out = tmpfile(), *err = tmpfile();
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000;
	int wstatus, ret = 0;
	pid_t pid;

	if (!out || !err)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child(out, err, argv);
	while (waitpid(pid, &wstatus, WNOHANG) == 0) {
		if (now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &wstatus, 0);
			ret = -ETIMEDOUT;
			break;
		}
		usleep(10000);
	}
	res->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
					 : 128 + WTERMSIG(wstatus);
	slurp(out, res->out, sizeof(res->out));
	slurp(err, res->err, sizeof(res->err));
	return ret;
}

unsigned int count_str(const char *hay, const char *needle)
{
	unsigned int n = 0;
	const char *p  = hay;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	return n;
}
