// SPDX-License-Identifier: MIT
/*
 * irqchip.c: the interrupt controllers of Linux guests, all inside KVM:
 * KVM_CREATE_IRQCHIP (PIC, I/O APIC, a local APIC per vCPU) and the PIT
 * (KVM_CREATE_PIT2), created before any vCPU. Freestanding guests have no
 * irqchip: the VMM injects their vectors itself (KVM_INTERRUPT).
 *
 * With an in-kernel local APIC, interrupts go in as MSIs to one local
 * APIC (KVM_SIGNAL_MSI), device lines as KVM_IRQ_LINE, and the
 * architectural PMI follows the guest's own LVT performance-counter
 * register, read from KVM (SDM vol. 3A 11.5.1). Intel's mask-on-delivery
 * is not emulated there: writing LVTPC back would mean KVM_SET_LAPIC of
 * the whole page, which could drop an interrupt KVM posted meanwhile (the
 * PIT's, an MSI); Linux rewrites LVTPC in its PMI handler anyway.
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#define MSI_ADDR_BASE     0xfee00000U
#define MSI_DEST_SHIFT    12
#define MSI_DM_SHIFT      8
#define APIC_DM_FIXED     0x0U
#define APIC_DM_NMI       0x4U
#define APIC_LVTPC        0x340
#define LVT_VECTOR        0xffU
#define LVT_DM(v)         (((v) >> 8) & 0x7U)
#define LVT_MASKED        (1U << 16)
#define PIT_SPEAKER_DUMMY 1 /* KVM_PIT_SPEAKER_DUMMY: port 0x61 in KVM */

int vmm_irqchip_create(struct vmm_vm *vm)
{
	struct kvm_pit_config pit = {.flags = PIT_SPEAKER_DUMMY};

	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return -errno;
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return -errno;
	vm->irqchip = true;
	return 0;
}

int vmm_irq_line(struct vmm_vm *vm, unsigned int irq, bool level)
{
	struct kvm_irq_level line = {.irq = irq, .level = level};

	if (!vm->irqchip)
		return -ENODEV;
	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &line) < 0 ? -errno : 0;
}

static int signal_msi(struct vmm_vcpu *vcpu, uint32_t vector, uint32_t dm)
{
	struct kvm_msi msi = {
		.address_lo = MSI_ADDR_BASE | (vcpu->index << MSI_DEST_SHIFT),
		.data       = vector | (dm << MSI_DM_SHIFT),
	};

	/* 1 delivered, 0 blocked by the guest, -1 an error. */
	return ioctl(vcpu->vm->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
}

int vmm_irq_vector(struct vmm_vcpu *vcpu, unsigned int vector)
{
	return signal_msi(vcpu, vector & LVT_VECTOR, APIC_DM_FIXED);
}

static uint32_t lapic_reg(const struct kvm_lapic_state *s, unsigned int off)
{
	uint32_t v;

	memcpy(&v, s->regs + off, sizeof(v));
	return v;
}

int vmm_irq_lvtpc_pmi(struct vmm_vcpu *vcpu)
{
	struct kvm_lapic_state s;
	uint32_t lvt;

	if (ioctl(vcpu->fd, KVM_GET_LAPIC, &s) < 0)
		return -errno;
	lvt = lapic_reg(&s, APIC_LVTPC);
	if (lvt & LVT_MASKED)
		return -EAGAIN; /* dropped, as on hardware */
	if (LVT_DM(lvt) == APIC_DM_NMI)
		return ioctl(vcpu->fd, KVM_NMI, 0) < 0 ? -errno : 0;
	if (LVT_DM(lvt) == APIC_DM_FIXED && (lvt & LVT_VECTOR) >= 16)
		return vmm_irq_vector(vcpu, lvt & LVT_VECTOR);
	return -EINVAL;
}
