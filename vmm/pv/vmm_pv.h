/* SPDX-License-Identifier: MIT */
/*
 * vmm_pv.h: vmm/pv, the host end of the guest PMU interfaces, and its
 * interface to what sits above it (vmm/ctl, the VMM's program): one
 * libvpmu domain per VM, one vpmu cpu per vCPU, the host callbacks
 * libvpmu builds its backends from (vCPU fds and threads, the statistics
 * behind hv events), per-vCPU timers for vPMU deadlines, notification
 * interrupts, the shared page, the mapping of sampling buffers into guest
 * physical memory and the architectural PMU models (arch_msrs.h, private).
 *
 * pv is a module of the core (struct vmm_module, vmm_core.h): vmm_pv_module
 * is registered on the VM, and the core calls its hooks from the VM's
 * life and the vCPU loop. Its state hangs off the core's per-VM and
 * per-vCPU module pointers (vmm_pv(), vmm_pv_vcpu()).
 */
#ifndef VMM_PV_H
#define VMM_PV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <vpmu/vpmu.h>

#include "vmm_machine.h"

struct vmm_config;
struct vmm_arch; /* arch_msrs.h: the architectural PMU model */
struct vmm_pv_vcpu;

#define VMM_PV_SMPL_MAPS_MAX  64
#define VMM_PV_FMTS_MAX       32            /* run-time formats one VM loads */
#define VMM_PV_SMPL_GPA_BASE  0xc0000000ULL /* the hole above RAM (<= 3 GiB) */
#define VMM_PV_SMPL_GPA_END   0xf0000000ULL
#define VMM_PV_SMPL_SLOT_BASE 1 /* memslot 0 is RAM */

/*
 * Host operators' share of a VM's PMU, apart from the guest's (the
 * config's limits): every context the control server's clients can hold
 * (16 clients of 64, checked there), and 64 MiB of sampling buffers
 * (`vpmu record` takes 256 KiB per vCPU by default).
 */
#define VMM_PV_HOST_CONTEXTS 1024
#define VMM_PV_HOST_SMPL_MEM (64ULL << 20)

/* A sampling buffer mapped read-only into the guest. */
struct vmm_pv_smpl_map {
	int fd;        /* guest context handle, -1 when free */
	uint32_t slot; /* KVM memslot */
	uint64_t gpa, size;
};

/* Per-VM PMU state: the core's per-VM pointer of vmm_pv_module. */
struct vmm_pv {
	struct vmm_pv_vcpu *vcpus; /* one per vCPU, by index */
	/*
	 * Host-owned notifications (operator contexts) go to the layer
	 * above, which sets this (vmm_pv_set_host_notify); NULL: none.
	 */
	void (*host_notify)(struct vmm_vm *vm, const struct vpmu_notify *n);

	struct vpmu_domain *domain; /* owns its backends */
	uint64_t tsc_khz;
	bool tsc_stable;        /* the host kernel trusts its TSC */
	uint64_t arg_size_max;  /* bytes of one vector argument */
	uint64_t max_smpl_rate; /* samples/s, hard maximum */

	/*
	 * Message waiters (PVPMU_HC_READ_MSG): generation + condvar on
	 * CLOCK_MONOTONIC; (msg_sleeps) counts returns from its waits.
	 */
	pthread_mutex_t msg_lock;
	pthread_cond_t msg_cond;
	uint64_t msg_gen;
	uint64_t msg_sleeps;

	/* Sampling buffer mappings, under (map_lock). */
	pthread_mutex_t map_lock;
	struct vmm_pv_smpl_map maps[VMM_PV_SMPL_MAPS_MAX];

	struct vmm_arch *arch; /* PMU model, NULL for "none" */

	/* The guest's process names and code mappings (pv_tasks.c). */
	struct vmm_pv_tasks *tasks;

	/* Run-time sampling formats this VM loaded (unloaded at destroy). */
	unsigned int nr_fmts;
	uint8_t fmt_uuids[VMM_PV_FMTS_MAX][16];
};

#define VMM_PV_CHAIN_DEPTH_MAX 32   /* callers walked per sample */
#define VMM_PV_CHAIN_RING      2048 /* chains kept per vCPU until drained */

