/* SPDX-License-Identifier: MIT */
/*
 * vmm_snapshot.h: snapshot and restore of a running VM, the VMM
 * side. The file container is vmm/snap (vmm_snap.h), the logical PMU's
 * state libvpmu's (vpmu_domain_save/restore); docs/snapshot-format.md.
 *
 * Who does what (the seccomp sandbox shapes it: the vCPU and control
 * threads may not open files, and only vCPU threads make vCPU ioctls):
 *   control thread  `snapshot` request: posts it to the main thread and
 *                   waits for the answer (vmm_snapshot_request);
 *   main thread     (vmm_vm_run) serves it: asks every vCPU to pause,
 *                   saves the VM, libvpmu, devices and memory into the
 *                   file, then resumes the vCPUs or stops the VM;
 *   vCPU thread     on VMM_REQ_PAUSE, completes the exit in progress
 *                   (KVM_RUN with immediate_exit), saves its own KVM state
 *                   and waits until resumed (vmm_snapshot_vcpu_pause).
 * Freestanding guests only: a VM with KVM's irqchip (Linux) is refused.
 */
#ifndef VMM_SNAPSHOT_H
#define VMM_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vpmu/vpmu.h>

struct vmm_vm;
struct vmm_vcpu;
struct vmm_snap;

/*
 * The state a module keeps in a snapshot (docs/snapshot-format.md): the
 * core writes the file and its sections, the module registered with
 * snapshot hooks (struct vmm_module, vmm_core.h: the guest PMU glue of
 * vmm/pv) fills and reads its fields.
 */
#define VMM_SNAP_MAPS_MAX 64

/* A sampling buffer mapped into the guest, by its context (section VM). */
struct vmm_snap_map {
	int32_t fd;
	uint32_t slot;
	uint64_t gpa, size;
};

/* The PMU glue's part of a vCPU's section. */
struct vmm_snap_vcpu_pmu {
	uint32_t vector, pmi;
	uint32_t irq_pending, lvtpc;
	uint64_t shared_gpa;
	uint64_t nr_pmi, nr_pmi_lost;
	struct vpmu_arch_state arch;
};

struct vmm_snapshot_hooks {
	/* "intel-v2", ... or "none": the PMU model the VM runs. */
	const char *(*model)(const struct vmm_vm *vm);
	/* Fill up to (max) mapped sampling buffers; how many. */
	unsigned int (*maps)(struct vmm_vm *vm, struct vmm_snap_map *out,
			     unsigned int max);
	/*
	 * Every vCPU paused: the blob of section vPMU (malloc'd), or -errno
	 * with a message in (err). (*dropped): host contexts left out.
	 */
	int (*save)(struct vmm_vm *vm, void **blob, size_t *len,
		    unsigned int *dropped, char *err, size_t errlen);
	/* vCPU thread, paused: true if it saved an architectural model. */
	bool (*vcpu_save)(struct vmm_vcpu *vcpu, struct vmm_snap_vcpu_pmu *out);
	/*
	 * Restore, in this order: each vCPU's glue ((has_arch): the
	 * snapshot has a model), section vPMU, each vCPU's model, the maps.
	 * 0, or -errno with a message in (err) (section vPMU: in (why)).
	 */
	int (*vcpu_restore)(struct vmm_vcpu *vcpu,
			    const struct vmm_snap_vcpu_pmu *in, bool has_arch,
			    char *err, size_t errlen);
	int (*restore)(struct vmm_vm *vm, const void *blob, size_t len,
		       char *why, size_t whylen);
	int (*vcpu_restore_arch)(struct vmm_vcpu *vcpu,
				 const struct vmm_snap_vcpu_pmu *in, char *err,
				 size_t errlen);
	int (*restore_map)(struct vmm_vm *vm, const struct vmm_snap_map *m,
			   char *err, size_t errlen);
};

/* Request bit a pause kick posts (next to VMM_REQ_* of vmm_core.h). */
#define VMM_REQ_PAUSE (1U << 3)

/* What a snapshot did, for the reply and the operator. */
struct vmm_snapshot_result {
	uint64_t file_bytes;  /* size of the file */
	uint64_t mem_pages;   /* non-zero pages written */
	uint64_t pause_ns;    /* vCPUs paused, ns */
	uint64_t write_ns;    /* writing the file, ns */
	unsigned int dropped; /* host contexts left out */
	bool stopped;         /* the VM was stopped (--stop) */
};

/* Allocate the VM's snapshot state (before vmm_vm_run starts threads). */
int vmm_snapshot_init(struct vmm_vm *vm);
void vmm_snapshot_free(struct vmm_vm *vm);

/*
 * Main thread, from vmm_vm_run() once the vCPUs run: serve snapshot
 * requests until the VM stops.
 */
void vmm_snapshot_serve(struct vmm_vm *vm);

/*
 * Control thread: snapshot (vm) into (path) (absolute; written as
 * path.tmp-PID then renamed), then stop the VM if (stop). Returns 0 with
 * (*res), or -errno with a message in (err).
 */
int vmm_snapshot_request(struct vmm_vm *vm, const char *path, bool stop,
			 struct vmm_snapshot_result *res, char *err,
			 size_t errlen);

/* vCPU thread: a VMM_REQ_PAUSE was posted; (halted): it sits in HLT. */
void vmm_snapshot_vcpu_pause(struct vmm_vcpu *vcpu, bool halted);

/* vCPU thread start: was it restored halted? (then it halts first) */
bool vmm_snapshot_vcpu_restored_halted(struct vmm_vcpu *vcpu);

/*
 * `vpmu run --restore`: check (path) against this host (CPU vendor) and
 * (pmu_model) ("auto" resolved here), before any VM exists; fill the VM's
 * dimensions and saved name. Returns 0 with (*snap) open, or -errno with a
 * message naming the file and section.
 */
struct vmm_snapshot_dims {
	uint64_t mem_size;
	unsigned int nr_vcpus;
	char name[64];
	char pmu_model[16];
};
int vmm_snapshot_open(const char *path, const char *pmu_model,
		      struct vmm_snap *snap, struct vmm_snapshot_dims *dims,
		      char *err, size_t errlen);

/*
 * Put the snapshot (snap) into (vm), created with its dimensions and
 * without an image: memory, every vCPU's KVM state, devices, libvpmu and
 * the VMM's PMU state. Returns 0 or -errno with a message in (err).
 */
int vmm_snapshot_restore(struct vmm_vm *vm, const struct vmm_snap *snap,
			 char *err, size_t errlen);

#endif /* VMM_SNAPSHOT_H */
