// SPDX-License-Identifier: MIT
/*
 * arch_smp.c: every vCPU has its own architectural PMU and LVTPC. Each
 * vCPU samples its own PIO exits (counter 0, period 10, re-armed by the
 * PMI handler as a driver would) over a different number of exits, at the
 * same time as the others; vCPU 0 then checks that each vCPU got exactly
 * its own number of PMIs and counts. Works with any model (CPUID picks the
 * Intel or AMD registers). Prints "arch_smp: ok, N vcpus".
 */
#include "arch_check.h"

#define PERIOD 10

static uint32_t sel_msr, ctr_msr, status_msr, ack_msr;
static volatile unsigned int pmis[KERNEL_MAX_VCPUS];
static volatile unsigned int done;
static volatile uint64_t left[KERNEL_MAX_VCPUS];

static void handler(void)
{
	unsigned int id = this_cpu()->id;
	uint64_t st;

	if (status_msr) {
		st = rdmsr(status_msr);
		wrmsr(ack_msr, st);
	}
	wrmsr(ctr_msr, CTR_MASK + 1 - PERIOD);
	pmis[id]++;
	lvtpc_write(ARCH_PMI_VECTOR); /* Intel masks LVTPC on delivery */
}

static void pick_model(void)
{
	struct cpuid_regs r;

	cpuid(0xa, &r);
	if ((r.eax & 0xff) >= 2) {
		sel_msr    = 0x186;
		ctr_msr    = 0x4c1; /* full width */
		status_msr = 0x38e;
		ack_msr    = 0x390;
		return;
	}
	sel_msr = 0xc0010200;
	ctr_msr = 0xc0010201;
	cpuid(0x80000000, &r);
	if (r.eax >= 0x80000022) {
		cpuid(0x80000022, &r);
		if (r.eax & 1) {
			status_msr = 0xc0000300;
			ack_msr    = 0xc0000302;
		}
	}
}

static unsigned int exits_of(unsigned int vcpu)
{
	return 50 * (vcpu + 1);
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	unsigned int i, n = bi->nr_vcpus;

	if (vcpu == 0) {
		arch_setup("arch_smp");
		pick_model();
		kernel_set_notify_handler(ARCH_PMI_VECTOR, handler);
		__atomic_store_n(&done, 1000, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 1000)
		cpu_relax();
	lvtpc_write(ARCH_PMI_VECTOR);
	wrmsr(ctr_msr, CTR_MASK + 1 - PERIOD);
	wrmsr(sel_msr, EV_PIO | EVSEL_OS | EVSEL_INT | EVSEL_EN);
	pio_loop_irq_on(exits_of(vcpu));
	wrmsr(sel_msr, 0);
	left[vcpu] = rdmsr(ctr_msr);
	__atomic_add_fetch(&done, 1, __ATOMIC_ACQ_REL);
	if (vcpu != 0)
		return;
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 1000 + n)
		cpu_relax();
	for (i = 0; i < n; i++) {
		check_u64("PMIs of the vCPU", pmis[i], exits_of(i) / PERIOD);
		check_u64("counter of the vCPU", left[i],
			  CTR_MASK + 1 - PERIOD);
	}
	if (!arch_failures)
		kprintf("arch_smp: ok, %u vcpus\n", n);
	arch_done();
}
