// SPDX-License-Identifier: MIT
/*
 * test_pv_kick_cost.c: what the VMM charges a vCPU for a kick of
 * its sampling timer (vm_pmu.c, vpmu_cpu_charge): the kernel's part, inside
 * KVM_RUN (what the start-up probe measured, scaled by this kick's exit
 * against the probe's, else twice the wait from the moment the timer was
 * due to KVM_RUN's return), the accounting, and the
 * way back to the next KVM_RUN (shared page, requests, timer re-arm),
 * which vmm_pv_before_run() charges. An exit the timer did not cause
 * charges its accounting only. Without KVM: the VM's PMU state of
 * fake_vms, no vCPU thread, no timer.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <time.h>

#include "vm_config.h"
#include "vmm_pv.h"

#define MS 1000000ULL

static struct vmm_vm vm;

static void setup(void)
{
	struct vmm_config cfg;

	vmm_config_defaults(&cfg);
	cfg.nr_vcpus     = 1;
	vm.nr_vcpus      = 1;
	vm.has_sync_regs = true;
	vm.kvm_fd = vm.vm_fd = -1;
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	vm.vcpus = calloc(1, sizeof(*vm.vcpus));
	cr_assert_not_null(vm.vcpus);
	vm.vcpus[0].vm  = &vm;
	vm.vcpus[0].fd  = -1;
	vm.vcpus[0].run = calloc(1, sizeof(struct kvm_run));
	cr_assert_not_null(vm.vcpus[0].run);
	cr_assert(eq(int, vmm_pv_create(&vm, &cfg), 0));
}

static void teardown(void)
{
	vmm_pv_destroy(&vm);
	vmm_pv_detach(&vm);
	free(vm.vcpus[0].run);
	free(vm.vcpus);
}

TestSuite(vmm_pv_kick_cost, .init = setup, .fini = teardown);

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ULL),
			      (long)(ns % 1000000000ULL)};

	while (nanosleep(&ts, &ts))
		;
}

/* The timer of vCPU 0 armed so that it was due (ago) ns before now. */
static void timer_was_due(struct vmm_pv_vcpu *p, uint64_t ago)
{
	p->armed_run_ns   = vpmu_cpu_run_ns(p->cpu);
	p->armed_deadline = p->armed_run_ns + 20000;
	p->armed_wall_ns  = vpmu_monotonic_ns() - ago - 20000;
}

Test(vmm_pv_kick_cost, a_timer_kick_is_charged_until_the_next_entry)
{
	struct vmm_vcpu *v    = &vm.vcpus[0];
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);
	uint64_t c0, c1, c2;

	timer_was_due(p, 200000); /* 200 us from due to KVM_RUN's return */
	c0               = vpmu_cpu_cost_ns(p->cpu);
	v->kick.by_timer = true; /* the kick includes our timer's signal */
	vmm_pv_after_run(v, MS, vpmu_monotonic_ns(), true);
	c1 = vpmu_cpu_cost_ns(p->cpu);
	/* No probe: the exit, and the unseen re-entry as long again. */
	cr_assert(le(u64, c0 + 400000, c1), "the kick's kernel part");
	cr_assert(le(u64, 400000, v->kick.kernel_charged));
	sleep_ns(2 * MS); /* shared page, requests, re-arm... */
	vmm_pv_before_run(v);
	c2 = vpmu_cpu_cost_ns(p->cpu);
	cr_assert(le(u64, c1 + 2 * MS, c2), "the way back to KVM_RUN too");
}

/*
 * With the start-up probe's figure and no exit of its own to scale it
 * by, that figure is the kernel's part of every kick that came inside
 * KVM_RUN, however late KVM_RUN returned (a late return is the host's
 * scheduling, not the kick).
 */
Test(vmm_pv_kick_cost, a_probed_kick_charges_the_probed_kernel_part)
{
	struct vmm_vcpu *v    = &vm.vcpus[0];
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);
	uint64_t c0, c1;

	vm.kick_cost = (struct vmm_kick_cost){
		.lost_ns = 33000, .user_ns = 3000, .kernel_ns = 30000};
	timer_was_due(p, 200000);
	c0               = vpmu_cpu_cost_ns(p->cpu);
	v->kick.by_timer = true;
	vmm_pv_after_run(v, MS, vpmu_monotonic_ns(), true);
	c1 = vpmu_cpu_cost_ns(p->cpu);
	cr_assert(le(u64, c0 + 30000, c1), "the probed kernel part");
	cr_assert(lt(u64, c1 - c0, 200000), "%llu ns charged",
		  (unsigned long long)(c1 - c0));
	cr_assert(eq(u64, v->kick.kernel_charged, 30000));
}

