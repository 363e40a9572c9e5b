/* SPDX-License-Identifier: MIT */
/*
 * vpmu_core.h: the core's constructor, private to libvpmu. The core
 * (target vpmu_core, the commands, over vpmu_mech, the mechanisms) counts
 * through whatever backend instances it is given and calls them only
 * through their ops tables (vpmu_backend.h); it links no backend. Two
 * callers give it a list:
 *   - libvpmu's host layer (host_domain.c, target vpmu), which builds hv,
 *     kvmstat and perf from the VMM's struct vpmu_host_ops and hands the
 *     core a release hook to free them with the domain;
 *   - tests and benchmarks, with the replay backend (tests/backends/) or
 *     the fake one (tests/fakes/).
 * The VMM never sees this header: it calls vpmu_domain_create_hosted().
 */
#ifndef VPMU_CORE_H
#define VPMU_CORE_H

#include <vpmu/vpmu.h>

struct vpmu_backend;
struct vpmu_pmu_desc;

/*
 * Value of virtual PMD (vpmd, a VPMU_VPMD_* id) for vCPU (cpu_index): a
 * monotonic hypervisor resource (exits, steal time...). Lock held.
 */
typedef uint64_t (*vpmu_vpmd_fn_t)(void *opaque, uint32_t cpu_index,
				   unsigned int vpmd);

struct vpmu_domain_config {
	struct vpmu_limits limits;
	const struct vpmu_backend *backends; /* preference order */
	unsigned int nr_backends;
	const struct vpmu_pmu_desc *pmu; /* NULL: vpmu_pmu_default */
	vpmu_notify_fn_t notify;         /* may be NULL */
	void *notify_opaque;
	vpmu_vpmd_fn_t vpmd_read; /* may be NULL: reads 0 */
	void *vpmd_opaque;
	/*
	 * Optional: called with (owner) by vpmu_domain_destroy() once every
	 * context is gone, to free what the creator built for the domain
	 * (the backends and their sources). Not called if create fails.
	 */
	void (*release)(void *owner);
	void *owner;
	uint64_t tsc_khz; /* hv_guest_cycles per ms; 0 unknown */
};

/*
 * Create a domain from (cfg) (copied; the backends array must outlive the
 * domain). Returns 0 and sets (*out), -EINVAL for bad limits, -ENOMEM.
 */
int vpmu_domain_create(const struct vpmu_domain_config *cfg,
		       struct vpmu_domain **out);

/* What vpmu_domain_backends_run() calls. */
typedef int (*vpmu_backends_fn_t)(void *opaque, const struct vpmu_backend *bes,
				  unsigned int nr);

/*
 * Call (fn) with the backend list of (d) under the domain lock (backend ops
 * need it), for layers above the core that ask backends directly (event
 * listing, architectural models). Returns (fn)'s value.
 */
int vpmu_domain_backends_run(struct vpmu_domain *d, vpmu_backends_fn_t fn,
			     void *opaque);

#endif /* VPMU_CORE_H */
