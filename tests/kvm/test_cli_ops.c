// SPDX-License-Identifier: MIT
/*
 * test_cli_ops.c: operator tools against real VMs, each test in
 * its own runtime directory:
 *   - `vpmu run ... | head`: the reader going away stops the VM cleanly
 *     (status 128 + SIGPIPE, one message, registry entry removed);
 *   - `vpmu stat -p PID` selects a VM by the pid of its VMM, -C by vCPU;
 *   - `vpmu stat -- COMMAND` counts while COMMAND runs; -o FILE; the
 *     interval header once and a labelled total in text and CSV;
 *   - `vpmu top` under a pseudo-terminal quits on the key q, and takes
 *     perf top's keys: h lists them, e and d prompt for the entries and
 *     the delay, z turns zeroing off, P prints a refresh to a file;
 *     --stdio prints refresh after refresh with no terminal control;
 *   - `vpmu stat -r 3` with an event modifier: the mean of the runs (not
 *     their sum), perf's spread, the name as given.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"

#define VPMU VPMU_BUILD_DIR "/vmm/vpmu"

static char rundir[64];
static struct vm_bg vm;

static void setup(void)
{
	kvm_require();
	cr_assert_eq(rundir_make(rundir, sizeof(rundir)), 0);
}

static void teardown(void)
{
	vm_bg_kill(&vm, SIGKILL);
	rundir_remove(rundir);
}

TestSuite(cli_ops, .init = setup, .fini = teardown, .timeout = 60);

static unsigned int registry_entries(void)
{
	unsigned int n = 0;
	struct dirent *d;
	DIR *dp = opendir(rundir);

	while (dp && (d = readdir(dp)))
		n += strstr(d->d_name, ".json") != NULL;
	if (dp)
		closedir(dp);
	return n;
}

Test(cli_ops, broken_console_pipe_stops_the_vm_cleanly)
{
	char buf[4096], err_path[PATH_MAX], err[OUT_MAX];
	size_t have = 0;
	int fds[2], st;
	ssize_t n;
	pid_t pid;

	snprintf(err_path, sizeof(err_path), "%s/err.txt", rundir);
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		if (!freopen(err_path, "w", stderr))
			_exit(126);
		execl(VPMU, VPMU, "run", GUEST("op_hot"), "--name", "piped",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	/* Like `head -1`: read the first line, then go away. */
	while (have < sizeof(buf) - 1 &&
	       (n = read(fds[0], buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		if (strstr(buf, "op_hot: ready"))
			break;
	}
	cr_assert(strstr(buf, "op_hot: ready") != NULL, "console: %s", buf);
	cr_expect_eq(registry_entries(), 1, "the VM is registered");
	close(fds[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st), "ended by a signal: %d",
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_expect_eq(WEXITSTATUS(st), 128 + SIGPIPE);
	cr_assert_eq(slurp_file(err_path, err, sizeof(err)), 0);
	cr_expect(strstr(err, "vpmu: piped: console output closed (broken "
			      "pipe): stopping the VM") != NULL,
		  "%s", err);
	cr_expect_eq(registry_entries(), 0, "entry removed: a clean stop");
}

/* `vpmu stat -p PID -C 1`: the VM of that VMM, only vCPU 1. */
Test(cli_ops, stat_selects_by_vmm_pid_and_vcpu_list)
{
	char out_path[PATH_MAX], err_path[PATH_MAX], out[OUT_MAX];
	char pid_text[16];
	const char *argv[] = {
		"stat",          "-p", pid_text,    "-C", "1", "-A", "-x", ",",
		"--vpmu-fields", "-e", "hv_run_ns", "--", "1", NULL};
	pid_t pid;

	cr_assert_eq(vm_bg_start(&vm, rundir, GUEST("op_hot"), "sel", 2), 0);
	cr_assert_eq(vm_bg_wait(&vm, rundir, "op_hot: ready", 1, 10000), 0);
	snprintf(pid_text, sizeof(pid_text), "%d", (int)vm.pid);
	snprintf(out_path, sizeof(out_path), "%s/out.txt", rundir);
	snprintf(err_path, sizeof(err_path), "%s/err.txt", rundir);
	pid = vpmu_bg(argv, out_path, err_path);
	cr_assert_gt(pid, 0);
	cr_assert_eq(vpmu_bg_wait(pid, 20000), 0);
	cr_assert_eq(slurp_file(out_path, out, sizeof(out)), 0);
	cr_expect(strstr(out, ",sel,") != NULL, "%s", out);
	cr_expect(strstr(out, ",1,hv_run_ns,") != NULL, "vCPU 1: %s", out);
	cr_expect(strstr(out, ",0,hv_run_ns,") == NULL, "no vCPU 0: %s", out);
}

static void run_stat(const char *const *argv, char *out, size_t len)
{
	char out_path[PATH_MAX], err_path[PATH_MAX];
	pid_t pid;

	snprintf(out_path, sizeof(out_path), "%s/out.txt", rundir);
	snprintf(err_path, sizeof(err_path), "%s/err.txt", rundir);
	pid = vpmu_bg(argv, out_path, err_path);
	cr_assert_gt(pid, 0);
	cr_assert_eq(vpmu_bg_wait(pid, 20000), 0);
	cr_assert_eq(slurp_file(out_path, out, len), 0);
}

Test(cli_ops, stat_command_output_file_header_once_and_total)
{
	char file[PATH_MAX], out[OUT_MAX], text[OUT_MAX];
	const char *txt[] = {"stat",  "-p",  "cmd", "-e", "hv_run_ns",
			     "-I",    "300", "-o",  file, "--",
			     "sleep", "1",   NULL};
	const char *csv[] = {"stat", "-p",    "cmd", "-e", "hv_run_ns",
			     "-I",   "300",   "-x",  ",",  "--vpmu-fields",
			     "--",   "sleep", "1",   NULL};

	cr_assert_eq(vm_bg_start(&vm, rundir, GUEST("op_hot"), "cmd", 1), 0);
	cr_assert_eq(vm_bg_wait(&vm, rundir, "op_hot: ready", 1, 10000), 0);
	snprintf(file, sizeof(file), "%s/stat.txt", rundir);
	run_stat(txt, out, sizeof(out));
	cr_expect_str_empty(out, "-o: nothing on stdout: %s", out);
	cr_assert_eq(slurp_file(file, text, sizeof(text)), 0);
	cr_expect_eq(count_str(text, "TIME(s)"), 1, "one header: %s", text);
	cr_expect_eq(count_str(text, "# total over"), 1, "%s", text);
	cr_expect(strstr(text, "# 'sleep' exited with status 0") != NULL, "%s",
		  text);
	cr_expect_geq(count_str(text, "hv_run_ns"), 3,
		      "intervals of 0.3 s in a 1 s command, then the total");
	run_stat(csv, out, sizeof(out));
	cr_expect_geq(count_str(out, ",interval\n"), 2, "%s", out);
	cr_expect_eq(count_str(out, ",total\n"), 1, "%s", out);
}

/* Read (fd) into (buf) until (needle) appears or (ms) pass. */
static bool read_until(int fd, char *buf, size_t len, const char *needle,
		       int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	size_t have     = strlen(buf);
	ssize_t n;

	while (!strstr(buf, needle) && poll(&p, 1, ms) == 1) {
		n = read(fd, buf + have, len - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
	}
	return strstr(buf, needle) != NULL;
}

/*
 * A VM (name) running op_hot and `vpmu top -p NAME -d 0.2 [extra]` under
 * a pseudo-terminal (*master); top's pid.
 */
static pid_t top_start(const char *name, const char *extra, int *master)
{
	pid_t pid;

	cr_assert_eq(vm_bg_start(&vm, rundir, GUEST("op_hot"), name, 1), 0);
	cr_assert_eq(vm_bg_wait(&vm, rundir, "op_hot: ready", 1, 10000), 0);
	pid = forkpty(master, NULL, NULL, NULL);
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (chdir(rundir)) /* where 'P' writes */
			_exit(126);
		if (extra)
			execl(VPMU, VPMU, "top", "-p", name, "-d", "0.2", "-n",
			      "2", extra, (char *)NULL);
		else
			execl(VPMU, VPMU, "top", "-p", name, "-d", "0.2",
			      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Press q: top ends within 5 s, with status 0. */
static void top_quit(pid_t pid, int master)
{
	int st, i;

	cr_assert_eq(write(master, "q", 1), 1);
	for (i = 0; i < 100 && waitpid(pid, &st, WNOHANG) == 0; i++)
		usleep(50000);
	cr_assert_lt(i, 100, "top did not quit on q within 5 s");
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	close(master);
}

Test(cli_ops, top_quits_on_q_under_a_pty)
{
	static char out[OUT_MAX];
	int master;
	pid_t pid = top_start("topq", NULL, &master);

	out[0] = '\0';
	cr_assert(read_until(master, out, sizeof(out), "q quit", 30000),
		  "top never drew: %s", out);
	top_quit(pid, master);
}

/* Send (keys) to top, then read until (needle): a fresh buffer. */
static void top_step(int master, char *out, size_t len, const char *keys,
		     const char *needle)
{
	out[0] = '\0';
	cr_assert_eq(write(master, keys, strlen(keys)), (ssize_t)strlen(keys));
	cr_assert(read_until(master, out, len, needle, 15000),
		  "after '%s', no '%s': %s", keys, needle, out);
}

Test(cli_ops, top_keys_as_perf_top_under_a_pty)
{
	static char out[OUT_MAX], hist[OUT_MAX];
	char path[PATH_MAX];
	int master;
	pid_t pid = top_start("topk", NULL, &master);

	out[0] = '\0';
	cr_assert(read_until(master, out, sizeof(out), "h help", 30000),
		  "top never drew: %s", out);
	cr_expect(strstr(out, "10 entries, zeroing") != NULL, "%s", out);
	top_step(master, out, sizeof(out), "h", "z  toggle zeroing");
	top_step(master, out, sizeof(out), "e", "Enter display entries");
	top_step(master, out, sizeof(out), "3\n", "3 entries, zeroing");
	top_step(master, out, sizeof(out), "z", "3 entries, accumulating");
	top_step(master, out, sizeof(out), "d", "Enter display delay");
	top_step(master, out, sizeof(out), "0.5\n",
		 "refresh delay (now 0.5 s)");
	top_step(master, out, sizeof(out), "P",
		 "P: written to vpmu-top.hist.0");
	snprintf(path, sizeof(path), "%s/vpmu-top.hist.0", rundir);
	cr_assert_eq(slurp_file(path, hist, sizeof(hist)), 0);
	cr_expect(strstr(hist, "vpmu top: ") && strstr(hist, "\nVM topk"), "%s",
		  hist);
	top_quit(pid, master);
}

/* --stdio: two refreshes one after the other, no escape sequences even
 * on a terminal, no keys offered. */
Test(cli_ops, top_stdio_prints_without_terminal_control)
{
	static char out[OUT_MAX];
	int master, st;
	pid_t pid = top_start("tops", "--stdio", &master);

	out[0] = '\0';
	read_until(master, out, sizeof(out), "refresh 2,", 30000);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	read_until(master, out, sizeof(out), "\nVM tops", 2000);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	cr_expect_eq(count_str(out, "vpmu top: "), 2, "%s", out);
	cr_expect(!strchr(out, '\033'), "escape sequences: %s", out);
	cr_expect(!strstr(out, "q quit"), "%s", out);
	close(master);
}

/* -r 3 of 0.3 s: each hv_run_ns:h row is the mean of one run's time in
 * KVM_RUN (at most ~0.3 s, not the 0.9 s of the three together). */
Test(cli_ops, stat_repeat_means_with_modifier)
{
	char out[OUT_MAX];
	const char *argv[] = {"stat", "-p",
			      "rep",  "-r",
			      "3",    "-x",
			      ",",    "--vpmu-fields",
			      "-e",   "hv_run_ns:h,hv_exits",
			      "--",   "0.3",
			      NULL};
	const char *l;
	unsigned long long runs, count;
	double rel;

	cr_assert_eq(vm_bg_start(&vm, rundir, GUEST("op_hot"), "rep", 1), 0);
	cr_assert_eq(vm_bg_wait(&vm, rundir, "op_hot: ready", 1, 10000), 0);
	run_stat(argv, out, sizeof(out));
	cr_expect_eq(count_str(out, ",mean,3,"), 2, "%s", out);
	l = strstr(out, ",hv_run_ns:h,");
	cr_assert_not_null(l, "%s", out);
	cr_assert_eq(sscanf(l, ",hv_run_ns:h,%llu,", &count), 1, "%s", l);
	cr_expect_gt(count, 0, "%s", l);
	cr_expect_leq(count, 450000000ULL, "the mean of a run: %s", l);
	l = strstr(l, ",mean,");
	cr_assert_not_null(l);
	cr_assert_eq(sscanf(l, ",mean,%llu,%*f,%lf", &runs, &rel), 2, "%s", l);
	cr_expect_eq(runs, 3);
	cr_expect(rel >= 0 && rel < 100, "%s", l);
}
