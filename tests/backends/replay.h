/* SPDX-License-Identifier: MIT */
/*
 * replay.h: scripting API of the replay backend, a deterministic count
 * source for tests and simulations (DESIGN.md 5). A replay instance holds
 * the countable event codes and, per (vCPU, code), one stream:
 *   - a rate: events per second of vCPU run time, delivered exactly (the
 *     fractional remainder is carried), with exact overflow deadlines;
 *   - steps: an explicit list of deltas, one per read that covers run time
 *     (then zeros), so a test places an overflow at a given
 *     vpmu_cpu_account() call; reads at an unchanged run time get 0.
 * A declared code without a stream counts nothing. Not thread-safe by
 * itself: libvpmu calls it under the domain lock, tests script it before.
 */
#ifndef VPMU_REPLAY_H
#define VPMU_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "vpmu_backend.h"

struct vpmu_replay;

/* The replay backend's ops; an instance comes from vpmu_replay_instance(). */
extern const struct vpmu_backend_ops vpmu_replay_backend;

/* Highest rate accepted by vpmu_replay_set_rate() (events/s). */
#define VPMU_REPLAY_MAX_RATE 10000000000ULL

/* Create an empty replay instance. Returns 0 and sets (*out), or -ENOMEM. */
int vpmu_replay_create(struct vpmu_replay **out);

/* Free (r); no domain may still use it. NULL is accepted. */
void vpmu_replay_destroy(struct vpmu_replay *r);

/*
 * Declare event (code) countable, named (name) (kept by pointer). Returns
 * 0, -EEXIST, or -ENOMEM.
 */
int vpmu_replay_add_event(struct vpmu_replay *r, uint16_t code,
			  const char *name);

/*
 * Script (code) on vCPU (cpu) as (per_sec) events per second of run time,
 * replacing any previous stream. Returns 0, -ENOENT (code not declared),
 * -EINVAL (rate above VPMU_REPLAY_MAX_RATE) or -ENOMEM.
 */
int vpmu_replay_set_rate(struct vpmu_replay *r, uint32_t cpu, uint16_t code,
			 uint64_t per_sec);

/*
 * Script (code) on vCPU (cpu) as the (n) deltas at (deltas) (copied), one
 * per read over a non-empty run-time slice, zeros after. Returns 0, -ENOENT,
 * -EINVAL (n 0) or -ENOMEM.
 */
int vpmu_replay_set_steps(struct vpmu_replay *r, uint32_t cpu, uint16_t code,
			  const uint64_t *deltas, size_t n);

/* Fill (*out) with the backend instance of (r) for a domain config. */
void vpmu_replay_instance(struct vpmu_replay *r, struct vpmu_backend *out);

#endif /* VPMU_REPLAY_H */
