/* SPDX-License-Identifier: MIT */
/*
 * serve_priv.h: what the files of ops/serve share: the OpenMetrics encoder
 * (om_encode.c), the counter accumulator (counters.c), the collector thread
 * (collect.c), the profile requests (profile.c) and the HTTP front end
 * (http.c). Profiles are built with ops/pprof (pprof.h).
 */
#ifndef OPS_SERVE_PRIV_H
#define OPS_SERVE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl_client.h"
#include "elf_symbols.h"
#include "pprof.h"

/* ---- Growing text buffer (om_encode.c) ------------------------------- */

struct om_buf {
	char *s;
	size_t len, cap;
	int err; /* -ENOMEM once an append failed; the text is then cut */
};

void om_buf_printf(struct om_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void om_buf_free(struct om_buf *b);

/* ---- OpenMetrics / Prometheus text exposition (om_encode.c) ---------- */

enum om_format {
	OM_TEXT_004,      /* text/plain; version=0.0.4 */
	OM_OPENMETRICS_1, /* application/openmetrics-text; version=1.0.0 */
};

/*
 * The format a scraper's Accept header (may be NULL) prefers, by its q
 * values: OpenMetrics when it accepts application/openmetrics-text at
 * least as much as text/plain, else text 0.0.4.
 */
enum om_format om_negotiate(const char *accept);

/* The Content-Type of (f). */
const char *om_content_type(enum om_format f);

struct om_label {
	const char *name, *value;
};

/*
 * A metric family header: "# HELP" and "# TYPE" for (name) (without
 * "_total": the encoder adds it to counter samples). (type) is "counter"
 * or "gauge".
 */
void om_family(struct om_buf *b, enum om_format f, const char *name,
	       const char *type, const char *help);

/*
 * One sample "(name)(suffix){labels} value": counters pass "_total" (or
 * "_created" in OpenMetrics), gauges NULL. Label values are escaped
 * (backslash, double quote, newline) and made valid UTF-8 (om_escape).
 */
void om_sample_u64(struct om_buf *b, const char *name, const char *suffix,
		   const struct om_label *labels, unsigned int nr,
		   uint64_t value);
void om_sample_f64(struct om_buf *b, const char *name, const char *suffix,
		   const struct om_label *labels, unsigned int nr,
		   double value);

/* End of the exposition: "# EOF" for OpenMetrics, nothing for text. */
void om_end(struct om_buf *b, enum om_format f);

/*
 * Append (v) with \\, \" and \n escaped (label values), as valid UTF-8:
 * bytes that are not are replaced by U+FFFD (vmm_ctl_utf8_clean).
 */
void om_escape(struct om_buf *b, const char *v);

/* ---- Monotonic counters across sessions and set switches (counters.c) */

/*
 * One published counter: (bank) holds what ended sessions counted, (pub)
 * the last value published. A session's count is an estimate when event
 * sets are multiplexed (raw x enabled / running) and may go down between
 * reads; what is published never does.
 */
struct serve_counter {
	uint64_t bank, cur, pub;
};

/* The estimate of a multiplexed count: raw scaled by enabled / running. */
uint64_t serve_scale(uint64_t raw, uint64_t enabled, uint64_t running);

/* A read of the current session: (cur) = (value); returns the new pub. */
uint64_t serve_counter_update(struct serve_counter *c, uint64_t value);

/* The current session ends: what it counted goes to the bank. */
void serve_counter_bank(struct serve_counter *c);

/* ---- The daemon ------------------------------------------------------- */

#define SERVE_PROFILE_MAX_S     60 /* longest /debug/pprof/profile */
#define SERVE_PROFILE_DEFAULT_S 30 /* as Go's net/http/pprof */
/*
 * Profile requests admitted at once: one is taken, the others wait their
 * turn in order of arrival (a request whose client hangs up leaves at
 * once, taken or waiting); more get 429.
 */
#define SERVE_PROFILES_MAX 8
/*
 * HTTP connections: at most SERVE_CONNS in all and SERVE_CONNS_PER_IP from
 * one client address (scrapers hold one each, keep-alive), so one address
 * never holds them all; a request head (TLS handshake, request line and
 * headers) must be complete SERVE_HEAD_S after the connection opened or
 * the previous request was answered (the idle timeout, SERVE_IDLE_S, is
 * reset by every byte: a client trickling bytes would never meet it).
 */
#define SERVE_CONNS        128
#define SERVE_CONNS_PER_IP 8
#define SERVE_HEAD_S       5
#define SERVE_IDLE_S       15
#define SERVE_DEFAULT_EVENTS                                                   \
	"hv_run_ns,hv_guest_cycles,hv_exits,hv_hypercalls,hv_msr_reads,"       \
	"hv_msr_writes,hv_pio,hv_irqs"

struct serve_opts {
	const char *listen; /* ADDR:PORT */
	const char *events; /* metric events */
	bool default_events;
	uint64_t interval_ns;
	const char *tls_cert, *tls_key, *tls_client_ca;
	const char *symfs; /* a Linux guest's root on the host, or NULL */
	unsigned int max_profile_s;
	const char *auth_token_file; /* --auth-token-file, or NULL */
	bool no_auth;                /* --no-auth: anyone who connects */
};

/* One VM the collector follows (collector thread only). */
struct serve_vm {
	struct ops_session s; /* one VM: s.vms[0] */
	struct ops_event metric[OPS_EVENTS_MAX];
	unsigned int nr_metric;
	struct serve_counter *ctr; /* [vcpu * nr_metric + event] */
	bool *stale;               /* [vcpu] */
	uint64_t *pmis;            /* [vcpu]: PMIs injected, ever */
	bool sampling;             /* the session samples for a profile */
	bool profiled;             /* ... for the running one */
	bool joining;              /* chosen for it, not answering yet */
	int map[OPS_EVENTS_MAX];   /* sampling PMD k -> metric event, or -1 */
	int tmap[OPS_EVENTS_MAX];  /* sampling PMD k -> pprof type, or -1 */
	uint64_t *last_vals; /* [vcpu * OPS_COUNTERS]: per-sample deltas */
	int64_t created;     /* Unix time counting began */
	bool seen;           /* found by the last scan */
	bool waiting;        /* its read of this round is unanswered */
	unsigned int misses; /* rounds in a row its reply missed */
	bool ping;           /* serve_ping(): asked, then answered */
	bool ping_wait;      /* its hello is unanswered */
	int64_t ping_id;     /* that hello's request id */
	struct symtab syms;  /* loaded when first profiled */
	bool has_syms;
	unsigned int pprof_vm; /* its number in the running profile */
	/* The guest's processes, as its kernel reports them. */
	struct guest_procs procs;
	uint64_t task_gen;          /* the newest record fetched */
	bool tasks_gone;            /* its VMM has no process records */
	size_t nr_samples;          /* samples placed in procs so far */
	struct pprof_guest pg;      /* its files in the running profile */
	struct serve_vm *left_next; /* in serve.left */
};

/*
 * Attaching a VM (hello, session and contexts) waits for its VMM, up to
 * the client timeout per call: a VMM that never answers must not hold the
 * collector, so SERVE_ATTACHERS threads attach (jobs below), and a VM that
 * failed is tried again after SERVE_ATTACH_RETRY_NS.
 */
#define SERVE_ATTACHERS       4
#define SERVE_ATTACH_RETRY_NS 30000000000ULL
/*
 * Attached VMs are read together, each round within half the interval (at
 * most the client timeout: collect()); one whose replies miss that many
 * rounds in a row is detached.
 */
#define SERVE_READ_MISSES 3

enum serve_job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_FAILED };

