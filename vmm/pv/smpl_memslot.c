// SPDX-License-Identifier: MIT
/*
 * smpl_memslot.c: sampling buffers mapped read-only into guest physical memory.
 *
 * libvpmu allocates each buffer page-aligned in host memory; the VMM gives
 * it a KVM memslot with KVM_MEM_READONLY at a free guest-physical range in
 * the hole above RAM, which the boot page tables already map. The guest
 * reads samples in place; a guest write becomes an MMIO exit, which the
 * VMM turns into a page fault in the guest: the buffer only changes by
 * the host, and the guest learns of its mistake.
 */
#include "vmm_pv.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

static int set_slot(struct vmm_vm *vm, uint32_t slot, uint64_t gpa,
		    uint64_t size, void *base)
{
	struct kvm_userspace_memory_region r = {
		.slot            = slot,
		.flags           = size ? KVM_MEM_READONLY : 0,
		.guest_phys_addr = gpa,
		.memory_size     = size,
		.userspace_addr  = (uintptr_t)base,
	};

	return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0 ? -errno
								    : 0;
}

/* Lowest free GPA range of (size) bytes, or 0. Caller holds map_lock. */
static uint64_t find_gpa(const struct vmm_pv *p, uint64_t size)
{
	uint64_t gpa = VMM_PV_SMPL_GPA_BASE;
	unsigned int i;
	bool moved = true;

	while (moved) {
		moved = false;
		for (i = 0; i < VMM_PV_SMPL_MAPS_MAX; i++) {
			const struct vmm_pv_smpl_map *m = &p->maps[i];

			if (m->fd >= 0 && gpa < m->gpa + m->size &&
			    m->gpa < gpa + size) {
				gpa   = m->gpa + m->size;
				moved = true;
			}
		}
	}
	return gpa + size <= VMM_PV_SMPL_GPA_END ? gpa : 0;
}

int vmm_pv_smpl_map(struct vmm_vm *vm, int fd, void *base, uint64_t size,
		    uint64_t *gpa)
{
	struct vmm_pv *p          = vmm_pv(vm);
	struct vmm_pv_smpl_map *m = NULL;
	unsigned int i;
	int ret = -ENOSPC;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX && !m; i++) {
		if (p->maps[i].fd < 0)
			m = &p->maps[i];
	}
	if (!m)
		goto out_unlock;
	m->gpa = find_gpa(p, size);
	if (!m->gpa)
		goto out_unlock;
	m->slot = VMM_PV_SMPL_SLOT_BASE + (uint32_t)(m - p->maps);
	ret     = set_slot(vm, m->slot, m->gpa, size, base);
	if (ret)
		goto out_unlock;
	m->fd   = fd;
	m->size = size;
	*gpa    = m->gpa;
out_unlock:
	pthread_mutex_unlock(&p->map_lock);
	return ret;
}

int vmm_pv_smpl_lookup(struct vmm_vm *vm, int fd, uint64_t *gpa, uint64_t *size)
{
	struct vmm_pv *p = vmm_pv(vm);
	unsigned int i;
	int ret = -ENOENT;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX; i++) {
		if (p->maps[i].fd == fd) {
			*gpa  = p->maps[i].gpa;
			*size = p->maps[i].size;
			ret   = 0;
			break;
		}
	}
	pthread_mutex_unlock(&p->map_lock);
	return ret;
}

void vmm_pv_smpl_unmap(struct vmm_vm *vm, int fd)
{
	struct vmm_pv *p = vmm_pv(vm);
	unsigned int i;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX; i++) {
		struct vmm_pv_smpl_map *m = &p->maps[i];

		if (m->fd != fd)
			continue;
		set_slot(vm, m->slot, m->gpa, 0, NULL);
		memset(m, 0, sizeof(*m));
		m->fd = -1;
	}
	pthread_mutex_unlock(&p->map_lock);
}

bool vmm_pv_smpl_contains(struct vmm_vm *vm, uint64_t gpa)
{
	struct vmm_pv *p = vmm_pv(vm);
	bool found       = false;
	unsigned int i;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX && !found; i++) {
		const struct vmm_pv_smpl_map *m = &p->maps[i];

		found = m->fd >= 0 && gpa >= m->gpa && gpa - m->gpa < m->size;
	}
	pthread_mutex_unlock(&p->map_lock);
	return found;
}

/*
 * KVM has already completed the writing instruction (MMIO writes are
 * posted), so the fault is reported at the next instruction: precise
 * enough to name the culprit, and the write itself was dropped.
 */
void vmm_pv_smpl_write_fault(struct vmm_vcpu *vcpu, uint64_t gpa)
{
	struct kvm_vcpu_events ev;
	struct kvm_sregs sregs;

	vcpu->stats.guest_errors++;
	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0 ||
	    ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return;
	sregs.cr2                   = gpa;
	ev.exception.injected       = 1;
	ev.exception.nr             = 14; /* #PF */
	ev.exception.has_error_code = 1;
	/* SDM 3A 4.7: P (protection), W/R (write), U/S (user mode). */
	ev.exception.error_code = 0x3 | ((sregs.cs.selector & 3) ? 0x4 : 0);
	ev.flags                = 0;
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) == 0)
		ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &ev);
}
