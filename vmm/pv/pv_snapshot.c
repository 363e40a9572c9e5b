// SPDX-License-Identifier: MIT
/*
 * pv_snapshot.c: pv's state in a snapshot (docs/snapshot-format.md), the
 * snapshot hooks of vmm_pv_module: the core writes and reads the file and
 * its sections; pv fills and reads the PMU glue of each vCPU (notification
 * vector, pending interrupt, shared page, the architectural model's
 * registers and LVTPC), libvpmu's blob (section vPMU) and the
 * sampling-buffer mappings.
 */
#include "vmm_pv.h"
#include "vmm_snapshot.h"

#include "arch_msrs.h"
#include "pv_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <x86intrin.h>

#include <vpmu_common.h>

#define MSR_IA32_TSC 0x10

_Static_assert(VMM_PV_SMPL_MAPS_MAX <= VMM_SNAP_MAPS_MAX,
	       "every mapping fits section VM");

static const char *pv_model(const struct vmm_vm *vm)
{
	return vmm_pv_model_name(vm);
}

static unsigned int pv_maps(struct vmm_vm *vm, struct vmm_snap_map *out,
			    unsigned int max)
{
	struct vmm_pv *p = vmm_pv(vm);
	unsigned int i, n = 0;

	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX && n < max; i++) {
		const struct vmm_pv_smpl_map *m = &p->maps[i];

		if (m->fd < 0 || !m->size)
			continue;
		out[n++] = (struct vmm_snap_map){.fd   = m->fd,
						 .slot = m->slot,
						 .gpa  = m->gpa,
						 .size = m->size};
	}
	pthread_mutex_unlock(&p->map_lock);
	return n;
}

static int pv_save(struct vmm_vm *vm, void **blob, size_t *len,
		   unsigned int *dropped, char *err, size_t errlen)
{
	int ret = vpmu_domain_save(vmm_pv(vm)->domain, blob, len, dropped);

	if (ret)
		snprintf(err, errlen, "vPMU state: %s%s", strerror(-ret),
			 ret == -ENOTSUP ? " (a run-time sampling "
					   "format keeps host state)"
					 : "");
	return ret;
}

static bool pv_vcpu_save(struct vmm_vcpu *vcpu, struct vmm_snap_vcpu_pmu *sv)
{
	struct vmm_arch *a      = vmm_pv(vcpu->vm)->arch;
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);

	sv->vector      = pmu->vector;
	sv->pmi         = atomic_load(&pmu->pmi);
	sv->irq_pending = atomic_load(&pmu->irq_pending);
	sv->shared_gpa  = pmu->shared_gpa;
	if (a && vcpu->index < a->nr_vcpus) {
		struct vmm_arch_vcpu *av = &a->vcpu[vcpu->index];

		sv->lvtpc       = av->lvtpc;
		sv->nr_pmi      = av->nr_pmi;
		sv->nr_pmi_lost = av->nr_pmi_lost;
		vpmu_arch_save(av->pmu, &sv->arch);
		return true;
	}
	return false;
}

/* Guest TSC - host TSC, measured again on the new host (shared page). */
static int64_t tsc_offset(struct vmm_vcpu *vcpu)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = {.hdr.nmsrs = 1, .e.index = MSR_IA32_TSC};
	uint64_t t1, t2;

	t1 = __rdtsc();
	if (ioctl(vcpu->fd, KVM_GET_MSRS, &m) != 1)
		return 0;
	t2 = __rdtsc();
	return (int64_t)(m.e.data - (t1 + (t2 - t1) / 2));
}

/*
 * A pending PMI as the VMM posts one (vmm_pv_raise_pmi()): none, a fixed
 * vector of the LVTPC (16..255, as arch_msrs.c delivers it), an NMI, or
 * KVM's LVTPC.
 */
static bool pmi_ok(uint32_t pmi)
{
	return pmi == 0 || (pmi >= 16 && pmi <= 255) || pmi == VMM_PV_PMI_NMI ||
	       pmi == VMM_PV_PMI_LVTPC;
}

/*
 * The guest-set values of (sv), checked as the live paths check them: a
 * snapshot file is input, and restoring must not install what the guest
 * could never have set (a vector below 32 would be raised as an
 * exception).
 */
static int check_vcpu_pmu(const struct vmm_vcpu *vcpu,
			  const struct vmm_snap_vcpu_pmu *sv, char *err,
			  size_t errlen)
{
	if (!vmm_pv_vector_ok(sv->vector))
		return vpmu_fail(err, errlen, -EINVAL,
				 "vCPU %u: notification vector %u: the ABI "
				 "allows 0 or 32..255",
				 vcpu->index, sv->vector);
	if (!pmi_ok(sv->pmi))
		return vpmu_fail(err, errlen, -EINVAL,
				 "vCPU %u: pending PMI %#x is not a vector "
				 "16..255, an NMI or the LVTPC",
				 vcpu->index, sv->pmi);
	if (sv->irq_pending > 1)
		return vpmu_fail(err, errlen, -EINVAL,
				 "vCPU %u: interrupt-pending flag %u is not 0 "
				 "or 1",
				 vcpu->index, sv->irq_pending);
	if (sv->lvtpc & ~VMM_LVTPC_WRITABLE)
		return vpmu_fail(err, errlen, -EINVAL,
				 "vCPU %u: LVTPC %#x sets bits a guest cannot "
				 "write",
				 vcpu->index, sv->lvtpc);
	return 0;
}

