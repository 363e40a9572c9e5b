// SPDX-License-Identifier: MIT
/*
 * guest_mem.c: guest-physical to host address translation with bounds checks.
 *
 * Guest RAM is one region at GPA 0. Every access from the VMM on behalf of
 * a guest request goes through vmm_gpa_ptr(), which refuses any range that
 * is not wholly inside RAM, including ranges whose end overflows.
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <string.h>

void *vmm_gpa_ptr(struct vmm_vm *vm, vmm_gpa_t gpa, uint64_t len)
{
	if (gpa > vm->mem_size || len > vm->mem_size - gpa)
		return NULL;
	return (char *)vm->mem + gpa;
}

int vmm_guest_read(struct vmm_vm *vm, vmm_gpa_t gpa, void *dst, size_t len)
{
	const void *src = vmm_gpa_ptr(vm, gpa, len);

	if (!src)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int vmm_guest_write(struct vmm_vm *vm, vmm_gpa_t gpa, const void *src,
		    size_t len)
{
	void *dst = vmm_gpa_ptr(vm, gpa, len);

	if (!dst)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}
