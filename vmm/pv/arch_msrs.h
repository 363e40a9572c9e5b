/* SPDX-License-Identifier: MIT */
/*
 * arch_msrs.h: the VMM side of the architectural PMU models:
 * the model of each vCPU (vpmu/arch/), the MSR ranges it claims, the
 * CPUID leaves it fills and the emulated LVT performance-counter register
 * of the local APIC (lapic_lvtpc.c) that routes its PMIs. Private to vmm/pv.
 */
#ifndef VMM_ARCH_MSRS_H
#define VMM_ARCH_MSRS_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include <vpmu/vpmu.h>

struct vmm_vm;
struct vmm_vcpu;
struct vmm_config;

/* Local APIC (xAPIC MMIO page, SDM vol. 3A 11.4.1 and 11.5.1). */
#define VMM_APIC_BASE      0xfee00000ULL
#define VMM_APIC_SIZE      0x1000ULL
#define VMM_APIC_LVTPC     0x340
#define VMM_LVT_VECTOR     0xffU
#define VMM_LVT_DM_SHIFT   8
#define VMM_LVT_DM_MASK    0x7U
#define VMM_LVT_DM_FIXED   0x0U
#define VMM_LVT_DM_NMI     0x4U
#define VMM_LVT_MASKED     (1U << 16)
#define VMM_LVTPC_WRITABLE (VMM_LVT_VECTOR | (0x7U << 8) | VMM_LVT_MASKED)

/* Leaves vmm_pv_arch_cpuid_add() may append. */
#define VMM_ARCH_CPUID_EXTRA 2

struct vmm_arch_vcpu {
	struct vpmu_arch_pmu *pmu;
	uint32_t lvtpc;       /* APIC LVT performance-counter register */
	uint64_t nr_pmi;      /* PMIs raised */
	uint64_t nr_pmi_lost; /* PMIs dropped: LVTPC masked, bad mode */
};

struct vmm_arch {
	const struct vpmu_arch_ops *ops;
	unsigned int nr_vcpus;
	bool amd_on_other_host; /* an AMD model, an Intel (or unknown) host */
	struct vmm_arch_vcpu vcpu[];
};

/*
 * Build the model cfg->pmu_model ("auto" follows the host's CPUID vendor,
 * "none" builds nothing) for every vCPU of (vm): claim its MSR ranges and
 * set every vCPU's CPUID again with its leaves. Call after vmm_pv_create().
 * Returns 0 or -errno (then vmm_pv_arch_destroy() cleans up).
 */
int vmm_pv_arch_init(struct vmm_vm *vm, const struct vmm_config *cfg);

/* Free what vmm_pv_arch_init() built; before the domain goes. */
void vmm_pv_arch_destroy(struct vmm_vm *vm);

/* Rewrite CPUID entry (e) of (vcpu) for the VM's model (or none). */
void vmm_pv_arch_cpuid(struct vmm_vcpu *vcpu, struct kvm_cpuid_entry2 *e);

/*
 * Append the PMU leaves the host's list lacks (at most
 * VMM_ARCH_CPUID_EXTRA entries of room after c->nent) and raise the max
 * leaf of their range.
 */
void vmm_pv_arch_cpuid_add(struct vmm_vcpu *vcpu, struct kvm_cpuid2 *c);

/*
 * A notification of an ARCH context (vm_pmu.c, domain lock held): status
 * bits, then a PMI through LVTPC.
 */
void vmm_pv_arch_notify(struct vmm_vm *vm, const struct vpmu_notify *n);

/*
 * lapic_lvtpc.c: serve a KVM_EXIT_MMIO inside the local APIC page when the VM
 * has a model. Returns false if the access is not for the APIC.
 */
bool vmm_pv_apic_mmio(struct vmm_vcpu *vcpu);

#endif /* VMM_ARCH_MSRS_H */
