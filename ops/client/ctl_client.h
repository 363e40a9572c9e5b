/* SPDX-License-Identifier: MIT */
/*
 * ctl_client.h: the host operator's side of the control socket: finding the
 * running VMs in the runtime directory, talking to one, and an operator
 * session that puts one host context on every vCPU of the chosen VMs
 * (used by `vpmu stat`, `record` and `top`).
 */
#ifndef OPS_CTL_CLIENT_H
#define OPS_CTL_CLIENT_H

#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_parse.h"
#include "ctl_proto.h"
#include "record_file.h"
#include "vm_registry.h"
#include "vpmu_common.h"

#define OPS_CLIENT_TIMEOUT_MS 5000

struct ops_client {
	int fd;
	int64_t next_id;
	int timeout_ms; /* per call; 0 (connect's): OPS_CLIENT_TIMEOUT_MS */
	char err[256];  /* message of the last failure */
};

/* Connect to the socket (path). 0, or -errno with c->err set. */
int ops_client_connect(struct ops_client *c, const char *path);

void ops_client_close(struct ops_client *c);

/*
 * Send request (req) (the function adds v and id, and takes ownership) and
 * wait for its reply. Returns 0 with (*rep) (caller puts it; may be NULL
 * to drop it); -errno from the VMM's error reply or the connection, with
 * c->err set. -ECONNRESET/-EPIPE mean the VM is gone.
 */
int ops_client_call(struct ops_client *c, struct json_object *req,
		    struct json_object **rep);

/*
 * ops_client_call() in two halves, for callers that wait on many VMs at
 * once: send (req) (owned, as above) within (timeout_ms), its id into
 * (*id); then read the reply to request (id) within (timeout_ms) (call it
 * once poll() says the socket is readable). A reply to an earlier request
 * whose caller gave up on it (-ETIMEDOUT) is dropped on the way. Both
 * return 0 or -errno with c->err set, as ops_client_call().
 */
int ops_client_send(struct ops_client *c, struct json_object *req,
		    int timeout_ms, int64_t *id);
int ops_client_reply(struct ops_client *c, int64_t id, int timeout_ms,
		     struct json_object **rep);

/* Build {"cmd": cmd} for ops_client_call(). */
struct json_object *ops_client_req(const char *cmd);

/*
 * List the VMs registered in (dir), sorted by name: live entries in a
 * malloc'd array (*out) of (*nr). Stale entries (pid gone, socket refusing)
 * are removed, each with a note on (notes) if not NULL. Returns 0 or
 * -errno (a missing directory is 0 entries; a directory or an entry this
 * user may not read is -EACCES, not an empty list).
 */
int ops_client_discover(const char *dir, struct vmm_reg_entry **out,
			unsigned int *nr, FILE *notes);

/*
 * ops_client_discover() over this user's runtime directory (its path into
 * (dir)) and, with (every_user) for root without $VPMU_RUNTIME_DIR, every
 * /run/user/UID/vpmu as well: root then sees the VMs of every user.
 */
int ops_client_discover_all(char *dir, size_t len, struct vmm_reg_entry **out,
			    unsigned int *nr, FILE *notes, bool every_user);

/*
 * Is (e) chosen by (sel): its name, its uuid, a uuid prefix (>= 4
 * characters) or the pid of its VMM (digits only)?
 */
bool ops_client_match(const struct vmm_reg_entry *e, const char *sel);

/* ---- Operator sessions (op_session.c)
 * ----------------------------------------- */

#define OPS_EVENTS_MAX VMM_CTL_REGS_MAX /* each event is one PMC */
#define OPS_COUNTERS   8                /* counting PMCs of the logical PMU */

struct ops_event {
	char name[64]; /* as the user gave it, modifiers included */
	uint16_t code;
	bool is_time;       /* counts ns or TSC cycles */
	uint64_t evsel;     /* PMC value: code, enable, rings of u/k */
	bool optional;      /* counting: dropped if the host cannot count it */
	unsigned int group; /* {a,b}: members share it and one set; 0: none */
	bool hole;          /* no event: pads a set so a group fits the next */
};

/*
 * A sampling vCPU's throttle as its last smpl_drain said
 * (cumulative since session_open; run_ns, cost_ns and cpu_ns, its
 * thread's CPU time, since the vCPU started; cpu_ns 0 from a VMM that
 * does not report it).
 */
struct ops_thr {
	uint64_t samples, throttled, missed, run_ns, cost_ns, run0, cost0;
	uint64_t cpu_ns, cpu0;
	uint32_t scale; /* period scale x 1024 (frequency mode) */
	bool seen;
};

