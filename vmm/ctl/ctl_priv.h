/* SPDX-License-Identifier: MIT */
/*
 * ctl_priv.h: what the files of the control server share (vmm/ctl only):
 * one request in flight (struct vmm_ctl_call), the handler table that
 * pairs every command of the protocol with its schema, the command
 * handlers, sessions, and bringing vCPUs' accounting up to date.
 */
#ifndef VMM_CTL_PRIV_H
#define VMM_CTL_PRIV_H

#include "ctl_server.h"

/* One request being served on the control thread. */
struct vmm_ctl_call {
	struct vmm_control *ctl;
	struct vmm_ctl_client *c;
	struct json_object *req; /* checked against the command's schema */
	struct json_object *rep; /* the ok reply, to fill */
	struct vmm_ctl_hctx *hc; /* the request's "ctx", for context commands */
	char err[256];           /* error text; empty: strerror of the return */
};

/* Run a checked request: 0 (x->rep filled) or -errno (x->err may say why). */
typedef int (*vmm_ctl_handler_fn_t)(struct vmm_ctl_call *x);

/*
 * One row of the server's command table, indexed by enum vmm_ctl_cmd_id:
 * the command's schema (&vmm_ctl_cmds[id]) and the function that runs it.
 */
struct vmm_ctl_handler {
	const struct vmm_ctl_cmd *cmd;
	vmm_ctl_handler_fn_t fn;
	bool takes_ctx; /* resolve the request's "ctx" into x->hc first */
};

/* The row of command (id), or NULL when (id) is not a command. */
const struct vmm_ctl_handler *vmm_ctl_handler_of(unsigned int id);

/* ctl_pmu_cmds.c: the commands on one host context, and identity ones. */
int vmm_ctl_do_hello(struct vmm_ctl_call *x);
int vmm_ctl_do_info(struct vmm_ctl_call *x);
int vmm_ctl_do_resolve(struct vmm_ctl_call *x);
int vmm_ctl_do_create(struct vmm_ctl_call *x);
int vmm_ctl_do_destroy(struct vmm_ctl_call *x);
int vmm_ctl_do_write_pmcs(struct vmm_ctl_call *x);
int vmm_ctl_do_write_pmds(struct vmm_ctl_call *x);
int vmm_ctl_do_create_evtsets(struct vmm_ctl_call *x);
int vmm_ctl_do_load(struct vmm_ctl_call *x);
int vmm_ctl_do_unload(struct vmm_ctl_call *x);
int vmm_ctl_do_start(struct vmm_ctl_call *x);
int vmm_ctl_do_stop(struct vmm_ctl_call *x);
int vmm_ctl_do_read_pmds(struct vmm_ctl_call *x);
int vmm_ctl_do_getinfo_evtsets(struct vmm_ctl_call *x);
int vmm_ctl_do_smpl_drain(struct vmm_ctl_call *x);

/* ctl_session_cmds.c: one request per VM for every vCPU. */
int vmm_ctl_do_session_open(struct vmm_ctl_call *x);
int vmm_ctl_do_session_read(struct vmm_ctl_call *x);
int vmm_ctl_do_session_close(struct vmm_ctl_call *x);

/* ctl_snapshot_cmd.c: snapshot the VM into a file. */
int vmm_ctl_do_snapshot(struct vmm_ctl_call *x);

/* ctl_tasks_cmd.c: the guest's process names and mappings (pv_tasks.c). */
int vmm_ctl_do_guest_tasks(struct vmm_ctl_call *x);

/*
 * The vCPUs a session_open request (req) names in "vcpus" (checked: each
 * below (nr_vcpus), none twice), or all (nr_vcpus) when it names none, into
 * (vcpus) (VMM_CTL_SESSION_VCPUS entries) and (*n). 0, or -EINVAL / -E2BIG
 * with a message in (err).
 */
int vmm_ctl_session_vcpus(struct json_object *req, unsigned int nr_vcpus,
			  unsigned int *vcpus, unsigned int *n, char *err,
			  size_t errlen);

/* Forget the sessions of (c) (their contexts go with the client's). */
void vmm_ctl_sessions_release(struct vmm_ctl_client *c);

/*
 * ctl_pmu_cmds.c: create a host context on vCPU (vcpu) with a default-
 * format buffer of (buf_size) bytes (0: none) for (x->c); returns 0 with
 * (*out), or -errno with x->err set.
 */
int vmm_ctl_hctx_create(struct vmm_ctl_call *x, unsigned int vcpu,
			uint64_t buf_size, struct vmm_ctl_hctx **out);

/* The host context (handle) of (c), or NULL; -1 finds a free slot. */
struct vmm_ctl_hctx *vmm_ctl_hctx_find(struct vmm_ctl_client *c, int handle);

/* Destroy host context (hc) and free its slot. */
void vmm_ctl_hctx_free(struct vmm_control *ctl, struct vmm_ctl_hctx *hc);

/*
 * ctl_smpl_cmds.c: samples of (hc) carry up to (depth) guest
 * callers (0: none). 0, -EINVAL (no sampling buffer) or -ENOMEM, with
 * x->err set. _off undoes it (hctx_free calls it).
 */
