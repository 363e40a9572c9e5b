/* SPDX-License-Identifier: MIT */
/*
 * kvmstat.h: the kvmstat backend: per-vCPU KVM binary statistics
 * (KVM_GET_STATS_FD, Documentation/virt/kvm/api.rst 4.133) as events.
 *
 * The statistics are discovered at run time from the stats file's header
 * and descriptors (names, types, units, offsets), never from hard-coded
 * offsets. Only monotonic counters become events: descriptors of type
 * KVM_STATS_TYPE_CUMULATIVE with one 64-bit value and a unit of none,
 * bytes, seconds or cycles (a time stat counts in its own scale, e.g. ns
 * for exponent -9). Instant values (e.g. "blocking"), peaks, booleans and
 * histograms are skipped: a delta of them is not an event count.
 *
 * Event codes: PVPMU_EV_KVMSTAT(i) where i is the index in the list of
 * exposed statistics (0..255, in descriptor order); the list depends on
 * the host kernel, so tools look events up by name ("kvmstat:exits").
 * read() returns the delta of the statistic. The events of one vCPU read
 * at one run time share one pread of the whole data block (the statistics
 * only change while the vCPU runs, i.e. while run time advances), so N
 * events cost one system call per exit; callers must pass the vCPU's run
 * time as the contract says. arm() cannot predict anything:
 * VPMU_NO_DEADLINE, counts are seen at the next exit.
 *
 * Relationship with the hv backend: KVM's "exits" counts every VM exit,
 * including the ones handled inside the kernel (page faults of the shadow
 * MMU, interrupt windows, emulated instructions...), so for one vCPU
 * kvmstat:exits >= hv_exits (exits that reach the VMM).
 *
 * One instance per VM. It discovers the statistics from vCPU 0 on first
 * use and opens each vCPU's stats file once, on its first open(); both are
 * cached until vpmu_kvmstat_destroy(). Not thread-safe by itself: libvpmu
 * calls it under the domain lock.
 */
#ifndef VPMU_KVMSTAT_H
#define VPMU_KVMSTAT_H

#include <stdint.h>

#include "vpmu_backend.h"

struct vpmu_kvmstat_source {
	/*
	 * The KVM vCPU fd of vCPU (cpu), or -1 if there is none. The fd is
	 * only used to create the stats file; it is not kept.
	 */
	int (*vcpu_fd)(void *opaque, uint32_t cpu);
	void *opaque;
};

struct vpmu_kvmstat;

/*
 * Create a kvmstat instance reading through (src) (copied). Nothing is
 * opened yet. Returns 0 and sets (*out), or -ENOMEM.
 */
int vpmu_kvmstat_create(const struct vpmu_kvmstat_source *src,
			struct vpmu_kvmstat **out);

/* Close every stats file and free (k); no domain may use it. NULL is ok. */
void vpmu_kvmstat_destroy(struct vpmu_kvmstat *k);

/* Fill (*out) with the backend instance of (k) for a domain config. */
void vpmu_kvmstat_instance(struct vpmu_kvmstat *k, struct vpmu_backend *out);

/*
 * Code of the statistic called (name) ("exits" or "kvmstat:exits") in
 * (*code). Returns 0, -ENOENT if the host has no such counter, or the
 * discovery error (-errno).
 */
int vpmu_kvmstat_find(struct vpmu_kvmstat *k, const char *name, uint16_t *code);

/*
 * Why (code) cannot be counted by (k): a static or (k)-owned string valid
 * until the next call on (k), or NULL if it can be.
 */
const char *vpmu_kvmstat_unavailable_reason(struct vpmu_kvmstat *k,
					    uint16_t code);

extern const struct vpmu_backend_ops vpmu_kvmstat_backend;

#endif /* VPMU_KVMSTAT_H */