/*
 * Call chains of one vCPU (pv_callchain.c): captured by its thread when a
 * sample is due, looked up by sample time by the control thread.
 */
struct vmm_pv_chain_ring {
	pthread_mutex_t lock;
	unsigned int head; /* next slot to write */
	struct {
		uint64_t tstamp; /* vCPU run time of the sample, 0 = empty */
		uint32_t n;
		uint64_t ret[VMM_PV_CHAIN_DEPTH_MAX];
	} slot[VMM_PV_CHAIN_RING];
};

/* Per-vCPU PMU state: the core's per-vCPU pointer of vmm_pv_module. */
struct vmm_pv_vcpu {
	struct vpmu_cpu *cpu;
	timer_t timer;
	bool has_timer;
	uint64_t armed_deadline; /* run-time ns the timer is armed for */
	uint64_t armed_wall_ns;  /* wall clock when it was armed */
	uint64_t armed_run_ns;   /* run time when it was armed */
	/* After a kick of our timer, when its accounting ended:
	 * vmm_pv_before_run() charges the way back to KVM_RUN. */
	uint64_t reentry_from;
	uint32_t vector; /* notification vector, 0 = none */
	atomic_bool irq_pending;
	atomic_uint pmi; /* pending PMI, vector or VMM_PV_PMI_NMI */
	/* PMIs injected: notification vectors, architectural PMIs. */
	_Atomic uint64_t pmis;
	uint64_t shared_gpa; /* struct pvpmu_shared_page, 0 = none */
	int64_t tsc_offset;  /* guest TSC - host TSC */
	/* Chains for host contexts that asked (record -g). */
	struct vmm_pv_chain_ring *_Atomic chains; /* set once, freed at end */
	atomic_uint chain_users;
};

/* The module the assembler registers on a VM (vmm_vm_create). */
extern const struct vmm_module vmm_pv_module;

/* pv's state of (vm) and (vcpu); NULL before vmm_pv_attach(). */
static inline struct vmm_pv *vmm_pv(const struct vmm_vm *vm)
{
	return (struct vmm_pv *)vmm_vm_module_priv(vm, &vmm_pv_module);
}

static inline struct vmm_pv_vcpu *vmm_pv_vcpu(const struct vmm_vcpu *vcpu)
{
	return (struct vmm_pv_vcpu *)vmm_vcpu_module_priv(vcpu, &vmm_pv_module);
}

/*
 * Register vmm_pv_module on (vm) unless it is, and allocate pv's per-VM
 * and per-vCPU state unless it exists (zeroed). The module's first hook
 * does it; a VM built by hand (tests) before vmm_pv_create(). 0 or -errno.
 */
int vmm_pv_attach(struct vmm_vm *vm);
/* Free what vmm_pv_attach() allocated (after vmm_pv_destroy()). */
void vmm_pv_detach(struct vmm_vm *vm);

/* Route host-owned notifications of (vm) to (fn) (the control server). */
void vmm_pv_set_host_notify(struct vmm_vm *vm,
			    void (*fn)(struct vmm_vm *vm,
				       const struct vpmu_notify *n));

/* "intel-v2", ... or "none": the architectural PMU model (vm) runs. */
const char *vmm_pv_model_name(const struct vmm_vm *vm);

/* Create the domain and the vCPU objects of (vm). */
int vmm_pv_create(struct vmm_vm *vm, const struct vmm_config *cfg);

/* Destroy what vmm_pv_create() created; safe on a partly built VM. */
void vmm_pv_destroy(struct vmm_vm *vm);

/* Main thread, before the vCPU threads start: the kick probe. */
void vmm_pv_run_prepare(struct vmm_vm *vm);

/* Called on the vCPU thread when it starts and ends. */
int vmm_pv_vcpu_start(struct vmm_vcpu *vcpu);
void vmm_pv_vcpu_end(struct vmm_vcpu *vcpu);

/*
 * Call chains (pv_callchain.c). Control thread: a host context that wants
 * chains enables them on its vCPU (allocates the ring once: 0 or
 * -ENOMEM) and disables them when destroyed; it looks the chain of a
 * sample up by the sample's time (number of return addresses, innermost
 * first, 0 when none was captured). vCPU thread: capture the chain of
 * the guest's current stack for a sample at run time (tstamp): its frame
 * pointers walked through its page tables (long mode, 4-level paging),
 * every access bounds-checked against guest RAM.
 */
