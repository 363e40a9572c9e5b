/* SPDX-License-Identifier: MIT */
/*
 * ctl_server.h: a VM's control socket for host operators: vmm/ctl's
 * interface to the VMM's program (vmm_ctl_module) and to its tests.
 *
 * One control thread per running VM (vmm_vm_run starts and joins it)
 * serves the protocol of ctl_proto.h on <runtime>/<uuid>.sock and
 * keeps the registry entry <runtime>/<uuid>.json (vm_registry.h). It owns the
 * operator's host contexts: only it calls libvpmu for them, so client and
 * context state need no lock. libvpmu's notification callback (vmm/pv/vm_pmu.c)
 * routes host-owned notifications to vmm_control_notify() (set by
 * vmm_control_init, vmm_pv_set_host_notify), which only
 * wakes the thread (it runs with the domain lock held).
 */
#ifndef VMM_CTL_SERVER_H
#define VMM_CTL_SERVER_H

#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl_proto.h"
#include "vm_registry.h"
#include "vmm_pv.h"
#include <vpmu/vpmu.h>

struct vmm_config;

#define VMM_CTL_CLIENTS_MAX 16
#define VMM_CTL_CTX_MAX     64    /* host contexts per client */
#define VMM_CTL_SPILL_MAX   65536 /* samples kept per context between drains */
#define VMM_CTL_NVALS_MAX   64    /* (set, pmd) sample sizes tracked */
/* Host operators' share of a VM's PMU, which pv sets (vmm_pv.h). */
#define VMM_CTL_HOST_CONTEXTS VMM_PV_HOST_CONTEXTS
#define VMM_CTL_HOST_SMPL_MEM VMM_PV_HOST_SMPL_MEM
_Static_assert(VMM_CTL_CLIENTS_MAX *VMM_CTL_CTX_MAX == VMM_PV_HOST_CONTEXTS,
	       "every context the clients can hold fits the host share");

/* One sample copied out of a host sampling buffer. */
struct vmm_ctl_sample {
	uint16_t cpu, set, ovfl_pmd, nr_vals;
	uint16_t nr_chain; /* callers in vmm_ctl_hctx.chains */
	int32_t pid, tid;
	uint64_t tstamp, ip;
	uint64_t vals[VMM_CTL_SAMPLE_VALS];
	uint64_t period;    /* events the sample stands for */
	uint16_t nr_missed; /* and the periods after it, unsampled */
};

/* A host context of one client. */
struct vmm_ctl_hctx {
	int handle;        /* libvpmu handle, -1 when free */
	unsigned int vcpu; /* vCPU it was created for */
	void *buf;         /* default-format buffer, NULL if none */
	size_t buf_size;
	size_t consumed;    /* buffer offset copied out so far */
	uint64_t overflows; /* hdr_overflows seen (restarts done) */
	uint64_t throttled; /* nr_throttled seen */
	struct {
		uint16_t set, pmd, nvals;
	} nvals[VMM_CTL_NVALS_MAX]; /* sample body sizes, from write_pmcs */
	unsigned int nr_nvals;
	struct vmm_ctl_sample *spill; /* copied, not yet drained */
	unsigned int nr_spill, cap_spill;
	/* Callers per sample (chain_depth slots each, in spill
	 * order) when the client asked for call chains. */
	unsigned int chain_depth;
	uint64_t *chains;
	uint64_t lost; /* samples dropped: spill full, unknown size */
	/* The VM's snapshot pauses when this context was made. */
	uint64_t snap_pauses0, snap_pause_ns0;
};

/*
 * A session: one host context on each of several vCPUs, programmed alike
 * (session_open), read together (session_read). Its contexts are ordinary
 * host contexts of the client, named here by handle.
 */
struct vmm_ctl_session {
	bool used;
	unsigned int nr_vcpus;
	unsigned int vcpu[VMM_CTL_SESSION_VCPUS];
	int ctx[VMM_CTL_SESSION_VCPUS]; /* host context handle per vCPU */
	unsigned int nr_pmds;
	struct {
		uint16_t num, set;
	} pmd[VMM_CTL_REGS_MAX]; /* read by session_read, in this order */
	unsigned int nr_sets;
	uint16_t set_id[VMM_CTL_SETS_MAX]; /* their times are read too */
};

/* Replies not yet sent: bytes [off, len) of buf (ctl_conn.c). */
struct vmm_ctl_tx {
	unsigned char *buf;
	size_t off, len, cap;
};

/*
 * Connection limits. Above VMM_CTL_TX_HIGH bytes of unsent
 * replies a connection is not read until it takes some; a request frame
 * (and a new connection's first one) must arrive whole within the frame
 * timeout; a connection held back by its queue must read within the stall
 * timeout. Either timeout closes the connection with a logged reason.
 */
#define VMM_CTL_TX_HIGH          (256U << 10)
#define VMM_CTL_FRAME_TIMEOUT_NS (5ULL * 1000000000ULL)
#define VMM_CTL_STALL_TIMEOUT_NS (30ULL * 1000000000ULL)

