// SPDX-License-Identifier: MIT
/*
 * checks_mp.c: more than one user process. On PVM hosts multi-process user
 * space was seen to fault on %fs: accesses, as if the FS base were lost
 * across context switches between user processes (LINUX-GUESTS.md §3).
 * fs-base-switch reproduces exactly that: two children pinned to one CPU,
 * each with its own FS base, yield to each other and check %fs:0 after
 * every switch. init itself never uses FS: a lost base kills a child, not
 * PID 1.
 */
#include "init.h"

#include <asm/unistd.h>

#define FS_ROUNDS       2000U
#define ARCH_SET_FS     0x1002
#define FS_MAGIC        0x465342415345UL /* "FSBASE" */
#define CHILD_EXIT_BAD  1
#define CHILD_EXIT_FAIL 2

/* Each child's TLS block: %fs:0 must read its magic. */
static unsigned long fs_block[2][8];

static unsigned long read_fs0(void)
{
	unsigned long v;

	__asm__ __volatile__("mov %%fs:0, %0" : "=r"(v));
	return v;
}

/* The child: own FS base, FS_ROUNDS yields, exits 0 if %fs:0 held. */
static void fs_child(unsigned int i)
{
	unsigned long magic = FS_MAGIC + i;
	unsigned int round, bad = 0;

	fs_block[i][0] = magic;
	if (my_syscall2(__NR_arch_prctl, ARCH_SET_FS, fs_block[i]) < 0)
		sys_exit(CHILD_EXIT_FAIL);
	for (round = 0; round < FS_ROUNDS; round++) {
		bad += read_fs0() != magic;
		sys_sched_yield();
	}
	sys_exit(bad ? CHILD_EXIT_BAD : 0);
}

/* Run both children on CPU 0 only, so they switch to each other. */
static long pin_to_cpu0(void)
{
	unsigned long mask = 1;

	return my_syscall3(__NR_sched_setaffinity, 0, sizeof(mask), &mask);
}

static void detail_child(struct report *r, unsigned int i, int status)
{
	if (status & 0x7f)
		detail(r, "child%u=signal %d", i, status & 0x7f);
	else
		detail(r, "child%u=exit %d", i, (status >> 8) & 0xff);
}

static enum result check_fs_base_switch(struct report *r)
{
	unsigned long all = ~0UL;
	int status[2] = {-1, -1}, ok = 1;
	long pid[2], ret;
	unsigned int i;

	ret = pin_to_cpu0();
	if (ret < 0)
		return fail_errno(r, "sched_setaffinity", ret);
	for (i = 0; i < 2; i++) {
		pid[i] = sys_fork();
		if (pid[i] == 0)
			fs_child(i);
		if (pid[i] < 0)
			return fail_errno(r, "fork", pid[i]);
	}
	for (i = 0; i < 2; i++) {
		sys_wait4((int)pid[i], &status[i], 0, 0);
		detail_child(r, i, status[i]);
		ok &= status[i] == 0;
	}
	my_syscall3(__NR_sched_setaffinity, 0, sizeof(all), &all);
	detail(r, "rounds=%u", FS_ROUNDS);
	return ok ? RES_PASS : RES_FAIL;
}

const struct check mp_checks[] = {
	{"fs-base-switch", GROUP_MP, check_fs_base_switch},
};
const unsigned int mp_checks_count = sizeof(mp_checks) / sizeof(mp_checks[0]);
