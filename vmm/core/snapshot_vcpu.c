// SPDX-License-Identifier: MIT
/*
 * snapshot_vcpu.c: one vCPU's state in and out of a snapshot:
 * KVM registers, special registers, MSRs (those of KVM_GET_MSR_INDEX_LIST
 * that this vCPU can read), FPU/XSAVE, XCRs, pending events, MP state, the
 * VMM's statistics and the snapshot hooks' part (the PMU glue of vmm/pv:
 * notification vector, pending interrupt, shared page, the architectural
 * PMU model's registers and LVTPC).
 * Saving runs on the vCPU's own thread (the sandbox allows vCPU ioctls
 * there only); restoring on the main thread before any vCPU runs.
 */
#include "vmm_core_priv.h"
#include "vmm_snapshot.h"
#include "snapshot_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* KVM_GET_MSRS / KVM_SET_MSRS of one MSR: 0 or -errno. */
static int msr_one(int fd, unsigned long req, struct kvm_msr_entry *e)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = {.hdr.nmsrs = 1, .e = *e};

	if (ioctl(fd, req, &m) != 1)
		return -EINVAL;
	*e = m.e;
	return 0;
}

/* Complete the exit in progress (PIO data, sync regs) without running. */
static int complete_exit(struct vmm_vcpu *vcpu)
{
	int ret;

	vcpu->run->immediate_exit = 1;
	ret                       = ioctl(vcpu->fd, KVM_RUN, 0);
	vcpu->run->immediate_exit = 0;
	if (ret < 0 && errno != EINTR)
		return -errno;
	return 0;
}

static void save_glue(struct vmm_vcpu *vcpu, struct snap_vcpu *sv)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vcpu->vm);

	sv->stats = vcpu->stats;
	if (h && h->vcpu_save && h->vcpu_save(vcpu, &sv->pmu))
		sv->flags |= SNAP_VCPU_ARCH;
}

int vmm_snapshot_vcpu_save(struct vmm_vcpu *vcpu, const uint32_t *msrs,
			   unsigned int nr_msrs, bool halted,
			   struct snap_vcpu **out, size_t *len)
{
	struct snap_vcpu *sv;
	unsigned int i;
	int ret;

	ret = complete_exit(vcpu);
	if (ret)
		return ret;
	sv = calloc(1, sizeof(*sv) + nr_msrs * sizeof(sv->msrs[0]));
	if (!sv)
		return -ENOMEM;
	sv->version = SNAP_VCPU_VERSION;
	sv->flags   = halted ? SNAP_VCPU_HALTED : 0;
	ret         = -EIO;
	if (ioctl(vcpu->fd, KVM_GET_REGS, &sv->regs) ||
	    ioctl(vcpu->fd, KVM_GET_SREGS, &sv->sregs) ||
	    ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &sv->events) ||
	    ioctl(vcpu->fd, KVM_GET_MP_STATE, &sv->mp))
		goto out_free;
	if (ioctl(vcpu->fd, KVM_GET_XSAVE, &sv->xsave) == 0)
		sv->flags |= SNAP_VCPU_XSAVE;
	else if (ioctl(vcpu->fd, KVM_GET_FPU, &sv->fpu))
		goto out_free;
	if (ioctl(vcpu->fd, KVM_GET_XCRS, &sv->xcrs) == 0)
		sv->flags |= SNAP_VCPU_XCRS;
	/* Every MSR KVM lists that this vCPU can read. */
	for (i = 0; i < nr_msrs; i++) {
		struct kvm_msr_entry e = {.index = msrs[i]};

		if (msr_one(vcpu->fd, KVM_GET_MSRS, &e) == 0)
			sv->msrs[sv->nmsrs++] = e;
	}
	save_glue(vcpu, sv);
	*out = sv;
	*len = sizeof(*sv) + sv->nmsrs * sizeof(sv->msrs[0]);
	return 0;

