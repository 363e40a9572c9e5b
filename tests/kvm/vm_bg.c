// SPDX-License-Identifier: MIT
/*
 * vm_bg.c: background VMs and operator commands for integration tests.
 */
#include "vm_bg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kvm_harness.h"

int rundir_make(char *dir, size_t len)
{
	if (snprintf(dir, len, "/tmp/vpmu-test-XXXXXX") >= (int)len)
		return -ENAMETOOLONG;
	if (!mkdtemp(dir))
		return -errno;
	return setenv("VPMU_RUNTIME_DIR", dir, 1) ? -errno : 0;
}

void rundir_remove(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp = opendir(dir);

	while (dp && (d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		unlink(path);
	}
	if (dp)
		closedir(dp);
	rmdir(dir);
}

/* (in): the child's standard input, or -1 to inherit the test's. */
static pid_t spawn(const char *const *argv, int in, const char *out,
		   const char *err)
{
	const char *args[64];
	unsigned int i;
	pid_t pid;
	int fd;

	pid = fork();
	if (pid)
		return pid < 0 ? -errno : pid;
	args[0] = VPMU_BIN;
	for (i = 0; argv[i] && i < 62; i++)
		args[i + 1] = argv[i];
	args[i + 1] = NULL;
	if (in >= 0)
		dup2(in, STDIN_FILENO);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		dup2(fd, STDOUT_FILENO);
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0)
		dup2(fd, STDERR_FILENO);
	execv(VPMU_BIN, (char *const *)args);
	_exit(127);
}

int vm_bg_start(struct vm_bg *vm, const char *dir, const char *image,
		const char *name, unsigned int vcpus)
{
	char n[16], err[PATH_MAX + 8];
	const char *argv[] = {"run", image, "--name", name, "--vcpus", n, NULL};
	int in[2];

	snprintf(n, sizeof(n), "%u", vcpus);
	snprintf(vm->name, sizeof(vm->name), "%s", name);
	snprintf(vm->console, sizeof(vm->console), "%s/%s.console", dir, name);
	snprintf(err, sizeof(err), "%s/%s.stderr", dir, name);
	/* Its console input: a pipe only the test writes (vm_bg_input). */
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	vm->pid = spawn(argv, in[0], vm->console, err);
	close(in[0]);
	vm->in_fd = in[1];
	if (vm->pid < 0) {
		close(in[1]);
		vm->in_fd = 0;
	}
	return vm->pid < 0 ? vm->pid : 0;
}

int vm_bg_input(struct vm_bg *vm, const char *s)
{
	size_t len = strlen(s);

	if (vm->in_fd <= 0)
		return -EBADF;
	return write(vm->in_fd, s, len) == (ssize_t)len ? 0 : -EIO;
}

int slurp_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n      = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

/* An entry of (pid): a stale one of an earlier VM does not count. */
static bool registered(const char *dir, pid_t pid)
{
	char path[PATH_MAX], buf[4096], want[96];
	struct dirent *d;
	bool found = false;
	DIR *dp    = opendir(dir);

	snprintf(want, sizeof(want), "\"pid\":%d,", (int)pid);
	while (dp && !found && (d = readdir(dp))) {
		if (!strstr(d->d_name, ".json") || strstr(d->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		found = !slurp_file(path, buf, sizeof(buf)) &&
			strstr(buf, want);
	}
	if (dp)
		closedir(dp);
	return found;
}

static int exit_status(int wstatus)
{
	return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
				  : 128 + WTERMSIG(wstatus);
}

const char *file_tail(const char *path, unsigned int lines, char *buf,
		      size_t len)
{
	static char whole[65536];
	size_t n;
	char *p;

	if (slurp_file(path, whole, sizeof(whole))) {
		snprintf(buf, len, "(%s: cannot read)", path);
		return buf;
	}
	n = strlen(whole);
	while (n && whole[n - 1] == '\n')
		whole[--n] = '\0';
	for (p = whole + n; p > whole && lines; p--) {
		if (p[-1] == '\n' && !--lines)
			break;
	}
	snprintf(buf, len, "%s", p);
	return buf;
}

/* Why a wait for (vm)'s console failed, with its last words. */
static void report_wait(const struct vm_bg *vm, const char *needle,
			unsigned int count, int ret)
{
	char tail[4096], err[PATH_MAX + 8];

	snprintf(err, sizeof(err), "%.*s.stderr",
		 (int)(strlen(vm->console) - strlen(".console")), vm->console);
	if (ret == -ESRCH)
		fprintf(stderr,
			"VM %s ended with status %d before its "
			"console held '%s' %u time(s)\n",
			vm->name, vm->status, needle, count);
	else
		fprintf(stderr,
			"VM %s: its console did not hold '%s' %u "
			"time(s) in time (or it never registered)\n",
			vm->name, needle, count);
	fprintf(stderr, "--- last console lines (%s):\n%s\n", vm->console,
		file_tail(vm->console, 15, tail, sizeof(tail)));
	fprintf(stderr, "--- last stderr lines:\n%s\n",
		file_tail(err, 15, tail, sizeof(tail)));
}

int vm_bg_wait(struct vm_bg *vm, const char *dir, const char *needle,
	       unsigned int count, unsigned int timeout_ms)
{
	static char buf[65536];
	unsigned int waited;
	int st;

	for (waited = 0; waited < timeout_ms; waited += 10) {
		if (waitpid(vm->pid, &st, WNOHANG) == vm->pid) {
			vm->pid    = 0;
			vm->status = exit_status(st);
			report_wait(vm, needle, count, -ESRCH);
			return -ESRCH;
		}
		if (!slurp_file(vm->console, buf, sizeof(buf)) &&
		    count_str(buf, needle) >= count && registered(dir, vm->pid))
			return 0;
		usleep(10000);
	}
	report_wait(vm, needle, count, -ETIMEDOUT);
	return -ETIMEDOUT;
}

int vpmu_bg_wait_text(pid_t pid, const char *path, const char *needle,
		      unsigned int timeout_ms, int *status)
{
	static char buf[65536];
	unsigned int waited;
	int st;

	for (waited = 0; waited < timeout_ms; waited += 100) {
		if (!slurp_file(path, buf, sizeof(buf)) && strstr(buf, needle))
			return 0;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			*status = exit_status(st);
			/* Its last words may hold (needle) after all. */
			if (!slurp_file(path, buf, sizeof(buf)) &&
			    strstr(buf, needle))
				return 0;
			return -ESRCH;
		}
		usleep(100000);
	}
	return -ETIMEDOUT;
}

void vm_bg_kill(struct vm_bg *vm, int sig)
{
	if (vm->in_fd > 0)
		close(vm->in_fd);
	vm->in_fd = 0;
	if (vm->pid <= 0)
		return;
	kill(vm->pid, sig);
	waitpid(vm->pid, NULL, 0);
	vm->pid = 0;
}

pid_t vpmu_bg(const char *const *argv, const char *out, const char *err)
{
	return spawn(argv, -1, out, err);
}

pid_t vpmu_bg_input(const char *const *argv, const char *out, const char *err,
		    int *in_fd)
{
	int in[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC))
		return -errno;
	pid = spawn(argv, in[0], out, err);
	close(in[0]);
	if (pid < 0) {
		close(in[1]);
		return pid;
	}
	*in_fd = in[1];
	return pid;
}

int vpmu_bg_wait(pid_t pid, unsigned int timeout_ms)
{
	unsigned int waited;
	int st;

	for (waited = 0; waited <= timeout_ms; waited += 10) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return exit_status(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -ETIMEDOUT;
}
