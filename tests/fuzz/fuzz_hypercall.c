// SPDX-License-Identifier: MIT
/*
 * fuzz_hypercall.c: the hypercall doorbell, the request-block size rule
 * (vmm/core/hypercall_block.c) and the perfmon2 hypercalls
 * (vmm/pv/pv_calls.c, pv_read_msg.c, shared_page.c) driven by a guest
 * program read from the input, against a VM without KVM (fake_vm.h).
 *
 * The input is a sequence of calls, each:
 *   u8  call   : bit 7 clear: hypercall 1 + call % 9 (the ones that exist);
 *                set: any doorbell port PVPMU_PORT_HC_BASE + call % 64
 *   u8  where  : where the request block is (GPA), at and across every
 *                boundary of guest RAM and of the sampling-buffer window:
 *                where % 8 picks a base, then u16 delta
 *   u8  len    : request-block bytes that follow and are written there
 *                (clipped to RAM)
 *   u16 alen   : argument bytes that follow, written at ARG_GPA, where a
 *                block's arg_gpa usually points
 *   u8  vcpu   : which of the two vCPUs calls
 * The VMM must answer every call with a status and never touch memory
 * outside RAM; ASan and UBSan watch the host side.
 */
#include "fuzz_input.h"

#include <string.h>

#include "fake_vm.h"

#define ARG_GPA 0x10000ULL

static uint64_t block_gpa(struct fuzz_in *in, uint8_t where)
{
	uint64_t delta = fuzz_take(in, 2);

	switch (where % 8) {
	case 0:
		return 0x1000 + delta % 64; /* inside RAM */
	case 1:
		return FAKE_VM_MEM - delta % 4200; /* across RAM's end */
	case 2:
		return FAKE_VM_MEM + delta; /* above RAM */
	case 3:
		return delta; /* page 0 and around */
	case 4:
		return VMM_PV_SMPL_GPA_BASE - 2048 + delta % 8192;
	case 5:
		return VMM_PV_SMPL_GPA_END - 2048 + delta % 8192;
	case 6:
		return 0xffffffffULL - delta % 4200; /* top of the 32 bits */
	default:
		return (fuzz_take(in, 2) << 16) | delta; /* anywhere */
	}
}

/*
 * Copy the next (len) input bytes to guest (gpa), the part inside RAM
 * (one memcpy: a byte loop's traced compares were a sixth of the time).
 */
static void poke(struct vmm_vm *vm, struct fuzz_in *in, uint64_t gpa,
		 size_t len)
{
	size_t n = len < in->left ? len : in->left;

	if (gpa < vm->mem_size)
		memcpy((uint8_t *)vm->mem + gpa, in->p,
		       vm->mem_size - gpa < n ? vm->mem_size - gpa : n);
	in->p += n;
	in->left -= n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in  = {.p = data, .left = size};
	struct vmm_vm *vm  = fake_vm_fresh(true);
	unsigned int calls = 0;

	while (in.left && calls++ < 256) {
		uint8_t call  = (uint8_t)fuzz_take(&in, 1);
		uint8_t where = (uint8_t)fuzz_take(&in, 1);
		uint64_t gpa  = block_gpa(&in, where);
		size_t len    = fuzz_take(&in, 1);
		unsigned int nr;
		size_t alen;

		poke(vm, &in, gpa, len);
		alen = fuzz_take(&in, 2) % 4096;
		poke(vm, &in, ARG_GPA, alen);
		nr = call & 0x80 ? call % PVPMU_HC_MAX : 1 + call % 9;
		fake_vm_out32(&vm->vcpus[fuzz_take(&in, 1) & 1],
			      (uint16_t)(PVPMU_PORT_HC_BASE + nr),
			      (uint32_t)gpa);
	}
	return 0;
}
