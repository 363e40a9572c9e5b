// SPDX-License-Identifier: MIT
/*
 * test_kick_path.c: cheaper kicks, without KVM: the kick
 * signal's handler tells the deadline timer's kicks (SI_TIMER) from other
 * threads' (tgkill); only a timer kick re-arms the one-shot timer, and one
 * that came before the run-time deadline counts as early; `vpmu run
 * --stats` prints the kick path's means from TSC cycles; the kick probe
 * counts each phase's own entry and exit.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vm_config.h"
#include "vmm_core_priv.h"
#include "vmm_pv.h"

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;

static void setup(void)
{
	struct vmm_config cfg;

	vmm_config_defaults(&cfg);
	cfg.nr_vcpus = 1;
	snprintf(vm.name, sizeof(vm.name), "kick");
	vm.nr_vcpus = 1;
	vm.vcpus    = &vcpu;
	vm.kvm_fd = vm.vm_fd = -1;
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	vcpu.vm  = &vm;
	vcpu.fd  = -1;
	vcpu.run = calloc(1, sizeof(struct kvm_run));
	cr_assert_not_null(vcpu.run);
	cr_assert(eq(int, vmm_pv_create(&vm, &cfg), 0));
	cr_assert(eq(int, vmm_vcpu_signal_init(), 0));
}

static void teardown(void)
{
	vmm_pv_destroy(&vm);
	vmm_pv_detach(&vm);
	free(vcpu.run);
}

TestSuite(vmm_kick, .init = setup, .fini = teardown, .timeout = 20);

/* Sleep until a handled signal interrupts the sleep (at most 5 s). */
static void wait_handled(void)
{
	struct timespec s = {5, 0};

	cr_assert(eq(int, nanosleep(&s, NULL), -1), "a signal came");
}

Test(vmm_kick, handler_tells_the_timer_from_a_tgkill)
{
	struct sigevent sev   = {.sigev_notify = SIGEV_THREAD_ID,
				 .sigev_signo  = SIGUSR1};
	struct itimerspec its = {.it_value = {0, 1000000}};
	timer_t t;

	/* To itself: handled before pthread_kill() returns. */
	cr_assert(eq(int, pthread_kill(pthread_self(), SIGUSR1), 0));
	cr_expect(not(vmm_vcpu_take_timer_kick()), "a tgkill is no timer");

	sev._sigev_un._tid = gettid();
	cr_assert(eq(int, timer_create(CLOCK_MONOTONIC, &sev, &t), 0));
	cr_assert(eq(int, timer_settime(t, 0, &its, NULL), 0));
	wait_handled();
	cr_expect(vmm_vcpu_take_timer_kick(), "the timer's kick is seen");
	cr_expect(not(vmm_vcpu_take_timer_kick()), "and taken once");
	timer_delete(t);
}

Test(vmm_kick, only_the_timers_kick_rearms_it)
{
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(&vcpu);

	p->armed_deadline = 5000000; /* armed for 5 ms of run time */
	p->armed_run_ns   = 0;
	p->armed_wall_ns  = vpmu_monotonic_ns();

	/* An operator's read kicked: the timer stays armed as it was. */
	vcpu.kick.by_timer = false;
	vmm_pv_after_run(&vcpu, 1000000, vpmu_monotonic_ns(), true);
	cr_expect(eq(u64, p->armed_deadline, 5000000));
	cr_expect(eq(u64, vcpu.kick.early, 0));

	/* The timer fired at 2 ms of run time: early, and re-armed. */
	vcpu.kick.by_timer = true;
	vmm_pv_after_run(&vcpu, 1000000, vpmu_monotonic_ns(), true);
	cr_expect(eq(u64, p->armed_deadline, VPMU_NO_DEADLINE - 1),
		  "forced to re-arm before the next run");
	cr_expect(eq(u64, vcpu.kick.early, 1));

	/* Fired at the deadline (6 ms >= 5 ms): re-armed, not early. */
	p->armed_deadline = 5000000;
	vmm_pv_after_run(&vcpu, 4000000, vpmu_monotonic_ns(), true);
	cr_expect(eq(u64, p->armed_deadline, VPMU_NO_DEADLINE - 1));
	cr_expect(eq(u64, vcpu.kick.early, 1));
}

/* 1 GHz TSC: 1000 cycles per us; 4 kicks. */
Test(vmm_kick, stats_print_the_means_in_us)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out  = open_memstream(&text, &len);

	vm.tsc_khz       = 1000000;
	vcpu.stats.kicks = 4;
	vcpu.kick        = (struct vmm_kick_stats){.timer          = 3,
						   .early          = 1,
						   .outside        = 1,
						   .rearms         = 3,
						   .exit           = 8000,
						   .acct           = 4000,
						   .shared         = 400,
						   .deadline       = 2000,
						   .arm            = 6000,
						   .kernel_charged = 20000};
	vmm_stats_print(&vm, out);
	fclose(out);
	cr_expect(ne(ptr,
		     strstr(text, "(timer 3, of which early 1; taken "
				  "outside KVM_RUN 1; timer re-armed 3)"),
		     NULL),
		  "%s", text);
	cr_expect(ne(ptr,
		     strstr(text, "exit 2.00, accounting 1.00, shared "
				  "page 0.10, to re-entry 2.00 "
				  "(timer_settime 1.50, requests and "
				  "deadline 0.50); kernel part charged "
				  "5.00 us (no probe: twice the exit's "
				  "length)"),
		     NULL),
		  "%s", text);
	free(text);
}

/*
 * The kick probe's arithmetic, with a guest of 1 turn per ns whose kicks
 * take 100 us of kernel time and 10 us of user space: each phase of
 * 6.4 ms also enters once and exits once (100 us), so the free phase
 * ran 6,300 turns and one kicked 16 times 6,400 - 100 - 16 x 110 = 4,540.
 * A kick took 110 us of the guest's time, not the 111.75 us that the free
 * phase's turns over its whole wall time made of it.
 */
Test(vmm_kick, probe_counts_each_phases_own_entry_and_exit)
{
	struct vmm_probe_phase free_run = {.wall_ns = 6400000,
					   .turns   = 6300000};
	struct vmm_probe_phase kicked   = {.wall_ns = 6400000,
					   .kicks   = 16,
					   .user_ns = 160000,
					   .turns   = 4540000};
	double lost = vmm_kick_probe_lost_ns(&free_run, &kicked);

	cr_expect(epsilon_eq(dbl, lost, 110000.0, 0.001), "lost %.2f ns", lost);
	/* More turns kicked than free (a noisy free phase): never below 0. */
	free_run.turns = 4000000;
	cr_expect(eq(dbl, vmm_kick_probe_lost_ns(&free_run, &kicked), 10000.0),
		  "the user space stays");
	/* No kick, no turns left alone: nothing to say. */
	free_run.turns = 0;
	cr_expect(eq(dbl, vmm_kick_probe_lost_ns(&free_run, &kicked), 0));
	free_run.turns = 6300000;
	kicked.kicks   = 0;
	cr_expect(eq(dbl, vmm_kick_probe_lost_ns(&free_run, &kicked), 0));
}
