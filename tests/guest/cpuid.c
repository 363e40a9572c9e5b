// SPDX-License-Identifier: MIT
/*
 * cpuid.c: checks the vpmu hypervisor CPUID leaves (pvpmu/abi.h, section
 * 3): the signature leaf and the feature leaf. Exit 0 if they match the
 * ABI this guest was built against, 1 otherwise.
 */
#include "kernel.h"

#include <stdbool.h>

#define CPUID1_ECX_HYPERVISOR (1U << 31)

static bool check(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		return true;
	kprintf("cpuid: %s is 0x%x, expected 0x%x\n", what, got, want);
	return false;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	struct cpuid_regs r;
	uint32_t sig[3];
	bool ok = true;

	(void)bi;
	if (vcpu != 0)
		return;
	cpuid(1, &r);
	kprintf("cpuid: leaf 1 hypervisor bit %u\n",
		!!(r.ecx & CPUID1_ECX_HYPERVISOR));
	cpuid(PVPMU_CPUID_SIGNATURE, &r);
	sig[0] = r.ebx;
	sig[1] = r.ecx;
	sig[2] = r.edx;
	kprintf("cpuid: 0x40000000 max leaf 0x%x signature \"%.12s\"\n", r.eax,
		(const char *)sig);
	ok &= check("signature ebx", r.ebx, PVPMU_CPUID_SIG_EBX);
	ok &= check("signature ecx", r.ecx, PVPMU_CPUID_SIG_ECX);
	ok &= check("signature edx", r.edx, PVPMU_CPUID_SIG_EDX);
	if (r.eax < PVPMU_CPUID_FEATURES) {
		kprintf("cpuid: max leaf 0x%x has no feature leaf\n", r.eax);
		guest_exit(1);
	}
	cpuid(PVPMU_CPUID_FEATURES, &r);
	kprintf("cpuid: 0x40000001 abi %u features 0x%x doorbell 0x%x "
		"hc_max %u\n",
		r.eax, r.ebx, r.ecx, r.edx);
	ok &= check("abi version", r.eax, PVPMU_ABI_VERSION);
	ok &= check("hypercall+exit features",
		    r.ebx & (PVPMU_FEAT_HYPERCALL | PVPMU_FEAT_EXIT_PORT),
		    PVPMU_FEAT_HYPERCALL | PVPMU_FEAT_EXIT_PORT);
	ok &= check("doorbell port", r.ecx, PVPMU_PORT_HC_BASE);
	ok &= check("hc_max", r.edx, PVPMU_HC_MAX);
	kprintf("cpuid: %s\n", ok ? "ok" : "FAILED");
	guest_exit(ok ? 0 : 1);
}
