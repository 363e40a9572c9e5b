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
 * The transport of each build, under the calls of pfm_calls.c: perfmon2
 * command (cmd) on context (fd) with (nargs) arguments, (size) bytes in all
 * at (arg) (0 bytes for NULL). A PVPMU_HC_PFM hypercall in pfm.c, the
 * pvpmu.ko ioctl in linux/pfm_linux.c. Returns 0 or -PVPMU_E*.
 */
int sdk_pfm_call(int fd, unsigned int cmd, void *arg, pvpmu_u64 size,
		 int nargs);

/*
 * The context descriptor of commands without a context (PFM_GETINFO_PMCS,
 * PFM_GET_CONFIG, ...): 0 in pfm.c; on Linux the /dev/pvpmu descriptor
 * opened on first use, or -errno if it cannot be opened.
 */
int sdk_global_fd(void);

#endif /* PVPMU_SDK_PRIV_H */