/*
 * Add what the throttle did to host context (handle) on vCPU
 * (vcpu) to (o): "samples", "throttled", "missed", "scale", "gap_ns",
 * "switch_ns" (the effective set switch interval) and "switch_stretched"
 * (switches the budget delayed), and the vCPU's "run_ns", "cost_ns" and
 * "cpu_ns" (its thread's CPU time).
 */
void vmm_ctl_throttle_json(struct vmm_ctl_call *x, int handle,
			   unsigned int vcpu, struct json_object *o);

int vmm_ctl_hctx_chains(struct vmm_ctl_call *x, struct vmm_ctl_hctx *hc,
			unsigned int depth);
void vmm_ctl_hctx_chains_off(struct vmm_control *ctl, struct vmm_ctl_hctx *hc);

/*
 * Copy the JSON array (arr) of PMC (PMD) descriptions, checked by the
 * schema (at most VMM_CTL_REGS_MAX), into (regs). Return how many.
 */
size_t vmm_ctl_fill_pmcs(struct json_object *arr, struct pfarg_pmc *regs);
size_t vmm_ctl_fill_pmds(struct json_object *arr, struct pfarg_pmd *regs);
size_t vmm_ctl_fill_sets(struct json_object *arr, struct pfarg_setdesc *sets);

/*
 * Write the (n) PMCs (regs) to (hc), refusing KVM statistics, remembering
 * sample sizes. 0 or -errno with x->err naming the failing register.
 */
int vmm_ctl_write_pmcs(struct vmm_ctl_call *x, struct vmm_ctl_hctx *hc,
		       struct pfarg_pmc *regs, size_t n);

/* ---- one connection's buffers and clocks (ctl_conn.c) ---------------- */

/* Bytes of replies queued on (c), not yet sent. */
size_t vmm_ctl_tx_pending(const struct vmm_ctl_client *c);

/* Append (msg) as one frame to (c)'s queue. 0, -EMSGSIZE or -ENOMEM. */
int vmm_ctl_queue(struct vmm_ctl_client *c, struct json_object *msg,
		  uint64_t now);

/*
 * Append the packed frame a smpl_drain left in (c)->pk (if any)
 * after its reply, and empty it. 0 or -ENOMEM.
 */
int vmm_ctl_queue_packed(struct vmm_ctl_client *c, uint64_t now);

/* Send what the socket takes now, never waiting. 0 or -errno (close). */
int vmm_ctl_flush(struct vmm_ctl_client *c, uint64_t now);
void vmm_ctl_tx_free(struct vmm_ctl_client *c);

/* May the server read and serve (c)'s requests (queue below the mark)? */
bool vmm_ctl_conn_readable(const struct vmm_ctl_client *c);

/* After reading or serving: start or stop the incomplete-frame clock. */
void vmm_ctl_frame_clock(struct vmm_ctl_client *c, uint64_t now);

/* When (c) expires (CLOCK_MONOTONIC ns), UINT64_MAX if never. */
uint64_t vmm_ctl_conn_deadline(const struct vmm_control *ctl,
			       const struct vmm_ctl_client *c);

/* Why (c) must be closed at (now), or NULL. */
const char *vmm_ctl_conn_expired(const struct vmm_control *ctl,
				 const struct vmm_ctl_client *c, uint64_t now);

/* ---- vCPU accounting (ctl_vcpu_sync.c) ------------------------------- */

/* Request numbers of one vCPU: (want) posted, (done) completed. */
struct vmm_ctl_vcpu_sync {
	_Alignas(64) _Atomic uint64_t want;
	_Atomic uint64_t done;
	_Atomic uint64_t accounted_ns; /* CLOCK_MONOTONIC of the last one */
};

/* Default bound of vmm_ctl_sync()'s wait; VPMU_TEST_SYNC_WAIT_NS overrides. */
#define VMM_CTL_SYNC_WAIT_NS 50000000ULL

/* Freshness of one vCPU's counts, from vmm_ctl_sync(). */
struct vmm_ctl_fresh {
	bool stale;      /* it did not account its run time in time */
	uint64_t age_ns; /* when stale: time since it last accounted */
};

/*
 * Kick vCPU (vcpu) out of KVM_RUN without waiting, so that it re-arms its
 * deadline timer for a context just started or restarted.
 */
void vmm_ctl_kick(struct vmm_control *ctl, unsigned int vcpu);

/*
 * Bring the accounting of the (n) vCPUs (vcpus) up to now: post a request
 * to each running one, kick it and wait (at most ctl->sync_wait_ns for all
 * together) for the completion its thread signals once it has accounted
 * (vmm_control_vcpu_accounted). A halted or blocked vCPU accounted at its
 * exit and is not kicked. (fresh), if not NULL, gets one entry per vCPU.
 */
void vmm_ctl_sync(struct vmm_control *ctl, const unsigned int *vcpus,
		  unsigned int n, struct vmm_ctl_fresh *fresh);

/* Set up / free the completion state of (ctl) for (nr_vcpus). */
int vmm_ctl_sync_init(struct vmm_control *ctl, unsigned int nr_vcpus);
void vmm_ctl_sync_free(struct vmm_control *ctl);

#endif /* VMM_CTL_PRIV_H */