int vmm_pv_chain_enable(struct vmm_vcpu *vcpu);
void vmm_pv_chain_disable(struct vmm_vcpu *vcpu);
unsigned int vmm_pv_chain_lookup(struct vmm_vcpu *vcpu, uint64_t tstamp,
				 uint64_t *out, unsigned int max);
void vmm_pv_chain_capture(struct vmm_vcpu *vcpu, uint64_t tstamp);
/* What capture stores: (n) callers for the sample at (tstamp). */
void vmm_pv_chain_store(struct vmm_vcpu *vcpu, uint64_t tstamp,
			const uint64_t *ret, unsigned int n);
void vmm_pv_chain_free(struct vmm_vcpu *vcpu);

/*
 * The guest's processes (pv_tasks.c, PVPMU_HC_TASK): names and executable
 * mappings its kernel reported, kept so that an operator who starts
 * profiling later still learns the processes already running. Bounded:
 * at most VMM_PV_TASKS_MAX records, taken at most VMM_PV_TASK_RATE per
 * second (bursts of VMM_PV_TASK_BURST); a process's records stay
 * VMM_PV_TASK_KEEP_NS after it exits or exec()s, then make room.
 */
#define VMM_PV_TASKS_MAX    4096
#define VMM_PV_TASK_RATE    2000
#define VMM_PV_TASK_BURST   4096
#define VMM_PV_TASK_KEEP_NS (10ULL * 1000000000ULL)

struct vmm_pv_task_rec {
	uint64_t gen; /* 1, 2, ... in the order the VMM took them */
	uint32_t op;  /* PVPMU_TASK_* */
	uint32_t flags;
	int32_t pid, tid;
	uint64_t start, len, pgoff;
	char comm[PVPMU_TASK_COMM_LEN];
	char *path;       /* MMAP: NUL-terminated copy; else NULL */
	uint64_t dead_ns; /* when it stopped describing a live process */
};

struct vmm_pv_task_stats {
	uint64_t gen;     /* the newest record's */
	uint64_t taken;   /* records accepted */
	uint64_t refused; /* malformed (-PVPMU_EINVAL, -PVPMU_EFAULT) */
	uint64_t dropped; /* over the rate or the table (EAGAIN, ENOSPC) */
	unsigned int held;
};

/*
 * Validate and take one record, whose path (MMAP) the hypercall copied
 * once out of guest RAM into (path) (path_len bytes, not NUL-terminated).
 * (now_ns) is CLOCK_MONOTONIC. 0 or -PVPMU_E*, each refusal counted.
 */
int vmm_pv_task_add(struct vmm_vm *vm, const struct pvpmu_hc_task *req,
		    const char *path, uint64_t now_ns);

/*
 * Call (fn) for up to (max) records newer than generation (since), in
 * order; fill (st). Returns how many (fn) saw.
 */
unsigned int
vmm_pv_tasks_since(struct vmm_vm *vm, uint64_t since, unsigned int max,
		   void (*fn)(void *opaque, const struct vmm_pv_task_rec *r),
		   void *opaque, struct vmm_pv_task_stats *st);

void vmm_pv_tasks_free(struct vmm_vm *vm);

/* Before KVM_RUN: arm the deadline timer, inject a pending interrupt. */
void vmm_pv_before_run(struct vmm_vcpu *vcpu);

/*
 * The vCPU was paused (a snapshot) between a kick and the next KVM_RUN:
 * the way back to KVM_RUN that vmm_pv_before_run() charges starts now,
 * the pause is not monitoring cost.
 */
void vmm_pv_resumed(struct vmm_vcpu *vcpu);

/*
 * After KVM_RUN returned at (t_ret) (CLOCK_MONOTONIC; an exit, or
 * (kicked) by a signal): account (run_ns) of guest time. The run loop
 * refreshes the shared page once the exit is handled (vmm_pv_shared_update),
 * so it also shows what a hypercall just changed (START, STOP, UNLOAD,
 * WRITE_PMDS...). Only a kick that includes the deadline timer's signal
 * (vcpu_loop.c) re-arms the timer.
 */
