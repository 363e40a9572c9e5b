/* SPDX-License-Identifier: MIT */
/*
 * hv.h: the hv backend: exact events the VMM itself observes (abi.h §9,
 * PVPMU_EVSEL_HV and _HV_EXIT_REASON): guest run time and TSC-derived guest
 * cycles, computed from the vCPU run time libvpmu passes in; exits (total and
 * by KVM exit reason), hypercalls, trapped MSR accesses, PIO, MMIO, injected
 * interrupts, halts and halted time, read from the VMM's own per-vCPU
 * counters through a callback.
 *
 * Meaning: hv.c holds the one table that says which VMM statistic (enum
 * vpmu_hv_stat, <vpmu/vpmu.h>) each hv event counts; libvpmu's host layer
 * reads the VMM's statistics through it (vpmu_hv_stat_of()), so the VMM
 * keeps statistics and never interprets event codes.
 *
 * Exactness: the VMM counts an exit before it calls vpmu_cpu_account(), so
 * an overflow of an exit-count event is seen at the very exit that caused
 * it (skid 0). Time events arm a deadline in run time for the VMM's timer.
 */
#ifndef VPMU_HV_H
#define VPMU_HV_H

#include <stdint.h>

#include "vpmu_backend.h"

struct vpmu_hv_source {
	/*
	 * Cumulative value of hv event (code) on vCPU (cpu): every hv code
	 * except PVPMU_EV_HV_RUN_NS and PVPMU_EV_HV_GUEST_CYCLES. Called
	 * under the domain lock; must not call into libvpmu.
	 */
	uint64_t (*read)(void *opaque, uint32_t cpu, uint16_t code);
	void *opaque;
	uint64_t tsc_khz; /* host TSC rate for guest cycles; 0 refuses them */
};

/*
 * The VMM statistic (enum vpmu_hv_stat) hv event (code) counts, or -ENOENT
 * for a code that is not an hv event read from the VMM (the time events
 * hv_run_ns and hv_guest_cycles are computed from the vCPU run time).
 */
int vpmu_hv_stat_of(uint16_t code);

/* Fill (*out) with a backend instance reading (src) (kept by pointer). */
void vpmu_hv_instance(struct vpmu_hv_source *src, struct vpmu_backend *out);

extern const struct vpmu_backend_ops vpmu_hv_backend;

#endif /* VPMU_HV_H */
