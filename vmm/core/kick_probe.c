// SPDX-License-Identifier: MIT
/*
 * kick_probe.c: what one kick costs a guest on this host, measured.
 *
 * A sample of a time-based event interrupts the guest: a timer signal
 * ends KVM_RUN, the VMM accounts, re-arms and enters again. The VMM times
 * its own user-space part, but the kernel's part (the signal, the exit
 * and the re-entry, and the guest's slower first steps afterwards) is
 * invisible from user space and differs widely between hosts (hardware
 * VT-x, PVM, nested). So it is measured once, on a bare vCPU: a guest in
 * 64-bit ring 3 counts the turns of a loop that reads its TSC, alternately
 * left alone and kicked by a one-shot timer re-armed after every kick, as
 * a kick-driven sampler does. The turns the kicked phase did not make, at
 * the free phase's pace (which has the host's own interrupts in it, and
 * not the entry and exit each phase starts and ends with), are the guest
 * time a kick took: work, not only the time the guest stood still,
 * because after a re-entry the guest runs slower for a while (its TLB and
 * caches refilled), and on a nested PVM host that was seen to be 5 of
 * 122 us. The guest also sums the gaps between two TSC reads longer
 * than a microsecond (the time it did not run): the work lost is never
 * taken as less than that (a free phase slowed by a busy neighbour reads
 * too little). Minus the user space between KVM_RUN's return and the next
 * call, the kernel's part. The VMM also sees part of a kick, from the
 * timer's due time to KVM_RUN's return: the probe times it, and the
 * kernel's part per ns of it is what the VMM charges, scaled by each
 * kick's own exit, since a host's kicks drift (by 8 % within seconds on a
 * nested PVM host) and their exits with them. The mean of the middle five
 * of nine pairs of phases, ratio by ratio, so one preemption of the probe
 * (or a busy sibling hyperthread, which slows the guest's work) does not
 * decide. A kick that comes before the guest ran again after the last
 * one costs less (KVM_RUN returns without entering): the kicked phase's
 * period starts short and doubles until the guest runs between kicks
 * for at least as long as a kick takes, as it does under any sampling
 * budget up to 50 %. Hosts whose TSC the kernel does not trust are not
 * probed (the caller falls back).
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PROBE_SIGNAL        SIGUSR2
#define PROBE_PAIRS         9
#define PROBE_KEPT          5
#define PROBE_PHASE_NS      5000000ULL /* each phase: 5 ms */
#define PROBE_PERIOD_NS     50000ULL   /* a kick per 50 us in the kicked one, */
#define PROBE_PERIOD_MAX_NS 3200000ULL /* or longer, up to this */
#define PROBE_MEM           0x200000ULL
#define PROBE_CODE_GPA      0x10000ULL

/*
 * The guest: R8 the last TSC read; a gap above R10 cycles adds to RBX
 * (cycles) and RCX (gaps); R11 counts the loop's turns. Entered at its
 * start for each phase.
 */
__asm__(".pushsection .rodata\n"
	"kick_probe_guest:\n"
	"rdtsc\n shl $32, %rdx\n or %rdx, %rax\n mov %rax, %r8\n"
	"0: inc %r11\n rdtsc\n shl $32, %rdx\n or %rdx, %rax\n"
	"mov %rax, %r9\n sub %r8, %r9\n mov %rax, %r8\n"
	"cmp %r10, %r9\n jb 0b\n"
	"add %r9, %rbx\n inc %rcx\n jmp 0b\n"
	"kick_probe_guest_end:\n"
	".popsection\n");
extern const unsigned char kick_probe_guest[], kick_probe_guest_end[];

struct probe {
	int vm, vcpu;
	uint64_t tsc_khz;
	struct kvm_run *run;
	size_t run_size;
	void *mem;
	timer_t timer;
	bool has_timer;
};

static _Thread_local struct kvm_run *probe_run;

static void probe_kick(int sig)
{
	(void)sig;
	if (probe_run)
		probe_run->immediate_exit = 1;
}

static void user_segment(struct kvm_segment *s, uint16_t sel, uint8_t type,
			 bool code)
{
	*s = (struct kvm_segment){.limit    = 0xffffffff,
				  .selector = sel,
				  .type     = type,
				  .present  = 1,
				  .dpl      = 3,
				  .db       = !code,
				  .s        = 1,
				  .l        = code,
				  .g        = 1};
}