struct serve_attach_job {
	struct vmm_reg_entry e;
	enum serve_job_state state;
	struct serve_vm *v; /* JOB_DONE: attached */
	uint64_t retry_at;  /* JOB_FAILED: monotonic ns */
	bool seen;          /* in the registry at the last scan */
	struct serve_attach_job *next;
};

/* A profile request, filled by the collector, waited for by HTTP. */
struct serve_profile {
	unsigned int seconds;
	char vm[VMM_NAME_MAX]; /* empty: every VM */
	unsigned int hz;
	/* Has the request's client gone away? (NULL: never asked) */
	bool (*gone)(void *ctx);
	void *gone_ctx;
	struct serve_profile *next; /* the queue (under serve.lock) */
	/* Result (under serve.lock): done, ret, gzipped pprof. */
	bool done;
	int status; /* HTTP status */
	char err[256];
	uint8_t *data;
	size_t len;
};

struct serve {
	struct serve_opts o;
	char dir[PATH_MAX];

	/* Collector thread state. */
	struct serve_vm **vms;
	unsigned int nr_vms;
	int inotify_fd, wake_fd;
	atomic_bool stop;
	struct pprof_builder *pb; /* the running profile, if any */
	unsigned int prof_nr_vms; /* VMs that joined it */
	/*
	 * VMs detached while it runs: the builder keeps pointers to their
	 * symbols until it is finished (serve_free_left()).
	 */
	struct serve_vm *left;
	struct serve_profile cur; /* its request's parameters (a copy) */
	uint64_t prof_end;        /* monotonic ns */
	int64_t prof_t0;          /* Unix ns */
	uint64_t prof_mono0;

