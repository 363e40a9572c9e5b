// SPDX-License-Identifier: MIT
/*
 * test_ctl_vcpu_sync.c: the completion that replaced kick-and-poll
 * (vmm/ctl/ctl_vcpu_sync.c), without KVM: a VM of three vCPUs whose
 * "vCPU threads" are plain threads. A responsive one answers each kick
 * the way the run loop does after accounting (vmm_control_vcpu_accounted);
 * a stuck one takes the kick and never accounts; a halted one has no
 * unaccounted time. The control side must wake on the completion (not a
 * timeout), skip the halted vCPU without kicking it, and report the stuck
 * one stale, with the age of its data, once the bounded wait is over.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "ctl_priv.h"

enum { HALTED, RESPONSIVE, STUCK, NR_VCPUS };

static struct vmm_vm vm;
static struct vmm_vcpu vcpus[NR_VCPUS];
static struct vmm_control ctl;
static atomic_bool stopping;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A vCPU thread: every kick (SIGUSR1) is an exit; account it or not. */
static void *vcpu_thread(void *arg)
{
	struct vmm_vcpu *v = arg;
	sigset_t kick;
	int sig;

	sigemptyset(&kick);
	sigaddset(&kick, SIGUSR1);
	while (!atomic_load(&stopping)) {
		if (sigwait(&kick, &sig))
			break;
		if (v->index == RESPONSIVE && !atomic_load(&stopping))
			vmm_control_vcpu_accounted(v);
	}
	return NULL;
}

static void setup(void)
{
	sigset_t kick;
	unsigned int i;

	/* Kicks wait in sigwait(): block them here, threads inherit it. */
	sigemptyset(&kick);
	sigaddset(&kick, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &kick, NULL);
	vm.nr_vcpus = NR_VCPUS;
	vm.vcpus    = vcpus;
	vmm_vm_add_module(&vm, &vmm_ctl_module);
	vmm_vm_set_module_priv(&vm, &vmm_ctl_module, &ctl);
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	ctl.vm = &vm;
	cr_assert(eq(int, vmm_ctl_sync_init(&ctl, NR_VCPUS), 0));
	for (i = 0; i < NR_VCPUS; i++) {
		vcpus[i].vm    = &vm;
		vcpus[i].index = i;
		cr_assert(eq(int,
			     pthread_create(&vcpus[i].thread, NULL, vcpu_thread,
					    &vcpus[i]),
			     0));
		vcpus[i].has_thread = true;
	}
	vcpus[HALTED].halted = true;
}

static void teardown(void)
{
	unsigned int i;

	atomic_store(&stopping, true);
	for (i = 0; i < NR_VCPUS; i++) {
		pthread_kill(vcpus[i].thread, SIGUSR1);
		pthread_join(vcpus[i].thread, NULL);
	}
	vmm_ctl_sync_free(&ctl);
}

TestSuite(vmm_ctl_sync, .init = setup, .fini = teardown, .timeout = 20);

Test(vmm_ctl_sync, wakes_on_the_completion_not_the_timeout)
{
	unsigned int which = RESPONSIVE;
	struct vmm_ctl_fresh fresh;
	uint64_t t0;

	ctl.sync_wait_ns = 5000000000ULL; /* far longer than a completion */
	t0               = now_ns();
	vmm_ctl_sync(&ctl, &which, 1, &fresh);
	cr_expect(lt(u64, now_ns() - t0, 1000000000ULL),
		  "waited %llu ns for a vCPU that accounts at once",
		  (unsigned long long)(now_ns() - t0));
	cr_expect(not(fresh.stale));
	cr_expect(eq(u32,
		     atomic_load(&vcpus[RESPONSIVE].requests) & VMM_REQ_TIMER,
		     VMM_REQ_TIMER),
		  "the vCPU was kicked");
}

Test(vmm_ctl_sync, halted_vcpu_is_neither_kicked_nor_waited_for)
{
	unsigned int which = HALTED;
	struct vmm_ctl_fresh fresh;
	uint64_t t0;

	ctl.sync_wait_ns = 5000000000ULL;
	t0               = now_ns();
	vmm_ctl_sync(&ctl, &which, 1, &fresh);
	cr_expect(lt(u64, now_ns() - t0, 1000000000ULL));
	cr_expect(not(fresh.stale));
	cr_expect(eq(u32, atomic_load(&vcpus[HALTED].requests), 0));
}

Test(vmm_ctl_sync, stuck_vcpu_is_stale_after_the_bounded_wait)
{
	unsigned int all[NR_VCPUS] = {HALTED, RESPONSIVE, STUCK};
	struct vmm_ctl_fresh fresh[NR_VCPUS];
	uint64_t t0, dt;

	ctl.sync_wait_ns = 20000000ULL;
	/* The stuck vCPU last accounted 1 s ago. */
	atomic_store(&ctl.sync[STUCK].accounted_ns, now_ns() - 1000000000ULL);
	t0 = now_ns();
	vmm_ctl_sync(&ctl, all, NR_VCPUS, fresh);
	dt = now_ns() - t0;
	cr_expect(ge(u64, dt, ctl.sync_wait_ns), "gave up after %llu ns",
		  (unsigned long long)dt);
	cr_expect(lt(u64, dt, 1000000000ULL), "one wait for all vCPUs");
	cr_expect(not(fresh[HALTED].stale));
	cr_expect(not(fresh[RESPONSIVE].stale));
	cr_expect(fresh[STUCK].stale);
	cr_expect(ge(u64, fresh[STUCK].age_ns, 1000000000ULL));
}

Test(vmm_ctl_sync, zero_budget_makes_every_running_vcpu_stale)
{
	unsigned int all[NR_VCPUS] = {HALTED, RESPONSIVE, STUCK};
	struct vmm_ctl_fresh fresh[NR_VCPUS];

	ctl.sync_wait_ns = 0; /* VPMU_TEST_SYNC_WAIT_NS=0 */
	vmm_ctl_sync(&ctl, all, NR_VCPUS, fresh);
	cr_expect(not(fresh[HALTED].stale));
	cr_expect(fresh[RESPONSIVE].stale);
	cr_expect(fresh[STUCK].stale);
}

Test(vmm_ctl_sync, later_requests_need_a_new_completion)
{
	unsigned int which = RESPONSIVE;
	struct vmm_ctl_fresh fresh;
	int i;

	ctl.sync_wait_ns = 5000000000ULL;
	for (i = 0; i < 50; i++) {
		vmm_ctl_sync(&ctl, &which, 1, &fresh);
		cr_assert(not(fresh.stale), "round %d", i);
	}
	cr_expect(
		eq(u64, atomic_load(&ctl.sync[RESPONSIVE].done), ctl.sync_seq));
}
