/* SPDX-License-Identifier: MIT */
/*
 * pv_priv.h: what the files of vmm/pv share and nothing above them uses.
 */
#ifndef VMM_PV_PRIV_H
#define VMM_PV_PRIV_H

#include "vmm_snapshot.h"

/* pv_snapshot.c: vmm_pv_module's snapshot hooks (pv_module.c). */
extern const struct vmm_snapshot_hooks vmm_pv_snapshot_hooks;

#endif /* VMM_PV_PRIV_H */
