// SPDX-License-Identifier: MIT
/*
 * bench_syscall.c: cost of a null syscall round trip (ring 3 -> ring 0 ->
 * ring 3) on vCPU 0, measured from ring 3 with the TSC in one run:
 *
 *   (0) the loop itself, no syscall
 *   (a) yield, the null syscall: int3, 6 emulated ring-0 instructions of
 *       entry and return plus 2 in C (kernel/syscall.S)
 *   (b) time (9 instructions in C: rdtsc and the conversion)
 *   (c) the NOP hypercall doorbell from ring 3 (a PIO exit to the VMM;
 *       on PVM the OUT traps and the I/O bitmap check is emulated)
 *   (d) the same doorbell from ring 0, measured by guest_main() just
 *       before it enters ring 3 (best of BENCH_ROUNDS rounds)
 *
 * Kinds (0)-(c) are interleaved over BENCH_ROUNDS rounds; the mean over
 * all rounds and the best round are reported, and the ratios of (a), (b)
 * and (c) to (d), in two-decimal fixed point. Exit status 0.
 *
 * Measured on the PVM host under load, best rounds over several runs:
 * (a) 15-19 us, (b) 21-27 us, (c) 33-47 us, (d) 10-14 us. A ring-3 OUT
 * traps and has its I/O bitmap check emulated, hence (c) > (d); a
 * hypercall syscall (int3, then the OUT in ring 0) was tried and cost
 * ~50 us, more than (c), so ring 3 rings the doorbells itself.
 */
#include "bench.h"
#include "kernel.h"

#include "pvpmu_hc.h"

#define BENCH_ITERS     4000 /* per kind, over all rounds */
#define BENCH_ROUNDS    4
#define BENCH_PER_ROUND (BENCH_ITERS / BENCH_ROUNDS)

_Static_assert(BENCH_ITERS % BENCH_ROUNDS == 0, "whole rounds");

enum kind { K_LOOP, K_YIELD, K_TIME, K_HC_NOP, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"(0) loop, no syscall",
	"(a) syscall yield",
	"(b) syscall time",
	"(c) hypercall NOP ring 3",
};

/* Cycles per ring-0 NOP doorbell, best round; written before ring 3. */
static uint64_t hc_nop_ring0;

static uint64_t run(int k, unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();
	unsigned int i;

	for (i = 0; i < n; i++) {
		switch (k) {
		case K_LOOP:
			__asm__ __volatile__("" : : : "memory");
			break;
		case K_YIELD:
			user_yield();
			break;
		case K_TIME:
			user_time_ns();
			break;
		default:
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
			break;
		}
	}
	return rdtsc_ordered() - t0;
}

static void report(const char *what, const uint64_t *per, uint64_t tsc_khz)
{
	char ry[16], rt[16], rh[16];
	int k;

	for (k = 0; k < NR_KINDS; k++)
		uprintf("bench: %s %-22s %8llu cycles/iter %8llu ns\n", what,
			kind_names[k], (unsigned long long)per[k],
			(unsigned long long)(tsc_khz ? per[k] * 1000000 /
							       tsc_khz
						     : 0));
	bench_fix2(ry, sizeof(ry),
		   bench_ratio_x100(per[K_YIELD], hc_nop_ring0));
	bench_fix2(rt, sizeof(rt), bench_ratio_x100(per[K_TIME], hc_nop_ring0));
	bench_fix2(rh, sizeof(rh),
		   bench_ratio_x100(per[K_HC_NOP], hc_nop_ring0));
	uprintf("bench_syscall: %s iters=%u tsc_khz=%llu loop=%llu "
		"yield=%llu time=%llu hc_nop_ring3=%llu hc_nop_ring0=%llu "
		"yield_ns=%llu ratio_yield_hc0=%s ratio_time_hc0=%s "
		"ratio_hc3_hc0=%s\n",
		what, BENCH_ITERS, (unsigned long long)tsc_khz,
		(unsigned long long)per[K_LOOP],
		(unsigned long long)per[K_YIELD],
		(unsigned long long)per[K_TIME],
		(unsigned long long)per[K_HC_NOP],
		(unsigned long long)hc_nop_ring0,
		(unsigned long long)(tsc_khz ? per[K_YIELD] * 1000000 / tsc_khz
					     : 0),
		ry, rt, rh);
}

static int bench(unsigned int vcpu)
{
	static const struct bench_rounds rounds = {NR_KINDS, BENCH_ROUNDS,
						   BENCH_PER_ROUND, run};
	uint64_t sum[NR_KINDS], best[NR_KINDS];
	uint64_t tsc_khz = user_boot_info()->tsc_khz;

	if (vcpu != 0)
		return 0;
	if (user_yield() != 0 || pvpmu_hypercall(PVPMU_HC_NOP, 0) != 0) {
		uprintf("bench_syscall: yield or NOP failed\n");
		return 1;
	}
	bench_interleave(&rounds, sum, best);
	report("mean", sum, tsc_khz);
	report("best", best, tsc_khz);
	return 0;
}

user_main_fn_t user_program(unsigned int vcpu)
{
	(void)vcpu;
	return bench;
}

/*
 * (n) NOP doorbells from ring 0, unrolled 8 times as in bench_doorbell:
 * the emulated loop adds ~1/4 instruction per call, not a whole C loop.
 */
static uint64_t run_ring0_nop(unsigned int n)
{
	uint64_t t0 = rdtsc_ordered();

	__asm__ __volatile__(".balign 16\n"
			     "1:\n\t"
			     ".rept 8\n\t"
			     "xor %%eax, %%eax\n\t"
			     "outl %%eax, %%dx\n\t"
			     ".endr\n\t"
			     "sub $8, %[n]\n\t"
			     "jnz 1b"
			     : [n] "+r"(n)
			     : "d"(PVPMU_PORT_HC_BASE + PVPMU_HC_NOP)
			     : "rax", "memory");
	return rdtsc_ordered() - t0;
}

_Static_assert(BENCH_PER_ROUND % 8 == 0, "whole unrolled loops");

/* Ring 0: the doorbell floor (d), then ring 3. */
void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	uint64_t c, best = UINT64_MAX;
	int round;

	(void)bi;
	if (vcpu == 0) {
		for (round = 0; round < BENCH_ROUNDS; round++) {
			c = run_ring0_nop(BENCH_PER_ROUND);
			if (c < best)
				best = c;
		}
		hc_nop_ring0 = best / BENCH_PER_ROUND;
	}
	kernel_user_run(vcpu);
}
