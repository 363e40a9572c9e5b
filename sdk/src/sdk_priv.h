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

/*
 * One perfmon2 command on context (fd) with (nargs) arguments of (size)
 * bytes in all at (arg): a PVPMU_HC_PFM hypercall (pfm.c) or the pvpmu.ko
 * ioctl (linux/pfm_linux.c). pfm_calls.c packs the arguments of the calls
 * both builds share: a vector of (n) elements, or one struct (none if NULL).
 */
int sdk_pfm_call(int fd, unsigned int cmd, void *arg, pvpmu_u64 size,
		 int nargs);
int sdk_pfm_vec(int fd, unsigned int cmd, void *arr, int n, pvpmu_u64 elem);
int sdk_pfm_one(int fd, unsigned int cmd, void *arg, pvpmu_u64 size);

#endif /* PVPMU_SDK_PRIV_H */