out_free:
	ret = -errno;
	free(sv);
	return ret ? ret : -EIO;
}

int vmm_snapshot_vcpu_restore_glue(struct vmm_vcpu *vcpu,
				   const struct snap_vcpu *sv, char *err,
				   size_t errlen)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vcpu->vm);

	vcpu->stats = sv->stats;
	if (!h || !h->vcpu_restore)
		return 0;
	return h->vcpu_restore(vcpu, &sv->pmu,
			       (sv->flags & SNAP_VCPU_ARCH) != 0, err, errlen);
}

int vmm_snapshot_vcpu_check(const struct vmm_vcpu *vcpu, const void *data,
			    uint64_t len, char *err, size_t errlen)
{
	const struct snap_vcpu *sv = data;

	if (len >= sizeof(sv->version) && sv->version != SNAP_VCPU_VERSION) {
		snprintf(err, errlen,
			 "vCPU %u: state version %u, this vpmu reads %u (a "
			 "snapshot of another vpmu build)",
			 vcpu->index, sv->version, SNAP_VCPU_VERSION);
		return -EINVAL;
	}
	if (len < sizeof(*sv) || sv->nmsrs > SNAP_VCPU_MAX_MSRS ||
	    len != sizeof(*sv) + sv->nmsrs * sizeof(sv->msrs[0])) {
		snprintf(err, errlen, "vCPU %u: bad state layout", vcpu->index);
		return -EINVAL;
	}
	return 0;
}

int vmm_snapshot_vcpu_restore(struct vmm_vcpu *vcpu, const void *data,
			      uint64_t len, char *err, size_t errlen)
{
	const struct snap_vcpu *sv = data;
	unsigned int i, failed = 0;
	int ret;

	ret = vmm_snapshot_vcpu_check(vcpu, data, len, err, errlen);
	if (ret)
		return ret;
	/* KVM's order: special registers, registers, MSRs, FPU, events. */
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sv->sregs) ||
	    ioctl(vcpu->fd, KVM_SET_REGS, &sv->regs))
		goto fail;
	for (i = 0; i < sv->nmsrs; i++) {
		struct kvm_msr_entry e = sv->msrs[i];

		failed += msr_one(vcpu->fd, KVM_SET_MSRS, &e) != 0;
	}
	if (failed)
		vmm_log(vcpu->vm, VMM_LOG_DEBUG,
			"vCPU %u: %u of %u MSRs not restored", vcpu->index,
			failed, sv->nmsrs);
	if ((sv->flags & SNAP_VCPU_XSAVE) &&
	    ioctl(vcpu->fd, KVM_SET_XSAVE, &sv->xsave))
		goto fail;
	if (!(sv->flags & SNAP_VCPU_XSAVE) &&
	    ioctl(vcpu->fd, KVM_SET_FPU, &sv->fpu))
		goto fail;
	if ((sv->flags & SNAP_VCPU_XCRS) &&
	    ioctl(vcpu->fd, KVM_SET_XCRS, &sv->xcrs))
		goto fail;
	if (ioctl(vcpu->fd, KVM_SET_VCPU_EVENTS, &sv->events) ||
	    ioctl(vcpu->fd, KVM_SET_MP_STATE, &sv->mp))
		goto fail;
	return vmm_snapshot_vcpu_restore_glue(vcpu, sv, err, errlen);

fail:
	snprintf(err, errlen, "vCPU %u: KVM refused its state: %s", vcpu->index,
		 strerror(errno));
	return -errno;
}

int vmm_snapshot_vcpu_restore_arch(struct vmm_vcpu *vcpu, const void *data,
				   char *err, size_t errlen)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vcpu->vm);
	const struct snap_vcpu *sv         = data;

	if (!h || !h->vcpu_restore_arch)
		return 0;
	return h->vcpu_restore_arch(vcpu, &sv->pmu, err, errlen);
}
