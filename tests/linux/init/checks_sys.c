// SPDX-License-Identifier: MIT
/*
 * checks_sys.c: the boot check (CPUs the kernel brought up) and the
 * system call ABI as user space sees it (on PVM hosts every SYSCALL goes
 * through the guest patch pvm-0001: these checks are what it must keep).
 */
#include "init.h"

#include <asm/unistd.h>

#define CPUINFO_MAX 16384
#define REG_PATTERN 0x5a5a5a5a00000000UL
#define PAGE_BYTES  4096UL

static unsigned int count_processors(const char *text)
{
	static const char key[] = "processor";
	unsigned int n          = 0;
	const char *line        = text;

	while (*line) {
		if (!strncmp(line, key, sizeof(key) - 1))
			n++;
		while (*line && *line != '\n')
			line++;
		if (*line)
			line++;
	}
	return n;
}

static enum result check_cpuinfo(struct report *r)
{
	static char text[CPUINFO_MAX];
	long fd, n, total = 0;

	fd = sys_open("/proc/cpuinfo", O_RDONLY, 0);
	if (fd < 0)
		return fail_errno(r, "open /proc/cpuinfo", fd);
	while ((n = sys_read((int)fd, text + total,
			     sizeof(text) - 1 - (unsigned long)total)) > 0)
		total += n;
	sys_close((int)fd);
	if (n < 0)
		return fail_errno(r, "read /proc/cpuinfo", n);
	text[total] = '\0';
	n           = count_processors(text);
	detail(r, "processors=%ld", n);
	return n >= 1 ? RES_PASS : RES_FAIL;
}

/*
 * getpid() with a known value in every register SYSCALL must preserve
 * (all but RAX, RCX, R11); returns a bit per register that changed and
 * the result in *ret.
 */
static unsigned int syscall_clobbers(long *ret)
{
	register unsigned long r8 __asm__("r8")   = REG_PATTERN | 8;
	register unsigned long r9 __asm__("r9")   = REG_PATTERN | 9;
	register unsigned long r10 __asm__("r10") = REG_PATTERN | 10;
	register unsigned long r12 __asm__("r12") = REG_PATTERN | 12;
	register unsigned long r13 __asm__("r13") = REG_PATTERN | 13;
	register unsigned long r14 __asm__("r14") = REG_PATTERN | 14;
	register unsigned long r15 __asm__("r15") = REG_PATTERN | 15;
	unsigned long rdi = REG_PATTERN | 7, rsi = REG_PATTERN | 6;
	unsigned long rdx = REG_PATTERN | 2, rbx = REG_PATTERN | 3;
	long rax         = __NR_getpid;
	unsigned int bad = 0;

	__asm__ __volatile__("syscall"
			     : "+a"(rax), "+D"(rdi), "+S"(rsi), "+d"(rdx),
			       "+b"(rbx), "+r"(r8), "+r"(r9), "+r"(r10),
			       "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15)
			     :
			     : "rcx", "r11", "memory");
	bad |= (rdi != (REG_PATTERN | 7)) << 7;
	bad |= (rsi != (REG_PATTERN | 6)) << 6;
	bad |= (rdx != (REG_PATTERN | 2)) << 2;
	bad |= (rbx != (REG_PATTERN | 3)) << 3;
	bad |= (r8 != (REG_PATTERN | 8)) << 8;
	bad |= (r9 != (REG_PATTERN | 9)) << 9;
	bad |= (r10 != (REG_PATTERN | 10)) << 10;
	bad |= (r12 != (REG_PATTERN | 12)) << 12;
	bad |= (r13 != (REG_PATTERN | 13)) << 13;
	bad |= (r14 != (REG_PATTERN | 14)) << 14;
	bad |= (r15 != (REG_PATTERN | 15)) << 15;
	*ret = rax;
	return bad;
}

/* A six-argument call (mmap: RDI, RSI, RDX, R10, R8, R9) that works. */
static int mmap_six_args(void)
{
	unsigned char *p;
	int ok;

	p = sys_mmap(0, PAGE_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)p >= (unsigned long)-4095)
		return 0;
	p[0]              = 0xa5;
	p[PAGE_BYTES - 1] = 0x5a;
	ok = p[0] == 0xa5 && p[PAGE_BYTES - 1] == 0x5a && p[1] == 0;
	return sys_munmap(p, PAGE_BYTES) == 0 && ok;
}

static enum result check_syscall_abi(struct report *r)
{
	unsigned int bad;
	long pid, ebadf;
	int six;

	bad   = syscall_clobbers(&pid);
	ebadf = sys_close(-1);
	six   = mmap_six_args();
	detail(r, "getpid=%ld clobbered-mask=0x%x close(-1)=%ld mmap6=%s", pid,
	       bad, ebadf, six ? "ok" : "bad");
	return pid == 1 && !bad && ebadf == -9 && six ? RES_PASS : RES_FAIL;
}

const struct check sys_checks[] = {
	{"cpuinfo", GROUP_BOOT, check_cpuinfo},
	{"syscall-abi", GROUP_SYS, check_syscall_abi},
};
const unsigned int sys_checks_count =
	sizeof(sys_checks) / sizeof(sys_checks[0]);