void vmm_pv_after_run(struct vmm_vcpu *vcpu, uint64_t run_ns, uint64_t t_ret,
		      bool kicked);

/* shared_page.c: the per-vCPU shared page. */
int vmm_pv_shared_register(struct vmm_vcpu *vcpu, uint64_t gpa);
void vmm_pv_shared_update(struct vmm_vcpu *vcpu);
void vmm_pv_shared_guest_ids(struct vmm_vcpu *vcpu, int32_t *pid, int32_t *tid);
void vmm_pv_shared_stamp_entry(struct vmm_vcpu *vcpu);

/*
 * pv_read_msg.c: PVPMU_HC_READ_MSG; pv_calls.c: host errno -> ABI status.
 * vmm_pv_msg_init() creates the waiters' lock and CLOCK_MONOTONIC condvar.
 */
int vmm_pv_msg_init(struct vmm_pv *p);
int vmm_pv_hc_read_msg(struct vmm_vcpu *vcpu, uint64_t gpa, void *opaque);
int vmm_pv_hc_block(struct vmm_vcpu *vcpu, uint64_t gpa, void *opaque);
int vmm_pv_status(int err);

/*
 * Does guest notification (n) raise the guest's notification vector? Every
 * overflow notification does, with or without a message (spec 3.3.7,
 * Table 3.2: PFM_FL_OVFL_NO_MSG omits only the message), and so does any
 * queued message (PFM_MSG_END); a throttle mask (no message) does not.
 */
static inline bool vmm_pv_notify_raises(const struct vpmu_notify *n)
{
	return n->owner == VPMU_OWNER_GUEST &&
	       (n->msg_type == PFM_MSG_OVFL || (n->flags & VPMU_NOTIFY_MSG));
}

/* Post notification interrupt on (vcpu) (any thread). */
void vmm_pv_raise_irq(struct vmm_vcpu *vcpu);

/*
 * Post a PMI of the architectural PMU model on (vcpu) (any
 * thread): (pmi) is an interrupt vector (16..255), injected like the
 * notification interrupt when the guest can take it, or VMM_PV_PMI_NMI
 * (KVM_NMI). One PMI is pending at most; a later one replaces it.
 */
#define VMM_PV_PMI_NMI 0x100U
/*
 * With KVM's in-kernel local APIC (Linux guests) the LVTPC register lives
 * in KVM: VMM_PV_PMI_LVTPC delivers the PMI as it says, on the vCPU thread
 * (vmm_irq_lvtpc_pmi).
 */
#define VMM_PV_PMI_LVTPC 0x200U
void vmm_pv_raise_pmi(struct vmm_vcpu *vcpu, unsigned int pmi);

/* Would a pending PMI wake (vcpu) from HLT now? */
bool vmm_pv_pmi_wakes(struct vmm_vcpu *vcpu);

/* Register the perfmon2 hypercalls (pv_calls.c). */
int vmm_pv_hc_init(struct vmm_vm *vm);

/* Sampling buffer mappings (smpl_memslot.c). */
int vmm_pv_smpl_map(struct vmm_vm *vm, int fd, void *base, uint64_t size,
		    uint64_t *gpa);
int vmm_pv_smpl_lookup(struct vmm_vm *vm, int fd, uint64_t *gpa,
		       uint64_t *size);
void vmm_pv_smpl_unmap(struct vmm_vm *vm, int fd);
/* Is (gpa) inside a mapped sampling buffer? */
bool vmm_pv_smpl_contains(struct vmm_vm *vm, uint64_t gpa);
/*
 * The guest wrote to a read-only sampling buffer at (gpa): raise a page
 * fault (present, write, user if CPL 3) with CR2 = (gpa) in the guest.
 */
void vmm_pv_smpl_write_fault(struct vmm_vcpu *vcpu, uint64_t gpa);

/*
 * Set or clear vCPU (cpu)'s bit of pvpmu_boot_info.block_vcpus (spec 3.1.9:
 * tell the guest kernel its thread there is blocked); vpmu ELF images only.
 */
void vmm_pv_mark_blocked(struct vmm_vm *vm, uint32_t cpu, bool blocked);

/* Wake every PVPMU_HC_READ_MSG waiter of (vm). */
void vmm_pv_wake_waiters(struct vmm_vm *vm);

#endif /* VMM_PV_H */
