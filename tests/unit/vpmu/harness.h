/* SPDX-License-Identifier: MIT */
/*
 * harness.h: fixtures of the libvpmu unit tests: a domain whose only count
 * source is a replay backend, two vCPUs, a guest and a host caller, and a
 * log of notifications. Helpers named h_*() assert success; h_*_raw()
 * variants return the error.
 */
#ifndef VPMU_TEST_HARNESS_H
#define VPMU_TEST_HARNESS_H

#include <stdint.h>

#include "vpmu_core.h"
#include "vpmu_pmu.h"
#include "backends/replay.h"

/* Replay event codes declared by the harness: H_EV(0..7). */
#define H_EV(i)      ((uint16_t)(0x10 + (i)))
#define H_EV_UNKNOWN ((uint16_t)0xfe) /* declared by no backend */
#define H_EVSEL(i)   VPMU_EVSEL(H_EV(i), 0)

#define H_MAX_NOTES 64

struct harness {
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_domain *d;
	struct vpmu_cpu *cpu0, *cpu1;
	struct vpmu_caller guest; /* guest thread 100 on vCPU 0 */
	struct vpmu_caller host;  /* operator thread */
	struct vpmu_guest_state gs;
	unsigned int nr_notes;
	struct vpmu_notify notes[H_MAX_NOTES];
	uint64_t vpmd_exits; /* value of VPMU_VPMD_EXITS */
};

extern struct harness H;

/* Build the fixture with (limits) (NULL: defaults, 1 ms granularity). */
void h_init(const struct vpmu_limits *limits);
void h_setup(void);
void h_teardown(void);

/* Create a context of the guest with (flags), no format; returns fd. */
int h_ctx(uint32_t flags);
int h_ctx_raw(const struct vpmu_caller *who, uint32_t flags, int *fd);

/* Write PMC (num) of (set) = (evsel) with (flags), reset/smpl vectors. */
void h_pmc(int fd, uint16_t set, uint16_t num, uint64_t evsel, uint32_t flags);
void h_pmc_full(int fd, const struct pfarg_pmc *pmc);

/* Write PMD (num) of (set): value, short and long reset. */
void h_pmd(int fd, uint16_t set, uint16_t num, uint64_t value,
	   uint64_t short_reset, uint64_t long_reset);
void h_pmd_full(int fd, const struct pfarg_pmd *pmd);

/* Read PMD (num) of (set), full element. */
struct pfarg_pmd h_read(int fd, uint16_t set, uint16_t num);
uint64_t h_val(int fd, uint16_t set, uint16_t num);

/* vCPU-wide load of (fd) on vCPU 0 with (set) first, by the guest. */
void h_load(int fd, uint16_t set);
void h_start(int fd);

/* Create event sets: (id) with (flags), (next), timeout (ns). */
void h_set(int fd, uint16_t id, uint32_t flags, uint16_t next,
	   uint64_t timeout_ns);
struct pfarg_setinfo h_setinfo(int fd, uint16_t id);

/* vpmu_cpu_account() on vCPU 0 for (ns) of run time. */
void h_run(uint64_t ns);

/* Script H_EV(ev) on vCPU 0. */
void h_rate(unsigned int ev, uint64_t per_sec);
void h_steps(unsigned int ev, const uint64_t *deltas, size_t n);

/* Pop one message, asserting there is one. */
union pfm_msg h_msg(int fd);

#endif /* VPMU_TEST_HARNESS_H */
