// SPDX-License-Identifier: MIT
/*
 * hypercall_block.c: the request-block size rule of pvpmu/abi.h §5.1 as
 * pure functions. No KVM and no guest memory: hypercall_doorbell.c fetches
 * the block once, these decide what the copy means.
 */
#include "vmm_core.h"

#include <string.h>

#include <pvpmu/abi.h>

static bool is_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (p[i])
			return false;
	}
	return true;
}

int vmm_hc_block_fit(void *block, size_t size, size_t min_size, const void *raw,
		     size_t raw_len)
{
	const uint8_t *bytes = raw;
	uint32_t guest_size;

	if (raw_len < sizeof(guest_size))
		return -PVPMU_EFAULT;
	memcpy(&guest_size, raw, sizeof(guest_size));
	if (guest_size < min_size)
		return -PVPMU_EINVAL;
	if (guest_size > PVPMU_HC_BLOCK_MAX)
		return -PVPMU_E2BIG;
	if (guest_size > raw_len)
		return -PVPMU_EFAULT;
	/* A newer guest: what this host does not know must ask for nothing. */
	if (guest_size > size && !is_zero(bytes + size, guest_size - size))
		return -PVPMU_E2BIG;
	if (guest_size >= size) {
		memcpy(block, raw, size);
		return 0;
	}
	/* An older guest: the fields it does not know read as zero. */
	memcpy(block, raw, guest_size);
	memset((uint8_t *)block + guest_size, 0, size - guest_size);
	return 0;
}

size_t vmm_hc_block_answer_len(const void *block, size_t size)
{
	uint32_t guest_size;

	memcpy(&guest_size, block, sizeof(guest_size));
	return guest_size < size ? guest_size : size;
}
