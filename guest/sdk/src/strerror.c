// SPDX-License-Identifier: MIT
/*
 * strerror.c: messages for the PVPMU_E* codes (pvpmu/abi.h section 4),
 * worded for perfmon2 where the spec gives a code a specific meaning.
 */
#include "sdk_priv.h"

struct err_msg {
	int code;
	const char *msg;
};

static const struct err_msg messages[] = {
	{PVPMU_OK, "success"},
	{PVPMU_EPERM, "operation not permitted"},
	{PVPMU_ENOENT, "no such entry (event, format or buffer)"},
	{PVPMU_ESRCH, "no such thread"},
	{PVPMU_EINTR, "interrupted"},
	{PVPMU_EIO, "input/output error"},
	{PVPMU_E2BIG, "argument too big"},
	{PVPMU_EBADF, "bad context handle"},
	{PVPMU_EAGAIN, "try again (nothing available now)"},
	{PVPMU_ENOMEM, "out of memory or over a host limit"},
	{PVPMU_EACCES, "permission denied"},
	{PVPMU_EFAULT, "bad address or too many elements"},
	{PVPMU_EBUSY, "not possible in the context's current state"},
	{PVPMU_EEXIST, "already exists"},
	{PVPMU_ENODEV, "no vpmu device (not a vpmu VM)"},
	{PVPMU_EINVAL, "invalid argument"},
	{PVPMU_ENOSPC, "no space left"},
	{PVPMU_ENOSYS, "hypercall not implemented"},
	{PVPMU_ENOTSUP, "not supported"},
	{PVPMU_ETIMEDOUT, "timed out"},
};

const char *pvpmu_strerror(int err)
{
	/* Negate in unsigned arithmetic: -INT_MIN does not exist. */
	unsigned int e = err < 0 ? 0U - (unsigned int)err : (unsigned int)err;
	unsigned int i;

	for (i = 0; i < sizeof(messages) / sizeof(messages[0]); i++) {
		if ((unsigned int)messages[i].code == e)
			return messages[i].msg;
	}
	return "unknown error";
}
