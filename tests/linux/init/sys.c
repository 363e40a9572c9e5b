// SPDX-License-Identifier: MIT
/*
 * sys.c: the system calls nolibc lacks, and the x86 instructions the init
 * uses from ring 3 (RDTSC, OUT).
 */
#include "init.h"

#include <asm/unistd.h>

#define USEC_PER_SEC 1000000ULL
#define CALIBRATE_US 50000ULL

long sys_call_ioperm(unsigned long from, unsigned long num, int on)
{
	return my_syscall3(__NR_ioperm, from, num, on);
}

long sys_call_perf_event_open(void *attr, int pid, int cpu, int group_fd,
			      unsigned long flags)
{
	return my_syscall5(__NR_perf_event_open, attr, pid, cpu, group_fd,
			   flags);
}

unsigned long long rdtsc_now(void)
{
	unsigned int lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((unsigned long long)hi << 32) | lo;
}

void outb_port(unsigned char value, unsigned short port)
{
	__asm__ __volatile__("outb %0, %1" : : "a"(value), "Nd"(port));
}

static unsigned long long now_us(void)
{
	struct timeval tv;

	sys_gettimeofday(&tv, 0);
	return (unsigned long long)tv.tv_sec * USEC_PER_SEC +
	       (unsigned long long)tv.tv_usec;
}

unsigned long long tsc_hz(void)
{
	static unsigned long long hz;
	unsigned long long t0, t1, c0, c1;

	if (hz)
		return hz;
	t0 = now_us();
	c0 = rdtsc_now();
	do {
		t1 = now_us();
	} while (t1 - t0 < CALIBRATE_US);
	c1 = rdtsc_now();
	hz = (c1 - c0) * USEC_PER_SEC / (t1 - t0);
	return hz;
}

void spin_tsc(unsigned long long ticks)
{
	unsigned long long end = rdtsc_now() + ticks;

	while (rdtsc_now() < end)
		__asm__ __volatile__("" : : : "memory");
}
