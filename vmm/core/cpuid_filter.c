// SPDX-License-Identifier: MIT
/*
 * cpuid_filter.c: the CPUID each vCPU sees.
 *
 * Start from KVM_GET_SUPPORTED_CPUID, then per vCPU: APIC ids and topology
 * (leaves 0x1, 0xB, 0x1F), the hypervisor bit, no x2APIC (there is no
 * in-kernel local APIC), the PMU leaves (0xA, AMD perfctr_core and
 * PerfMonV2) of the VM's architectural PMU model, zero without one
 * (arch_msrs.c), and vpmu's own
 * hypervisor leaves 0x40000000/0x40000001 in place of KVM's.
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <asm/kvm_para.h>

#define CPUID_NENT_MAX   512
#define CPUID_EXTRA      2
#define LEAF1_ECX_X2APIC (1U << 21)
#define LEAF1_ECX_HYPERV (1U << 31)

int vmm_cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out)
{
	unsigned int nent = 64;
	struct kvm_cpuid2 *c;

	for (;;) {
		c = calloc(1, sizeof(*c) + (nent + CPUID_EXTRA) *
						   sizeof(c->entries[0]));
		if (!c)
			return -ENOMEM;
		c->nent = nent;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			break;
		free(c);
		if (errno != E2BIG || nent >= CPUID_NENT_MAX)
			return -errno;
		nent *= 2;
	}
	*out = c;
	return 0;
}

static void set_topology(struct kvm_cpuid_entry2 *e, unsigned int apic_id,
			 unsigned int nr_vcpus)
{
	switch (e->function) {
	case 0x1:
		e->ebx = (e->ebx & 0x0000ffff) | (apic_id << 24) |
			 ((nr_vcpus & 0xff) << 16);
		e->ecx &= ~LEAF1_ECX_X2APIC;
		e->ecx |= LEAF1_ECX_HYPERV;
		break;
	case 0xb:
	case 0x1f:
		e->edx = apic_id;
		break;
	default:
		break;
	}
}

static void add_hypervisor_leaves(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *e = &c->entries[c->nent];

	memset(e, 0, CPUID_EXTRA * sizeof(*e));
	e[0].function = PVPMU_CPUID_SIGNATURE;
	e[0].eax      = PVPMU_CPUID_FEATURES;
	e[0].ebx      = PVPMU_CPUID_SIG_EBX;
	e[0].ecx      = PVPMU_CPUID_SIG_ECX;
	e[0].edx      = PVPMU_CPUID_SIG_EDX;
	e[1].function = PVPMU_CPUID_FEATURES;
	e[1].eax      = PVPMU_ABI_VERSION;
	e[1].ebx      = PVPMU_FEAT_HYPERCALL | PVPMU_FEAT_EXIT_PORT |
		   PVPMU_FEAT_PFM | PVPMU_FEAT_SHARED;
	e[1].ecx = PVPMU_PORT_HC_BASE;
	e[1].edx = PVPMU_HC_MAX;
	c->nent += CPUID_EXTRA;
}

/*
 * Linux guests: KVM's own leaves (KVMKVMKVM: kvm-clock, PV EOI...) move
 * up to 0x40000100, where Linux's kvm_cpuid_base() looks next, so vpmu's
 * leaf keeps 0x40000000 and Linux still finds its KVM paravirt features,
 * less those this host does not serve (host_kind.c).
 */
#define KVM_LEAF_SHIFT 0x100 /* where Linux looks after 0x40000000 */

static bool move_kvm_leaf(const struct vmm_vcpu *vcpu,
			  struct kvm_cpuid_entry2 *e)
{
	if (vcpu->vm->image_kind == VMM_IMAGE_ELF ||
	    (e->function != KVM_CPUID_SIGNATURE &&
	     e->function != KVM_CPUID_FEATURES))
		return false;
	if (e->function == KVM_CPUID_SIGNATURE)
		e->eax = KVM_CPUID_FEATURES + KVM_LEAF_SHIFT;
	else
		e->eax &= ~vmm_host_hidden_kvm_features(&vcpu->vm->host);
	e->function += KVM_LEAF_SHIFT;
	return true;
}

/* CPUID entries the modules may append (their cpuid_add hooks). */
static unsigned int modules_extra(const struct vmm_vm *vm)
{
	unsigned int i, n = 0;

	for (i = 0; i < vm->nr_mods; i++)
		n += vm->mods[i]->cpuid_extra;
	return n;
}

int vmm_cpuid_setup(struct vmm_vcpu *vcpu, const struct kvm_cpuid2 *host)
{
	const struct vmm_vm *vm = vcpu->vm;
	size_t size =
		sizeof(*host) + (host->nent + CPUID_EXTRA + modules_extra(vm)) *
					sizeof(host->entries[0]);
	struct kvm_cpuid2 *c = malloc(size);
	unsigned int i, m, n = 0;
	int ret = 0;

	if (!c)
		return -ENOMEM;
	for (i = 0; i < host->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &host->entries[i];

		c->entries[n] = *e;
		if (move_kvm_leaf(vcpu, &c->entries[n])) {
			n++;
			continue;
		}
		/* Drop KVM's own hypervisor leaves (KVMKVMKVM). */
		if (e->function >= 0x40000000 && e->function < 0x40010000)
			continue;
		set_topology(&c->entries[n], vcpu->index, vcpu->vm->nr_vcpus);
		for (m = 0; m < vm->nr_mods; m++) { /* e.g. the PMU leaves */
			if (vm->mods[m]->cpuid_entry)
				vm->mods[m]->cpuid_entry(vcpu, &c->entries[n]);
		}
		n++;
	}
	c->nent = n;
	for (m = 0; m < vm->nr_mods; m++) { /* e.g. 0x80000022 */
		if (vm->mods[m]->cpuid_add)
			vm->mods[m]->cpuid_add(vcpu, c);
	}
	add_hypervisor_leaves(c);
	if (ioctl(vcpu->fd, KVM_SET_CPUID2, c) < 0)
		ret = -errno;
	free(c);
	return ret;
}
