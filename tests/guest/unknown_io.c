// SPDX-License-Identifier: MIT
/*
 * unknown_io.c: reads and writes a port and an MMIO address nobody claims.
 * Reads must return all ones; the VMM reports each address once and keeps
 * running. Exits 0 if every read saw all ones, else 1.
 */
#include "kernel.h"

#define UNCLAIMED_PORT 0x0510
#define UNCLAIMED_MMIO 0xd0000000UL /* above RAM, below 4 GiB */

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	volatile uint32_t *mmio = (volatile uint32_t *)UNCLAIMED_MMIO;
	uint32_t p1, p2, m1, m2;

	(void)bi;
	if (vcpu != 0)
		return;
	outb(UNCLAIMED_PORT, 0x12);
	p1    = inb(UNCLAIMED_PORT);
	p2    = inb(UNCLAIMED_PORT);
	*mmio = 0x12345678;
	m1    = *mmio;
	m2    = *mmio;
	kprintf("unknown_io: port reads 0x%x 0x%x, mmio reads 0x%x 0x%x\n", p1,
		p2, m1, m2);
	guest_exit(p1 == 0xff && p2 == 0xff && m1 == 0xffffffffU &&
				   m2 == 0xffffffffU
			   ? 0
			   : 1);
}
