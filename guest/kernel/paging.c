// SPDX-License-Identifier: MIT
/*
 * paging.c: the null-page guard.
 *
 * The VMM identity-maps 0..4 GiB with 2 MiB user-accessible pages
 * (pvpmu/abi.h, section 1), so address 0 is ordinary RAM and a NULL
 * dereference would go unnoticed. vCPU 0 replaces the first 2 MiB page with
 * kernel_low_pt (start.S): the same mapping in 4 KiB pages, page 0 absent.
 * The image (1 MiB and up), the boot info (0x9000) and the VMM's tables
 * (0x1000..0x8fff) stay mapped as before.
 */
#include "kernel.h"

#define PTE_P     (1ULL << 0)
#define PTE_RW    (1ULL << 1)
#define PTE_US    (1ULL << 2)
#define PTE_PS    (1ULL << 7)
#define PTE_ADDR  0x000ffffffffff000ULL
#define PTE_FLAGS (PTE_P | PTE_RW | PTE_US)

extern uint64_t kernel_low_pt[512];

/* The table an entry points to (identity map: GPA == address). */
static uint64_t *next_table(uint64_t entry)
{
	return (uint64_t *)(uintptr_t)(entry & PTE_ADDR);
}

void paging_guard_null(void)
{
	uint64_t *pml4 = next_table(read_cr3());
	uint64_t *pdpt, *pd;

	if (!(pml4[0] & PTE_P))
		return;
	pdpt = next_table(pml4[0]);
	if (!(pdpt[0] & PTE_P) || (pdpt[0] & PTE_PS))
		return; /* not the VMM's layout: leave it alone */
	pd = next_table(pdpt[0]);
	if ((pd[0] & (PTE_P | PTE_PS)) != (PTE_P | PTE_PS))
		return;
	pd[0] = virt_to_gpa(kernel_low_pt) | PTE_FLAGS;
}

void paging_flush(void)
{
	write_cr3(read_cr3());
}
