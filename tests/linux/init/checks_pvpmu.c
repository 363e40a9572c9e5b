// SPDX-License-Identifier: MIT
/*
 * checks_pvpmu.c: `vpmutest=pvpmu`: the paravirtual perfmon2 driver for
 * Linux. The init loads /lib/pvpmu.ko (finit_module), runs /bin/pfinfo
 * (its listing goes to the console) and /bin/pvpmu-checks, the static
 * program of tests/linux/pvpmu/ that prints one "vpmu-test:" line per
 * check of the driver and exits with its number of failures
 * (`vpmutest=pvpmuclose`: only the module and `pvpmu-checks close-hold`,
 * for the host's `vpmu list`; `vpmutest=pvpmusmp`: only the module and
 * `pvpmu-checks smp`, the checks that need two CPUs; `vpmutest=pvpmuspec`:
 * only the module and `pvpmu-checks spec`, the spec's descriptor
 * semantics and permissions). The files are in
 * the initrd that scripts/build-linux.sh builds.
 */
#include "init.h"

#define MODULE_PATH "/lib/pvpmu.ko"

static enum result check_module_load(struct report *r)
{
	long fd = sys_open(MODULE_PATH, O_RDONLY, 0), ret;

	if (fd < 0)
		return fail_errno(r, "open " MODULE_PATH, fd);
	ret = my_syscall3(__NR_finit_module, fd, "", 0);
	sys_close((int)fd);
	if (ret < 0)
		return fail_errno(r, "finit_module", ret);
	detail(r, "%s loaded", MODULE_PATH);
	return RES_PASS;
}

#define PROGRAM_SECS 180 /* a hung program becomes a FAIL, not a hang */

/*
 * Run (path) with (arg) (or none); its exit status, 128 + signal, or a
 * negative errno. After PROGRAM_SECS it is killed and -ETIMEDOUT returned.
 */
static long run_program(const char *path, const char *arg)
{
	char *argv[3] = {(char *)path, (char *)arg, 0};
	char *envp[1] = {0};
	int status    = 0;
	long pid      = sys_fork(), got;
	unsigned int ms;

	if (pid == 0) {
		sys_execve(path, argv, envp);
		sys_exit(127);
	}
	if (pid < 0)
		return pid;
	for (ms = 0; ms < PROGRAM_SECS * 1000; ms += 100) {
		got = sys_wait4((int)pid, &status, WNOHANG, 0);
		if (got == pid)
			return (status & 0x7f) ? 128 + (status & 0x7f)
					       : (status >> 8) & 0xff;
		if (got < 0)
			return got;
		msleep(100);
	}
	say("vpmu-init: %s still running after %u s: killed\n", path,
	    PROGRAM_SECS);
	sys_kill((int)pid, SIGKILL);
	sys_wait4((int)pid, &status, 0, 0);
	return -ETIMEDOUT;
}

/*
 * A check that runs (path) with (arg) (or none): PASS on exit status 0,
 * which pvpmu-checks sets to its number of failed checks
 * (counts_failures).
 */
static enum result program_check(struct report *r, const char *path,
				 const char *arg, int counts_failures)
{
	long ret = run_program(path, arg);

	detail(r, "%s%s%s:", path, arg ? " " : "", arg ? arg : "");
	if (ret < 0)
		return fail_errno(r, "run", ret);
	detail(r, counts_failures ? "%ld failed" : "exit %ld", ret);
	return ret == 0 ? RES_PASS : RES_FAIL;
}

static enum result check_pfinfo(struct report *r)
{
	return program_check(r, "/bin/pfinfo", 0, 0);
}

static enum result check_pffast(struct report *r)
{
	return program_check(r, "/bin/pffast", 0, 0);
}

static enum result check_programs(struct report *r)
{
	return program_check(r, "/bin/pvpmu-checks", 0, 1);
}

/*
 * `vpmutest=pvpmuclose`: pvpmu-checks opens and closes contexts, announces
 * each step on the console and waits for the host's answer on the console
 * input, while the host's `vpmu list` counts them
 * (tests/linux/test_linux.c).
 */
static enum result check_close_hold(struct report *r)
{
	return program_check(r, "/bin/pvpmu-checks", "close-hold", 0);
}

/* `vpmutest=pvpmusmp`: the driver checks that need two CPUs. */
static enum result check_smp_programs(struct report *r)
{
	return program_check(r, "/bin/pvpmu-checks", "smp", 1);
}

/* `vpmutest=pvpmuspec`: the spec's descriptor semantics, permissions. */
static enum result check_spec_programs(struct report *r)
{
	return program_check(r, "/bin/pvpmu-checks", "spec", 1);
}

const struct check pvpmu_checks[] = {
	{"pvpmu-module-load",
	 GROUP_PVPMU | GROUP_PVPMU_CLOSE | GROUP_PVPMU_SMP | GROUP_PVPMU_SPEC,
	 check_module_load},
	{"pvpmu-checks-spec", GROUP_PVPMU_SPEC, check_spec_programs},
	{"pvpmu-close-hold", GROUP_PVPMU_CLOSE, check_close_hold},
	{"pvpmu-checks-smp", GROUP_PVPMU_SMP, check_smp_programs},
	{"pvpmu-pfinfo", GROUP_PVPMU, check_pfinfo},
	{"pvpmu-checks", GROUP_PVPMU, check_programs},
	{"pvpmu-pffast", GROUP_PVPMU, check_pffast},
};
const unsigned int pvpmu_checks_count =
	sizeof(pvpmu_checks) / sizeof(pvpmu_checks[0]);