struct vmm_ctl_client {
	int fd; /* -1 when free */
	struct vmm_ctl_rx rx;
	struct vmm_ctl_tx tx;
	struct vmm_ctl_tx pk;    /* a packed drain's frame, queued
				    after its reply (ctl_smpl_cmds.c) */
	bool served;             /* a request was answered */
	uint64_t frame_start_ns; /* unfinished frame (or none yet) since */
	uint64_t tx_moved_ns;    /* replies last queued from empty or sent */
	struct vmm_ctl_hctx ctx[VMM_CTL_CTX_MAX];
	struct vmm_ctl_session sessions[VMM_CTL_SESSIONS_MAX];
};

struct vmm_ctl_vcpu_sync; /* ctl_priv.h */

struct vmm_control {
	struct vmm_vm *vm;
	char dir[PATH_MAX];
	struct vmm_reg_entry entry;
	uid_t euid; /* the VMM's, read before the sandbox forbids geteuid */
	int listen_fd, wake_fd;
	pthread_t thread;
	bool has_thread, has_entry;
	atomic_bool stop;
	struct vmm_ctl_client clients[VMM_CTL_CLIENTS_MAX];

	/* Completions of vCPU accounting requests (ctl_vcpu_sync.c). */
	struct vmm_ctl_vcpu_sync *sync; /* one per vCPU */
	unsigned int nr_sync;
	uint64_t sync_seq;     /* last request number (control thread) */
	uint64_t sync_wait_ns; /* longest wait for a completion */
	pthread_mutex_t sync_lock;
	pthread_cond_t sync_cond; /* CLOCK_MONOTONIC */
	bool has_sync;

	/* Shown by `info`: the cost of the control plane. */
	uint64_t nr_frames;  /* request frames received, all clients */
	uint64_t nr_wakeups; /* returns from the control thread's poll */
	atomic_int tid;      /* the control thread's id, named "vpmu-ctl" */

	/* Connection limits (VMM_CTL_*_TIMEOUT_NS; tests shorten them). */
	uint64_t frame_timeout_ns, stall_timeout_ns;
	atomic_uint_fast64_t nr_dropped; /* connections closed by a limit */

	/* `snapshot` pauses so far and their total length
	 * (control thread only); smpl_drain tells each context its share. */
	uint64_t snap_pauses, snap_pause_ns;
};

/*
 * The module the assembler registers on a VM after vmm_pv_module
 * (vmm_vm_create): the control server's life follows the VM's, and
 * operators' reads complete at each vCPU's accounting.
 */
extern const struct vmm_module vmm_ctl_module;

/* The control server of (vm), NULL before vmm_control_init(). */
static inline struct vmm_control *vmm_ctl(const struct vmm_vm *vm)
{
	return (struct vmm_control *)vmm_vm_module_priv(vm, &vmm_ctl_module);
}

/*
 * Allocate (vm)'s control state from (cfg) (PMU model). Called by
 * vmm_ctl_module's vm_init hook; nothing is created on disk yet. 0 or -ENOMEM.
 */
int vmm_control_init(struct vmm_vm *vm, const struct vmm_config *cfg);

/* Remember the guest image (path) for operators (vmm_vm_load()). */
void vmm_control_set_image(struct vmm_vm *vm, const char *path);

/*
 * Create the runtime directory, the socket and the registry entry, and
 * start the control thread. On failure the VM runs without operator
 * access: one warning on stderr says why, and -errno is returned.
 */
int vmm_control_start(struct vmm_vm *vm);

/*
 * Stop and join the control thread: every client is disconnected and its
 * host contexts destroyed; the socket and the entry are removed. Must run
 * before the PMU domain is destroyed. Safe if never started.
 */
void vmm_control_stop(struct vmm_vm *vm);

/* Free what vmm_control_init() allocated (stops first). NULL-safe. */
void vmm_control_free(struct vmm_vm *vm);

/*
 * libvpmu notification (n) for a host-owned context: wake the control
 * thread to drain and restart. Runs with the domain lock held: it never
 * calls libvpmu. Any thread.
 */
void vmm_control_notify(struct vmm_vm *vm, const struct vpmu_notify *n);

/*
 * A vCPU thread has just accounted (vcpu)'s run time (after KVM_RUN), or
 * is about to block with it accounted: complete a pending request of
 * vmm_ctl_sync(). Cheap when none is pending; never calls libvpmu.
 */
void vmm_control_vcpu_accounted(struct vmm_vcpu *vcpu);

/*
 * ctl_cmd_table.c: run the checked request (req) of (cmd) for client (c)
 * through the command's handler and build the reply (ok or error).
 */
struct json_object *vmm_ctl_handle(struct vmm_control *ctl,
				   struct vmm_ctl_client *c,
				   const struct vmm_ctl_cmd *cmd,
				   struct json_object *req, int64_t id);

/*
 * ctl_smpl_cmds.c: the smpl_drain command: copy new samples of (hc) and
 * answer up to "max" of those kept into (rep), or with "packed" into
 * (c)->pk, the frame the server queues after the reply. 0 or -errno.
 */
int vmm_ctl_drain(struct vmm_control *ctl, struct vmm_ctl_client *c,
		  struct vmm_ctl_hctx *hc, struct json_object *req,
		  struct json_object *rep);

/* ctl_smpl_cmds.c: copy new samples of every host context; restart full ones.
 */
void vmm_ctl_collect_all(struct vmm_control *ctl);

/* ctl_pmu_cmds.c: destroy every session and host context of (c). */
void vmm_ctl_client_release(struct vmm_control *ctl, struct vmm_ctl_client *c);

#endif /* VMM_CTL_SERVER_H */
