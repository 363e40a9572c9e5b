// SPDX-License-Identifier: MIT
/*
 * snapshot_restore.c: `vpmu run --restore FILE`. The file is
 * checked whole against this host before a VM exists (vmm_snapshot_open);
 * the VM is then created with the snapshot's dimensions and filled:
 * memory, vCPUs, devices, then what the module with snapshot hooks kept
 * (vmm/pv: libvpmu, which re-opens the counters' backend events at the
 * saved 64-bit values, and the sampling-buffer mappings).
 */
#include "vmm_core_priv.h"
#include "vmm_snapshot.h"
#include "snapshot_priv.h"
#include "vmm_snap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

void *vmm_snapshot_section_copy(const struct vmm_snap_section *s)
{
	void *p = malloc(s->length ? s->length : 1);

	if (p)
		memcpy(p, s->data, s->length);
	return p;
}

int vmm_snapshot_open(const char *path, const char *pmu_model,
		      struct vmm_snap *snap, struct vmm_snapshot_dims *dims,
		      char *err, size_t errlen)
{
	struct vmm_snap_expect exp = {0};
	const struct vmm_snap_section *s;
	struct snap_vm *sv = NULL;
	char vendor[13];
	int ret;

	vmm_snapshot_host_vendor(vendor);
	exp.vendor = vendor;
	if (pmu_model && strcmp(pmu_model, "auto") != 0)
		exp.pmu_model = pmu_model;
	ret = vmm_snap_open(path, &exp, snap, err, errlen);
	if (ret)
		return ret;
	s = vmm_snap_find(snap, VMM_SNAP_VM, 0);
	if (s && s->length == sizeof(*sv))
		sv = vmm_snapshot_section_copy(s);
	if (!sv || sv->version != SNAP_VM_VERSION ||
	    sv->mem_size != snap->hdr.mem_size ||
	    sv->nr_vcpus != snap->hdr.nr_vcpus ||
	    sv->nr_maps > VMM_SNAP_MAPS_MAX) {
		snprintf(err, errlen, "%s: section VM: bad layout", path);
		ret = -EINVAL;
		goto out_close;
	}
	if (sv->image_kind != VMM_IMAGE_ELF) {
		snprintf(err, errlen,
			 "%s: section VM: a %s guest; only freestanding "
			 "guests can be restored",
			 path, vmm_image_kind_name(sv->image_kind));
		ret = -ENOTSUP;
		goto out_close;
	}
	memset(dims, 0, sizeof(*dims));
	dims->mem_size = sv->mem_size;
	dims->nr_vcpus = sv->nr_vcpus;
	snprintf(dims->name, sizeof(dims->name), "%.63s", sv->name);
	snprintf(dims->pmu_model, sizeof(dims->pmu_model), "%.15s",
		 snap->hdr.pmu_model);
	free(sv);
	return 0;

out_close:
	free(sv);
	vmm_snap_close(snap);
	return ret;
}

static void restore_devices(struct vmm_vm *vm, const struct vmm_snap *snap)
{
	const struct vmm_snap_section *s =
		vmm_snap_find(snap, VMM_SNAP_DEVICES, 0);
	const struct snap_devices *d = s ? s->data : NULL;
	struct vmm_uart *u           = &vm->uart;

	if (!d || s->length != sizeof(*d))
		return;
	pthread_mutex_lock(&u->lock);
	u->ier          = d->ier;
	u->lcr          = d->lcr;
	u->mcr          = d->mcr;
	u->scr          = d->scr;
	u->dll          = d->dll;
	u->dlm          = d->dlm;
	u->fcr          = d->fcr;
	u->thre_pending = d->thre_pending;
	pthread_mutex_unlock(&u->lock);
}

static int restore_vcpus(struct vmm_vm *vm, const struct vmm_snap *snap,
			 char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	for (i = 0; i < vm->nr_vcpus; i++) {
		const struct vmm_snap_section *s =
			vmm_snap_find(snap, VMM_SNAP_VCPU, i);
		struct snap_vcpu *sv = vmm_snapshot_section_copy(s);

		if (!sv)
			return -ENOMEM;
		ret = vmm_snapshot_vcpu_restore(&vm->vcpus[i], sv, s->length,
						err, errlen);
		if (!ret)
			vm->snap->vcpu[i].restored_halted =
				(sv->flags & SNAP_VCPU_HALTED) != 0;
		free(sv);
		if (ret)
			return ret;
	}
	return 0;
}

/* The vCPUs' architectural models, from copies of their sections. */
static int restore_arch(struct vmm_vm *vm, const struct vmm_snap *snap,
			char *err, size_t errlen)
{
	struct snap_vcpu *sv;
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < vm->nr_vcpus; i++) {
		sv = vmm_snapshot_section_copy(
			vmm_snap_find(snap, VMM_SNAP_VCPU, i));
		if (!sv)
			return -ENOMEM;
		ret = vmm_snapshot_vcpu_restore_arch(&vm->vcpus[i], sv, err,
						     errlen);
		free(sv);
	}
	return ret;
}

static int restore_from(struct vmm_vm *vm, const struct vmm_snap *snap,
			const struct snap_vm *sv, char *err, size_t errlen)
{
	const struct vmm_snap_section *p =
		vmm_snap_find(snap, VMM_SNAP_VPMU, 0);
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vm);
	char why[200];
	unsigned int i;
	int ret;

	if (vm->mem_size != snap->hdr.mem_size ||
	    vm->nr_vcpus != snap->hdr.nr_vcpus ||
	    vm->image_kind != VMM_IMAGE_ELF ||
	    strcmp(vmm_snapshot_model(vm), sv->pmu_model)) {
		snprintf(err, errlen,
			 "the VM does not have the snapshot's memory, vCPUs "
			 "or PMU model (%s)",
			 sv->pmu_model);
		return -EINVAL;
	}
	if (!vm->snap && vmm_snapshot_init(vm))
		return -ENOMEM;
	/* What creating the VM wrote (boot tables) goes: zero pages again. */
	if (madvise(vm->mem, vm->mem_size, MADV_DONTNEED))
		return -errno;
	ret = vmm_snap_memory_load(vmm_snap_find(snap, VMM_SNAP_MEMORY, 0),
				   vm->mem, vm->mem_size);
	if (ret) {
		snprintf(err, errlen, "section memory: does not fit");
		return ret;
	}
	vm->entry = sv->entry;
	ret       = restore_vcpus(vm, snap, err, errlen);
	if (ret)
		return ret;
	restore_devices(vm, snap);
	if (p && h && h->restore) {
		ret = h->restore(vm, p->data, p->length, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "section vPMU: %s", why);
			return ret;
		}
	}
	ret = restore_arch(vm, snap, err, errlen);
	if (ret)
		return ret;
	for (i = 0; h && h->restore_map && i < sv->nr_maps; i++) {
		ret = h->restore_map(vm, &sv->maps[i], err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

int vmm_snapshot_restore(struct vmm_vm *vm, const struct vmm_snap *snap,
			 char *err, size_t errlen)
{
	struct snap_vm *sv;
	int ret;

	/* Checked by vmm_snapshot_open(); copied: sections are unaligned. */
	sv = vmm_snapshot_section_copy(vmm_snap_find(snap, VMM_SNAP_VM, 0));
	if (!sv)
		return -ENOMEM;
	ret = restore_from(vm, snap, sv, err, errlen);
	free(sv);
	return ret;
}
