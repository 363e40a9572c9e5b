// SPDX-License-Identifier: MIT
/*
 * user_syscalls.c: every syscall from ring 3 on vCPU 0: write (good and
 * bad buffers: the kernel answers -EFAULT and keeps running), time
 * (advances over a busy loop), yield, an unknown number (-ENOSYS), then
 * exit(7), which ends the VM with status 7. A failed check exits with 1.
 */
#include "user.h"

#define BUSY_TSC 20000000ULL /* ~several ms of ring-3 spinning */

static int failures;

static void check(int ok, const char *what, long got)
{
	uprintf("user_syscalls: %s: %s (%ld)\n", what, ok ? "ok" : "FAIL", got);
	if (!ok)
		failures++;
}

static void check_write(void)
{
	static const char msg[] = "user_syscalls: write from ring 3\n";
	uint64_t mem            = user_boot_info()->mem_size;
	long r;

	r = user_write(msg, sizeof(msg) - 1);
	check(r == (long)sizeof(msg) - 1, "write returns its length", r);
	r = user_write(NULL, 10);
	check(r == -PVPMU_EFAULT, "write(NULL) is EFAULT", r);
	r = user_write((const void *)0xdeadbeef0000ULL, 10);
	check(r == -PVPMU_EFAULT, "write(unmapped) is EFAULT", r);
	r = user_write((const void *)(uintptr_t)(mem - 4), 8);
	check(r == -PVPMU_EFAULT, "write past RAM is EFAULT", r);
	r = user_write(msg, ~0UL);
	check(r == -PVPMU_EFAULT, "write wrapping length is EFAULT", r);
	r = user_write(msg, 0);
	check(r == 0, "write of 0 bytes", r);
}

static void check_time(void)
{
	uint64_t t0, t1, t2, c0;

	t0 = user_time_ns();
	t1 = user_time_ns();
	c0 = rdtsc();
	while (rdtsc() - c0 < BUSY_TSC)
		cpu_relax();
	t2 = user_time_ns();
	check(t1 >= t0, "time is monotonic", (long)(t1 - t0));
	check(t2 > t1, "time advances over a busy loop", (long)(t2 - t1));
	uprintf("user_syscalls: time %llu ns since boot, busy loop %llu ns\n",
		(unsigned long long)t2, (unsigned long long)(t2 - t1));
}

int user_main(unsigned int vcpu)
{
	long r;

	if (vcpu != 0)
		return 0;
	check(user_cpl() == 3, "running in ring 3", user_cpl());
	check_write();
	check_time();
	r = user_yield();
	check(r == 0, "yield returns 0", r);
	r = user_syscall(99, 0, 0, 0);
	check(r == -PVPMU_ENOSYS, "unknown syscall is ENOSYS", r);
	r = user_syscall(0, 0, 0, 0);
	check(r == -PVPMU_ENOSYS, "syscall 0 is ENOSYS", r);
	if (failures) {
		uprintf("user_syscalls: %d failures\n", failures);
		user_exit(1);
	}
	uprintf("user_syscalls: all ok, exit(7)\n");
	user_exit(7);
}
