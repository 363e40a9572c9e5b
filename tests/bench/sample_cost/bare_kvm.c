// SPDX-License-Identifier: MIT
/*
 * bare_kvm.c: the floors of bench_sample_cost, with no vpmu
 * code: it opens /dev/kvm itself, puts one vCPU directly in 64-bit ring 3
 * (identity-mapped 2 MiB page, user segments, IOPL 3) and runs work_loop.h
 * rounds, each ending with two OUTs that carry its TSC cycles.
 *
 *   bare_kvm floor SECONDS PHASES RATE...
 *       per RATE, PHASES times: SECONDS not kicked, then SECONDS kicked
 *       RATE times per second of run time: a one-shot POSIX timer re-armed
 *       after every kick (as a sampling period of run time is), whose
 *       SIGUSR1 handler sets kvm_run.immediate_exit; KVM_RUN returns
 *       EINTR and the loop re-enters. That is signal + exit + re-entry +
 *       re-arm: the least any kick-driven sampler pays per sample. Prints
 *       "floor: rate R off M0 on M1 kicks K seconds S" (M: median round
 *       cycles; K kicks in S seconds kicked; where the kicks leave the
 *       guest too little time to end rounds, M1 is the kicked time over
 *       the rounds' worth of work done, parts counted from the guest's
 *       RCX), then "floor-path: rate R
 *       ..." with the kick path stamped as `vpmu run --stats` stamps
 *       vpmu's (TSC: handler -> KVM_RUN returned, timer_settime), kicks
 *       taken before KVM_RUN and involuntary switches per kick.
 *   bare_kvm native SECONDS
 *       the same rounds as a native process (for host perf record):
 *       "native: rounds N median M".
 *   bare_kvm spin MEM_MB
 *       the guest works until SIGTERM with MEM_MB of guest memory: the
 *       resident-set floor of a VM.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "work_loop.h"

#define CODE_GPA 0x10000ULL
#define PORT_LO  0xf0
#define PORT_HI  0xf1
#define ROUNDS   4096

/* The guest: rounds of the work, cycles out through ports 0xf0/0xf1. */
__asm__(".pushsection .rodata\n"
	".globl floor_guest\n"
	".globl floor_guest_end\n"
	"floor_guest:\n"
	"0: lfence\n rdtsc\n shl $32, %rdx\n or %rdx, %rax\n mov %rax, %r8\n"
	"mov %r9, %rax\n mov %r10, %rcx\n" WORK_LOOP_BODY(
		"%") "mov %rax, %r11\n lfence\n rdtsc\n shl $32, %rdx\n"
		     "or %rdx, %rax\n sub %r8, %rax\n"
		     "mov $0xf0, %dx\n out %eax, (%dx)\n shr $32, %rax\n"
		     "mov $0xf1, %dx\n out %eax, (%dx)\n"
		     "inc %r9\n jmp 0b\n"
		     "floor_guest_end:\n"
		     ".popsection\n");
extern const unsigned char floor_guest[], floor_guest_end[];

static struct kvm_run *run;
static volatile sig_atomic_t stop;
static volatile uint64_t kick_tsc; /* TSC when on_kick last ran */

static void on_kick(int sig)
{
	(void)sig;
	run->immediate_exit = 1;
	kick_tsc            = __rdtsc();
}

static void on_stop(int sig)
{
	(void)sig;
	stop                = 1;
	run->immediate_exit = 1;
}

__attribute__((noreturn)) static void fail(const char *what)
{
	fprintf(stderr, "bare_kvm: %s: %s\n", what, strerror(errno));
	exit(errno == ENOENT || errno == EACCES ? 77 : 1);
}

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, int l)
{
	*s = (struct kvm_segment){.base     = 0,
				  .limit    = 0xffffffff,
				  .selector = sel,
				  .type     = type,
				  .present  = 1,
				  .dpl      = 3,
				  .db       = !l,
				  .s        = 1,
				  .l        = (uint8_t)l,
				  .g        = 1};
}

