// SPDX-License-Identifier: MIT
/*
 * msr_gp.c: RDMSR and WRMSR of MSRs nobody implements for this guest must
 * raise #GP, not kill the VM: two architectural PMU MSRs the VMM traps but
 * has no handler for yet (IA32_PERFEVTSEL0, IA32_PMC0) and an index no CPU
 * implements (0x2fff, which KVM does not know either). Exit 0 if all eight
 * accesses faulted with #GP, 1 otherwise.
 */
#include "kernel.h"

#include <stdbool.h>

#define MSR_NONEXISTENT 0x00002fffU

static const uint32_t msrs[] = {
	MSR_IA32_PERFEVTSEL0,
	MSR_IA32_PMC0,
	MSR_NONEXISTENT,
};

static bool expect_gp(const char *what, uint32_t msr, int vec, uint64_t val)
{
	if (vec == X86_VEC_GP) {
		kprintf("msr 0x%x %s: #GP\n", msr, what);
		return true;
	}
	if (vec)
		kprintf("msr 0x%x %s: vector %d, expected #GP\n", msr, what,
			vec);
	else
		kprintf("msr 0x%x %s: no fault (value 0x%llx), expected #GP\n",
			msr, what, (unsigned long long)val);
	return false;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	unsigned int i, nr_ok = 0;
	uint64_t val = 0;
	int vec;

	(void)bi;
	if (vcpu != 0)
		return;
	for (i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
		vec = guest_rdmsr_safe(msrs[i], &val);
		nr_ok += expect_gp("read", msrs[i], vec, val);
		vec = guest_wrmsr_safe(msrs[i], 0);
		nr_ok += expect_gp("write", msrs[i], vec, 0);
	}
	kprintf("msr_gp: %u of %u accesses faulted as expected\n", nr_ok,
		2 * i);
	guest_exit(nr_ok == 2 * i ? 0 : 1);
}
