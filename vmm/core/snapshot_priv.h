/* SPDX-License-Identifier: MIT */
/*
 * snapshot_priv.h: the section payloads the VMM writes into a snapshot
 * (docs/snapshot-format.md) and the state shared by snapshot_*.c.
 * Internal to vmm/core.
 */
#ifndef VMM_SNAPSHOT_PRIV_H
#define VMM_SNAPSHOT_PRIV_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu/vpmu.h>

#include "vmm_core_priv.h"
#include "vmm_snapshot.h"

#define SNAP_VCPU_VERSION  2 /* 2: the kick timing stamps left the stats */
#define SNAP_VM_VERSION    1
#define SNAP_VCPU_MAX_MSRS 4096

#define SNAP_VCPU_HALTED (1U << 0)
#define SNAP_VCPU_XSAVE  (1U << 1)
#define SNAP_VCPU_XCRS   (1U << 2)
#define SNAP_VCPU_ARCH   (1U << 3)

/* VMM_SNAP_VCPU payload. */
struct snap_vcpu {
	uint32_t version, flags;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_fpu fpu;
	struct kvm_xsave xsave;
	struct kvm_xcrs xcrs;
	struct kvm_vcpu_events events;
	struct kvm_mp_state mp;
	struct vmm_vcpu_stats stats;
	struct vmm_snap_vcpu_pmu pmu;
	uint32_t nmsrs, pad;
	struct kvm_msr_entry msrs[];
};
/* The module's part sits where its fields were: no padding moved. */
_Static_assert(offsetof(struct snap_vcpu, nmsrs) ==
		       offsetof(struct snap_vcpu, pmu) +
			       sizeof(struct vmm_snap_vcpu_pmu),
	       "the PMU glue's fields keep their offsets");

/* VMM_SNAP_VM payload. */
struct snap_vm {
	uint32_t version, image_kind;
	uint64_t mem_size, entry;
	uint32_t nr_vcpus, nr_maps;
	char name[64];
	uint8_t uuid[16];
	char pmu_model[16];
	struct vmm_snap_map maps[VMM_SNAP_MAPS_MAX];
};

/* VMM_SNAP_DEVICES payload: the 16550's registers. */
struct snap_devices {
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr, thre_pending;
};

/* One vCPU's part of a snapshot in progress. */
struct snap_vcpu_slot {
	struct snap_vcpu *state; /* saved by its thread */
	size_t len;
	int ret;
	bool restored_halted; /* restore: start in HLT */
};

/* Per-VM snapshot state (vm->snap). Fields under vm->lock. */
struct vmm_snapshot {
	bool serving; /* the main thread serves requests */
	bool pausing; /* vCPUs must stay paused */
	unsigned int nr_paused;
	uint32_t *msrs; /* KVM_GET_MSR_INDEX_LIST */
	unsigned int nr_msrs;
	struct snap_vcpu_slot *vcpu;

	/* The request in flight (control thread -> main thread). */
	bool req_pending, req_done;
	char req_path[4096];
	bool req_stop;
	int req_ret;
	char req_err[256];
	struct vmm_snapshot_result req_res;
};

/*
 * snapshot_restore.c: a heap copy of section (s)'s payload (malloc'd, so
 * aligned for any struct: a section may start at any byte of the file), or
 * NULL. The restore reads sections only through such copies.
 */
struct vmm_snap_section;
void *vmm_snapshot_section_copy(const struct vmm_snap_section *s);

/* snapshot_vcpu.c */
int vmm_snapshot_vcpu_save(struct vmm_vcpu *vcpu, const uint32_t *msrs,
			   unsigned int nr_msrs, bool halted,
			   struct snap_vcpu **out, size_t *len);
/*
 * The layout checks of a vCPU section (version, size, MSR count): what
 * vmm_snapshot_vcpu_restore() does before KVM sees anything. 0 or -EINVAL
 * with a message. Here and below (data) is an aligned copy of the
 * section (vmm_snapshot_section_copy()).
 */
int vmm_snapshot_vcpu_check(const struct vmm_vcpu *vcpu, const void *data,
			    uint64_t len, char *err, size_t errlen);
int vmm_snapshot_vcpu_restore(struct vmm_vcpu *vcpu, const void *data,
			      uint64_t len, char *err, size_t errlen);
/*
 * The part after KVM's: statistics and the PMU module's glue (its
 * vcpu_restore hook). (sv) passed vmm_snapshot_vcpu_check().
 */
int vmm_snapshot_vcpu_restore_glue(struct vmm_vcpu *vcpu,
				   const struct snap_vcpu *sv, char *err,
				   size_t errlen);
int vmm_snapshot_vcpu_restore_arch(struct vmm_vcpu *vcpu, const void *data,
				   char *err, size_t errlen);
/* The snapshot hooks of (vm)'s modules, NULL: none has state to save. */
const struct vmm_snapshot_hooks *vmm_snapshot_hooks(const struct vmm_vm *vm);

/* snapshot_save.c: the host's CPUID vendor (12 characters and a NUL). */
void vmm_snapshot_host_vendor(char out[13]);
/* "intel-v2", ... or "none": the model the VM runs. */
const char *vmm_snapshot_model(const struct vmm_vm *vm);

#endif /* VMM_SNAPSHOT_PRIV_H */
