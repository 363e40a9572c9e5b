// SPDX-License-Identifier: MIT
/*
 * arch_msrs.c: the architectural PMU model of a VM (see
 * arch_msrs.h and vpmu/include/vpmu/vpmu_arch.h).
 *
 * At VM creation the model chosen by --pmu / <vpmu:pmu model=...> gets one
 * struct vpmu_arch_pmu per vCPU (a vCPU-wide libvpmu context of owner
 * VPMU_OWNER_ARCH, independent of and invisible to the guest's perfmon2
 * contexts and the host operators'), claims its MSR ranges from the
 * trapped-only PMU ranges of msr_dispatch.c, and fills CPUID. Overflows come
 * back as libvpmu notifications (vm_pmu.c routes owner ARCH here): the model
 * sets its status bits and, if the counter's interrupt bit is set, a PMI is
 * raised as the guest's LVT performance-counter entry says: a fixed vector
 * through KVM_INTERRUPT or an NMI through KVM_NMI (vmm_pv_raise_pmi()), never
 * while LVTPC is masked. Intel models mask LVTPC on delivery, as KVM does for
 * Intel-compatible guests; AMD models do not.
 *
 * Not emulated (documented deviations): FREEZE_PERFMON_ON_PMI and the rest
 * of IA32_DEBUGCTL, LVTPC delivery modes other than fixed and NMI (SMI,
 * INIT, ExtINT: dropped, counted in nr_pmi_lost), APIC relocation.
 * RDPMC: KVM never forwards it to userspace; without KVM's own vPMU (none
 * on the development hosts, and vpmu never enables it) a guest RDPMC takes
 * #GP whatever CR4.PCE says. Guests read counters with RDMSR. Exception:
 * host kernels before Linux 6.6 keep KVM's counters for an AMD guest after
 * KVM_PMU_CAP_DISABLE, so RDPMC reads KVM's never-programmed counter: 0.
 */
#include "arch_msrs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm_pv.h"

static struct vpmu_arch_pmu *model_of(struct vmm_vcpu *vcpu, void *opaque)
{
	struct vmm_arch *a = opaque;

	return a->vcpu[vcpu->index].pmu;
}

static int msr_read(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t *val,
		    void *opaque)
{
	return vpmu_arch_rdmsr(model_of(vcpu, opaque), msr, val);
}

static int msr_write(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t val,
		     void *opaque)
{
	return vpmu_arch_wrmsr(model_of(vcpu, opaque), msr, val);
}

static const struct vmm_msr_ops arch_msr_ops = {
	.read  = msr_read,
	.write = msr_write,
};

static bool is_intel_model(const struct vpmu_arch_ops *ops)
{
	return !strncmp(vpmu_arch_name(ops), "intel", 5);
}

/* The model that matches the host's CPUID vendor (leaf 0), or NULL. */
static const struct vpmu_arch_ops *host_model(const struct kvm_cpuid2 *c)
{
	unsigned int i;
	char vendor[12];

	for (i = 0; i < c->nent; i++) {
		if (c->entries[i].function != 0)
			continue;
		memcpy(vendor, &c->entries[i].ebx, 4);
		memcpy(vendor + 4, &c->entries[i].edx, 4);
		memcpy(vendor + 8, &c->entries[i].ecx, 4);
		return vpmu_arch_auto(vendor);
	}
	return NULL;
}

/* "auto": the vendor of the CPUID the guest gets (leaf 0). */
static const struct vpmu_arch_ops *resolve(const char *model,
					   const struct kvm_cpuid2 *c)
{
	if (strcmp(model, "auto"))
		return vpmu_arch_find(model);
	return host_model(c);
}

static int claim_ranges(struct vmm_vm *vm, struct vmm_arch *a)
{
	const struct vpmu_arch_range *r;
	unsigned int i, n = vpmu_arch_ranges(a->ops, &r);
	int ret;

	for (i = 0; i < n; i++) {
		ret = vmm_msr_register(vm, r[i].base, r[i].count, &arch_msr_ops,
				       a);
		if (ret)
			return ret;
	}
	return 0;
}

