// SPDX-License-Identifier: MIT
/*
 * lapic_lvtpc.c: just enough of the local APIC for architectural PMIs.
 *
 * The VMM has no in-kernel local APIC, so guest accesses to the xAPIC page
 * (0xfee00000, the reset value of IA32_APIC_BASE; relocation is not
 * emulated) exit to userspace as KVM_EXIT_MMIO. When the VM has a PMU
 * model, the LVT performance-counter register (offset 0x340: vector, delivery
 * mode, mask) is kept per vCPU and routes PMIs (arch_msrs.c); its reset value
 * is masked (SDM vol. 3A 11.12.5.1). Every other register reads 0 and
 * ignores writes (EOI included: injected interrupts need none). Without a
 * model the page stays unknown MMIO, as before.
 */
#include "arch_msrs.h"

#include <string.h>

#include "vmm_pv.h"

bool vmm_pv_apic_mmio(struct vmm_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vmm_arch *a  = vmm_pv(vcpu->vm)->arch;
	uint64_t addr       = run->mmio.phys_addr;
	uint32_t val        = 0, off;
	struct vmm_arch_vcpu *v;

	if (!a || addr < VMM_APIC_BASE || addr - VMM_APIC_BASE >= VMM_APIC_SIZE)
		return false;
	off = (uint32_t)(addr - VMM_APIC_BASE);
	v   = &a->vcpu[vcpu->index];
	/* APIC registers are 32 bits, 16-byte aligned (SDM 11.4.1). */
	if (run->mmio.is_write) {
		if (off == VMM_APIC_LVTPC && run->mmio.len == 4) {
			memcpy(&val, run->mmio.data, 4);
			v->lvtpc = val & VMM_LVTPC_WRITABLE;
		}
		return true;
	}
	if (off == VMM_APIC_LVTPC)
		val = v->lvtpc;
	memset(run->mmio.data, 0, sizeof(run->mmio.data));
	memcpy(run->mmio.data, &val,
	       run->mmio.len < sizeof(val) ? run->mmio.len : sizeof(val));
	return true;
}
