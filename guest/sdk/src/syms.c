// SPDX-License-Identifier: MIT
/*
 * syms.c: binary search of a sorted text-symbol table (pvpmu_sym_lookup).
 */
#include "sdk_priv.h"

const struct pvpmu_sym *pvpmu_sym_lookup(const struct pvpmu_sym *tab,
					 unsigned int n, pvpmu_u64 ip)
{
	unsigned int lo = 0, hi = n, mid;
	const struct pvpmu_sym *s;

	if (!tab || !n || ip < tab[0].addr)
		return 0;
	/* The last symbol with addr <= ip. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (tab[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	s = &tab[lo];
	if (s->size)
		return ip - s->addr < s->size ? s : 0;
	/* Unsized (assembly labels): up to the next symbol, if any. */
	return lo + 1 < n || ip == s->addr ? s : 0;
}