/* A VM of (mem) bytes whose vCPU is at the work's first instruction. */
static int vm_setup(size_t mem)
{
	struct kvm_userspace_memory_region r = {0};
	struct kvm_cpuid2 *cpuid;
	struct kvm_sregs sr;
	struct kvm_regs regs = {0};
	uint64_t *pt;
	uint8_t *ram;
	int kvm, vm, vcpu, sz;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		fail("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		fail("KVM_CREATE_VM");
	ram = mmap(NULL, mem, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ram == MAP_FAILED)
		fail("mmap");
	r.memory_size    = mem;
	r.userspace_addr = (uintptr_t)ram;
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r))
		fail("KVM_SET_USER_MEMORY_REGION");
	pt    = (uint64_t *)(ram + 0x1000); /* PML4 -> PDPT -> 2 MiB page */
	pt[0] = 0x2000 | 7;
	pt    = (uint64_t *)(ram + 0x2000);
	pt[0] = 0x3000 | 7;
	pt    = (uint64_t *)(ram + 0x3000);
	pt[0] = 0x87; /* present, writable, user, 2 MiB */
	memcpy(ram + CODE_GPA, floor_guest,
	       (size_t)(floor_guest_end - floor_guest));
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	sz   = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vcpu < 0 || sz <= 0)
		fail("KVM_CREATE_VCPU");
	run = mmap(NULL, (size_t)sz, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu,
		   0);
	if (run == MAP_FAILED)
		fail("mmap kvm_run");
	/* Long mode needs CPUID's LM bit: give the host's supported set. */
	cpuid = calloc(1, sizeof(*cpuid) + 256 * sizeof(cpuid->entries[0]));
	cpuid->nent = 256;
	if (ioctl(kvm, KVM_GET_SUPPORTED_CPUID, cpuid) ||
	    ioctl(vcpu, KVM_SET_CPUID2, cpuid))
		fail("CPUID");
	free(cpuid);
	if (ioctl(vcpu, KVM_GET_SREGS, &sr))
		fail("KVM_GET_SREGS");
	seg(&sr.cs, 0x1b, 11, 1);
	seg(&sr.ss, 0x23, 3, 0);
	sr.ds = sr.es = sr.fs = sr.gs = sr.ss;
	sr.cr3                        = 0x1000;
	sr.cr4                        = 0x20;       /* PAE */
	sr.cr0                        = 0x80010033; /* PG WP NE ET MP PE */
	sr.efer                       = 0x500;      /* LME LMA */
	if (ioctl(vcpu, KVM_SET_SREGS, &sr))
		fail("KVM_SET_SREGS");
	regs.rip    = CODE_GPA;
	regs.rflags = 0x3002; /* IOPL 3: OUT from ring 3 */
	regs.r10    = WORK_ITERS;
	if (ioctl(vcpu, KVM_SET_REGS, &regs))
		fail("KVM_SET_REGS");
	return vcpu;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A phase's rounds and kicks; the kick path stamped with the TSC as vpmu
 * run --stats does: handler -> KVM_RUN returned (exit), timer_settime
 * (arm), kicks taken before KVM_RUN (outside), involuntary switches.
 */
struct phase {
	uint64_t c[ROUNDS];
	unsigned int n;
	uint64_t kicks, ns;
	uint64_t exit, arm, outside, nivcsw;
	double work; /* rounds of work done, counting the parts of rounds */
};

static timer_t timer;

static void arm(uint64_t period_ns, struct phase *p)
{
	struct itimerspec its = {
		.it_value = {(time_t)(period_ns / 1000000000ULL),
			     (long)(period_ns % 1000000000ULL)}};
	uint64_t t;

	if (!period_ns)
		return;
	t = __rdtsc();
	timer_settime(timer, 0, &its, NULL);
	p->arm += __rdtsc() - t;
}

/* Iterations left in the guest's round (RCX; 0 between two rounds). */
static uint64_t iterations_left(int vcpu)
{
	struct kvm_regs regs;

	if (ioctl(vcpu, KVM_GET_REGS, &regs))
		fail("KVM_GET_REGS");
	return regs.rcx;
}

static uint64_t nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : (uint64_t)ru.ru_nivcsw;
}

/*
 * Run the vCPU for (secs), kicked every (period_ns) of run time (0: not
 * kicked), appending rounds to (p); the first round, which straddles the
 * phase's start, is dropped.
 */
static void phase(int vcpu, double secs, uint64_t period_ns, struct phase *p)
{
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9), lo = 0;
	uint64_t sw = nivcsw(), tsc_run, tsc_ret, ends = 0;
	uint64_t left = iterations_left(vcpu);
	bool first    = true;
	uint8_t *io;

	arm(period_ns, p);
	while (!stop && now_ns() < end) {
		tsc_run = __rdtsc();
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			tsc_ret = __rdtsc();
			if (errno != EINTR)
				fail("KVM_RUN");
			run->immediate_exit = 0;
			p->kicks++;
			if (kick_tsc < tsc_run)
				p->outside++;
			else if (kick_tsc <= tsc_ret)
				p->exit += tsc_ret - kick_tsc;
			arm(period_ns, p);
			continue;
		}
		if (run->exit_reason != KVM_EXIT_IO) {
			fprintf(stderr, "bare_kvm: exit reason %u\n",
				run->exit_reason);
			exit(1);
		}
		io = (uint8_t *)run + run->io.data_offset;
		if (run->io.port == PORT_LO) {
			memcpy(&lo, io, 4);
			continue;
		}
		ends++;
		if (!first && p->n < ROUNDS) {
			uint32_t hi;

			memcpy(&hi, io, 4);
			p->c[p->n++] = (uint64_t)hi << 32 | (lo & 0xffffffffU);
		}
		first = false;
	}
	if (period_ns) /* disarm: a zero it_value stops it */
		timer_settime(timer, 0, &(struct itimerspec){0}, NULL);
	p->ns += now_ns() - t0;
	/* Whole rounds ended, plus the part of the last minus the first's. */
	p->work += (double)ends +
		   ((double)left - (double)iterations_left(vcpu)) / WORK_ITERS;
	p->nivcsw += nivcsw() - sw;
}