/* One kick of our timer that was due (ago) ns before KVM_RUN returned. */
static uint64_t kernel_charged_for(uint64_t ago)
{
	struct vmm_vcpu *v    = &vm.vcpus[0];
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);

	v->kick.kernel_charged = 0;
	timer_was_due(p, ago);
	v->kick.by_timer = true;
	vmm_pv_after_run(v, MS, vpmu_monotonic_ns(), true);
	return v->kick.kernel_charged;
}

/*
 * Where the probe also saw the exit (timer due to KVM_RUN's return), the
 * kernel's part follows the exit this kick took against the probe's: a
 * host running slower than at the probe is charged more, within half and
 * twice the probed part.
 */
Test(vmm_pv_kick_cost, a_probed_kick_scales_with_its_exit)
{
	uint64_t c;

	vm.kick_cost = (struct vmm_kick_cost){.lost_ns   = 110000,
					      .user_ns   = 10000,
					      .kernel_ns = 100000,
					      .exit_ns   = 50000};
	c = kernel_charged_for(60000); /* 1.2 x the probe's exit, or more */
	cr_assert(le(u64, 120000, c), "%llu", (unsigned long long)c);
	cr_assert(le(u64, c, 200000), "%llu", (unsigned long long)c);
	/* 4 x the exit: twice the probed part at most. */
	cr_assert(eq(u64, kernel_charged_for(200000), 200000));
	/* A hundredth of the probe's exit: half the probed part at least. */
	vm.kick_cost.exit_ns   = 10 * MS;
	vm.kick_cost.kernel_ns = MS;
	cr_assert(eq(u64, kernel_charged_for(100000), MS / 2));
}

Test(vmm_pv_kick_cost, other_exits_charge_their_accounting_only)
{
	struct vmm_vcpu *v    = &vm.vcpus[0];
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);
	uint64_t c0, c1;

	c0 = vpmu_cpu_cost_ns(p->cpu);
	/* A guest I/O exit, say. */
	vmm_pv_after_run(v, 1000, vpmu_monotonic_ns(), false);
	sleep_ns(100 * MS); /* handling the I/O */
	vmm_pv_before_run(v);
	c1 = vpmu_cpu_cost_ns(p->cpu);
	cr_assert(lt(u64, c1 - c0, 100 * MS), "%llu ns charged",
		  (unsigned long long)(c1 - c0));
}

/*
 * A timer due before KVM_RUN began fired outside the guest (KVM_RUN
 * returned at once): only that return is its kick, and there was no
 * world switch: no kernel part is charged.
 */
Test(vmm_pv_kick_cost, a_kick_before_kvm_run_charges_no_kernel_part)
{
	struct vmm_vcpu *v    = &vm.vcpus[0];
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);
	uint64_t c0, c1, est0;

	timer_was_due(p, 200000); /* due 200 us ago */
	c0               = vpmu_cpu_cost_ns(p->cpu);
	est0             = v->kick.kernel_charged;
	v->kick.by_timer = true;
	vmm_pv_after_run(v, 1000, vpmu_monotonic_ns(), true); /* 1 us run */
	vmm_pv_before_run(v);
	c1 = vpmu_cpu_cost_ns(p->cpu);
	cr_assert(lt(u64, c1 - c0, 200000), "%llu ns charged",
		  (unsigned long long)(c1 - c0));
	cr_assert(eq(u64, v->kick.kernel_charged, est0));
}

/* A snapshot pause between a kick and the next KVM_RUN is not its cost. */
Test(vmm_pv_kick_cost, a_pause_after_a_kick_is_not_charged)
{
	struct vmm_vcpu *v    = &vm.vcpus[0];
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(v);
	uint64_t c0, c1;

	timer_was_due(p, 1000);
	v->kick.by_timer = true;
	vmm_pv_after_run(v, MS, vpmu_monotonic_ns(), true);
	c0 = vpmu_cpu_cost_ns(p->cpu);
	sleep_ns(100 * MS); /* paused for a snapshot */
	vmm_pv_resumed(v);
	vmm_pv_before_run(v);
	c1 = vpmu_cpu_cost_ns(p->cpu);
	cr_assert(lt(u64, c1 - c0, 100 * MS), "%llu ns charged",
		  (unsigned long long)(c1 - c0));
}
