/* SPDX-License-Identifier: MIT */
/*
 * vpmu_limits.h: the limits of a VM's identity that the VMM's configuration,
 * the control protocol's registry and the operator tools all size buffers
 * by. They live on the common floor so that the protocol does not reach
 * into the VMM's configuration for them.
 */
#ifndef VPMU_LIMITS_H
#define VPMU_LIMITS_H

#define VMM_NAME_MAX      64 /* bytes of a VM name, with NUL */
#define VMM_VCPUS_MAX     64
#define VMM_PMU_MODEL_LEN 16 /* bytes of a PMU model name, with NUL */

#endif /* VPMU_LIMITS_H */
