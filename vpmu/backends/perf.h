/* SPDX-License-Identifier: MIT */
/*
 * perf.h: the perf backend: host perf_event_open(2) on the vCPU thread.
 *
 * Events
 *   - Hardware (catalogue source PVPMU_SRC_PERF_HW: cycles, instructions,
 *     ref-cycles, cache-references, cache-misses, branches, branch-misses):
 *     perf's generic hardware events, resolved by libpfm4 from the
 *     catalogue name ("perf::cycles"), opened with exclude_host=1 so only
 *     guest execution counts. The PMC's usr/os bits map to exclude_user /
 *     exclude_kernel, which then apply to the guest's privilege level.
 *     Edge, invert and cmask have no generic meaning: open() refuses them
 *     (-EINVAL) on these codes.
 *   - Raw: any other event-select code whose event byte is not a vpmu
 *     family (PVPMU_EVSEL_HV..HOST_SW) is a host PMU event: PERF_TYPE_RAW with
 * the x86 event-select encoding (event, umask, edge bit 18, inv bit 23, cmask
 *     bits 24..31), encoded by libpfm4's perf_raw PMU and named after the
 *     host PMU's libpfm4 event table when it has one; also guest-only.
 *   - Cycles without a host PMU (PVPMU_EV_CYCLES, source tsc_khz set): the
 *     vCPU thread's task-clock (CPU time, user and kernel) scaled to
 *     cycles at the guest's TSC rate: time the vCPU was on a host CPU,
 *     not the wall time it was preempted. Its error: host time spent
 *     handling this vCPU's exits (in KVM and in the VMM) counts as guest
 *     cycles, HLT time does not; usr/os filters are ignored. Overflows
 *     are armed as task-clock periods (ns rounded up).
 *   - Software (PVPMU_SRC_PERF_SW: task-clock, page-faults,
 *     context-switches, cpu-migrations): count the vCPU thread in the host
 *     (user and kernel: the vCPU thread is in the kernel while the guest
 *     runs). usr/os are ignored.
 *
 * Availability: describe() probes each code once by opening it on the
 * calling thread (disabled) and caches the answer; vpmu_perf_unavailable
 * _reason() says why a code cannot be counted, e.g. "no hardware PMU on
 * this host (perf_event_open: ENOENT)". Nothing is printed. A usr+os probe
 * decides; with perf_event_paranoid >= 2 and no CAP_PERFMON that refuses
 * every event (kernel counting is forbidden), which the reason says.
 *
 * Counting: open() opens the event on the vCPU thread (the tid comes from
 * the source; -ESRCH when the vCPU has no thread yet or it has exited) and
 * it counts from then on; read() returns the count delta. If the host
 * kernel multiplexes the event (more hardware events than counters),
 * time_enabled != time_running and the delta is scaled by
 * delta_enabled / delta_running: an estimate, as perf stat prints it; an
 * interval in which the event never ran gives 0. Software events are never
 * multiplexed.
 *
 * Overflow: every event is opened as a sampling event with a period too
 * large to matter and no ring buffer. arm(nevents) sets the period to
 * (nevents) (PERF_EVENT_IOC_PERIOD; software counters other than clocks
 * are disabled around it, because the kernel restarts an active one with
 * an expired period) and, the first time, routes the overflow to the vCPU
 * thread as signal (signo) (F_SETOWN_EX F_OWNER_TID, F_SETSIG, O_ASYNC).
 * The VMM's handler for that signal kicks the vCPU out of KVM_RUN, so arm()
 * answers VPMU_NO_DEADLINE. A request equal to what the kernel is already
 * counting down (no PMD write since) costs no system call. After it fires
 * the kernel reloads the same period, so a re-arm that is not done in time
 * gives at most one spurious kick per period. The overflow lands after
 * some skid (events counted between the overflow and the signal's kick),
 * which libvpmu keeps on top of the reset value. Periods are capped at
 * 2^62; the kernel throttles overflows above perf_event_max_sample_rate.
 *
 * One instance per VM (or per host tool); libpfm4 is loaded and
 * initialized by vpmu_perf_create() on hosts with a hardware PMU only
 * (pfm_load.h). Not thread-safe by itself: libvpmu calls it under
 * the domain lock.
 */
#ifndef VPMU_PERF_H
#define VPMU_PERF_H

#include <stdint.h>
#include <sys/types.h>

#include "vpmu_backend.h"

struct vpmu_perf_source {
	/*
	 * Host thread id of vCPU (cpu)'s thread, or 0 if it has none (yet).
	 * Called by open() under the domain lock, from any thread.
	 */
	pid_t (*vcpu_tid)(void *opaque, uint32_t cpu);
	void *opaque;
	int signo; /* overflow signal for the vCPU thread; 0: no arming */
	/*
	 * The guest's TSC rate in kHz; when set and the host has no PMU,
	 * `cycles` (PVPMU_EV_CYCLES) counts the vCPU thread's task-clock at
	 * this rate (0: cycles need the host PMU).
	 */
	uint64_t tsc_khz;
};

struct vpmu_perf;

/*
 * Create a perf instance using (src) (copied); on a host with a hardware
 * PMU, load and initialize libpfm4. Returns 0 and sets (*out), or -ENOMEM.
 * A libpfm4 failure is not an error here: raw events are then
 * unavailable, with libpfm4's reason.
 */
int vpmu_perf_create(const struct vpmu_perf_source *src,
		     struct vpmu_perf **out);

/* Free (p) and its probe cache; no domain may use it. NULL is allowed. */
void vpmu_perf_destroy(struct vpmu_perf *p);

/* Fill (*out) with the backend instance of (p) for a domain config. */
void vpmu_perf_instance(struct vpmu_perf *p, struct vpmu_backend *out);

/*
 * Why (code) cannot be counted by (p) on this host (probing it if needed):
 * a string owned by (p), valid until vpmu_perf_destroy(), or NULL if it
 * can be counted.
 */
const char *vpmu_perf_unavailable_reason(struct vpmu_perf *p, uint16_t code);

/*
 * The kernel's generic perf event (perf_event.h) behind catalogue event
 * (code) of source PVPMU_SRC_PERF_HW or _SW: 0 with (*type, *config), or
 * -ENOENT. Raw host-PMU codes go through libpfm4 instead (pfm_load.h).
 */
int vpmu_perf_generic(uint16_t code, uint32_t *type, uint64_t *config);

extern const struct vpmu_backend_ops vpmu_perf_backend;

#endif /* VPMU_PERF_H */
