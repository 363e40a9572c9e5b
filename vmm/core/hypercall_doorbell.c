// SPDX-License-Identifier: MIT
/*
 * hypercall_doorbell.c: the PIO doorbell hypercalls of pvpmu/abi.h §5.
 *
 * Hypercall nr's doorbell is port PVPMU_PORT_HC_BASE + nr. A 32-bit OUT
 * carries the request block's GPA; the handler's result goes back in RAX.
 * With KVM_CAP_SYNC_REGS the registers travel in the kvm_run page, so the
 * round trip costs no register ioctl.
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

int vmm_hc_register(struct vmm_vm *vm, unsigned int nr, vmm_hc_fn_t fn,
		    void *opaque)
{
	if (nr == PVPMU_HC_RESERVED || nr >= PVPMU_HC_MAX || !fn)
		return -EINVAL;
	if (vm->hc[nr].fn)
		return -EBUSY;
	vm->hc[nr] = (struct vmm_hc_entry){.fn = fn, .opaque = opaque};
	return 0;
}

int vmm_hc_read(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *block, size_t size,
		size_t min_size)
{
	uint8_t raw[PVPMU_HC_BLOCK_MAX];
	size_t raw_len = min_size;
	uint32_t guest_size;

	if (min_size < sizeof(guest_size) || min_size > size ||
	    size > sizeof(raw))
		return -PVPMU_EINVAL;
	/*
	 * One fetch per byte: the first version (it holds the size), then
	 * the rest the size announces. Every check looks at the copy.
	 */
	if (vmm_guest_read(vcpu->vm, gpa, raw, min_size))
		return -PVPMU_EFAULT;
	memcpy(&guest_size, raw, sizeof(guest_size));
	if (guest_size > min_size && guest_size <= sizeof(raw)) {
		if (vmm_guest_read(vcpu->vm, gpa + min_size, raw + min_size,
				   guest_size - min_size))
			return -PVPMU_EFAULT;
		raw_len = guest_size;
	}
	return vmm_hc_block_fit(block, size, min_size, raw, raw_len);
}

int vmm_hc_write(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, const void *block,
		 size_t size)
{
	if (vmm_guest_write(vcpu->vm, gpa, block,
			    vmm_hc_block_answer_len(block, size)))
		return -PVPMU_EFAULT;
	return 0;
}

static void set_result(struct vmm_vcpu *vcpu, int64_t result)
{
	struct kvm_run *run = vcpu->run;
	struct kvm_regs regs;

	if (vcpu->vm->has_sync_regs) {
		run->s.regs.regs.rax = (uint64_t)result;
		run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
		return;
	}
	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) == 0) {
		regs.rax = (uint64_t)result;
		ioctl(vcpu->fd, KVM_SET_REGS, &regs);
	}
}

static int doorbell(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		    void *data, unsigned int size, void *opaque)
{
	unsigned int nr              = port - PVPMU_PORT_HC_BASE;
	const struct vmm_hc_entry *e = &vcpu->vm->hc[nr];
	uint32_t gpa;
	int ret;

	(void)opaque;
	if (!is_write || size != 4) {
		ret = -PVPMU_EINVAL;
	} else if (!e->fn) {
		ret = -PVPMU_ENOSYS;
	} else {
		memcpy(&gpa, data, sizeof(gpa));
		ret = e->fn(vcpu, gpa, e->opaque);
	}
	if (ret)
		vcpu->stats.guest_errors++;
	if (!is_write)
		memset(data, 0xff, size);
	set_result(vcpu, ret);
	return 0;
}

static int hc_nop(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	(void)vcpu;
	(void)gpa;
	(void)opaque;
	return 0;
}

static int hc_echo(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct pvpmu_hc_echo req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_ECHO_SIZE_VER1);
	if (ret)
		return ret;
	if (req.pad0)
		return -PVPMU_EINVAL;
	req.out = ~req.in;
	return vmm_hc_write(vcpu, gpa, &req, sizeof(req));
}

int vmm_hc_init(struct vmm_vm *vm)
{
	int ret;

	ret = vmm_pio_register(vm, PVPMU_PORT_HC_BASE, PVPMU_HC_MAX, doorbell,
			       NULL);
	if (ret)
		return ret;
	ret = vmm_hc_register(vm, PVPMU_HC_NOP, hc_nop, NULL);
	if (ret)
		return ret;
	return vmm_hc_register(vm, PVPMU_HC_ECHO, hc_echo, NULL);
}
