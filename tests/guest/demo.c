// SPDX-License-Identifier: MIT
/*
 * demo.c: a ring-0 demo from before the vPMU demo (demo_pmu,
 * guest/tools/demo_main.c). vCPU 0
 * prints a banner with the VM's name and UUID; every vCPU times a short
 * ring-0 loop and reports; vCPU 0 waits for all, then every vCPU halts.
 */
#include "kernel.h"

#define DEMO_LOOP_ITERS 200

static uint32_t nr_done;

static void banner(const struct pvpmu_boot_info *bi)
{
	const uint8_t *u = bi->uuid;

	kprintf("vpmu demo: vm \"%.*s\", %u vcpus, %llu MiB\n",
		(int)sizeof(bi->name), (const char *)bi->name, bi->nr_vcpus,
		(unsigned long long)(bi->mem_size >> 20));
	kprintf("vpmu demo: uuid %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		"%02x%02x%02x%02x%02x%02x\n",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* A small xorshift loop; the checksum keeps the compiler honest. */
static uint64_t work(unsigned int seed, uint64_t *cycles)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ seed, t0;
	unsigned int i;

	t0 = rdtsc_ordered();
	for (i = 0; i < DEMO_LOOP_ITERS; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	*cycles = rdtsc_ordered() - t0;
	return x;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	uint32_t nr = bi->nr_vcpus;
	uint64_t sum, cycles;

	if (nr > KERNEL_MAX_VCPUS)
		nr = KERNEL_MAX_VCPUS;
	if (vcpu == 0)
		banner(bi);
	sum = work(vcpu, &cycles);
	kprintf("vpmu demo: vcpu %u: %u-iteration ring-0 loop took %llu "
		"cycles (checksum %016llx)\n",
		vcpu, DEMO_LOOP_ITERS, (unsigned long long)cycles,
		(unsigned long long)sum);
	__atomic_add_fetch(&nr_done, 1, __ATOMIC_RELEASE);
	if (vcpu != 0)
		return;
	while (__atomic_load_n(&nr_done, __ATOMIC_ACQUIRE) < nr)
		cpu_relax();
	kprintf("vpmu demo: all %u vcpus done\n", nr);
}