/* A vCPU in 64-bit ring 3 at the counting loop (identity-mapped 2 MiB). */
static int probe_setup(int kvm_fd, struct probe *p)
{
	struct kvm_userspace_memory_region r = {.memory_size = PROBE_MEM};
	struct kvm_cpuid2 *cpuid;
	struct kvm_sregs sr;
	uint64_t *pt;
	int sz;

	p->vm = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (p->vm < 0)
		return -errno;
	p->mem = mmap(NULL, PROBE_MEM, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->mem == MAP_FAILED) {
		p->mem = NULL;
		return -ENOMEM;
	}
	r.userspace_addr = (uintptr_t)p->mem;
	if (ioctl(p->vm, KVM_SET_USER_MEMORY_REGION, &r))
		return -errno;
	pt    = (uint64_t *)((char *)p->mem + 0x1000); /* PML4 */
	pt[0] = 0x2000 | 7;
	pt    = (uint64_t *)((char *)p->mem + 0x2000); /* PDPT */
	pt[0] = 0x3000 | 7;
	pt    = (uint64_t *)((char *)p->mem + 0x3000); /* PD: one 2 MiB */
	pt[0] = 0x87;
	memcpy((char *)p->mem + PROBE_CODE_GPA, kick_probe_guest,
	       (size_t)(kick_probe_guest_end - kick_probe_guest));
	p->vcpu = ioctl(p->vm, KVM_CREATE_VCPU, 0);
	sz      = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (p->vcpu < 0 || sz <= 0)
		return -EIO;
	p->run_size = (size_t)sz;
	p->run = mmap(NULL, p->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      p->vcpu, 0);
	if (p->run == MAP_FAILED) {
		p->run = NULL;
		return -ENOMEM;
	}
	/* Long mode needs CPUID's LM bit: the host's supported set. */
	cpuid = calloc(1, sizeof(*cpuid) + 256 * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return -ENOMEM;
	cpuid->nent = 256;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) ||
	    ioctl(p->vcpu, KVM_SET_CPUID2, cpuid)) {
		free(cpuid);
		return -EIO;
	}
	free(cpuid);
	if (ioctl(p->vcpu, KVM_GET_SREGS, &sr))
		return -errno;
	user_segment(&sr.cs, 0x1b, 11, true);
	user_segment(&sr.ss, 0x23, 3, false);
	sr.ds = sr.es = sr.fs = sr.gs = sr.ss;
	sr.cr3                        = 0x1000;
	sr.cr4                        = 0x20;       /* PAE */
	sr.cr0                        = 0x80010033; /* PG WP NE ET MP PE */
	sr.efer                       = 0x500;      /* LME LMA */
	if (ioctl(p->vcpu, KVM_SET_SREGS, &sr))
		return -errno;
	sz = ioctl(p->vcpu, KVM_GET_TSC_KHZ, 0);
	if (sz <= 0)
		return -ENOTSUP;
	p->tsc_khz = (uint64_t)sz;
	return 0;
}

static void probe_free(struct probe *p)
{
	if (p->has_timer)
		timer_delete(p->timer);
	if (p->run)
		munmap(p->run, p->run_size);
	if (p->vcpu >= 0)
		close(p->vcpu);
	if (p->vm >= 0)
		close(p->vm);
	if (p->mem)
		munmap(p->mem, PROBE_MEM);
}

static void arm(struct probe *p, uint64_t ns)
{
	struct itimerspec its = {.it_value = {(time_t)(ns / 1000000000ULL),
					      (long)(ns % 1000000000ULL)}};

	timer_settime(p->timer, 0, &its, NULL);
}

/* Enter the guest at its start: gaps summed from zero. */
static int guest_restart(struct probe *p)
{
	struct kvm_regs regs = {.rip    = PROBE_CODE_GPA,
				.rflags = 0x2,
				.r10    = p->tsc_khz / 1000}; /* 1 us */

	return ioctl(p->vcpu, KVM_SET_REGS, &regs) ? -errno : 0;
}

/* What the guest measured: its gaps (ns) and its loop's turns. */
static int guest_result(struct probe *p, struct vmm_probe_phase *ph)
{
	struct kvm_regs regs;

	if (ioctl(p->vcpu, KVM_GET_REGS, &regs))
		return -errno;
	ph->gap_ns = regs.rbx * 1000000ULL / p->tsc_khz;
	ph->turns  = regs.r11;
	return 0;
}

