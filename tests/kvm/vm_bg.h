/* SPDX-License-Identifier: MIT */
/*
 * vm_bg.h: helpers for integration tests that keep VMs (and operator
 * commands) running in the background while they act on them.
 *
 * Each test makes its own runtime directory (rundir_make), so VMs of
 * concurrent tests never meet; VMs are `vpmu run` processes whose console
 * goes to a file the test can wait on.
 */
#ifndef VM_BG_H
#define VM_BG_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct vm_bg {
	pid_t pid;  /* 0 once reaped */
	int status; /* its exit status once it ended (or 128 + signal) */
	int in_fd;  /* the write end of its console input; 0: none */
	char name[64];
	char console[PATH_MAX];
};

/*
 * Make a fresh runtime directory /tmp/vpmu-test-XXXXXX into (dir) and point
 * VPMU_RUNTIME_DIR at it (inherited by every vpmu started after). 0 or
 * -errno.
 */
int rundir_make(char *dir, size_t len);

/* Remove (dir) and what is left in it. */
void rundir_remove(const char *dir);

/*
 * Start `vpmu run (image) --name (name) --vcpus (vcpus)` with its console
 * in a file of (dir) and its standard input a pipe (vm_bg_input). 0 or
 * -errno.
 */
int vm_bg_start(struct vm_bg *vm, const char *dir, const char *image,
		const char *name, unsigned int vcpus);

/*
 * Wait until the console of (vm) holds (needle) (count) times, and its
 * registry entry exists in (dir). Returns 0, or -ETIMEDOUT after
 * (timeout_ms), or -ESRCH as soon as the VM ended (its status in
 * vm->status). Either failure prints, on stderr, what was awaited, the
 * VM's status and the last lines of its console and stderr.
 */
int vm_bg_wait(struct vm_bg *vm, const char *dir, const char *needle,
	       unsigned int count, unsigned int timeout_ms);

/*
 * Write (s) to the console input of (vm) (its `vpmu run`'s standard input,
 * a pipe): guests read it with user_read(), e.g. a go signal. 0 or -errno.
 */
int vm_bg_input(struct vm_bg *vm, const char *s);

/*
 * Send (sig) to the VM and reap it (SIGKILL leaves a stale entry); closes
 * its console input.
 */
void vm_bg_kill(struct vm_bg *vm, int sig);

/*
 * Start the vpmu program with (argv) (after the program name) in the
 * background, stdout and stderr to (out) and (err). Returns the pid or
 * -errno.
 */
pid_t vpmu_bg(const char *const *argv, const char *out, const char *err);

/*
 * Like vpmu_bg, with the program's standard input (a VM's console input)
 * a pipe whose write end goes to (in_fd). Returns the pid or -errno.
 */
pid_t vpmu_bg_input(const char *const *argv, const char *out, const char *err,
		    int *in_fd);

/* Wait for (pid) at most (timeout_ms); its exit status, or -ETIMEDOUT. */
int vpmu_bg_wait(pid_t pid, unsigned int timeout_ms);

/*
 * Wait until the file (path) holds (needle) while (pid) runs: 0, -ESRCH as
 * soon as (pid) ended first (reaped, its exit status in *status), or
 * -ETIMEDOUT after (timeout_ms). A VM that died is never waited for.
 */
int vpmu_bg_wait_text(pid_t pid, const char *path, const char *needle,
		      unsigned int timeout_ms, int *status);

/*
 * The last (lines) lines of the file (path) into (buf), for a failure
 * message; returns (buf) ("(path: cannot read)" if it cannot be read).
 */
const char *file_tail(const char *path, unsigned int lines, char *buf,
		      size_t len);

/* Read the file (path) into (buf) (NUL-terminated). 0 or -errno. */
int slurp_file(const char *path, char *buf, size_t len);

#endif /* VM_BG_H */
