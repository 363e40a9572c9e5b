// SPDX-License-Identifier: MIT
/*
 * pfm_calls.c: the perfmon2 calls of libpvpmu that only pack their
 * arguments (spec 3.1 / 6.1), the same in both builds of the SDK. Each goes
 * through the build's transport, sdk_pfm_call(): a PVPMU_HC_PFM hypercall
 * in the freestanding build (pfm.c), the pvpmu.ko ioctl on Linux
 * (linux/pfm_linux.c). Calls without a context use sdk_global_fd().
 *
 * Argument packing: vector commands send (n) elements and n * sizeof(elem)
 * bytes (0 bytes for n <= 0, which the VMM refuses with -EINVAL, as the
 * spec's n > 0 rule); single-struct commands send nargs 1 and the struct,
 * or nargs 0 and nothing for a NULL pointer where the spec allows it
 * (PFM_START). A NULL array with n > 0 is refused here with -PVPMU_EFAULT,
 * the spec's error for a bad pointer, since address 0 means "none" in the
 * hypercall block.
 */
#include "sdk_priv.h"

/* A vector command of (n) elements of (elem) bytes. */
static int vec(int fd, unsigned int cmd, void *arr, int n, pvpmu_u64 elem)
{
	if (n > 0 && !arr)
		return -PVPMU_EFAULT;
	return sdk_pfm_call(fd, cmd, n > 0 ? arr : 0,
			    n > 0 ? (pvpmu_u64)n * elem : 0, n);
}

/* A command taking one struct of (size) bytes, or none if (arg) is NULL. */
static int one(int fd, unsigned int cmd, void *arg, pvpmu_u64 size)
{
	return sdk_pfm_call(fd, cmd, arg, arg ? size : 0, arg ? 1 : 0);
}

int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int n)
{
	return vec(fd, PFM_WRITE_PMCS, pmcs, n, sizeof(*pmcs));
}

int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int n)
{
	return vec(fd, PFM_WRITE_PMDS, pmds, n, sizeof(*pmds));
}

int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int n)
{
	return vec(fd, PFM_READ_PMDS, pmds, n, sizeof(*pmds));
}

int pfm_load_context(int fd, pfarg_load_t *load)
{
	if (!load)
		return -PVPMU_EFAULT;
	return one(fd, PFM_LOAD_CONTEXT, load, sizeof(*load));
}

int pfm_start(int fd, pfarg_start_t *start)
{
	return one(fd, PFM_START, start, sizeof(*start));
}

int pfm_stop(int fd)
{
	return one(fd, PFM_STOP, 0, 0);
}

int pfm_unload_context(int fd)
{
	return one(fd, PFM_UNLOAD_CONTEXT, 0, 0);
}

int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int n)
{
	return vec(fd, PFM_CREATE_EVTSETS, setd, n, sizeof(*setd));
}

int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int n)
{
	return vec(fd, PFM_DELETE_EVTSETS, setd, n, sizeof(*setd));
}

int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int n)
{
	return vec(fd, PFM_GETINFO_EVTSETS, info, n, sizeof(*info));
}

int pfm_getinfo_pmcs(pfarg_pmcinfo_t *pmcs, int n)
{
	int fd = sdk_global_fd();

	return fd < 0 ? fd : vec(fd, PFM_GETINFO_PMCS, pmcs, n, sizeof(*pmcs));
}

int pfm_getinfo_pmds(pfarg_pmdinfo_t *pmds, int n)
{
	int fd = sdk_global_fd();

	return fd < 0 ? fd : vec(fd, PFM_GETINFO_PMDS, pmds, n, sizeof(*pmds));
}

int pfm_get_config(pfarg_config_t *cfg)
{
	int fd = sdk_global_fd();

	if (!cfg)
		return -PVPMU_EFAULT;
	return fd < 0 ? fd : one(fd, PFM_GET_CONFIG, cfg, sizeof(*cfg));
}

int pfm_set_config(pfarg_config_t *cfg)
{
	int fd = sdk_global_fd();

	if (!cfg)
		return -PVPMU_EFAULT;
	return fd < 0 ? fd : one(fd, PFM_SET_CONFIG, cfg, sizeof(*cfg));
}
