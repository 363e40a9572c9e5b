/* SPDX-License-Identifier: MIT */
/*
 * sandbox_priv.h: what the two files of vmm/sandbox share: the calling
 * thread's role (for the violation report) and the test hook.
 */
#ifndef VMM_SANDBOX_PRIV_H
#define VMM_SANDBOX_PRIV_H

#include <stdbool.h>

#include "vmm_sandbox.h"

/* Name of the sandboxed role of this thread, NULL if none. */
extern _Thread_local const char *vmm_sandbox_role_name;

/* Names of the roles, indexed by enum vmm_sandbox_role. */
extern const char *const vmm_sandbox_roles[2];

/* Does VPMU_TEST_SANDBOX_VIOLATE ask (role) to break the rules? */
bool vmm_sandbox_hook(enum vmm_sandbox_role role);

#endif /* VMM_SANDBOX_PRIV_H */
