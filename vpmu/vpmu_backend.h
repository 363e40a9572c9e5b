/* SPDX-License-Identifier: MIT */
/*
 * vpmu_backend.h: the contract between libvpmu and its count sources.
 *
 * A backend counts events for one vCPU: guest run time and exits seen by the
 * VMM (hv), KVM statistics (kvmstat), host perf_event (perf), or a scripted
 * stream (replay, a test double in tests/backends/). An event is identified by
 * (backend, code): the code is the logical event code of the PMU description,
 * i.e. the event-select (umask << 8 | event) of a counting PMC. A domain is
 * given an ordered list of backend instances; the first one whose describe()
 * accepts a code counts it. An event no backend can count is refused when the
 * PMC is written (-EINVAL + PFM_REG_RETFL_NOTAVAIL), never counted as zeros.
 *
 * Time: backends that derive counts from time (replay rates, hv run time)
 * are told the vCPU's accumulated run time in nanoseconds ("run ns") on
 * open() and read(). It is monotonic per vCPU and stops while the vCPU does
 * not run guest code.
 *
 * Locking: libvpmu calls every op with the domain lock held and never
 * concurrently for one domain; ops must not call back into libvpmu.
 */
#ifndef VPMU_BACKEND_H
#define VPMU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <vpmu/vpmu.h> /* VPMU_NO_DEADLINE */

struct vpmu_backend_ops;

/* A backend instance: its ops and its per-VM state (e.g. a replay script). */
struct vpmu_backend {
	const struct vpmu_backend_ops *ops;
	void *priv; /* owned by whoever created the instance */
};

/* What to count: decoded from a counting PMC (event-select layout). */
struct vpmu_event {
	uint16_t code;      /* umask << 8 | event */
	uint8_t cmask;      /* counter mask (threshold), 0 = none */
	bool usr;           /* count at guest CPL > 0 */
	bool os;            /* count at guest CPL 0 */
	bool edge;          /* edge detect */
	bool inv;           /* invert cmask comparison */
	uint32_t cpu_index; /* vCPU the event is opened for */
};

/* An opened event. libvpmu owns the storage; the backend fills priv. */
struct vpmu_bevent {
	const struct vpmu_backend *be; /* set by libvpmu before open() */
	struct vpmu_event ev;          /* set by libvpmu before open() */
	void *priv;                    /* backend state of this event */
	uint64_t scratch[2];           /* backend scratch (no allocation) */
};

/* Static description of an event code, for describe()/enumerate(). */
struct vpmu_event_info {
	uint16_t code;    /* logical event code */
	const char *name; /* short name, e.g. "guest_run_ns" */
	const char *desc; /* one-line description, may be NULL */
};

/*
 * Operations of a backend. All are required except (arm) and (rebase),
 * which may be NULL. int-returning ops return 0 or a negative errno.
 */
struct vpmu_backend_ops {
	const char *name;

	/*
	 * Describe (code): fill (*info) (may be NULL) and return 0 if this
	 * instance can count it on this host, -ENOENT if not.
	 */
	int (*describe)(const struct vpmu_backend *b, uint16_t code,
			struct vpmu_event_info *info);

	/* Fill (*info) with the (idx)-th countable event; -ENOENT past end. */
	int (*enumerate)(const struct vpmu_backend *b, unsigned int idx,
			 struct vpmu_event_info *info);

	/*
	 * Start counting (e->ev) at vCPU run time (now_ns); e->be and e->ev
	 * are set. The first read() returns events since this call.
	 */
	int (*open)(struct vpmu_bevent *e, uint64_t now_ns);

	/* Stop counting and release e->priv. Never fails. */
	void (*close)(struct vpmu_bevent *e);

	/*
	 * Store in (*delta) the events counted since open() or the previous
	 * read(), up to vCPU run time (now_ns).
	 */
	int (*read)(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta);

	/*
	 * Optional. Ask for an overflow kick after (nevents) more events.
	 * Store in (*in_ns) the run time (ns, relative to the last read) after
	 * which that many events will have happened, or VPMU_NO_DEADLINE if
	 * the backend cannot tell (it then kicks the vCPU itself, e.g. perf's
	 * overflow signal, or counts are only seen at the next exit).
	 */
	int (*arm)(struct vpmu_bevent *e, uint64_t nevents, uint64_t *in_ns);

	/*
	 * Optional. Restart the count of (e) from now, at vCPU run time
	 * (now_ns): the next read() returns events since this call, and a
	 * previous arm() is void (libvpmu arms again). libvpmu calls it on
	 * all the events one command opened, one after the other, once they
	 * are all open: for sources that count while the host opens the
	 * next events (the vCPU thread's CPU time, say).
	 */
	int (*rebase)(struct vpmu_bevent *e, uint64_t now_ns);

	/*
	 * Optional. Why this instance, which counts (ev->code), cannot honour
	 * the rest of (ev) on this host (a ring filter, say), as one
	 * sentence that lives as long as the instance; NULL if it can. A
	 * perfmon2 PMC write of such an event is refused (NOTAVAIL), never
	 * counted with the filter ignored.
	 */
	const char *(*refusal)(const struct vpmu_backend *b,
			       const struct vpmu_event *ev);
};

#endif /* VPMU_BACKEND_H */
