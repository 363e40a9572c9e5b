// SPDX-License-Identifier: MIT
/*
 * bench_doorbell.c: cost of a hypercall round trip against the floor of a
 * bare PIO exit, measured with the guest TSC in one run.
 *
 *   (0) the loop itself, no exit
 *   (a) `outl` to PVPMU_PORT_NULL, which the VMM answers with no work
 *       (a bare PIO exit that skips hypercall dispatch)
 *   (b) PVPMU_HC_NOP through the hypercall dispatch
 *   (c) PVPMU_HC_ECHO with a request block (copy in, copy out)
 *
 * All loops execute the same instructions per call (`mov; outl`, unrolled
 * 8 times) so that they differ only in what the VMM does. The kinds are
 * interleaved over BENCH_ROUNDS rounds so that drift affects all alike;
 * the mean over all rounds and the best (fastest) round are both reported,
 * the latter being less sensitive to other load on the host. Ratios are
 * printed with two decimals in fixed point (no FPU here).
 */
#include "bench.h"
#include "kernel.h"
#include "pvpmu_hc.h"

#define BENCH_ITERS     20000 /* per kind, over all rounds */
#define BENCH_ROUNDS    4
#define BENCH_UNROLL    8
#define BENCH_PER_ROUND (BENCH_ITERS / BENCH_ROUNDS)

_Static_assert(BENCH_PER_ROUND % BENCH_UNROLL == 0, "whole unrolled loops");
_Static_assert(BENCH_ITERS % BENCH_ROUNDS == 0, "whole rounds");

enum kind { K_LOOP, K_NULL, K_NOP, K_ECHO, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"(0) loop, no exit",
	"(a) raw PIO null port",
	"(b) hypercall NOP",
	"(c) hypercall ECHO",
};

static struct pvpmu_hc_echo echo;

/* The same loop without the OUT: what (a)..(c) pay in guest instructions. */
static uint64_t run_loop(uint32_t val, unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();

	__asm__ __volatile__(".balign 16\n"
			     "1:\n\t"
			     ".rept 8\n\t"
			     "mov %[v], %%eax\n\t"
			     ".endr\n\t"
			     "sub $8, %[n]\n\t"
			     "jnz 1b"
			     : [n] "+r"(n)
			     : [v] "r"(val)
			     : "rax", "memory");
	return rdtsc_ordered() - t0;
}

static uint64_t run(int k, unsigned int n)
{
	switch (k) {
	case K_LOOP:
		return run_loop(0, n);
	case K_NULL:
		return bench_outl_loop(PVPMU_PORT_NULL, 0, n);
	case K_NOP:
		return bench_outl_loop(PVPMU_PORT_HC_BASE + PVPMU_HC_NOP, 0, n);
	default:
		return bench_outl_loop(PVPMU_PORT_HC_BASE + PVPMU_HC_ECHO,
				       virt_to_gpa(&echo), n);
	}
}

static void print_tsc_freq(const struct pvpmu_boot_info *bi)
{
	struct cpuid_regs r;
	uint32_t max;

	cpuid(0, &r);
	max = r.eax;
	kprintf("bench: boot info tsc_khz %llu\n",
		(unsigned long long)bi->tsc_khz);
	if (max >= 0x15) {
		cpuid(0x15, &r);
		if (r.eax && r.ebx && r.ecx)
			kprintf("bench: cpuid 0x15 tsc %llu Hz\n",
				(unsigned long long)r.ecx * r.ebx / r.eax);
		else
			kprintf("bench: cpuid 0x15 eax %u ebx %u ecx %u "
				"(no tsc frequency)\n",
				r.eax, r.ebx, r.ecx);
	}
	if (max >= 0x16) {
		cpuid(0x16, &r);
		kprintf("bench: cpuid 0x16 base %u MHz\n", r.eax);
	}
}

/* Sanity-check the calls once, so the loops measure the success path. */
static int precheck(void)
{
	long ret;

	ret = pvpmu_hypercall(PVPMU_HC_NOP, 0);
	if (ret != 0) {
		kprintf("bench: NOP returned %ld\n", ret);
		return -1;
	}
	echo = (struct pvpmu_hc_echo){.size = sizeof(echo), .in = 42};
	ret  = pvpmu_hypercall(PVPMU_HC_ECHO, virt_to_gpa(&echo));
	if (ret != 0 || echo.out != ~42ULL) {
		kprintf("bench: ECHO returned %ld, out 0x%llx\n", ret,
			(unsigned long long)echo.out);
		return -1;
	}
	outl(PVPMU_PORT_NULL, 0);
	return 0;
}

static void report(const char *what, const uint64_t *per, uint64_t tsc_khz)
{
	char rb[16], rc[16];
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		if (tsc_khz)
			kprintf("bench: %s %-24s %8llu cycles/iter %8llu ns\n",
				what, kind_names[k], (unsigned long long)per[k],
				(unsigned long long)(per[k] * 1000000 /
						     tsc_khz));
		else
			kprintf("bench: %s %-24s %8llu cycles/iter\n", what,
				kind_names[k], (unsigned long long)per[k]);
	}
	bench_fix2(rb, sizeof(rb), bench_ratio_x100(per[K_NOP], per[K_NULL]));
	bench_fix2(rc, sizeof(rc), bench_ratio_x100(per[K_ECHO], per[K_NULL]));
	kprintf("bench_doorbell: %s iters=%u loop=%llu null=%llu nop=%llu "
		"echo=%llu ratio_nop_null=%s ratio_echo_null=%s\n",
		what, BENCH_ITERS, (unsigned long long)per[K_LOOP],
		(unsigned long long)per[K_NULL], (unsigned long long)per[K_NOP],
		(unsigned long long)per[K_ECHO], rb, rc);
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	static const struct bench_rounds rounds = {NR_KINDS, BENCH_ROUNDS,
						   BENCH_PER_ROUND, run};
	uint64_t sum[NR_KINDS], best[NR_KINDS];

	if (vcpu != 0)
		return;
	print_tsc_freq(bi);
	if (precheck())
		guest_exit(1);
	echo = (struct pvpmu_hc_echo){.size = sizeof(echo), .in = 42};
	bench_interleave(&rounds, sum, best);
	report("mean", sum, bi->tsc_khz);
	report("best", best, bi->tsc_khz);
	guest_exit(0);
}
