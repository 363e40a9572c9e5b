// SPDX-License-Identifier: MIT
/*
 * arch_none.c: a VM without an architectural PMU model (--pmu none): the
 * PMU CPUID leaves are zero and every PMU MSR of every model, counters
 * and controls alike, raises #GP on RDMSR and WRMSR; RDPMC too.
 */
#include "arch_check.h"

static const uint32_t pmu_msrs[] = {
	0xc1,       0xc2,       0x186,      0x187,      0x309,
	0x30b,      0x345,      0x38d,      0x38e,      0x38f,
	0x390,      0x4c1,      0xc0010000, 0xc0010004, 0xc0010200,
	0xc0010201, 0xc001020b, 0xc0000300, 0xc0000301, 0xc0000303,
};

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	struct cpuid_regs r;
	unsigned int i;

	(void)bi;
	if (vcpu != 0)
		return;
	arch_setup("arch_none");
	cpuid(0xa, &r);
	check_u64("leaf 0xa eax", r.eax, 0);
	check_u64("leaf 0xa edx", r.edx, 0);
	cpuid(0x80000001, &r);
	check_u64("perfctr_core", (r.ecx >> 23) & 1, 0);
	/*
	 * PerfMonV2 is off whether or not the host's CPUID reaches leaf
	 * 0x80000022 (an absent leaf advertises nothing): one check either
	 * way, so the count the test asserts does not depend on the host CPU.
	 */
	cpuid(0x80000000, &r);
	if (r.eax >= 0x80000022)
		cpuid(0x80000022, &r);
	else
		r.eax = 0;
	check_u64("PerfMonV2", r.eax & 1, 0);
	for (i = 0; i < sizeof(pmu_msrs) / sizeof(pmu_msrs[0]); i++) {
		check_rd_gp(pmu_msrs[i]);
		check_wr(pmu_msrs[i], 0, X86_VEC_GP);
	}
	check_rdpmc_idle();
	arch_done();
}
