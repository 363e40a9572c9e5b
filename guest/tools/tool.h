/* SPDX-License-Identifier: MIT */
/*
 * tool.h: what the guest tools (pfinfo, pfstat, pfrecord, the demo, the
 * benchmarks and the SDK test guests) share: the calibrated ring-3
 * workloads, number formatting without an FPU, the image's own symbol
 * table, and the tools' entry points so that the demo can run them all.
 *
 * Tools are ring-3 programs of the minimal guest kernel (user.h); they
 * print with uprintf() and reach the VMM through libpvpmu.
 */
#ifndef PVPMU_TOOL_H
#define PVPMU_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include <pvpmu/pvpmu.h>

#include "pvpmu_core.h"
#include "user.h"

/*
 * The notification vector the tools register (PVPMU_HC_SET_VECTOR): the
 * kernel's KERNEL_NOTIFY_VECTOR, whose default handler counts interrupts
 * per vCPU for ring 3 (user_notify_count()).
 */
#define TOOL_NOTIFY_VECTOR 0xf0

/*
 * What the driver core's CPUID detection found in ring 0 at boot
 * (tool_ring0.c; -PVPMU_EAGAIN if it did not run): ring-3 CPUID is not
 * reliable on every host (PVM answers it itself).
 */
extern int tool_ring0_detect;
extern struct pvpmu_features tool_ring0_features;

/* Where workloads leave their result, so that it is not optimized away. */
extern volatile uint64_t tool_sink;

/* The image's text symbols, sorted (generated at build time from nm). */
extern const struct pvpmu_sym tool_syms[];
extern const unsigned int tool_nr_syms;

/*
 * Workloads (ring 3). tool_spin(n) runs n rounds of a dependent xorshift
 * chain (~1 ns each natively) and returns the chain value.
 * tool_mixed(rounds, spin, calls) runs (rounds) times: tool_spin(spin),
 * then (calls) PVPMU_HC_NOP hypercalls; it makes exactly
 * rounds * calls hypercalls (each one PIO exit), evenly spread in time.
 */
uint64_t tool_spin(uint64_t n);
uint64_t tool_mixed(unsigned int rounds, uint64_t spin, unsigned int calls);

/* The three functions of the profile workload (weights 6 : 3 : 1). */
uint64_t work_hot(uint64_t n);
uint64_t work_warm(uint64_t n);
uint64_t work_cold(uint64_t n);

/*
 * Formatting into (buf) of (size) bytes; each returns (buf).
 * tool_u64: 1,234,567. tool_fix2: a / b with two decimals ("12.34"),
 * "-" when b is 0. tool_ns: a duration, "123.456 ms".
 */
char *tool_u64(char *buf, size_t size, uint64_t v);
char *tool_fix2(char *buf, size_t size, uint64_t a, uint64_t b);
char *tool_ns(char *buf, size_t size, uint64_t ns);

/* Print "tool: what: <status>" for a failed call; returns (ret). */
int tool_err(const char *tool, const char *what, int ret);

/* Is (s) the catalogue name of a family event (hv_exit_reason...)? */
int tool_is_family(const struct pvpmu_event_desc *d);

/*
 * Tools. Each runs on vCPU (vcpu) in ring 3, prints its report and
 * returns 0 when everything it checked held, nonzero otherwise.
 * pfstat_run() counts the (n) events named in (events) in its multiplexed
 * pass (NULL: its default list of 18); pfrecord_run() drains on the
 * notification vector if (use_vector), else by polling pfm_read_msg().
 */
int pfinfo_run(unsigned int vcpu);
int pfstat_run(unsigned int vcpu, const char *const *events, unsigned int n);
int pfrecord_run(unsigned int vcpu, int use_vector);
int pffast_run(unsigned int vcpu);

#endif /* PVPMU_TOOL_H */
