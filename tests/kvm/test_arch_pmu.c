// SPDX-License-Identifier: MIT
/*
 * test_arch_pmu.c: the architectural PMU models seen by
 * unmodified ring-0 guests, one run per model (--pmu intel-v2, amd-core,
 * amd-v2, none). The guest programs (tests/kvm/guests/arch_*.c) carry the
 * checks of the KVM selftest pmu_counters_test: CPUID, reset values
 * (GLOBAL_CTRL included), #GP for counters that do not exist and for
 * reserved bits, full-width and sign-extended writes, exact counts of hv
 * events over a known loop, overflow status and PMI delivery (vector and
 * NMI) through the emulated LVTPC, driver-style sampling (exactly N/period
 * PMIs), a time-based overflow kicked by the VMM's deadline timer
 * (intel-v2), and RDPMC's #GP (or 0 from KVM's idle counter on AMD hosts before
 * Linux 6.6). Each prints
 * "<prog>: ok, N checks" only if every check passed; the number of checks
 * is asserted too, so a guest that skipped some cannot pass.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_harness.h"

static struct vpmu_result res;

TestSuite(vmm_arch_pmu, .init = kvm_require, .timeout = 120);

#define PASSES(text)                                                           \
	do {                                                                   \
		cr_assert(eq(int, res.status, 0), "out: %s\nstderr: %s",       \
			  res.out, res.err);                                   \
		HAS(res.out, text);                                            \
	} while (0)

Test(vmm_arch_pmu, intel_v2_counters_overflow_and_pmi)
{
	RUN("run", GUEST("arch_intel"), "--pmu", "intel-v2");
	PASSES("arch_intel: ok, 173 checks");
}

Test(vmm_arch_pmu, amd_core_counters_and_pmi)
{
	RUN("run", GUEST("arch_amd"), "--pmu", "amd-core");
	HAS(res.out, "arch_amd: model amd-core");
	PASSES("arch_amd: ok, 116 checks");
}

Test(vmm_arch_pmu, amd_v2_global_registers_and_pmi)
{
	RUN("run", GUEST("arch_amd"), "--pmu", "amd-v2");
	HAS(res.out, "arch_amd: model amd-v2");
	PASSES("arch_amd: ok, 136 checks");
}

Test(vmm_arch_pmu, none_keeps_every_pmu_msr_gp)
{
	RUN("run", GUEST("arch_none"), "--pmu", "none");
	PASSES("arch_none: ok, 45 checks");
}

/* The vendor string the guest gets (KVM's CPUID leaf 0) picks "auto". */
static bool host_is_intel(void)
{
	unsigned int eax, ebx, ecx, edx;

	__asm__ __volatile__("cpuid"
			     : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx)
			     : "a"(0), "c"(0));
	return ebx == 0x756e6547; /* "Genu" */
}

Test(vmm_arch_pmu, auto_follows_the_host_vendor)
{
	if (host_is_intel()) {
		RUN("run", GUEST("arch_intel"));
		PASSES("arch_intel: ok, 173 checks");
	} else {
		RUN("run", GUEST("arch_amd"));
		HAS(res.out, "arch_amd: model amd-v2");
		PASSES("arch_amd: ok, 136 checks");
	}
}

/* A model is a register layout: another vendor's guest code fails. */
Test(vmm_arch_pmu, models_differ)
{
	/* Checks fail, then the raw RDMSR loops die of #GP (vector 13). */
	RUN("run", GUEST("arch_intel"), "--pmu", "amd-v2");
	cr_assert(eq(int, res.status, 128 + 13), "out: %s", res.out);
	HAS(res.out, "arch_intel: FAIL version: got 0x0, want 0x2");
	RUN("run", GUEST("arch_amd"), "--pmu", "intel-v2");
	cr_assert(eq(int, res.status, 128 + 13), "out: %s", res.out);
}

/*
 * Every vCPU has its own model, and the ARCH contexts neither count
 * against the guest's context limit nor get in the way of the guest's
 * own perfmon2 contexts on the same vCPU.
 */
