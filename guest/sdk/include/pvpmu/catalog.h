/* SPDX-License-Identifier: MIT */
/*
 * pvpmu/catalog.h: the event catalogue of the virtual PMU and the encoder
 * of event specs.
 *
 * One table (guest/sdk/catalog/catalog.c) names every event code of abi.h
 * section 9 and says which count source serves it; events.c encodes
 * "name[:mod]..." specs over it. Both are freestanding C: the host library
 * pvpmu_catalog (libvpmu, the host commands) and the guest SDK are built
 * from them, so all agree on names. Events discovered at run time (KVM
 * statistics) are not in the table; backends enumerate them.
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

/*
 * Encode (spec) into the PMC value (*value) (enabled, interrupt on
 * overflow) and the catalogue entry (*desc) (may be NULL; NULL for raw
 * events). (spec) is "name[:mod]..." with mods
 *   u (user only, CPL > 0), k (kernel only, CPL 0) -- default both;
 *   e (edge), i (invert), c=N (counter mask 0..255),
 *   umask=N (the parameter of family events: hv_exit_reason, kvmstat);
 * or a raw code "rXXXX" (hex umask<<8|event). Numbers are decimal or 0x.
 * Returns 0, -PVPMU_ENOENT (unknown name), -PVPMU_EINVAL (bad modifier).
 */
int pvpmu_event_encode(const char *spec, pvpmu_u64 *value,
		       const struct pvpmu_event_desc **desc);

#endif /* PVPMU_CATALOG_H */
