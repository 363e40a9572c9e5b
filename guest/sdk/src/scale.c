// SPDX-License-Identifier: MIT
/*
 * scale.c: multiplexing-scaled counts with integer math only (the guest
 * is built with -mgeneral-regs-only) and no libgcc (128-by-64 division is
 * one x86 DIV when the quotient fits, which is checked first).
 */
#include "sdk_priv.h"

pvpmu_u64 pvpmu_muldiv(pvpmu_u64 a, pvpmu_u64 b, pvpmu_u64 c)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	pvpmu_u64 hi = (pvpmu_u64)(p >> 64), lo = (pvpmu_u64)p, q, r;

	if (!c)
		return 0;
	/* DIV faults (#DE) when the quotient needs more than 64 bits. */
	if (hi >= c)
		return ~0ULL;
	__asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(c));
	(void)r;
	return q;
}

int pvpmu_scale(pvpmu_u64 raw, pvpmu_u64 enabled, pvpmu_u64 running,
		pvpmu_u64 *scaled)
{
	if (!running) {
		*scaled = 0;
		return PVPMU_SCALE_NOT_COUNTED;
	}
	if (running >= enabled) {
		*scaled = raw;
		return PVPMU_SCALE_EXACT;
	}
	*scaled = pvpmu_muldiv(raw, enabled, running);
	return PVPMU_SCALE_SCALED;
}
