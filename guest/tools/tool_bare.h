/* SPDX-License-Identifier: MIT */
/*
 * tool_bare.h: the tools' platform on the minimal guest kernel, and what
 * its other ring-3 programs (the demo, the benchmarks, the SDK test
 * guests) take from it: the notification vector, what ring 0 detected,
 * the image's own symbol table, and how an image runs a tool.
 */
#ifndef PVPMU_TOOL_BARE_H
#define PVPMU_TOOL_BARE_H

#include "pvpmu_core.h"
#include "tool.h"
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

/* The image's text symbols, sorted (generated at build time from nm). */
extern const struct pvpmu_sym tool_syms[];
extern const unsigned int tool_nr_syms;

/*
 * Run tool (main) with (argv) on vCPU (vcpu), the vCPU its built-in
 * workloads run on and its vCPU-wide contexts monitor.
 */
int tool_bare_run(unsigned int vcpu, int (*main)(int, char **), int argc,
		  char **argv);

/* The VM name (the one string a guest receives), NUL-terminated. */
void tool_bare_vm_name(char *buf, size_t size);

#endif /* PVPMU_TOOL_BARE_H */
