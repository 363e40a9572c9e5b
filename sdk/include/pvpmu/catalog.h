/* SPDX-License-Identifier: MIT */
/*
 * pvpmu/catalog.h: the event catalogue of the virtual PMU.
 *
 * One table (sdk/src/catalog.c) names every event code of abi.h section 9
 * and says which count source serves it. It is freestanding C, compiled
 * into libvpmu (host), the SDK (guest) and the host commands, so all three
 * agree on names. Events discovered at run time (KVM statistics) are not
 * in the table; backends enumerate them.
 */
#ifndef PVPMU_CATALOG_H
#define PVPMU_CATALOG_H

#include "abi.h"

/* Which count source serves an event. */
enum pvpmu_source {
	PVPMU_SRC_HV      = 1, /* the VMM itself, exact */
	PVPMU_SRC_PERF_HW = 2, /* host perf_event, hardware, guest-only */
	PVPMU_SRC_PERF_SW = 3, /* host perf_event, software, vCPU thread */
	PVPMU_SRC_KVMSTAT = 4, /* KVM_GET_STATS_FD of the vCPU */
};

struct pvpmu_event_desc {
	pvpmu_u16 code;   /* umask << 8 | event */
	pvpmu_u8 source;  /* enum pvpmu_source */
	pvpmu_u8 is_time; /* 1: counts time (ns or TSC cycles) */
	const char *name; /* e.g. "hv_exits" */
	const char *desc; /* one line */
};

/* Number of entries; entry (i) for i < pvpmu_catalog_size(). */
unsigned int pvpmu_catalog_size(void);
const struct pvpmu_event_desc *pvpmu_catalog_at(unsigned int i);

/* The entry named (name) (exact match), or NULL. */
const struct pvpmu_event_desc *pvpmu_catalog_find(const char *name);

/*
 * The entry for (code), or NULL. Parameterized codes (exit reasons,
 * KVM statistics) match their family entry (umask 0).
 */
const struct pvpmu_event_desc *pvpmu_catalog_by_code(pvpmu_u16 code);

#endif /* PVPMU_CATALOG_H */
