/* SPDX-License-Identifier: MIT */
/*
 * tool.h: what the Linux SDK tools share (not part of libpvpmu): their
 * messages, help and usage errors, and PROGRAM run in a child that waits
 * for a go byte until its context is loaded and started (pfstat, pfrecord).
 */
#ifndef PVPMU_TOOL_H
#define PVPMU_TOOL_H

#include <sys/types.h>

/* Print "(tool): (what): <pvpmu_strerror(err)>" on stderr. Returns 1. */
int tool_die(const char *tool, const char *what, int err);

/*
 * The help text (usage) on stdout if the user (asked) for it (-h), else on
 * stderr as a usage error. Returns the exit status: 0 or 1.
 */
int tool_usage(const char *usage, int asked);

/* "(tool): no PROGRAM given (TOOL -h)" on stderr. Returns 1. */
int tool_no_program(const char *tool);

/* A child that waits on (go) for its go byte, then becomes PROGRAM. */
struct tool_child {
	pid_t pid;
	int go; /* the pipe's write end */
};

/*
 * Fork a child that closes (close_fd) if it is >= 0, waits for the go
 * byte, then execs (argv) (argv[0] looked up in PATH; "(tool): PROGRAM:
 * error" and exit status 127 if that fails). Returns 0 and fills (*c), or
 * 1 after a tool_die() message.
 */
int tool_spawn(const char *tool, char **argv, int close_fd,
	       struct tool_child *c);

/*
 * Let the child of (go) run: write the go byte, close (go). Returns 0, or
 * 1 after a tool_die() message.
 */
int tool_go(const char *tool, int go);

/* The tool's exit status for the child's wait (status): PROGRAM's own. */
int tool_exit_status(int status);

#endif /* PVPMU_TOOL_H */
