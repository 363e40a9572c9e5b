/* SPDX-License-Identifier: MIT */
/*
 * work_loop.h: the guest work of bench_sample_cost, as the exact
 * instructions every side runs: the vpmu guest (bench_work.elf), the bare
 * KVM floor's guest (bare_kvm.c, from a top-level asm block) and the
 * native process host perf samples (bare_kvm --native). N iterations of
 * xorshift64 on RAX, counter RCX, scratch RDX. WORK_LOOP_BODY(P) takes the
 * register prefix: "%%" inside extended asm, "%" in top-level asm.
 */
#ifndef BENCH_WORK_LOOP_H
#define BENCH_WORK_LOOP_H

#include <stdint.h>

#define WORK_ITERS 20000000ULL /* one round: ~20-40 ms of a core */

#define WORK_LOOP_BODY(P)                                                      \
	"1:\n\t"                                                               \
	"mov " P "rax, " P "rdx\n\t"                                           \
	"shl $13, " P "rdx\n\t"                                                \
	"xor " P "rdx, " P "rax\n\t"                                           \
	"mov " P "rax, " P "rdx\n\t"                                           \
	"shr $7, " P "rdx\n\t"                                                 \
	"xor " P "rdx, " P "rax\n\t"                                           \
	"mov " P "rax, " P "rdx\n\t"                                           \
	"shl $17, " P "rdx\n\t"                                                \
	"xor " P "rdx, " P "rax\n\t"                                           \
	"dec " P "rcx\n\t"                                                     \
	"jnz 1b\n\t"

/* One round of the work from C: (n) iterations seeded with (x). */
static inline uint64_t work_loop(uint64_t n, uint64_t x)
{
	__asm__ volatile(WORK_LOOP_BODY("%%")
			 : "+a"(x), "+c"(n)
			 :
			 : "rdx", "cc");
	return x;
}

#endif /* BENCH_WORK_LOOP_H */
