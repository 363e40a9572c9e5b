/* SPDX-License-Identifier: MIT */
/*
 * pvpmu_hc.h: the guest side of the vpmu hypercall doorbell.
 *
 * Portable driver core: depends only on pvpmu/abi.h, so the minimal guest
 * kernel, a Linux module (__KERNEL__) and ring-3 code that was granted the
 * doorbell ports can all include it.
 */
#ifndef PVPMU_HC_H
#define PVPMU_HC_H

#include <pvpmu/abi.h>

/*
 * Issue hypercall (nr) with the request block at guest-physical address
 * (gpa) (0 for calls without one): `outl %eax, %dx` with DX =
 * PVPMU_PORT_HC_BASE + nr, EAX = gpa. Returns 0 or -PVPMU_E*, as left in
 * RAX by the VMM. The block must stay in place until the call returns; the
 * memory clobber orders the VMM's reads and writes of it against ours.
 */
static inline long pvpmu_hypercall(unsigned int nr, pvpmu_u32 gpa)
{
	unsigned long rax = gpa;

	__asm__ __volatile__("outl %%eax, %%dx"
			     : "+a"(rax)
			     : "d"((pvpmu_u16)(PVPMU_PORT_HC_BASE + nr))
			     : "memory");
	return (long)rax;
}

#endif /* PVPMU_HC_H */
