/* SPDX-License-Identifier: MIT */
/*
 * sdk_priv.h: what the libpvpmu sources share (not installed).
 */
#ifndef PVPMU_SDK_PRIV_H
#define PVPMU_SDK_PRIV_H

#include "pvpmu/pvpmu.h"

#include "pvpmu_core.h"

/* The built-in driver: identity-mapped guest, direct doorbell. */
extern const struct pvpmu_drv pvpmu_identity_drv;

/* The driver calls go through (pvpmu_set_driver(), or the built-in one). */
const struct pvpmu_drv *sdk_drv(void);

#endif /* PVPMU_SDK_PRIV_H */