struct ops_vm {
	struct vmm_reg_entry e;
	struct ops_thr thr[VMM_CTL_SESSION_VCPUS];
	struct ops_client cl;
	bool gone;
	/* Snapshot pauses since the session opened (smpl_drain). */
	uint64_t snap_pauses, snap_pause_ns;
	int session;                    /* the VM's session, -1 if none */
	int ctx[VMM_CTL_SESSION_VCPUS]; /* host context per vCPU, -1 if none */
	bool drain_json;                /* its VMM refused packed drains */
	int64_t read_id;                /* the session_read in flight */
};

struct ops_session {
	const char *prog;             /* "vpmu stat"... for messages */
	const struct ops_select *sel; /* of ops_open() */
	struct ops_vm *vms;
	unsigned int nr_vms, nr_live;
	struct ops_event ev[OPS_EVENTS_MAX];
	unsigned int nr_ev, nr_sets;
	/* Optional events the VMMs refused (not available on this host),
	 * dropped from ev[] by ops_start_counting(): perf's <not supported>. */
	char refused[OPS_EVENTS_MAX][64];
	unsigned int nr_refused;
	unsigned int nr_groups; /* {...} groups parsed so far */
	unsigned int callchain; /* sampling: callers per sample (record -g) */
	unsigned int max_overhead; /* budget %, 0: the VM's */
	bool freq_mode;            /* raise the period (-F) */
	unsigned char *pk_buf;     /* the last packed drain frame */
	size_t pk_cap;
};

/*
 * Parse an event list "a,b:u,0x02e0,{c,d}:u" into (s) (appending): specs
 * of event_spec.h (catalogue names or codes 0xNNNN, with modifiers u, k,
 * h, G, umask=N), groups in braces (ev_list_split()). A group's members
 * are placed in one event set of OPS_COUNTERS, so they always count at the
 * same time: when it would straddle two sets, holes pad the first. A group
 * larger than a set is refused. Returns 0 or -EINVAL (one message
 * printed).
 */
int ops_parse_events(struct ops_session *s, const char *list);

/* VM and vCPU selection, shared by stat, record and top (see below). */
struct ops_select;

/*
 * Connect to the VMs chosen by (sel) (see struct ops_select). Returns 0,
 * or -ENOENT with a message when none matches or is running.
 */
int ops_open(struct ops_session *s, const struct ops_select *sel);

/*
 * Counting: one context per vCPU, the events in ceil(nr_ev / 8) event sets
 * switched every (switch_ns) of run time when there are more than 8,
 * loaded and started: one session_open request per VM. A VM that fails is
 * reported and dropped. An (optional) event the first VM's host cannot
 * count is dropped instead, its name kept in (s->refused), and the
 * request made again without it. 0 or -errno when no VM is left.
 */
int ops_start_counting(struct ops_session *s, uint64_t switch_ns);

/* One vCPU's counts: raw per event, per-set act time, enabled time. */
struct ops_counts {
	uint64_t raw[OPS_EVENTS_MAX];
	uint64_t running[OPS_EVENTS_MAX]; /* ns the event's set was active */
	uint64_t enabled;                 /* ns monitoring was on */
	/* Samples the throttle dropped on the vCPU (this session's and the
	 * guest's). */
	uint64_t throttled;
	bool stale;      /* the VMM could not bring them up to date in time */
	uint64_t age_ns; /* when stale: how old they are */
	uint64_t pmis;   /* PMIs injected into the vCPU since it began */
	/* The effective set switch interval (0: no time-based switching) and
	 * the switches the overhead budget delayed. */
	uint64_t switch_ns, switch_stretched;
};

/*
 * Read every vCPU of VM (vm) in one session_read request: (out) has
 * e.nr_vcpus entries, indexed by vCPU. 0 or -errno (the VM is then
 * reported; -ECONNRESET and the like mark it gone).
 */
int ops_read_vm(struct ops_session *s, unsigned int vm, struct ops_counts *out);

/*
 * ops_read_vm() in two halves, for reading many VMs at once: send VM
 * (vm)'s session_read, then (its socket readable) read the reply within
 * (timeout_ms). A reply that misses it returns -ETIMEDOUT and leaves the
 * VM attached (its reply, when it comes, is dropped by the next request);
 * other failures are reported as ops_read_vm()'s.
 */
int ops_read_send(struct ops_session *s, unsigned int vm, int timeout_ms);
int ops_read_reply(struct ops_session *s, unsigned int vm, int timeout_ms,
		   struct ops_counts *out);