static int pv_vcpu_restore(struct vmm_vcpu *vcpu,
			   const struct vmm_snap_vcpu_pmu *sv, bool has_arch,
			   char *err, size_t errlen)
{
	struct vmm_arch *a      = vmm_pv(vcpu->vm)->arch;
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	int ret;

	ret = check_vcpu_pmu(vcpu, sv, err, errlen);
	if (ret)
		return ret;
	if (sv->shared_gpa && (sv->shared_gpa % 4096 ||
			       !vmm_gpa_ptr(vcpu->vm, sv->shared_gpa, 4096))) {
		snprintf(err, errlen, "vCPU %u: shared page outside RAM",
			 vcpu->index);
		return -EINVAL;
	}
	pmu->vector = sv->vector;
	atomic_store(&pmu->pmi, sv->pmi);
	atomic_store(&pmu->irq_pending, sv->irq_pending != 0);
	pmu->shared_gpa = sv->shared_gpa;
	if (sv->shared_gpa)
		pmu->tsc_offset = tsc_offset(vcpu);
	if (!has_arch != !a) {
		snprintf(err, errlen,
			 "vCPU %u: the snapshot %s an architectural PMU model",
			 vcpu->index, a ? "has no" : "has");
		return -EINVAL;
	}
	return 0;
}

static int pv_restore(struct vmm_vm *vm, const void *blob, size_t len,
		      char *why, size_t whylen)
{
	return vpmu_domain_restore(vmm_pv(vm)->domain, blob, len, why, whylen);
}

static int pv_vcpu_restore_arch(struct vmm_vcpu *vcpu,
				const struct vmm_snap_vcpu_pmu *sv, char *err,
				size_t errlen)
{
	struct vmm_arch *a = vmm_pv(vcpu->vm)->arch;
	struct vmm_arch_vcpu *av;

	if (!a)
		return 0;
	av = &a->vcpu[vcpu->index];
	if (vpmu_arch_restore(av->pmu, &sv->arch)) {
		snprintf(err, errlen,
			 "vCPU %u: PMU model state (%.16s) does not fit this "
			 "VM's model",
			 vcpu->index, sv->arch.model);
		return -EINVAL;
	}
	av->lvtpc       = sv->lvtpc;
	av->nr_pmi      = sv->nr_pmi;
	av->nr_pmi_lost = sv->nr_pmi_lost;
	return 0;
}

/* Map the restored buffer of context (m->fd) where the guest had it. */
static int pv_restore_map(struct vmm_vm *vm, const struct vmm_snap_map *m,
			  char *err, size_t errlen)
{
	struct vpmu_caller guest = {.owner = VPMU_OWNER_GUEST};
	struct kvm_userspace_memory_region r;
	struct vmm_pv_smpl_map *slot;
	void *base       = NULL;
	size_t size      = 0;
	unsigned int idx = m->slot - VMM_PV_SMPL_SLOT_BASE;

	if (m->slot < VMM_PV_SMPL_SLOT_BASE || idx >= VMM_PV_SMPL_MAPS_MAX ||
	    m->gpa < VMM_PV_SMPL_GPA_BASE || m->size > VMM_PV_SMPL_GPA_END ||
	    m->gpa > VMM_PV_SMPL_GPA_END - m->size ||
	    vpmu_ctx_smpl_buf(vmm_pv(vm)->domain, &guest, m->fd, &base,
			      &size) ||
	    !base || size != m->size) {
		snprintf(err, errlen,
			 "section VM: sampling buffer of context %#x does not "
			 "match the vPMU section",
			 m->fd);
		return -EINVAL;
	}
	slot = &vmm_pv(vm)->maps[idx];
	r    = (struct kvm_userspace_memory_region){
		   .slot            = m->slot,
		   .flags           = KVM_MEM_READONLY,
		   .guest_phys_addr = m->gpa,
		   .memory_size     = m->size,
		   .userspace_addr  = (uintptr_t)base,
        };
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0) {
		snprintf(err, errlen, "sampling buffer at %#llx: %s",
			 (unsigned long long)m->gpa, strerror(errno));
		return -errno;
	}
	*slot = (struct vmm_pv_smpl_map){
		.fd = m->fd, .slot = m->slot, .gpa = m->gpa, .size = m->size};
	return 0;
}

const struct vmm_snapshot_hooks vmm_pv_snapshot_hooks = {
	.model             = pv_model,
	.maps              = pv_maps,
	.save              = pv_save,
	.vcpu_save         = pv_vcpu_save,
	.vcpu_restore      = pv_vcpu_restore,
	.restore           = pv_restore,
	.vcpu_restore_arch = pv_vcpu_restore_arch,
	.restore_map       = pv_restore_map,
};
