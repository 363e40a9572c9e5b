// SPDX-License-Identifier: MIT
/*
 * bench_arch_msr_guest.c: guest side of bench_arch_msr: cost of
 * a trapped RDMSR of an architectural PMU counter against the raw MSR-exit
 * floor, measured with the guest TSC in one run.
 *
 *   (0) the loop itself, no exit
 *   (a) RDMSR of BENCH_FLOOR_MSR, which the host program serves with a
 *       handler that only returns 0 (the bare userspace MSR exit)
 *   (b) RDMSR of counter 0 of the model (Intel PMC0 0xc1, AMD PerfCtr0
 *       0xc0010201), enabled and counting trapped MSR reads, so every
 *       read folds a backend delta in before it answers
 *   (c) RDMSR of its event select (model state, no libvpmu call)
 *
 * Same instructions per iteration for all (`mov; rdmsr`, unrolled 8
 * times), kinds interleaved over rounds in a rotating order; mean and
 * best round reported, and the median over rounds of the ratio of the
 * counter to the floor measured next to it (robust to host noise);
 * ratios in fixed point (no FPU here).
 */
#include "bench.h"
#include "kernel.h"

#define BENCH_FLOOR_MSR 0x00002fffU /* must match bench_arch_msr.c */
#define BENCH_ITERS     16000
#define BENCH_ROUNDS    16
#define BENCH_PER_ROUND (BENCH_ITERS / BENCH_ROUNDS)
#define EVSEL_MSR_READS                                                        \
	(PVPMU_EV_HV_MSR_READS | PVPMU_EVSEL_USR | PVPMU_EVSEL_OS |            \
	 PVPMU_EVSEL_EN)

_Static_assert(BENCH_PER_ROUND % 8 == 0, "whole unrolled loops");

enum kind { K_LOOP, K_FLOOR, K_COUNTER, K_EVTSEL, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"(0) loop, no exit",
	"(a) raw MSR exit floor",
	"(b) RDMSR counter",
	"(c) RDMSR event select",
};

static uint32_t msr_of[NR_KINDS];

static uint64_t run_rdmsr(uint32_t msr, unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();

	__asm__ __volatile__(".balign 16\n"
			     "1:\n\t"
			     ".rept 8\n\t"
			     "mov %[m], %%ecx\n\t"
			     "rdmsr\n\t"
			     ".endr\n\t"
			     "sub $8, %[n]\n\t"
			     "jnz 1b"
			     : [n] "+r"(n)
			     : [m] "r"(msr)
			     : "rax", "rcx", "rdx", "memory");
	return rdtsc_ordered() - t0;
}

static uint64_t run_loop(uint32_t msr, unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();

	__asm__ __volatile__(".balign 16\n"
			     "1:\n\t"
			     ".rept 8\n\t"
			     "mov %[m], %%ecx\n\t"
			     "mov %%ecx, %%eax\n\t"
			     ".endr\n\t"
			     "sub $8, %[n]\n\t"
			     "jnz 1b"
			     : [n] "+r"(n)
			     : [m] "r"(msr)
			     : "rax", "rcx", "memory");
	return rdtsc_ordered() - t0;
}

/* Pick the model's counter 0 from CPUID; 0 if the VM has no PMU. */
static const char *setup_model(void)
{
	struct cpuid_regs r;

	cpuid(0xa, &r);
	if ((r.eax & 0xff) >= 2 && ((r.eax >> 8) & 0xff)) {
		msr_of[K_COUNTER] = 0xc1;
		msr_of[K_EVTSEL]  = 0x186;
		return "intel-v2";
	}
	cpuid(0x80000001, &r);
	if (r.ecx & (1U << 23)) {
		msr_of[K_COUNTER] = 0xc0010201;
		msr_of[K_EVTSEL]  = 0xc0010200;
		return "amd";
	}
	return NULL;
}