/*
 * One phase of (length_ns): kicked every (period_ns) of wall time, or (0)
 * left alone until its end.
 */
static int run_phase(struct probe *p, uint64_t length_ns, uint64_t period_ns,
		     struct vmm_probe_phase *ph)
{
	uint64_t start, end, t_call, t_ret = 0, due;
	int ret;

	*ph = (struct vmm_probe_phase){0};
	ret = guest_restart(p);
	if (ret)
		return ret;
	start = vpmu_monotonic_ns();
	end   = start + length_ns;
	due   = start + period_ns;
	arm(p, period_ns ? period_ns : length_ns);
	for (;;) {
		t_call = vpmu_monotonic_ns();
		if (t_ret)
			ph->user_ns += t_call - t_ret;
		ret                    = ioctl(p->vcpu, KVM_RUN, 0);
		t_ret                  = vpmu_monotonic_ns();
		p->run->immediate_exit = 0;
		if (ret == 0 || errno != EINTR)
			return ret ? -errno : -EIO; /* the loop never exits */
		if (t_ret >= end)
			break;
		ph->kicks++;
		/* From due to return, as the VMM times a kick's exit. */
		ph->exit_ns += t_ret > due ? t_ret - due : 0;
		due = vpmu_monotonic_ns() + period_ns;
		arm(p, period_ns ? period_ns : end - t_ret);
	}
	arm(p, 0);
	ph->wall_ns = t_ret - start;
	return guest_result(p, ph);
}

int vmm_kick_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The mean of the middle PROBE_KEPT of PROBE_PAIRS figures. */
static uint64_t middle_mean(uint64_t *v)
{
	unsigned int i, first = (PROBE_PAIRS - PROBE_KEPT) / 2;
	uint64_t sum = 0;

	qsort(v, PROBE_PAIRS, sizeof(v[0]), vmm_kick_cmp_u64);
	for (i = first; i < first + PROBE_KEPT; i++)
		sum += v[i];
	return sum / PROBE_KEPT;
}

/*
 * The kicked phase's turns over the free one's, r, at one pace. Each
 * phase also has an entry (its start) and an exit (its end), a kick's
 * kernel part K, so with n kicks of user space U in all:
 *   W_kicked - K - n K - U = r (W_free - K),
 *   K = (W_kicked - U - r W_free) / (n + 1 - r).
 * (The pace taken as turns / W_free, that K left in the free phase, read
 * a kick about 1.6 % too dear at the probe's 16 kicks a phase.)
 */
double vmm_kick_probe_lost_ns(const struct vmm_probe_phase *free_run,
			      const struct vmm_probe_phase *kicked)
{
	double ratio, kernel;

	if (!free_run->turns || !kicked->kicks)
		return 0;
	ratio  = (double)kicked->turns / (double)free_run->turns;
	kernel = ((double)kicked->wall_ns - (double)kicked->user_ns -
		  ratio * (double)free_run->wall_ns) /
		 ((double)kicked->kicks + 1 - ratio);
	if (kernel < 0)
		kernel = 0;
	return kernel + (double)kicked->user_ns / (double)kicked->kicks;
}

/*
 * Per kick: guest work lost (*lost, in ns at the free pace), guest time
 * stood still (*gap), user space (*user) and the exit from the timer's
 * due time to KVM_RUN's return (*exit), ns. -ETIME when the guest
 * did not run between kicks for as long as a kick took: (period_ns) is
 * too short to measure a kick that interrupts a running guest.
 */
