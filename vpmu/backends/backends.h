/* SPDX-License-Identifier: MIT */
/*
 * backends.h: the backend list of a VM and the event listing.
 *
 * A VM's libvpmu domain takes its backends in preference order (the first
 * whose describe() accepts a code counts it). vpmu_backends_build() makes
 * the standard list: hv first (exact, VMM-observed), then kvmstat (KVM's
 * per-vCPU statistics), then perf (host perf_event: hardware events where
 * the host has a PMU, software events of the vCPU thread). Their codes do
 * not overlap, so the order only matters for tools that add their own
 * backends.
 *
 * vpmu_backends_list_events() walks every event a list can offer, with
 * availability and the reason when unavailable, for `vpmu events`
 * (struct vpmu_event_avail is public: vpmu_domain_list_events()).
 */
#ifndef VPMU_BACKENDS_H
#define VPMU_BACKENDS_H

#include <stdbool.h>
#include <stdint.h>

#include "vpmu_backend.h"
#include "hv.h"
#include "kvmstat.h"
#include "perf.h"

#define VPMU_BACKENDS_MAX 3

/* A VM's standard backend list and the instances it owns. */
struct vpmu_backend_list {
	struct vpmu_backend be[VPMU_BACKENDS_MAX]; /* preference order */
	unsigned int nr;
	struct vpmu_kvmstat *kvmstat; /* owned; NULL if not in the list */
	struct vpmu_perf *perf;       /* owned; NULL if not in the list */
};

/*
 * Fill (*l) with hv (source (hv), kept by pointer), kvmstat (source (ks),
 * copied) and perf (source (ps), copied), in that order; a NULL source
 * leaves its backend out. Pass l->be and l->nr to the domain config; (*l)
 * must outlive the domain. Returns 0, or -ENOMEM with nothing left
 * allocated.
 */
int vpmu_backends_build(struct vpmu_backend_list *l, struct vpmu_hv_source *hv,
			const struct vpmu_kvmstat_source *ks,
			const struct vpmu_perf_source *ps);

/* Free the instances of (l) (after the domain is destroyed). */
void vpmu_backends_release(struct vpmu_backend_list *l);

/*
 * Call (fn) for every catalogue event (pvpmu/catalog.h, in its order) and,
 * in place of the kvmstat family entry, for every statistic the first
 * kvmstat instance of (bes)[0..n) discovered, saying which backend counts
 * it (the first whose describe() accepts it) or why none can. The strings
 * are valid until the backends are released. Returns 0 or (fn)'s value.
 * Probes perf events (opens them once) on the calling thread.
 */
int vpmu_backends_list_events(const struct vpmu_backend *bes, unsigned int n,
			      vpmu_event_avail_fn_t fn, void *opaque);

/*
 * Why no backend of (bes)[0..n) counts (code): the reason of the backend
 * that serves its catalogue source (perf for codes outside the
 * catalogue), valid until the backends are released, or NULL when one
 * counts it. Probes perf events like vpmu_backends_list_events().
 */
const char *vpmu_backends_unavailable_reason(const struct vpmu_backend *bes,
					     unsigned int n, uint16_t code);

/*
 * Why (bes)[0..n) cannot count (ev) as asked: the refusal of the backend
 * that counts its code (a modifier it cannot honour), else
 * vpmu_backends_unavailable_reason(); NULL when it can be counted.
 */
const char *vpmu_backends_event_refusal(const struct vpmu_backend *bes,
					unsigned int n,
					const struct vpmu_event *ev);

#endif /* VPMU_BACKENDS_H */