static void report(const char *what, const uint64_t *per, uint64_t tsc_khz)
{
	char rb[16], rc[16], rl[16];
	int k;

	for (k = 0; k < NR_KINDS; k++)
		kprintf("bench: %s %-26s %8llu cycles/iter %8llu ns\n", what,
			kind_names[k], (unsigned long long)per[k],
			(unsigned long long)(tsc_khz ? per[k] * 1000000 /
							       tsc_khz
						     : 0));
	bench_fix2(rb, sizeof(rb),
		   bench_ratio_x100(per[K_COUNTER], per[K_FLOOR]));
	bench_fix2(rc, sizeof(rc),
		   bench_ratio_x100(per[K_EVTSEL], per[K_FLOOR]));
	/* The same with the loop's own cost taken out of both sides. */
	bench_fix2(rl, sizeof(rl),
		   bench_ratio_x100(per[K_COUNTER] - per[K_LOOP],
				    per[K_FLOOR] - per[K_LOOP]));
	kprintf("bench_arch_msr: %s iters=%u floor=%llu counter=%llu "
		"evtsel=%llu ratio_counter_floor=%s ratio_evtsel_floor=%s "
		"ratio_counter_floor_net=%s\n",
		what, BENCH_ITERS, (unsigned long long)per[K_FLOOR],
		(unsigned long long)per[K_COUNTER],
		(unsigned long long)per[K_EVTSEL], rb, rc, rl);
}

/* Median of the per-round ratios (x100) counter / floor. */
static uint64_t median_ratio(uint64_t (*per)[NR_KINDS])
{
	uint64_t r[BENCH_ROUNDS];
	int i;

	_Static_assert(BENCH_ROUNDS % 2 == 0, "median of the middle two");
	for (i = 0; i < BENCH_ROUNDS; i++)
		r[i] = (per[i][K_COUNTER] * 100 + per[i][K_FLOOR] / 2) /
		       per[i][K_FLOOR];
	return bench_median(r, BENCH_ROUNDS);
}

static uint64_t per_round[BENCH_ROUNDS][NR_KINDS];

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	uint64_t sum[NR_KINDS] = {0}, best[NR_KINDS], c, v, med;
	const char *model;
	int round, j, k;

	if (vcpu != 0)
		return;
	model           = setup_model();
	msr_of[K_FLOOR] = BENCH_FLOOR_MSR;
	if (!model || guest_rdmsr_safe(BENCH_FLOOR_MSR, &v) ||
	    guest_wrmsr_safe(msr_of[K_EVTSEL], EVSEL_MSR_READS)) {
		kprintf("bench_arch_msr: needs a PMU model and the floor MSR "
			"(run the host program bench_arch_msr)\n");
		guest_exit(1);
	}
	kprintf("bench_arch_msr: model %s, counter msr 0x%x\n", model,
		msr_of[K_COUNTER]);
	for (k = 0; k < NR_KINDS; k++)
		best[k] = UINT64_MAX;
	for (round = 0; round < BENCH_ROUNDS; round++) {
		for (j = 0; j < NR_KINDS; j++) {
			k = (round + j) % NR_KINDS;
			c = k == K_LOOP ? run_loop(msr_of[k], BENCH_PER_ROUND)
					: run_rdmsr(msr_of[k], BENCH_PER_ROUND);
			per_round[round][k] = c;
			sum[k] += c;
			if (c < best[k])
				best[k] = c;
		}
	}
	med = median_ratio(per_round);
	for (k = 0; k < NR_KINDS; k++) {
		sum[k] /= BENCH_ITERS;
		best[k] /= BENCH_PER_ROUND;
	}
	v = rdmsr(msr_of[K_COUNTER]);
	kprintf("bench_arch_msr: counter counted %llu trapped reads\n",
		(unsigned long long)v);
	report("mean", sum, bi->tsc_khz);
	report("best", best, bi->tsc_khz);
	kprintf("bench_arch_msr: median of %u rounds ratio_counter_floor="
		"%llu.%02llu (target <= 1.10)\n",
		BENCH_ROUNDS, (unsigned long long)(med / 100),
		(unsigned long long)(med % 100));
	guest_exit(0);
}
