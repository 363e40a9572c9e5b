// SPDX-License-Identifier: MIT
/*
 * smpl_map.c: sampling buffers mapped read-only into guest physical memory.
 *
 * libvpmu allocates each buffer page-aligned in host memory; the VMM gives
 * it a KVM memslot with KVM_MEM_READONLY at a free guest-physical range in
 * the hole above RAM, which the boot page tables already map. The guest
 * reads samples in place; a guest write becomes an MMIO exit that the VMM
 * ignores (reported once), so the buffer can only change by the host.
 */
#include "pmu.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm_priv.h"

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
static uint64_t find_gpa(const struct vmm_pmu *p, uint64_t size)
{
	uint64_t gpa = VMM_SMPL_GPA_BASE;
	unsigned int i;
	bool moved = true;

	while (moved) {
		moved = false;
		for (i = 0; i < VMM_SMPL_MAPS_MAX; i++) {
			const struct vmm_smpl_map *m = &p->maps[i];

			if (m->fd >= 0 && gpa < m->gpa + m->size &&
			    m->gpa < gpa + size) {
				gpa   = m->gpa + m->size;
				moved = true;
			}
		}
	}
	return gpa + size <= VMM_SMPL_GPA_END ? gpa : 0;
}

int vmm_smpl_map(struct vmm_vm *vm, int fd, void *base, uint64_t size,
		 uint64_t *gpa)
{
	struct vmm_pmu *p      = &vm->pmu;
	struct vmm_smpl_map *m = NULL;
	unsigned int i;
	int ret = -ENOSPC;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_SMPL_MAPS_MAX && !m; i++) {
		if (p->maps[i].fd < 0)
			m = &p->maps[i];
	}
	if (!m)
		goto out_unlock;
	m->gpa = find_gpa(p, size);
	if (!m->gpa)
		goto out_unlock;
	m->slot = VMM_SMPL_SLOT_BASE + (uint32_t)(m - p->maps);
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

int vmm_smpl_lookup(struct vmm_vm *vm, int fd, uint64_t *gpa, uint64_t *size)
{
	struct vmm_pmu *p = &vm->pmu;
	unsigned int i;
	int ret = -ENOENT;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_SMPL_MAPS_MAX; i++) {
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

void vmm_smpl_unmap(struct vmm_vm *vm, int fd)
{
	struct vmm_pmu *p = &vm->pmu;
	unsigned int i;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_SMPL_MAPS_MAX; i++) {
		struct vmm_smpl_map *m = &p->maps[i];

		if (m->fd != fd)
			continue;
		set_slot(vm, m->slot, m->gpa, 0, NULL);
		memset(m, 0, sizeof(*m));
		m->fd = -1;
	}
	pthread_mutex_unlock(&p->map_lock);
}
