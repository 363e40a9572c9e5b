// SPDX-License-Identifier: MIT
/*
 * detect.c: is this a vpmu VM, and which ABI and features does it offer?
 * (pvpmu/abi.h section 3: hypervisor leaves 0x40000000 and 0x40000001.)
 */
#include "pvpmu_core.h"

static void cpuid_leaf(pvpmu_u32 leaf, pvpmu_u32 r[4])
{
	pvpmu_u32 a = leaf, b, c = 0, d;

	__asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	r[0] = a;
	r[1] = b;
	r[2] = c;
	r[3] = d;
}

int pvpmu_detect_parse(const pvpmu_u32 sig[4], const pvpmu_u32 feat[4],
		       struct pvpmu_features *f)
{
	*f = (struct pvpmu_features){0};
	if (sig[1] != PVPMU_CPUID_SIG_EBX || sig[2] != PVPMU_CPUID_SIG_ECX ||
	    sig[3] != PVPMU_CPUID_SIG_EDX)
		return -PVPMU_ENODEV;
	if (sig[0] < PVPMU_CPUID_FEATURES)
		return -PVPMU_ENODEV;
	f->max_leaf  = sig[0];
	f->abi       = feat[0];
	f->features  = feat[1];
	f->port_base = feat[2];
	f->hc_max    = feat[3];
	if (f->abi != PVPMU_ABI_VERSION)
		return -PVPMU_ENOTSUP;
	return 0;
}

int pvpmu_detect(struct pvpmu_features *f)
{
	pvpmu_u32 sig[4], feat[4] = {0};

	/* CPUID.1:ECX[31]: running under a hypervisor at all. */
	cpuid_leaf(1, sig);
	if (!(sig[2] & (1U << 31))) {
		*f = (struct pvpmu_features){0};
		return -PVPMU_ENODEV;
	}
	cpuid_leaf(PVPMU_CPUID_SIGNATURE, sig);
	if (sig[0] >= PVPMU_CPUID_FEATURES)
		cpuid_leaf(PVPMU_CPUID_FEATURES, feat);
	return pvpmu_detect_parse(sig, feat, f);
}