/*
 * Sampling: event ev[0] with (period), the other events recorded in every
 * sample, a default-format buffer of (buf_size) bytes per vCPU; with
 * (s->callchain) > 0 each sample carries up to that many guest callers.
 */
int ops_start_sampling(struct ops_session *s, uint64_t period,
		       uint64_t buf_size);

/* A sample as drained. */
struct ops_sample {
	unsigned int vm, vcpu, set, ovfl_pmd;
	int32_t pid, tid; /* the guest's thread (0: unknown, or idle) */
	uint64_t tstamp, ip;
	unsigned int nr_vals;
	uint64_t vals[VMM_CTL_SAMPLE_VALS];
	unsigned int nr_chain; /* guest callers, innermost first */
	uint64_t chain[VMM_CTL_CHAIN_MAX];
	uint64_t missed; /* periods after it, unsampled */
	uint64_t period; /* its period (0: unknown) */
};

typedef void (*ops_sample_fn_t)(void *opaque, const struct ops_sample *smp);

/*
 * Drain every vCPU of VM (vm), calling (fn) per sample; (*lost) gets the
 * VMM's lost-sample total. 0 or -errno (the VM is then marked gone).
 * Samples come in the packed binary form of smpl_drain (a VMM
 * that refuses it is drained in JSON from then on); the environment
 * variable VPMU_DRAIN_JSON=1 forces the JSON form (a benchmark and debug
 * switch: bench_drain_cost compares the two). Both hand (fn) the same
 * samples.
 */
int ops_drain(struct ops_session *s, unsigned int vm, ops_sample_fn_t fn,
	      void *opaque, uint64_t *lost);

/*
 * (err), a VMM error text, with every "PMC<n> (set <s>)" or "PMC<n>" of
 * (s)'s events replaced by "event 'NAME'" (the name the user gave; the set
 * added when the events are multiplexed), into (out).
 */
struct ops_task_stats {
	uint64_t gen, taken, refused, dropped;
};

/* A process record of the guest (guest_tasks, abi.h PVPMU_HC_TASK). */
typedef int (*ops_task_fn_t)(void *opaque, const struct rec_task *t);

/*
 * Fetch VM (vm)'s process records newer than (*since), calling (fn) for
 * each in order and moving (*since) on; the stream's counters in (st).
 * 0, -ENOSYS (a VMM without the command), or -errno (the VM is then
 * marked gone).
 */
int ops_guest_tasks(struct ops_session *s, unsigned int vm, uint64_t *since,
		    ops_task_fn_t fn, void *opaque, struct ops_task_stats *st);

void ops_name_pmcs(const struct ops_session *s, const char *err, char *out,
		   size_t len);

/* Mark (vm) gone with one clear message on stderr (once). */
void ops_vm_gone(struct ops_session *s, unsigned int vm, const char *why);

/* Notice VMs whose connection closed (non-blocking): ops_vm_gone(). */
void ops_check_alive(struct ops_session *s);

/*
 * Sleeping without polling (op_wait.c), for stat, record and top.
 * ops_wait_begin() blocks the signals (sigs) (0-terminated: SIGINT...) and
 * makes room for (nr_fds) descriptors of the command's own, p[0..nr_fds),
 * which the caller fills (fd -1: unused); ops_wait_end() restores the
 * signal mask. ops_wait() sleeps in ppoll, those signals unblocked only
 * there, until (until) (vpmu_monotonic_ns(); UINT64_MAX: no deadline), a
 * signal, one of the command's descriptors being ready (its revents set)
 * or a VM's socket becoming readable or hung up (the VMM never writes
 * between requests: ops_check_alive() then marks the VM gone). It returns
 * how many of the command's descriptors are ready (0: deadline, signal or
 * a VM's end). ops_wait_begin() returns 0 or -ENOMEM.
 */
struct ops_wait {
	struct pollfd *p; /* nr_fds of the command's, then one per VM */
	unsigned int nr_fds;
	sigset_t sleep_mask; /* the mask before ops_wait_begin() */
};

int ops_wait_begin(struct ops_wait *w, const struct ops_session *s,
		   unsigned int nr_fds, const int *sigs);
int ops_wait(struct ops_wait *w, struct ops_session *s, uint64_t until);
void ops_wait_end(struct ops_wait *w);

/*
 * Achieved vs requested sample rate (sample_rate.c), shared by
 * `vpmu record` (the whole recording) and `vpmu top` (each refresh).
 */
