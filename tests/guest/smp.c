// SPDX-License-Identifier: MIT
/*
 * smp.c: every vCPU reports its index and APIC id; vCPU 0 waits until all
 * have reported, says so, and every vCPU halts (VMM exit status 0).
 */
#include "kernel.h"

static uint32_t nr_reported;

/* Initial APIC id: CPUID leaf 0xB EDX (x2APIC id) if present, else 1. */
static uint32_t apic_id(void)
{
	struct cpuid_regs r;

	cpuid(0, &r);
	if (r.eax >= 0xb) {
		cpuid_count(0xb, 0, &r);
		if (r.ebx)
			return r.edx;
	}
	cpuid(1, &r);
	return r.ebx >> 24;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	uint32_t nr = bi->nr_vcpus;

	if (nr > KERNEL_MAX_VCPUS)
		nr = KERNEL_MAX_VCPUS;
	kprintf("vcpu %u of %u reporting, apic id %u\n", vcpu, nr, apic_id());
	__atomic_add_fetch(&nr_reported, 1, __ATOMIC_RELEASE);
	if (vcpu != 0)
		return;
	while (__atomic_load_n(&nr_reported, __ATOMIC_ACQUIRE) < nr)
		cpu_relax();
	kprintf("all %u vcpus reported\n", nr);
}