	/* Attach jobs, shared with the attach threads under (alock). */
	pthread_mutex_t alock;
	pthread_cond_t acond;
	struct serve_attach_job *jobs;
	pthread_t attacher[SERVE_ATTACHERS];
	unsigned int nr_attachers;

	/* Shared with HTTP threads, under (lock). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char *snap[2]; /* rendered /metrics per enum om_format */
	char *vms_json;
	struct serve_profile *want; /* posted, not yet taken: a queue */
	struct serve_profile *prof; /* being collected; NULL once abandoned */
	atomic_uint nr_profiles;    /* admitted HTTP profile requests */
	uint64_t nr_scrapes, nr_collects;
	double last_collect_s; /* time the last collection round took */
	char *pem[3];          /* TLS certificate, key, client CA */
	char *token;           /* every request's bearer token, or NULL */

	/* http.c: connections whose request head is not complete yet. */
	struct serve_conns *conns;
	pthread_t reaper;
	bool has_reaper;
};

/* collect.c: the collector thread. */
int serve_collect_init(struct serve *sv);
void *serve_collect_thread(void *arg);
void serve_collect_free(struct serve *sv);
/* Wake the collector (any thread). */
void serve_wake(struct serve *sv);
/* (Re)start (v)'s counting session on its metric events. 0 or -errno. */
int serve_start_counting(struct serve_vm *v);
/* Free the VMs detached during the profile that just ended. */
void serve_free_left(struct serve *sv);
/* Read (v) once more and bank its counters: its session is ending. */
void serve_read_and_bank(struct serve_vm *v);
/*
 * Which VMs answer now: a hello to each VM whose (ping) is set, the
 * replies taken together within a collection round's deadline; (ping)
 * stays set only on those that answered. A profile talks to a VM in
 * request-reply steps, each waiting up to the client timeout: it talks
 * only to those that just answered, so one VMM that stopped answering
 * holds the collector for one round's deadline, not a timeout per step
 * (a silent VM's late reply is dropped by its next request).
 */
void serve_ping(struct serve *sv);

/* metrics.c: render /metrics and /debug/vpmu/vms from the VMs. */
char *serve_render_metrics(struct serve *sv, enum om_format f);
char *serve_render_vms(struct serve *sv);

/*
 * profile.c: the collector's side of profile requests. Start the profile
 * sv->cur asks for (sv->prof is its waiting request, if still there).
 */
void serve_profile_start(struct serve *sv);
void serve_profile_tick(struct serve *sv);
void serve_profile_stop(struct serve *sv, struct serve_vm *only);

/*
 * profile.c: the HTTP side: queue (p) and wait for it (bounded once taken),
 * or answer 503 when the daemon stops or p->gone says its client went
 * away (the profile then ends at once). Returns with p->done set.
 */
void serve_profile_run(struct serve *sv, struct serve_profile *p);

/* http.c: parse ADDR:PORT. 0 or -EINVAL with a message in (err). */
struct sockaddr_storage;
int serve_parse_listen(const char *s, struct sockaddr_storage *sa, char *err,
		       size_t errlen);

/* Is (sa) a loopback address (127.0.0.0/8, ::1)? */
bool serve_is_loopback(const struct sockaddr_storage *sa);

/*
 * The security rule: a non-loopback (sa) needs --tls-cert and --tls-key.
 * 0, or -EPERM with the reason in (err).
 */
int serve_check_tls(const struct serve_opts *o,
		    const struct sockaddr_storage *sa, char *err,
		    size_t errlen);

/*
 * Guest metrics and profiles are not for every local user: a bearer token
 * (--auth-token-file) or client certificates (--tls-client-ca) are
 * required unless --no-auth says otherwise. 0, or -EPERM with the reason.
 */
int serve_check_auth(const struct serve_opts *o, char *err, size_t errlen);

/*
 * The bearer token of --auth-token-file (path): a regular file of ours (or
 * root's) that neither group nor others may read, holding one line of 16
 * to 512 printable ASCII characters. 0 with a malloc'd (*token), or
 * -errno with the reason in (err).
 */
int serve_load_token(const char *path, char **token, char *err, size_t errlen);

struct MHD_Daemon;
/* Start the HTTP daemon for (sv). 0 or -errno with (err) set. */
int serve_http_start(struct serve *sv, struct MHD_Daemon **out, char *err,
		     size_t errlen);
/* Stop what serve_http_start started around (d) (NULL: not started). */
void serve_http_stop(struct serve *sv, struct MHD_Daemon *d);

#endif /* OPS_SERVE_PRIV_H */