static int probe_pair(struct probe *p, uint64_t period_ns, uint64_t *lost,
		      uint64_t *gap, uint64_t *user, uint64_t *exit)
{
	/* Enough kicks to average however long the period has to be. */
	uint64_t length_ns = 16 * period_ns > PROBE_PHASE_NS ? 16 * period_ns
							     : PROBE_PHASE_NS;
	struct vmm_probe_phase free_run, kicked;
	double background, lost_ns;
	int ret;

	ret = run_phase(p, length_ns, 0, &free_run);
	if (!ret)
		ret = run_phase(p, length_ns, period_ns, &kicked);
	if (ret)
		return ret;
	if (!free_run.wall_ns || !free_run.turns || !kicked.kicks)
		return -EAGAIN;
	lost_ns = vmm_kick_probe_lost_ns(&free_run, &kicked);
	if (kicked.turns < kicked.kicks || 2 * lost_ns > (double)period_ns)
		return -ETIME;
	/* The host's own interruptions, at the free phase's rate. */
	background = (double)free_run.gap_ns * (double)kicked.wall_ns /
		     (double)free_run.wall_ns;
	*gap = (double)kicked.gap_ns > background
		       ? (uint64_t)(((double)kicked.gap_ns - background) /
				    (double)kicked.kicks)
		       : 0;
	/*
	 * The work lost holds the time stood still: less means the free
	 * phase ran slow (a busy neighbour), and the time is what holds.
	 */
	*lost = lost_ns > (double)*gap ? (uint64_t)lost_ns : *gap;
	*user = kicked.user_ns / kicked.kicks;
	*exit = kicked.exit_ns / kicked.kicks;
	return 0;
}

int vmm_kick_probe(int kvm_fd, struct vmm_kick_cost *cost)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo  = PROBE_SIGNAL};
	struct sigaction sa = {.sa_handler = probe_kick};
	struct probe p      = {.vm = -1, .vcpu = -1};
	uint64_t lost[PROBE_PAIRS], gap[PROBE_PAIRS], user[PROBE_PAIRS];
	uint64_t exit[PROBE_PAIRS], kernel[PROBE_PAIRS], ratio[PROBE_PAIRS];
	uint64_t period = PROBE_PERIOD_NS, wall0, cpu0, wall;
	sigset_t unblock, old;
	unsigned int i;
	int ret;

	memset(cost, 0, sizeof(*cost));
	ret = probe_setup(kvm_fd, &p);
	if (ret)
		goto out;
	/*
	 * No SA_RESTART: KVM_RUN must return EINTR. The handler stays: a
	 * signal still queued after the timer is gone must not end the VMM.
	 */
	sigemptyset(&sa.sa_mask);
	if (sigaction(PROBE_SIGNAL, &sa, NULL)) {
		ret = -errno;
		goto out;
	}
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &p.timer)) {
		ret = -errno;
		goto out;
	}
	p.has_timer = true;
	sigemptyset(&unblock);
	sigaddset(&unblock, PROBE_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &unblock, &old);
	probe_run = p.run;
	wall0     = vpmu_monotonic_ns();
	cpu0      = vmm_thread_cpu_ns();
	for (i = 0; i < PROBE_PAIRS && !ret;) {
		ret = probe_pair(&p, period, &lost[i], &gap[i], &user[i],
				 &exit[i]);
		if (ret == -ETIME && period < PROBE_PERIOD_MAX_NS) {
			period *= 2;
			ret = 0;
		} else if (!ret) {
			i++;
		}
	}
	/* The thread never sleeps here: what it did not run, it waited. */
	wall = vpmu_monotonic_ns() - wall0;
	cost->cpu_ppm =
		wall ? (uint32_t)((vmm_thread_cpu_ns() - cpu0) * 1000000 / wall)
		     : 0;
	probe_run = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		goto out;
	/*
	 * What is charged is the kernel part per ns of exit (scaled by each
	 * kick's exit): its ratio is taken pair by pair, each pair's host
	 * as it was then, and the kernel part is that ratio times the exit.
	 */
	for (i = 0; i < PROBE_PAIRS; i++) {
		kernel[i] = lost[i] > user[i] ? lost[i] - user[i] : 0;
		ratio[i] =
			exit[i] ? kernel[i] * VMM_KICK_RATIO_ONE / exit[i] : 0;
	}
	cost->gap_ns    = middle_mean(gap);
	cost->user_ns   = middle_mean(user);
	cost->exit_ns   = middle_mean(exit);
	cost->kernel_ns = cost->exit_ns ? middle_mean(ratio) * cost->exit_ns /
						  VMM_KICK_RATIO_ONE
					: middle_mean(kernel);
	cost->lost_ns   = cost->kernel_ns + cost->user_ns;
	cost->nr_probes = 1;
	ret             = cost->kernel_ns ? 0 : -EAGAIN;
out:
	probe_free(&p);
	return ret;
}
