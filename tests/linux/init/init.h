/* SPDX-License-Identifier: MIT */
/*
 * init.h: the vpmu Linux test init (tests/linux/init/README.md).
 *
 * Built with the kernel's own tools/include/nolibc (-nostdlib -static
 * -include nolibc.h): no C library. Every system call wrapper here returns
 * the raw kernel result (negative errno on failure), never touches errno.
 */
#ifndef VPMU_LINUX_INIT_H
#define VPMU_LINUX_INIT_H

#include <stdarg.h>

/* One check's outcome. */
enum result {
	RES_PASS,
	RES_FAIL,
	RES_SKIP,
};

/* Groups a check belongs to; `vpmutest=` selects groups. */
#define GROUP_BOOT (1U << 0) /* cpuinfo */
#define GROUP_SYS  (1U << 1) /* system call ABI */
#define GROUP_PERF (1U << 2) /* perf_event_open on the vpmu PMU */
#define GROUP_MP   (1U << 3) /* more than one user process */
#define GROUP_HOLD (1U << 4) /* stay busy in ring 3 for host operators */
#define GROUP_POWEROFF                                                         \
	(1U << 5) /* end with reboot(POWER_OFF), no exit port                  \
		   */
#define GROUP_PVPMU       (1U << 6) /* the pvpmu.ko driver and libpvpmu */
#define GROUP_PVPMU_CLOSE (1U << 7) /* contexts held for `vpmu list` */
#define GROUP_PVPMU_SMP   (1U << 8) /* pvpmu checks that need 2 CPUs */
#define GROUP_PVPMU_SPEC  (1U << 9) /* pvpmu descriptor semantics */
#define GROUP_ALL         (GROUP_BOOT | GROUP_SYS | GROUP_PERF | GROUP_MP)

/* The detail text of one check, printed after its result. */
struct report {
	char text[400];
	unsigned long len;
};

/* A row of the check table: name, groups, the check itself. */
struct check {
	const char *name;
	unsigned int groups;
	enum result (*run)(struct report *r);
};

/* out.c: formatting (%s %c %d %u %x, l/ll, 0-padded width, %%). */
int fmt_v(char *buf, unsigned long size, const char *fmt, va_list ap);
/* One line to stdout in a single write(2), so it is never interleaved. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Append to a check's detail text (space-separated). */
void detail(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "name failed: errno N (TEXT)" into the detail; returns RES_FAIL. */
enum result fail_errno(struct report *r, const char *what, long ret);

/* sys.c: thin system call wrappers and x86 helpers. */
long sys_call_ioperm(unsigned long from, unsigned long num, int on);
long sys_call_perf_event_open(void *attr, int pid, int cpu, int group_fd,
			      unsigned long flags);
unsigned long long rdtsc_now(void);
void outb_port(unsigned char value, unsigned short port);
/* TSC ticks per second, measured against gettimeofday() once (~50 ms). */
unsigned long long tsc_hz(void);
/* Spin in ring 3 until `ticks` TSC cycles have passed. */
void spin_tsc(unsigned long long ticks);

/* The check tables of each file. */
extern const struct check sys_checks[];
extern const unsigned int sys_checks_count;
extern const struct check perf_checks[];
extern const unsigned int perf_checks_count;
extern const struct check mp_checks[];
extern const unsigned int mp_checks_count;
extern const struct check pvpmu_checks[];
extern const unsigned int pvpmu_checks_count;

#endif /* VPMU_LINUX_INIT_H */
