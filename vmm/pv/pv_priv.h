/* SPDX-License-Identifier: MIT */
/*
 * pv_priv.h: what the files of vmm/pv share and nothing above them uses.
 */
#ifndef VMM_PV_PRIV_H
#define VMM_PV_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm_snapshot.h"

/* pv_snapshot.c: vmm_pv_module's snapshot hooks (pv_module.c). */
extern const struct vmm_snapshot_hooks vmm_pv_snapshot_hooks;

/*
 * pv_calls.c: the notification vector the ABI allows, 0 (none) or 32..255
 * (0..31 are CPU exceptions). PVPMU_HC_SET_VECTOR and a snapshot's
 * restore both ask: a restored vCPU may hold nothing the live call would
 * have refused.
 */
bool vmm_pv_vector_ok(uint32_t vector);

#endif /* VMM_PV_PRIV_H */
