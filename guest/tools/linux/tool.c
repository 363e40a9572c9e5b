// SPDX-License-Identifier: MIT
/*
 * tool.c: what the Linux SDK tools share (tool.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

int tool_die(const char *tool, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", tool, what, pvpmu_strerror(err));
	return 1;
}

int tool_usage(const char *usage, int asked)
{
	fputs(usage, asked ? stdout : stderr);
	return asked ? 0 : 1;
}

int tool_no_program(const char *tool)
{
	fprintf(stderr, "%s: no PROGRAM given (%s -h)\n", tool, tool);
	return 1;
}

/* The child: wait for the go byte, then become PROGRAM. */
static void child(const char *tool, int rd, char **argv)
{
	char c;

	if (read(rd, &c, 1) != 1)
		_exit(127);
	close(rd);
	execvp(argv[0], argv);
	fprintf(stderr, "%s: %s: %s\n", tool, argv[0], strerror(errno));
	_exit(127);
}

int tool_spawn(const char *tool, char **argv, int close_fd,
	       struct tool_child *c)
{
	int pfd[2];

	if (pipe(pfd))
		return tool_die(tool, "pipe", -errno);
	c->pid = fork();
	if (c->pid < 0)
		return tool_die(tool, "fork", -errno);
	if (c->pid == 0) {
		close(pfd[1]);
		if (close_fd >= 0)
			close(close_fd);
		child(tool, pfd[0], argv);
	}
	close(pfd[0]);
	c->go = pfd[1];
	return 0;
}

int tool_go(const char *tool, int go)
{
	int ret = 0;

	if (write(go, "g", 1) != 1)
		ret = tool_die(tool, "pipe", -errno);
	close(go);
	return ret;
}

int tool_exit_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
