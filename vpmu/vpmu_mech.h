/* SPDX-License-Identifier: MIT */
/*
 * vpmu_mech.h: libvpmu's mechanisms (mech/, target vpmu_mech), private to
 * libvpmu. They work on objects the caller already holds: a context, a
 * set, a cpu. Every function here runs with the domain lock held by its
 * caller, and none of them looks a handle up, takes the lock, or calls
 * the command layer above (cmd/): tests/unit/vpmu/check_layers.sh checks
 * that on the built archives. Three public functions of vpmu.h are
 * mechanisms too and live in mech/throttle.c: vpmu_throttle_next() (pure),
 * vpmu_cpu_charge() and vpmu_cpu_cost_ns() (atomic, no lock).
 */
#ifndef VPMU_MECH_H
#define VPMU_MECH_H

#include "vpmu_priv.h"

/* counter.c: 64-bit emulation, resets, randomization */
uint64_t vpmu_pmd_value(const struct vpmu_ctx *ctx, const struct vpmu_set *s,
			unsigned int i);
void vpmu_pmd_set(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i,
		  uint64_t v);
bool vpmu_pmd_add(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i,
		  uint64_t delta);
uint64_t vpmu_pmd_to_ovfl(const struct vpmu_ctx *ctx, const struct vpmu_set *s,
			  unsigned int i);
void vpmu_pmd_seed(struct vpmu_pmd *pmd, uint32_t seed);
/* Fill (d)->blank_set, which every new set of (d) starts as. */
void vpmu_set_blank_init(struct vpmu_domain *d);
uint32_t vpmu_prng_next(uint32_t *state);
void vpmu_reset_pmds(struct vpmu_ctx *ctx, struct vpmu_set *s, uint64_t ovfl,
		     bool is_long);
bool vpmu_is_counter(const struct vpmu_ctx *ctx, unsigned int i);

/* events.c: backend events of the active set */
/* The event a counting PMC's event-select value (v) asks for. */
struct vpmu_event vpmu_evsel_event(uint64_t v);
int vpmu_pmc_bind(struct vpmu_domain *d, struct vpmu_pmc *pmc, unsigned int i);
int vpmu_ctx_open_events(struct vpmu_ctx *ctx);
void vpmu_ctx_close_events(struct vpmu_ctx *ctx);
int vpmu_ctx_reopen_counter(struct vpmu_ctx *ctx, struct vpmu_set *s,
			    unsigned int i);
void vpmu_ctx_rebase(struct vpmu_ctx *ctx);
int vpmu_ctx_collect(struct vpmu_ctx *ctx, uint64_t *ovfl);
void vpmu_ctx_rearm(struct vpmu_ctx *ctx);
void vpmu_ctx_snap_vpmds(struct vpmu_ctx *ctx);
uint64_t vpmu_vpmd_read(struct vpmu_ctx *ctx, unsigned int id);

/* sets.c: the set list, activation and switching */
struct vpmu_set *vpmu_set_find(const struct vpmu_ctx *ctx, uint16_t id);
int vpmu_set_add(struct vpmu_ctx *ctx, uint16_t id, struct vpmu_set **out);
/* Unlink and free (s), not set0, of a detached context. */
void vpmu_set_remove(struct vpmu_ctx *ctx, struct vpmu_set *s);
void vpmu_set_free_all(struct vpmu_ctx *ctx);
struct vpmu_set *vpmu_set_next(const struct vpmu_ctx *ctx,
			       const struct vpmu_set *s);
int vpmu_sets_check_chain(const struct vpmu_ctx *ctx);
void vpmu_set_activate(struct vpmu_ctx *ctx, struct vpmu_set *s,
		       bool long_reset);
/* Make (next) the active set; its events move with it if on a cpu. */
void vpmu_ctx_switch(struct vpmu_ctx *ctx, struct vpmu_set *next,
		     bool long_reset);

/* throttle.c */
void vpmu_thr_reset(struct vpmu_ctx *ctx);
void vpmu_thr_step(struct vpmu_ctx *ctx);
bool vpmu_thr_drops(struct vpmu_ctx *ctx);
void vpmu_thr_sampled(struct vpmu_ctx *ctx);
uint64_t vpmu_thr_deadline(struct vpmu_ctx *ctx, uint64_t when);
void vpmu_thr_stretch(struct vpmu_ctx *ctx, struct vpmu_set *s, unsigned int i);
/* Arm the time-based switch of (s), just activated, at its effective
 * interval (the timeout lengthened by the budget). */
void vpmu_thr_switch_arm(struct vpmu_ctx *ctx, struct vpmu_set *s);
/* -EINVAL if a non-zero value of (vals) is a period of (pmc)'s time
 * event above the domain's max_smpl_rate. */
int vpmu_thr_check_period(const struct vpmu_ctx *ctx,
			  const struct vpmu_pmc *pmc, const uint64_t *vals,
			  unsigned int n);

/* overflow.c */
void vpmu_ctx_overflow(struct vpmu_ctx *ctx, uint64_t ovfl);
int vpmu_ctx_do_restart(struct vpmu_ctx *ctx, uint64_t restart_arg);

/* msg.c: the message queue and notifications */
int vpmu_msgq_init(struct vpmu_msgq *q, uint32_t depth);
void vpmu_msgq_free(struct vpmu_msgq *q);
void vpmu_msgq_reset(struct vpmu_msgq *q);
int vpmu_msgq_push(struct vpmu_msgq *q, const union pfm_msg *m);
unsigned int vpmu_msgq_pop(struct vpmu_msgq *q, union pfm_msg *out,
			   unsigned int max);
void vpmu_ctx_notify(struct vpmu_ctx *ctx, uint32_t type, uint64_t ovfl,
		     uint32_t flags);

/* context.c: a context's life and its place on a cpu */
/*
 * Allocate an unloaded context of (who)'s owner with (flags), its queue
 * and set0, in the lowest free handle slot of the owner's range, and give
 * it a handle. Returns 0 and sets (*out), -ENOMEM.
 */
int vpmu_ctx_new(struct vpmu_domain *d, enum vpmu_owner owner, uint32_t flags,
		 struct vpmu_ctx **out);
/* Find, check and instantiate (pc)'s sampling format, charged to the
 * owner's budget; 0 if (pc) names none. */
int vpmu_ctx_setup_format(struct vpmu_ctx *ctx, const struct pfarg_ctx *pc,
			  const void *arg, size_t arg_size);
void vpmu_ctx_free(struct vpmu_ctx *ctx);
int vpmu_ctx_do_unload(struct vpmu_ctx *ctx);
int vpmu_cpu_attach(struct vpmu_cpu *cpu, struct vpmu_ctx *ctx);
void vpmu_cpu_detach(struct vpmu_cpu *cpu, struct vpmu_ctx *ctx);
void vpmu_ctx_sync(struct vpmu_ctx *ctx);

/* account.c: the per-exit work and the next deadline of a cpu */
/* Charge (run_ns_delta) of guest run time to every context on (cpu):
 * deltas, overflows, switches. Returns the first backend error or 0. */
int vpmu_cpu_fold(struct vpmu_cpu *cpu, uint64_t run_ns_delta,
		  const struct vpmu_guest_state *gs);
uint64_t vpmu_cpu_deadline(struct vpmu_cpu *cpu);
/* Fill (snap) from the guest context on (cpu); -ENOENT if none. */
int vpmu_cpu_fill_snapshot(struct vpmu_cpu *cpu, struct vpmu_snapshot *snap);

#endif /* VPMU_MECH_H */