struct ops_rate_win {       /* a VM's counts over a window, all sampled vCPUs */
	uint64_t samples;   /* samples the command received */
	uint64_t throttled; /* dropped by the VM's limits */
	uint64_t missed;    /* periods that elapsed unsampled */
	uint64_t run_ns;    /* the vCPUs' threads' CPU time, summed */
	uint32_t scale;     /* the largest period scale x 1024 (-F) */
	unsigned int nr_vcpus; /* vCPUs whose drains reported counts */
};

enum ops_rate_why {
	OPS_RATE_OK,          /* >= 90 % of the request, or none known */
	OPS_RATE_NONE,        /* nothing to judge: no vCPU, no time */
	OPS_RATE_THROTTLED,   /* samples dropped or the period raised */
	OPS_RATE_NOT_RUNNING, /* vCPUs ran < 90 % of the time: the cause */
	OPS_RATE_HOST,        /* else: kicks late, the host overloaded */
};

struct ops_rate {
	double want_hz, got_hz; /* per sampled vCPU and second of wall time */
	double ran;             /* share of the wall time the vCPUs ran, <= 1 */
	enum ops_rate_why why;
};

/*
 * The rate per vCPU that -F (freq) or -c (period) asks for when sampling
 * event (code) on a VM with (tsc_khz) (0: unknown): freq, or a time
 * event's period converted; 0 when it cannot be known (a count event).
 */
double ops_rate_requested(uint64_t freq, uint64_t period, uint16_t code,
			  uint64_t tsc_khz);

/*
 * VM (v)'s throttle counts (ops_thr, as its last drains said) and
 * (samples) into (out): since the session opened when (base) is NULL,
 * else what grew since (*base), which is then updated.
 */
void ops_rate_window(const struct ops_vm *v, uint64_t samples,
		     struct ops_rate_win *base, struct ops_rate_win *out);

/* Judge window (w) of (wall_s) seconds against (want_hz): pure. */
void ops_rate_judge(const struct ops_rate_win *w, double wall_s, double want_hz,
		    struct ops_rate *out);

/* The reason of a shortfall as one phrase in (buf), or NULL if none. */
const char *ops_rate_reason(const struct ops_rate_win *w,
			    const struct ops_rate *r, char *buf, size_t len);

/*
 * "<lead>N samples/s per vCPU achieved of M requested (P %); vCPUs ran
 * R % of the time; throttled T, missed M", and below 90 % a second line
 * "<warn_lead>below 90 % of the requested rate: <reason>". Nothing for
 * OPS_RATE_NONE.
 */
void ops_rate_print(FILE *f, const char *lead, const char *warn_lead,
		    const struct ops_rate_win *w, const struct ops_rate *r);

/* Disconnect from every VM (the VMMs destroy the contexts). */
void ops_close(struct ops_session *s);

/*
 * VM and vCPU selection, like perf's -a/-p/-C: OPS_SELECT_ROWS are the
 * option rows of stat, record and top; the command's options struct must
 * begin with a struct ops_select (the handlers get it as their ctx).
 *   -p/--pid VM, -m/--vm VM  a VM by name, uuid, uuid prefix or VMM pid;
 *                            repeatable, or a comma-separated list
 *   -a/--all                 every VM (the default without -p); for root
 *                            also the VMs of every other user
 *   -C/--cpu VCPUS           only these vCPUs, e.g. 0,2-3
 * Without -a, root sees only its own runtime directory (/run/vpmu).
 */
struct ops_select {
	const char *names[64];
	unsigned int nr;
	bool all;
	bool has_vcpus;
	uint64_t vcpus; /* bit per vCPU when (has_vcpus) */
};

int ops_select_vm(const struct cli_cmd *cmd, void *sel, const char *value);
int ops_select_all(const struct cli_cmd *cmd, void *sel, const char *value);
int ops_select_vcpus(const struct cli_cmd *cmd, void *sel, const char *value);

#define OPS_SELECT_ROWS                                                        \
	CLI_FN('a', "all", NULL, ops_select_all,                               \
	       "every VM (default; as root also other users')"),               \
		CLI_FN('p', "pid", "VM", ops_select_vm,                        \
		       "the VM named by name, uuid, uuid prefix or\n"          \
		       "VMM pid (repeatable, or VM,VM...)"),                   \
		CLI_FN('m', "vm", "VM", ops_select_vm, "same as -p"),          \
		CLI_FN('C', "cpu", "VCPUS", ops_select_vcpus,                  \
		       "only these vCPUs, e.g. 0,2-3")

/* Is vCPU (cpu) chosen by (sel)? */
bool ops_vcpu_chosen(const struct ops_select *sel, unsigned int cpu);

#endif /* OPS_CTL_CLIENT_H */
