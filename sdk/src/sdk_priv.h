/* SPDX-License-Identifier: MIT */
/*
 * sdk_priv.h: what the libpvpmu sources share (not installed).
 */
#ifndef PVPMU_SDK_PRIV_H
#define PVPMU_SDK_PRIV_H

#include "pvpmu/pvpmu.h"

#include "pvpmu_core.h"

/*
 * The driver calls go through: pvpmu_set_driver()'s, else the one the
 * guest OS registered with the core (pvpmu_os_driver()).
 */
const struct pvpmu_drv *sdk_drv(void);

#endif /* PVPMU_SDK_PRIV_H */