static uint64_t median(struct phase *p)
{
	qsort(p->c, p->n, sizeof(p->c[0]), cmp_u64);
	return p->n ? p->c[p->n / 2] : 0;
}

/*
 * A kicked phase's round in cycles: the median of its rounds or, where a
 * rate leaves the guest too little time to end FEW_ROUNDS of them, the
 * phase's time over the work it did (parts of rounds counted): what the
 * floor cannot sustain still gets a cost per kick.
 */
#define FEW_ROUNDS 8
static uint64_t kicked_round(struct phase *p, int khz, bool *from_work)
{
	double cycles = (double)p->ns * khz / 1e6, work = p->work;

	*from_work = p->n < FEW_ROUNDS;
	if (!*from_work)
		return median(p);
	if (work < 1e-6) /* no progress at all: the whole time was lost */
		work = 1e-6;
	return (uint64_t)(cycles / work);
}

static int floor_main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_kick};
	struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo  = SIGUSR1};
	static struct phase off, on;
	double secs = atof(argv[0]);
	int phases  = atoi(argv[1]), i, r;
	int vcpu    = vm_setup(64ULL << 20);
	int khz     = ioctl(vcpu, KVM_GET_TSC_KHZ, 0);
	unsigned long rate;
	uint64_t on_round;
	bool from_work;
	double us;

	sigaction(SIGUSR1, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer))
		fail("timer_create");
	for (r = 2; r < argc; r++) {
		rate = strtoul(argv[r], NULL, 10);
		memset(&off, 0, sizeof(off));
		memset(&on, 0, sizeof(on));
		for (i = 0; i < phases; i++) {
			phase(vcpu, secs, 0, &off);
			phase(vcpu, secs, rate ? 1000000000ULL / rate : 0, &on);
		}
		on_round = kicked_round(&on, khz, &from_work);
		printf("floor: rate %lu off %llu on %llu kicks %llu seconds "
		       "%.3f rounds %u/%u work %.3f%s\n",
		       rate, (unsigned long long)median(&off),
		       (unsigned long long)on_round,
		       (unsigned long long)on.kicks, (double)on.ns / 1e9, off.n,
		       on.n, on.work,
		       from_work ? " (on: kicked time over work done)" : "");
		/* The same stamps as vpmu run --stats, means per kick. */
		us = khz > 0 && on.kicks ? 1e3 / khz / (double)on.kicks : 0;
		printf("floor-path: rate %lu exit %.2f timer_settime %.2f us "
		       "outside %llu involuntary switches per kick %.2f\n",
		       rate, (double)on.exit * us, (double)on.arm * us,
		       (unsigned long long)on.outside,
		       on.kicks ? (double)on.nivcsw / (double)on.kicks : 0);
		fflush(stdout);
	}
	return 0;
}

static int native_main(double secs)
{
	static struct phase p;
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9), t0;
	volatile uint64_t sink;
	unsigned int round = 0;
	uint32_t lo, hi;

	while (now_ns() < end) {
		__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
		t0   = (uint64_t)hi << 32 | lo;
		sink = work_loop(WORK_ITERS, 88172645463325252ULL ^ round);
		__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
		if (round++ && p.n < ROUNDS)
			p.c[p.n++] = ((uint64_t)hi << 32 | lo) - t0;
	}
	(void)sink;
	printf("native: rounds %u median %llu\n", p.n,
	       (unsigned long long)median(&p));
	return 0;
}

static int spin_main(unsigned long mb)
{
	struct sigaction sa = {.sa_handler = on_stop};
	static struct phase p;
	int vcpu = vm_setup((size_t)mb << 20);

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fprintf(stderr, "bare_kvm: ready\n");
	while (!stop) {
		p.n = 0;
		phase(vcpu, 1.0, 0, &p);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "floor"))
		return floor_main(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "native"))
		return native_main(atof(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "spin"))
		return spin_main(strtoul(argv[2], NULL, 10));
	fprintf(stderr, "usage: bare_kvm floor SECONDS PHASES RATE... | "
			"native SECONDS | spin MEM_MB\n");
	return 2;
}
