// SPDX-License-Identifier: MIT
/*
 * pfm_calls.c: the perfmon2 calls of libpvpmu that only pack their
 * arguments (spec 3.1 / 6.1), shared by both builds: each goes through
 * sdk_pfm_call(), a PVPMU_HC_PFM hypercall in the freestanding build
 * (pfm.c) or the pvpmu.ko ioctl on Linux (linux/pfm_linux.c).
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

int sdk_pfm_vec(int fd, unsigned int cmd, void *arr, int n, pvpmu_u64 elem)
{
	if (n > 0 && !arr)
		return -PVPMU_EFAULT;
	return sdk_pfm_call(fd, cmd, n > 0 ? arr : 0,
			    n > 0 ? (pvpmu_u64)n * elem : 0, n);
}

int sdk_pfm_one(int fd, unsigned int cmd, void *arg, pvpmu_u64 size)
{
	return sdk_pfm_call(fd, cmd, arg, arg ? size : 0, arg ? 1 : 0);
}

int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int n)
{
	return sdk_pfm_vec(fd, PFM_WRITE_PMCS, pmcs, n, sizeof(*pmcs));
}

int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int n)
{
	return sdk_pfm_vec(fd, PFM_WRITE_PMDS, pmds, n, sizeof(*pmds));
}

int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int n)
{
	return sdk_pfm_vec(fd, PFM_READ_PMDS, pmds, n, sizeof(*pmds));
}

int pfm_load_context(int fd, pfarg_load_t *load)
{
	if (!load)
		return -PVPMU_EFAULT;
	return sdk_pfm_one(fd, PFM_LOAD_CONTEXT, load, sizeof(*load));
}

int pfm_start(int fd, pfarg_start_t *start)
{
	return sdk_pfm_one(fd, PFM_START, start, sizeof(*start));
}

int pfm_stop(int fd)
{
	return sdk_pfm_one(fd, PFM_STOP, 0, 0);
}

int pfm_unload_context(int fd)
{
	return sdk_pfm_one(fd, PFM_UNLOAD_CONTEXT, 0, 0);
}

int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int n)
{
	return sdk_pfm_vec(fd, PFM_CREATE_EVTSETS, setd, n, sizeof(*setd));
}

int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int n)
{
	return sdk_pfm_vec(fd, PFM_DELETE_EVTSETS, setd, n, sizeof(*setd));
}

int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int n)
{
	return sdk_pfm_vec(fd, PFM_GETINFO_EVTSETS, info, n, sizeof(*info));
}
