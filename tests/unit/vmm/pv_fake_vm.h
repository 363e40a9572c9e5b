/* SPDX-License-Identifier: MIT */
/*
 * pv_fake_vm.h: a VM of one vCPU built by hand for vmm/pv's unit tests,
 * with pv's state attached: no KVM, no guest RAM, no thread.
 */
#ifndef PV_FAKE_VM_H
#define PV_FAKE_VM_H

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "vmm_pv.h"

static inline void pv_fake_vm(struct vmm_vm *vm, struct vmm_vcpu *vcpu)
{
	memset(vm, 0, sizeof(*vm));
	memset(vcpu, 0, sizeof(*vcpu));
	vcpu->vm     = vm;
	vcpu->fd     = -1;
	vm->nr_vcpus = 1;
	vm->vcpus    = vcpu;
	cr_assert(eq(int, vmm_pv_attach(vm), 0));
}

#endif /* PV_FAKE_VM_H */
