// SPDX-License-Identifier: MIT
/*
 * test_chain_ring.c: the per-vCPU ring of call chains between the vCPU
 * thread and the control thread (vmm/pv/pv_callchain.c): a
 * chain is found by its sample's run time, a sample without one gets an
 * empty chain, the oldest chains give way when the ring is full, the
 * copy is bounded by the caller's depth, and chains are kept only while
 * a host context wants them. No VM is run.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "pv_fake_vm.h"

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;

static void setup(void)
{
	pv_fake_vm(&vm, &vcpu);
}

static void teardown(void)
{
	vmm_pv_chain_free(&vcpu);
	vmm_pv_detach(&vm);
}

TestSuite(vmm_chain_ring, .init = setup, .fini = teardown);

Test(vmm_chain_ring, found_by_sample_time)
{
	uint64_t a[3] = {0x101, 0x202, 0x303}, out[VMM_PV_CHAIN_DEPTH_MAX];

	/* Not enabled: nothing is kept. */
	vmm_pv_chain_store(&vcpu, 100, a, 3);
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 100, out, 32), 0));
	cr_assert(eq(int, vmm_pv_chain_enable(&vcpu), 0));
	cr_assert(eq(u32, atomic_load(&vmm_pv_vcpu(&vcpu)->chain_users), 1));
	vmm_pv_chain_store(&vcpu, 100, a, 3);
	vmm_pv_chain_store(&vcpu, 200, a + 1, 2);
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 100, out, 32), 3));
	cr_assert(eq(u64, out[0], 0x101));
	cr_assert(eq(u64, out[2], 0x303));
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 200, out, 32), 2));
	cr_assert(eq(u64, out[0], 0x202));
	/* Bounded by the caller's depth. */
	memset(out, 0, sizeof(out));
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 100, out, 1), 1));
	cr_assert(eq(u64, out[1], 0));
	/* No chain for that time, and time 0 never matches an empty slot. */
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 150, out, 32), 0));
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 0, out, 32), 0));
	vmm_pv_chain_disable(&vcpu);
	cr_assert(eq(u32, atomic_load(&vmm_pv_vcpu(&vcpu)->chain_users), 0));
}

Test(vmm_chain_ring, oldest_give_way)
{
	uint64_t ret[VMM_PV_CHAIN_DEPTH_MAX + 4], out[VMM_PV_CHAIN_DEPTH_MAX];
	uint64_t t;

	for (t = 0; t < VMM_PV_CHAIN_DEPTH_MAX + 4; t++)
		ret[t] = 0x1000 + t;
	cr_assert(eq(int, vmm_pv_chain_enable(&vcpu), 0));
	for (t = 1; t <= VMM_PV_CHAIN_RING + 10; t++)
		vmm_pv_chain_store(&vcpu, t, ret, VMM_PV_CHAIN_DEPTH_MAX + 4);
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 10, out, 64), 0));
	cr_assert(eq(u32, vmm_pv_chain_lookup(&vcpu, 11, out, 64),
		     VMM_PV_CHAIN_DEPTH_MAX));
	cr_assert(
		eq(u32,
		   vmm_pv_chain_lookup(&vcpu, VMM_PV_CHAIN_RING + 10, out, 64),
		   VMM_PV_CHAIN_DEPTH_MAX));
	cr_assert(eq(u64, out[VMM_PV_CHAIN_DEPTH_MAX - 1],
		     0x1000 + VMM_PV_CHAIN_DEPTH_MAX - 1));
}
