/* SPDX-License-Identifier: MIT */
/*
 * tm.h: what the timing measurement guests (tm_*.c, bench_slowdown.c)
 * share: a vCPU-wide context of hv events, medians, and fixed-point
 * ratios (guest code has no FPU). Ring-3 programs of the minimal kernel
 * on libpvpmu and the SDK tools' workloads (tool.h).
 */
#ifndef TM_H
#define TM_H

#include "bench.h"
#include "tool_bare.h"

#define TM_PPM 1000000ULL

/* The guest TSC rate in kHz (1 GHz if the VMM gives none). */
static inline uint64_t tm_khz(void)
{
	uint64_t khz = user_boot_info()->tsc_khz;

	return khz ? khz : 1000000;
}

/* TSC cycles -> ns, and back. */
static inline uint64_t tm_cyc_to_ns(uint64_t cyc)
{
	return pvpmu_muldiv(cyc, 1000000, tm_khz());
}

static inline uint64_t tm_ns_to_cyc(uint64_t ns)
{
	return pvpmu_muldiv(ns, tm_khz(), 1000000);
}

/* a / b in parts per million (0 when b is 0). */
static inline uint64_t tm_ppm(uint64_t a, uint64_t b)
{
	return pvpmu_muldiv(a, TM_PPM, b);
}

/* Sort (v) in place (insertion sort: n is small) and return the median. */
static inline uint64_t tm_median(uint64_t *v, unsigned int n)
{
	bench_sort(v, n);
	return n ? v[n / 2] : 0;
}

/* "1.0123": (ppm) / 10^6 with four decimals, into (buf). */
static inline char *tm_fix4(char *buf, size_t size, uint64_t ppm)
{
	uint64_t r = (ppm + 50) / 100;

	usnprintf(buf, size, "%llu.%04llu", (unsigned long long)(r / 10000),
		  (unsigned long long)(r % 10000));
	return buf;
}

/*
 * Create a vCPU-wide context on (vcpu) with the (n) events (specs) in
 * counters 0..n-1 of set (set) (sets other than 0 must exist: pass
 * (*fd) >= 0 to add to an existing, unloaded context; -1 creates one).
 * Returns 0 or the first error, printed with (who).
 */
static inline int tm_program(const char *who, int *fd, uint16_t set,
			     const char *const *specs, unsigned int n)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmc_t pmc[8];
	unsigned int i;
	int ret;

	if (n > 8)
		return -PVPMU_EINVAL;
	if (*fd < 0) {
		ret = pfm_create_context(&ctx, 0, 0);
		if (ret)
			return tool_err(who, "PFM_CREATE_CONTEXT", ret);
		*fd = ctx.ctx_fd;
	}
	for (i = 0; i < n; i++) {
		pmc[i] = (pfarg_pmc_t){.reg_num = (uint16_t)i, .reg_set = set};
		ret    = pvpmu_event_encode(specs[i], &pmc[i].reg_value, 0);
		if (ret)
			return tool_err(who, specs[i], ret);
	}
	ret = pfm_write_pmcs(*fd, pmc, (int)n);
	return ret ? tool_err(who, "PFM_WRITE_PMCS", ret) : 0;
}

/*
 * Count task-clock (perf: the vCPU thread's CPU time) in PMC (first) and
 * hv_run_ns (time inside KVM_RUN) in PMC (first) + 1 of set (set): their
 * ratio is the vCPU thread's CPU share inside KVM_RUN, below 1 when the
 * host preempted it. Returns 0, or an error where perf is not available
 * (perf_event_paranoid): callers then report the share as 0, "unknown".
 */
static inline int tm_share_pmcs(int fd, uint16_t set, uint16_t first)
{
	pfarg_pmc_t pmc[2] = {
		{.reg_num = first, .reg_set = set},
		{.reg_num = (uint16_t)(first + 1), .reg_set = set}};
	int ret;

	ret = pvpmu_event_encode("task-clock", &pmc[0].reg_value, 0);
	if (!ret)
		ret = pvpmu_event_encode("hv_run_ns", &pmc[1].reg_value, 0);
	return ret ? ret : pfm_write_pmcs(fd, pmc, 2);
}

/* Load (fd) on (vcpu) and start it. */
static inline int tm_load_start(const char *who, int fd, unsigned int vcpu)
{
	pfarg_load_t ld = {.load_pid = vcpu};
	int ret;

	ret = pfm_load_context(fd, &ld);
	if (ret)
		return tool_err(who, "PFM_LOAD_CONTEXT", ret);
	ret = pfm_start(fd, 0);
	return ret ? tool_err(who, "PFM_START", ret) : 0;
}

#endif /* TM_H */
