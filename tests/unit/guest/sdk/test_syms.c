// SPDX-License-Identifier: MIT
/*
 * test_syms.c: address -> symbol lookup for profiles (pvpmu_sym_lookup).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <pvpmu/pvpmu.h>

static const struct pvpmu_sym tab[] = {
	{0x100000, 0, "trap_stubs"}, /* unsized: up to the next symbol */
	{0x101000, 0x40, "a"},       {0x101040, 0x10, "b"},
	{0x101080, 0x20, "c"}, /* gap before */
	{0x102000, 0, "last_label"},
};
#define N (sizeof(tab) / sizeof(tab[0]))

static const char *name_at(pvpmu_u64 ip)
{
	const struct pvpmu_sym *s = pvpmu_sym_lookup(tab, N, ip);

	return s ? s->name : "(none)";
}

Test(sdk_syms, lookup)
{
	cr_assert(eq(str, (char *)name_at(0xfffff), "(none)"));
	cr_assert(eq(str, (char *)name_at(0x100000), "trap_stubs"));
	cr_assert(eq(str, (char *)name_at(0x100fff), "trap_stubs"));
	cr_assert(eq(str, (char *)name_at(0x101000), "a"));
	cr_assert(eq(str, (char *)name_at(0x10103f), "a"));
	cr_assert(eq(str, (char *)name_at(0x101040), "b"));
	cr_assert(eq(str, (char *)name_at(0x10104f), "b"));
	cr_assert(eq(str, (char *)name_at(0x101050), "(none)"));
	cr_assert(eq(str, (char *)name_at(0x10109f), "c"));
	cr_assert(eq(str, (char *)name_at(0x1010a0), "(none)"));
	cr_assert(eq(str, (char *)name_at(0x102000), "last_label"));
	cr_assert(eq(str, (char *)name_at(0x102001), "(none)"));
	cr_assert(eq(ptr, (void *)pvpmu_sym_lookup(tab, 0, 0x101000), NULL));
	cr_assert(eq(ptr, (void *)pvpmu_sym_lookup(NULL, 3, 0x101000), NULL));
	cr_assert(eq(str, (char *)pvpmu_sym_lookup(tab, 1, 0x100000)->name,
		     "trap_stubs"));
}
