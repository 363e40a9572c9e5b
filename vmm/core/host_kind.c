// SPDX-License-Identifier: MIT
/*
 * host_kind.c: what kind of KVM host this is, and what that implies for a
 * guest. The kinds differ in ways a user meets at once:
 *
 *   VT-x / SVM  hardware virtualization: every guest mode runs natively;
 *   PVM         software-virtualized KVM (kvm_pvm): guest ring 3 runs
 *               natively, guest ring 0 is emulated instruction by
 *               instruction; Linux needs the parameters of vmm_pvm_cmdline,
 *               and PVM does not implement KVM's paravirtual hypercalls, so
 *               the CPUID features that depend on them are hidden (an SMP
 *               Linux guest that sends its IPIs by hypercall hangs at boot);
 *   nested      any of these where the host kernel is itself a guest
 *               (CPUID's hypervisor bit): slower exits, usually no PMU.
 *
 * Hardware events need a host PMU whatever the kind.
 */
#include "vmm_core_priv.h"

#include <cpuid.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <asm/kvm_para.h>

#define LEAF1_ECX_HYPERVISOR (1U << 31)

/*
 * KVM paravirtual features whose guest side makes a hypercall (vmcall or
 * vmmcall) that a PVM host does not serve: PV unhalt (KVM_HC_KICK_CPU),
 * PV IPIs (KVM_HC_SEND_IPI), PV yield (KVM_HC_SCHED_YIELD). kvm-clock,
 * steal time and PV EOI are MSRs and shared memory: they stay.
 */
#define PVM_HIDDEN_FEATURES                                                    \
	((1U << KVM_FEATURE_PV_UNHALT) | (1U << KVM_FEATURE_PV_SEND_IPI) |     \
	 (1U << KVM_FEATURE_PV_SCHED_YIELD))

static bool sysfs_has(const char *root, const char *path)
{
	char full[PATH_MAX];

	snprintf(full, sizeof(full), "%s%s", root, path);
	return access(full, F_OK) == 0;
}

/* Is "tsc" a word of the file (path) under (root)? */
static bool clocksource_has_tsc(const char *root, const char *path)
{
	char full[PATH_MAX], buf[256], *tok, *save;
	bool found = false;
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	f = fopen(full, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		for (tok = strtok_r(buf, " \n", &save); tok && !found;
		     tok = strtok_r(NULL, " \n", &save))
			found = strcmp(tok, "tsc") == 0;
	}
	fclose(f);
	return found;
}

static bool cpu_has_hypervisor(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return false;
	return ecx & LEAF1_ECX_HYPERVISOR;
}

void vmm_host_probe_at(const char *sysfs_root, bool nested,
		       struct vmm_host *host)
{
	memset(host, 0, sizeof(*host));
	if (sysfs_has(sysfs_root, "/module/kvm_pvm"))
		host->kind = VMM_HOST_PVM;
	else if (sysfs_has(sysfs_root, "/module/kvm_intel"))
		host->kind = VMM_HOST_VMX;
	else if (sysfs_has(sysfs_root, "/module/kvm_amd"))
		host->kind = VMM_HOST_SVM;
	else
		host->kind = VMM_HOST_UNKNOWN;
	host->nested = nested;
	/* "cpu" (or the hybrid "cpu_core") is the core PMU's perf device. */
	host->hw_pmu =
		sysfs_has(sysfs_root, "/bus/event_source/devices/cpu") ||
		sysfs_has(sysfs_root, "/bus/event_source/devices/cpu_core");
	host->tsc_stable = clocksource_has_tsc(
		sysfs_root, "/devices/system/clocksource/clocksource0/"
			    "available_clocksource");
}

void vmm_host_probe(struct vmm_host *host)
{
	vmm_host_probe_at("/sys", cpu_has_hypervisor(), host);
}

const char *vmm_host_kind_name(enum vmm_host_kind kind)
{
	switch (kind) {
	case VMM_HOST_VMX:
		return "hardware VT-x";
	case VMM_HOST_SVM:
		return "hardware SVM";
	case VMM_HOST_PVM:
		return "PVM (software virtualization)";
	default:
		return "unknown KVM";
	}
}

uint32_t vmm_host_hidden_kvm_features(const struct vmm_host *host)
{
	return host->kind == VMM_HOST_PVM ? PVM_HIDDEN_FEATURES : 0;
}

const char *vmm_host_linux_params(const struct vmm_host *host)
{
	return host->kind == VMM_HOST_PVM ? vmm_pvm_cmdline : "";
}

void vmm_host_describe(const struct vmm_host *host, const char *prefix,
		       FILE *out)
{
	fprintf(out, "%shost: %s%s\n", prefix, vmm_host_kind_name(host->kind),
		host->nested ? ", nested (the host kernel is itself a guest)"
			     : "");
	fprintf(out, "%s  hardware events: %s\n", prefix,
		host->hw_pmu ? "counted by the host PMU"
			     : "refused (no hardware PMU on this host); "
			       "hv_*, kvmstat:* and software events count");
	fprintf(out, "%s  TSC: %s\n", prefix,
		host->tsc_stable
			? "stable: time PMDs advance in the shared page "
			  "without "
			  "an exit"
			: "not a usable clocksource here: time PMDs in the "
			  "shared page are values as of the last exit");
	if (host->kind == VMM_HOST_PVM) {
		fprintf(out,
			"%s  guest ring 0 is emulated (about 1.5 us per "
			"instruction): Linux boots in tens of seconds\n",
			prefix);
		fprintf(out, "%s  Linux guests get the parameters: %s\n",
			prefix, vmm_pvm_cmdline);
		fprintf(out,
			"%s  SMP Linux: KVM's PV unhalt, PV IPIs and PV yield "
			"are hidden (PVM does not serve their hypercalls)\n",
			prefix);
	}
}