int vmm_pv_arch_init(struct vmm_vm *vm, const struct vmm_config *cfg)
{
	struct vmm_pv *pv = vmm_pv(vm);
	const struct vpmu_arch_ops *ops, *host;
	struct kvm_cpuid2 *cpuid;
	struct vmm_arch *a;
	unsigned int i;
	int ret;

	ret = vmm_cpuid_get_supported(vm->kvm_fd, &cpuid);
	if (ret)
		return ret;
	ops = resolve(cfg->pmu_model, cpuid);
	if (!ops) /* "none", or "auto" on an unknown vendor */
		goto out_free;
	a   = calloc(1, sizeof(*a) + vm->nr_vcpus * sizeof(a->vcpu[0]));
	ret = a ? 0 : -ENOMEM;
	if (ret)
		goto out_free;
	a->ops      = ops;
	a->nr_vcpus = vm->nr_vcpus;
	host        = host_model(cpuid);
	a->amd_on_other_host =
		!is_intel_model(ops) && (!host || is_intel_model(host));
	pv->arch = a;
	for (i = 0; !ret && i < vm->nr_vcpus; i++) {
		a->vcpu[i].lvtpc = VMM_LVT_MASKED;
		ret              = vpmu_arch_create(pv->domain,
						    vmm_pv_vcpu(&vm->vcpus[i])->cpu, ops,
						    &a->vcpu[i].pmu);
	}
	if (!ret)
		ret = claim_ranges(vm, a);
	/* CPUID was set before the model existed: set it again. */
	for (i = 0; !ret && i < vm->nr_vcpus; i++)
		ret = vmm_cpuid_setup(&vm->vcpus[i], cpuid);
out_free:
	free(cpuid);
	return ret;
}

void vmm_pv_arch_destroy(struct vmm_vm *vm)
{
	struct vmm_pv *pv  = vmm_pv(vm);
	struct vmm_arch *a = pv->arch;
	unsigned int i;

	if (!a)
		return;
	for (i = 0; i < a->nr_vcpus; i++)
		vpmu_arch_destroy(a->vcpu[i].pmu);
	free(a);
	pv->arch = NULL;
}

/*
 * Linux picks its PMU driver by the CPU vendor (leaf 0), so a Linux guest
 * sees the vendor of its model: GenuineIntel for intel-v2, AuthenticAMD
 * for amd-*. Freestanding guests keep the host's (they probe the model).
 *
 * Linux on an AMD CPU without XSAVEERPTR (0x80000008 EBX bit 2: FXSAVE
 * always saves the x87 error pointers) works around the K7/K8 erratum
 * with fnclex, emms and fild in ring 0 before every FPU restore. An AMD
 * model on another vendor's host runs on that host's FXSAVE, which saves
 * them: the guest is told so. (PVM emulates guest ring 0 and cannot
 * emulate x87 instructions: the workaround stopped the guest with a KVM
 * internal error.)
 */
#define CPUID_XSAVEERPTR (1U << 2)

static void model_cpu_identity(const struct vmm_vcpu *vcpu,
			       const struct vmm_arch *a,
			       struct kvm_cpuid_entry2 *e)
{
	static const char intel[12] = "GenuineIntel", amd[12] = "AuthenticAMD";
	const char *v;

	if (!a || vcpu->vm->image_kind == VMM_IMAGE_ELF)
		return;
	if (e->function == 0x80000008 && a->amd_on_other_host) {
		e->ebx |= CPUID_XSAVEERPTR;
		return;
	}
	if (e->function != 0)
		return;
	v = is_intel_model(a->ops) ? intel : amd;
	memcpy(&e->ebx, v, 4);
	memcpy(&e->edx, v + 4, 4);
	memcpy(&e->ecx, v + 8, 4);
}