Test(vmm_arch_pmu, coexists_with_guest_contexts)
{
	RUN("run", GUEST("arch_intel"), "--pmu", "intel-v2", "--vcpus", "4");
	PASSES("arch_intel: ok, 173 checks");
	RUN("run", GUEST("pv_smoke"), "--pmu", "intel-v2");
	PASSES("pv_smoke: ok (hypercalls 101,");
	RUN("run", GUEST("pv_smoke"), "--pmu", "amd-v2");
	PASSES("pv_smoke: ok (hypercalls 101,");
}

/*
 * A libvirt domain XML for guest (image) with (features) after <os> and
 * vpmu's <vpmu:pmu model> if (model); returns its path.
 */
static const char *write_domain(char *path, size_t size, const char *image,
				const char *features, const char *model)
{
	FILE *f;
	int fd;

	snprintf(path, size, "/tmp/vpmu-arch-XXXXXX.xml");
	fd = mkstemps(path, 4);
	cr_assert(ge(int, fd, 0));
	f = fdopen(fd, "w");
	cr_assert(not(eq(ptr, f, NULL)));
	fprintf(f,
		"<domain type='kvm'>\n  <name>arch</name>\n"
		"  <memory unit='MiB'>64</memory>\n  <vcpu>1</vcpu>\n"
		"  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n"
		"    <kernel>%s</kernel>\n  </os>\n%s  <metadata>\n"
		"    <vpmu:vpmu xmlns:vpmu='https://github.com/vpmu/vpmu/"
		"xmlns/domain/1'>\n      %s%s%s\n"
		"    </vpmu:vpmu>\n  </metadata>\n</domain>\n",
		image, features, model ? "<vpmu:pmu model='" : "",
		model ? model : "", model ? "'/>" : "");
	fclose(f);
	return path;
}

static const char *write_xml(char *path, size_t size, const char *image,
			     const char *model)
{
	return write_domain(path, size, image, "", model);
}

/* The model comes from the domain XML; --pmu overrides it. */
Test(vmm_arch_pmu, model_from_the_domain_xml)
{
	char xml[64];

	write_xml(xml, sizeof(xml), GUEST("arch_amd"), "amd-core");
	RUN("run", xml);
	HAS(res.out, "arch_amd: model amd-core");
	PASSES("arch_amd: ok, 116 checks");
	RUN("run", xml, "--pmu", "amd-v2");
	HAS(res.out, "arch_amd: model amd-v2");
	PASSES("arch_amd: ok, 136 checks");
	unlink(xml);
}

/*
 * Each vCPU's model and LVTPC are its own: 4 vCPUs sample their own PIO
 * exits at once (50, 100, 150, 200 exits, period 10) and each gets
 * exactly its own PMIs, for every model.
 */
Test(vmm_arch_pmu, per_vcpu_models_sample_independently)
{
	static const char *const models[] = {"intel-v2", "amd-core", "amd-v2"};
	unsigned int i;

	for (i = 0; i < 3; i++) {
		RUN("run", GUEST("arch_smp"), "--pmu", models[i], "--vcpus",
		    "4");
		HAS(res.out, "arch_smp: ok, 4 vcpus");
		PASSES("arch_smp: ok, 8 checks");
	}
}

/*
 * libvirt's <features><pmu state='off'/>: a guest without a PMU, as with
 * --pmu none: the PMU CPUID leaves are zero and every PMU MSR #GPs.
 */
Test(vmm_arch_pmu, domain_pmu_off_is_a_guest_without_pmu)
{
	char xml[64];

	write_domain(xml, sizeof(xml), GUEST("arch_none"),
		     "  <features>\n    <pmu state='off'/>\n  </features>\n",
		     NULL);
	RUN("run", xml);
	unlink(xml);
	PASSES("arch_none: ok, 45 checks");
	cr_assert(eq(ptr, strstr(res.err, "warning"), NULL), "%s", res.err);
}
