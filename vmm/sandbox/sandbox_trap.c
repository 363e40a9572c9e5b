// SPDX-License-Identifier: MIT
/*
 * sandbox_trap.c: reporting a violation. A forbidden system call raises
 * SIGSYS (SCMP_ACT_TRAP) in the thread that made it; the handler writes
 * one line to stderr, with async-signal-safe calls only (the thread may
 * hold any lock), and ends the process with VMM_STATUS_SANDBOX.
 */
#include "sandbox_priv.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Thread_local const char *vmm_sandbox_role_name;
const char *const vmm_sandbox_roles[2] = {
	[VMM_SANDBOX_VCPU]    = "vcpu",
	[VMM_SANDBOX_CONTROL] = "control",
};

static int hook_role = -1; /* VPMU_TEST_SANDBOX_VIOLATE, read at init */

bool vmm_sandbox_hook(enum vmm_sandbox_role role)
{
	return hook_role == (int)role;
}

/* Append (s) to (buf) at (*n), within (cap). */
static void put(char *buf, size_t cap, size_t *n, const char *s)
{
	while (*s && *n < cap)
		buf[(*n)++] = *s++;
}

static void put_int(char *buf, size_t cap, size_t *n, long v)
{
	char d[24];
	int i = 0;

	if (v < 0) {
		put(buf, cap, n, "-");
		v = -v;
	}
	do {
		d[i++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i < (int)sizeof(d));
	while (i && *n < cap)
		buf[(*n)++] = d[--i];
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	const char *role = vmm_sandbox_role_name;
	char line[256];
	size_t n = 0;

	(void)sig;
	(void)uc;
	put(line, sizeof(line), &n, "vpmu: sandbox: forbidden system call ");
	put_int(line, sizeof(line), &n, si->si_syscall);
	put(line, sizeof(line), &n, " (see <asm/unistd_64.h>) on the ");
	put(line, sizeof(line), &n, role ? role : "?");
	put(line, sizeof(line), &n, " thread ");
	put_int(line, sizeof(line), &n, (long)gettid());
	put(line, sizeof(line), &n,
	    ": stopping the VMM (exit status 159; --no-sandbox to debug)\n");
	if (write(STDERR_FILENO, line, n) < 0)
		n = 0; /* nothing more to do: we are exiting */
	_exit(VMM_STATUS_SANDBOX);
}

int vmm_sandbox_init(void)
{
	const char *env = getenv("VPMU_TEST_SANDBOX_VIOLATE");
	struct sigaction sa;
	unsigned int i;

	hook_role = -1;
	for (i = 0; env && i < 2; i++) {
		if (!strcmp(env, vmm_sandbox_roles[i]))
			hook_role = (int)i;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags     = SA_SIGINFO;
	sigfillset(&sa.sa_mask); /* nothing interrupts the report */
	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return -errno;
	return 0;
}