void vmm_pv_arch_cpuid(struct vmm_vcpu *vcpu, struct kvm_cpuid_entry2 *e)
{
	struct vmm_arch *a       = vmm_pv(vcpu->vm)->arch;
	struct vpmu_arch_cpuid r = {e->eax, e->ebx, e->ecx, e->edx};

	model_cpu_identity(vcpu, a, e);
	r = (struct vpmu_arch_cpuid){e->eax, e->ebx, e->ecx, e->edx};
	if (a && a->vcpu[vcpu->index].pmu)
		vpmu_arch_cpuid(a->vcpu[vcpu->index].pmu, e->function, &r);
	else
		vpmu_arch_cpuid_none(e->function, &r);
	e->eax = r.eax;
	e->ebx = r.ebx;
	e->ecx = r.ecx;
	e->edx = r.edx;
}

static struct kvm_cpuid_entry2 *find_leaf(struct kvm_cpuid2 *c, uint32_t fn)
{
	unsigned int i;

	for (i = 0; i < c->nent; i++) {
		if (c->entries[i].function == fn)
			return &c->entries[i];
	}
	return NULL;
}

/* Append (fn) if the model gives it content, and cover it by max leaf. */
static void add_leaf(struct vmm_vcpu *vcpu, struct kvm_cpuid2 *c, uint32_t fn)
{
	struct kvm_cpuid_entry2 *e = &c->entries[c->nent], *max;

	if (find_leaf(c, fn))
		return;
	memset(e, 0, sizeof(*e));
	e->function = fn;
	vmm_pv_arch_cpuid(vcpu, e);
	if (!e->eax && !e->ebx && !e->ecx && !e->edx)
		return;
	c->nent++;
	max = find_leaf(c, fn & 0x80000000U);
	if (max && max->eax < fn)
		max->eax = fn;
}

void vmm_pv_arch_cpuid_add(struct vmm_vcpu *vcpu, struct kvm_cpuid2 *c)
{
	if (!vmm_pv(vcpu->vm)->arch)
		return;
	add_leaf(vcpu, c, 0xa);
	add_leaf(vcpu, c, 0x80000022);
}

/* Raise a PMI on (vcpu) as its LVTPC says (SDM vol. 3A 11.5.1). */
static void deliver_pmi(struct vmm_vcpu *vcpu, struct vmm_arch *a,
			struct vmm_arch_vcpu *v)
{
	uint32_t lvt = v->lvtpc;
	uint32_t dm  = (lvt >> VMM_LVT_DM_SHIFT) & VMM_LVT_DM_MASK;

	if (vcpu->vm->irqchip) { /* KVM's local APIC holds the LVTPC */
		vmm_pv_raise_pmi(vcpu, VMM_PV_PMI_LVTPC);
		v->nr_pmi++;
		return;
	}
	if (lvt & VMM_LVT_MASKED) {
		v->nr_pmi_lost++;
		return;
	}
	if (dm == VMM_LVT_DM_NMI) {
		vmm_pv_raise_pmi(vcpu, VMM_PV_PMI_NMI);
	} else if (dm == VMM_LVT_DM_FIXED && (lvt & VMM_LVT_VECTOR) >= 16) {
		vmm_pv_raise_pmi(vcpu, lvt & VMM_LVT_VECTOR);
	} else {
		v->nr_pmi_lost++;
		return;
	}
	v->nr_pmi++;
	if (vpmu_arch_masks_lvtpc(a->ops))
		v->lvtpc |= VMM_LVT_MASKED;
}

void vmm_pv_arch_notify(struct vmm_vm *vm, const struct vpmu_notify *n)
{
	struct vmm_arch *a = vmm_pv(vm)->arch;
	struct vmm_arch_vcpu *v;

	if (!a || n->cpu_index >= a->nr_vcpus || !n->ovfl_pmds)
		return;
	v = &a->vcpu[n->cpu_index];
	if (!v->pmu || vpmu_arch_handle(v->pmu) != n->handle)
		return;
	if (vpmu_arch_overflow(v->pmu, n->ovfl_pmds) & VPMU_ARCH_PMI)
		deliver_pmi(&vm->vcpus[n->cpu_index], a, v);
}
