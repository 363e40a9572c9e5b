// SPDX-License-Identifier: MIT
/*
 * pv_module.c: pv as a module of the core (struct vmm_module): its state
 * on the core's per-VM and per-vCPU pointers, and the hooks through which
 * the core's VM life and vCPU loop reach the logical PMU. Each hook is
 * called at the exact point where the core called pv by name before, so
 * the accounting order (exit statistics, vpmu accounting, operators'
 * completions, the shared page) is the loop's, not this file's.
 */
#include "vmm_pv.h"

#include "arch_msrs.h"
#include "pv_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int vmm_pv_attach(struct vmm_vm *vm)
{
	struct vmm_pv *p;
	unsigned int i;
	int ret, s;

	ret = vmm_vm_add_module(vm, &vmm_pv_module);
	if (ret && ret != -EEXIST)
		return ret;
	if (vmm_pv(vm))
		return 0;
	s = vmm_module_slot(vm, &vmm_pv_module);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->vcpus = calloc(vm->nr_vcpus ? vm->nr_vcpus : 1, sizeof(*p->vcpus));
	if (!p->vcpus) {
		free(p);
		return -ENOMEM;
	}
	vm->mod_priv[s] = p;
	for (i = 0; i < vm->nr_vcpus; i++)
		vm->vcpus[i].mod_priv[s] = &p->vcpus[i];
	return 0;
}

void vmm_pv_detach(struct vmm_vm *vm)
{
	struct vmm_pv *p = vmm_pv(vm);
	int s            = vmm_module_slot(vm, &vmm_pv_module);
	unsigned int i;

	if (!p)
		return;
	for (i = 0; vm->vcpus && i < vm->nr_vcpus; i++)
		vm->vcpus[i].mod_priv[s] = NULL;
	vmm_pv_tasks_free(vm);
	vm->mod_priv[s] = NULL;
	free(p->vcpus);
	free(p);
}

void vmm_pv_set_host_notify(struct vmm_vm *vm,
			    void (*fn)(struct vmm_vm *vm,
				       const struct vpmu_notify *n))
{
	struct vmm_pv *p = vmm_pv(vm);

	if (p)
		p->host_notify = fn;
}

const char *vmm_pv_model_name(const struct vmm_vm *vm)
{
	const struct vmm_pv *p = vmm_pv(vm);

	return p && p->arch ? vpmu_arch_name(p->arch->ops) : "none";
}

/* Before the MSR filter: the perfmon2 hypercalls. */
static int pv_vm_devices(struct vmm_vm *vm)
{
	int ret = vmm_pv_attach(vm);

	return ret ? ret : vmm_pv_hc_init(vm);
}

static int pv_vm_init(struct vmm_vm *vm, const struct vmm_config *cfg,
		      char *err, size_t errlen)
{
	int ret = vmm_pv_create(vm, cfg);

	if (ret) {
		snprintf(err, errlen, "vPMU: %s", strerror(-ret));
		return ret;
	}
	ret = vmm_pv_arch_init(vm, cfg); /* the architectural PMU model */
	if (ret)
		snprintf(err, errlen, "PMU model %s: %s", cfg->pmu_model,
			 strerror(-ret));
	return ret;
}

/* After the layers above (registered later, freed first). */
static void pv_vm_free(struct vmm_vm *vm)
{
	struct vmm_pv *p = vmm_pv(vm);

	if (!p)
		return;
	if (p->domain)
		vmm_pv_destroy(vm);
	vmm_pv_detach(vm);
}

static void pv_vm_stopping(struct vmm_vm *vm)
{
	if (vmm_pv(vm))
		vmm_pv_wake_waiters(vm);
}

/*
 * A pending notification wakes HLT only if the guest can take it; for the
 * VM's end it must also have a vector to go to. An architectural PMI
 * wakes it as vmm_pv_pmi_wakes() says.
 */
static bool pv_halt_wakes(struct vmm_vcpu *vcpu, bool deliverable)
{
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(vcpu);

	return (atomic_load(&p->irq_pending) && (!deliverable || p->vector) &&
		vcpu->run->if_flag) ||
	       vmm_pv_pmi_wakes(vcpu);
}

/* Guest writes to its read-only sampling buffers, then the LVTPC. */
static bool pv_mmio(struct vmm_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	if (run->mmio.is_write &&
	    vmm_pv_smpl_contains(vcpu->vm, run->mmio.phys_addr)) {
		vmm_pv_smpl_write_fault(vcpu, run->mmio.phys_addr);
		return true;
	}
	return vmm_pv_apic_mmio(vcpu);
}

const struct vmm_module vmm_pv_module = {
	.name        = "vPMU",
	.cpuid_extra = VMM_ARCH_CPUID_EXTRA,
	.vm_devices  = pv_vm_devices,
	.vm_init     = pv_vm_init,
	.vm_free     = pv_vm_free,
	.vm_stopping = pv_vm_stopping,
	.run_prepare = vmm_pv_run_prepare,
	.snapshot    = &vmm_pv_snapshot_hooks,
	.vcpu_start  = vmm_pv_vcpu_start,
	.vcpu_end    = vmm_pv_vcpu_end,
	.before_run  = vmm_pv_before_run,
	.after_run   = vmm_pv_after_run,
	.exit_done   = vmm_pv_shared_update,
	.resumed     = vmm_pv_resumed,
	.halt_wakes  = pv_halt_wakes,
	.mmio        = pv_mmio,
	.cpuid_entry = vmm_pv_arch_cpuid,
	.cpuid_add   = vmm_pv_arch_cpuid_add,
};
