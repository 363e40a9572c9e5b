// SPDX-License-Identifier: MIT
/*
 * vcpu_loop.c: vCPU threads, the KVM_RUN loop, exit dispatch, kicks and halts.
 *
 * Kicks: vmm_vcpu_kick() posts a request bit and sends SIGUSR1 to the vCPU
 * thread. The signal handler sets kvm_run.immediate_exit, so a KVM_RUN that
 * is about to start returns at once and one in progress returns EINTR; the
 * loop then serves the requests. No kick is lost: requests are checked
 * after every return from KVM_RUN.
 *
 * Halts: the VMM has no in-kernel local APIC, so HLT exits to userspace.
 * A halted vCPU sleeps until it is kicked; when every vCPU is halted the VM
 * ends with status 0.
 */
#include "vmm_core_priv.h"

#include "vmm_snapshot.h"
#include "vmm_sandbox.h"
#include "vpmu_limits.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define VMM_KICK_SIGNAL SIGUSR1

static _Thread_local struct kvm_run *tls_run;
/* The TSC when the handler last ran, and whether our timer sent, or
 * anyone else (a tgkill: requests are posted first). */
static _Thread_local volatile uint64_t tls_kick_tsc;
static _Thread_local volatile sig_atomic_t tls_kick_timer;
static _Thread_local volatile sig_atomic_t tls_kick_other;

static void kick_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (tls_run)
		tls_run->immediate_exit = 1;
	/* Sticky until the run loop takes it: a tgkill may come first. */
	if (si && si->si_code == SI_TIMER)
		tls_kick_timer = 1;
	else
		tls_kick_other = 1;
	tls_kick_tsc = __rdtsc(); /* no system call, signal-safe */
}

int vmm_vcpu_signal_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = kick_handler;
	sa.sa_flags     = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: KVM_RUN must return EINTR. */
	if (sigaction(VMM_KICK_SIGNAL, &sa, NULL) < 0)
		return -errno;
	return 0;
}

void vmm_vcpu_kick(struct vmm_vcpu *vcpu, unsigned int req)
{
	struct vmm_vm *vm = vcpu->vm;

	atomic_fetch_or(&vcpu->requests, req);
	pthread_mutex_lock(&vm->lock);
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	if (vcpu->has_thread)
		pthread_kill(vcpu->thread, VMM_KICK_SIGNAL);
}

unsigned int vmm_vcpu_index(const struct vmm_vcpu *vcpu)
{
	return vcpu->index;
}

struct vmm_vm *vmm_vcpu_vm(const struct vmm_vcpu *vcpu)
{
	return vcpu->vm;
}

struct vmm_vcpu_stats *vmm_vcpu_stats(struct vmm_vcpu *vcpu)
{
	return &vcpu->stats;
}

/*
 * Does an interrupt a module holds wake (vcpu) from HLT? (deliverable):
 * one it can take now. Caller holds vm->lock.
 */
static bool halt_wakes(struct vmm_vcpu *vcpu, bool deliverable)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->halt_wakes &&
		    vm->mods[i]->halt_wakes(vcpu, deliverable))
			return true;
	}
	return false;
}

/* Would any vCPU still be woken by a pending notification? */
static bool any_irq_deliverable(const struct vmm_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		if (halt_wakes(&vm->vcpus[i], true))
			return true;
	}
	return false;
}

void vmm_vcpu_block_begin(struct vmm_vcpu *vcpu)
{
	struct vmm_vm *vm = vcpu->vm;

	pthread_mutex_lock(&vm->lock);
	vcpu->halted = true;
	if (++vm->nr_halted == vm->nr_vcpus && !vm->stopping &&
	    !any_irq_deliverable(vm)) {
		vm->stopping = true;
		vm->status   = 0;
		pthread_cond_broadcast(&vm->cond);
	}
	pthread_mutex_unlock(&vm->lock);
	/*
	 * Accounted at the exit that led here and no longer running: complete
	 * an operator's read posted just before (halted) was set.
	 */
	vmm_vcpu_accounted(vcpu);
	if (vm->stopping)
		vmm_modules_vm_stopping(vm);
}

void vmm_vcpu_block_end(struct vmm_vcpu *vcpu)
{
	struct vmm_vm *vm = vcpu->vm;

	pthread_mutex_lock(&vm->lock);
	vcpu->halted = false;
	vm->nr_halted--;
	pthread_mutex_unlock(&vm->lock);
}

/* Sleep in HLT until kicked or the VM stops; the last halter ends it. */
static void halt(struct vmm_vcpu *vcpu)
{
	struct vmm_vm *vm = vcpu->vm;
	uint64_t t0       = vpmu_monotonic_ns();

	vmm_vcpu_block_begin(vcpu);
	pthread_mutex_lock(&vm->lock);
	/* A pending interrupt wakes HLT only if the guest can take it. */
	for (;;) {
		/* A snapshot pauses a halted vCPU where it is. */
		if (atomic_fetch_and(&vcpu->requests, ~VMM_REQ_PAUSE) &
		    VMM_REQ_PAUSE) {
			pthread_mutex_unlock(&vm->lock);
			vmm_snapshot_vcpu_pause(vcpu, true);
			pthread_mutex_lock(&vm->lock);
			continue;
		}
		if (vm->stopping ||
		    (atomic_load(&vcpu->requests) & ~VMM_REQ_STOP) ||
		    halt_wakes(vcpu, false))
			break;
		pthread_cond_wait(&vm->cond, &vm->lock);
	}
	pthread_mutex_unlock(&vm->lock);
	vmm_vcpu_block_end(vcpu);
	vcpu->stats.halted_ns += vpmu_monotonic_ns() - t0;
}

static void fatal(struct vmm_vcpu *vcpu, const char *why, int status)
{
	vmm_vcpu_dump(vcpu, why);
	vmm_vm_stop(vcpu->vm, status);
}

/* Does a module handle the KVM_EXIT_MMIO? */
static bool mmio_claimed(struct vmm_vcpu *vcpu)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->mmio && vm->mods[i]->mmio(vcpu))
			return true;
	}
	return false;
}

/* Handle one exit. Returns false when the vCPU must stop. */
static bool handle_exit(struct vmm_vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	char why[96];

	switch (run->exit_reason) {
	case KVM_EXIT_IRQ_WINDOW_OPEN:
		return true; /* the pending interrupt goes in before KVM_RUN */
	case KVM_EXIT_IO:
		vmm_pio_dispatch(vcpu);
		return true;
	case KVM_EXIT_MMIO:
		if (mmio_claimed(vcpu)) /* e.g. sampling buffers, LVTPC */
			return true;
		vmm_report_unknown_mmio(vcpu->vm, run->mmio.phys_addr,
					run->mmio.is_write);
		if (!run->mmio.is_write)
			memset(run->mmio.data, 0xff, sizeof(run->mmio.data));
		return true;
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		vmm_msr_dispatch(vcpu);
		return true;
	case KVM_EXIT_HLT:
		halt(vcpu);
		return true;
	case KVM_EXIT_INTR:
		return true;
	case KVM_EXIT_SHUTDOWN:
		fatal(vcpu, "triple fault (KVM_EXIT_SHUTDOWN)",
		      VMM_STATUS_SHUTDOWN);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		if (vmm_pvm_quirk_handled(vcpu))
			return true;
		snprintf(why, sizeof(why), "KVM internal error (suberror %u)",
			 run->internal.suberror);
		fatal(vcpu, why, VMM_STATUS_INTERNAL);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(why, sizeof(why),
			 "VM entry failed (hardware reason 0x%llx)",
			 (unsigned long long)
				 run->fail_entry.hardware_entry_failure_reason);
		fatal(vcpu, why, VMM_STATUS_INTERNAL);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		fatal(vcpu, "system event (reset or shutdown)",
		      VMM_STATUS_SHUTDOWN);
		return false;
	default:
		snprintf(why, sizeof(why), "unhandled exit reason %u",
			 run->exit_reason);
		fatal(vcpu, why, VMM_STATUS_INTERNAL);
		return false;
	}
}

/*
 * Consume the posted requests; returns false once the VM stops. The bits
 * only need to get the vCPU out of KVM_RUN or HLT: a TIMER kick is served
 * by the accounting that follows every KVM_RUN, and a pending IRQ by
 * the before_run hook of the module that raised it.
 */
static bool serve_requests(struct vmm_vcpu *vcpu)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	if (atomic_exchange(&vcpu->requests, 0) & VMM_REQ_PAUSE) {
		vmm_snapshot_vcpu_pause(vcpu, false);
		for (i = 0; i < vm->nr_mods; i++) {
			if (vm->mods[i]->resumed)
				vm->mods[i]->resumed(vcpu);
		}
	}
	return !__atomic_load_n(&vcpu->vm->stopping, __ATOMIC_ACQUIRE);
}

/*
 * Count the exit in the vCPU statistics, which are also the hv backend's
 * counters: this happens before vpmu accounting, so an exit-count event
 * overflows at the exit that caused it.
 */
static void count_exit(struct vmm_vcpu *vcpu)
{
	const struct kvm_run *run = vcpu->run;
	struct vmm_vcpu_stats *s  = &vcpu->stats;

	s->nr_exits++;
	if (run->exit_reason < VMM_EXIT_REASONS)
		s->exits[run->exit_reason]++;
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		s->pio++;
		if (run->io.port >= PVPMU_PORT_HC_BASE &&
		    run->io.port < PVPMU_PORT_HC_BASE + PVPMU_HC_MAX)
			s->hypercalls++;
		break;
	case KVM_EXIT_MMIO:
		s->mmio++;
		break;
	case KVM_EXIT_X86_RDMSR:
		s->msr_read++;
		break;
	case KVM_EXIT_X86_WRMSR:
		s->msr_write++;
		break;
	case KVM_EXIT_HLT:
		s->halts++;
		break;
	default:
		break;
	}
}

bool vmm_vcpu_take_timer_kick(void)
{
	/* One exchange: a timer signal between a load and a store is lost. */
	return __atomic_exchange_n(&tls_kick_timer, 0, __ATOMIC_SEQ_CST) != 0;
}

bool vmm_vcpu_absorb_timer_kick(struct vmm_vcpu *vcpu)
{
	if (!tls_kick_timer || tls_kick_other)
		return false;
	tls_kick_timer            = 0;
	tls_kick_tsc              = 0;
	vcpu->run->immediate_exit = 0;
	/*
	 * The handler runs on this thread: a tgkill before the store above
	 * left tls_kick_other set, one after it sets immediate_exit again.
	 */
	atomic_signal_fence(memory_order_seq_cst);
	if (tls_kick_other || tls_kick_timer)
		vcpu->run->immediate_exit = 1;
	return true;
}

/*
 * A kick ended KVM_RUN at (t_ret) (CLOCK_MONOTONIC) after (dt) in it.
 * The same system calls as a bare KVM_RUN loop kicked by a timer
 * (the signal's return, this KVM_RUN, one timer_settime when the timer
 * sent it); the user-space path is stamped with the TSC (struct
 * vmm_kick_stats): handler -> KVM_RUN return (tsc_ret) -> accounting ->
 * shared page, then run_loop() stamps the re-entry.
 */
/* The modules' after_run and exit_done hooks. */
static void after_run(struct vmm_vcpu *vcpu, uint64_t run_ns, uint64_t t_ret,
		      bool kicked)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->after_run)
			vm->mods[i]->after_run(vcpu, run_ns, t_ret, kicked);
	}
}

static void exit_done(struct vmm_vcpu *vcpu)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->exit_done)
			vm->mods[i]->exit_done(vcpu);
	}
}

static void before_run(struct vmm_vcpu *vcpu)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->before_run)
			vm->mods[i]->before_run(vcpu);
	}
}

static void kick(struct vmm_vcpu *vcpu, uint64_t t_ret, uint64_t dt,
		 uint64_t tsc_run, uint64_t tsc_ret)
{
	struct vmm_kick_stats *k = &vcpu->kick;
	uint64_t tsc_acct, tsc_kick = tls_kick_tsc;

	vcpu->run->immediate_exit = 0;
	k->by_timer               = vmm_vcpu_take_timer_kick();
	tls_kick_other            = 0; /* its requests are served next */
	vcpu->stats.kicks++;
	k->timer += k->by_timer;
	if (tsc_kick && tsc_kick < tsc_run)
		k->outside++; /* it came before KVM_RUN: an immediate exit */
	else if (tsc_kick && tsc_kick <= tsc_ret)
		k->exit += tsc_ret - tsc_kick;
	tls_kick_tsc = 0;
	after_run(vcpu, dt, t_ret, true);
	tsc_acct = __rdtsc();
	k->acct += tsc_acct - tsc_ret;
	exit_done(vcpu);
	k->t_done = __rdtsc();
	k->shared += k->t_done - tsc_acct;
}

/* A kick's re-entry: requests, deadline, re-arm, injection. */
static void kick_entered(struct vmm_kick_stats *k, uint64_t tsc_run)
{
	if (!k->t_done)
		return;
	if (tsc_run >= k->t_done + k->t_arm) {
		k->arm += k->t_arm;
		k->deadline += tsc_run - k->t_done - k->t_arm;
	}
	k->rearms += k->t_arm != 0;
	k->t_done = 0;
}

static void run_loop(struct vmm_vcpu *vcpu)
{
	uint64_t t0, t1, dt, tsc_run, tsc_ret;
	int ret;

	while (serve_requests(vcpu)) {
		vcpu->kick.t_arm = 0;
		before_run(vcpu);
		tsc_run = __rdtsc();
		kick_entered(&vcpu->kick, tsc_run);
		t0      = vpmu_monotonic_ns(); /* run time starts here */
		ret     = ioctl(vcpu->fd, KVM_RUN, 0);
		t1      = vpmu_monotonic_ns();
		tsc_ret = __rdtsc();
		dt      = t1 - t0;
		vcpu->stats.run_ns += dt;
		if (ret < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				kick(vcpu, t1, dt, tsc_run, tsc_ret);
				continue;
			}
			fatal(vcpu, strerror(errno), VMM_STATUS_INTERNAL);
			return;
		}
		count_exit(vcpu);
		after_run(vcpu, dt, t1, false);
		if (!handle_exit(vcpu))
			return;
		exit_done(vcpu);
	}
}

void *vmm_vcpu_thread(void *arg)
{
	struct vmm_vcpu *vcpu = arg;
	struct vmm_vm *vm     = vcpu->vm;
	pid_t tids[VMM_VCPUS_MAX];
	unsigned int i, started, nr_tids = 0;
	char why[96];
	int ret = 0;

	tls_run = vcpu->run;
	/* As `top -H` and `ps -L` show it (QEMU's are "CPU n/KVM"). */
	snprintf(why, sizeof(why), "vpmu-vcpu%u", vcpu->index);
	pthread_setname_np(pthread_self(), why);
	vmm_vcpu_set_tid(vcpu);
	for (started = 0; !ret && started < vm->nr_mods; started++) {
		if (vm->mods[started]->vcpu_start)
			ret = vm->mods[started]->vcpu_start(vcpu);
	}
	if (ret) { /* e.g. pv's deadline timer */
		snprintf(why, sizeof(why), "cannot start the vCPU's %s: %s",
			 vm->mods[started - 1]->name, strerror(-ret));
		for (i = started - 1; i-- > 0;) {
			if (vm->mods[i]->vcpu_end)
				vm->mods[i]->vcpu_end(vcpu);
		}
		fatal(vcpu, why, VMM_STATUS_INTERNAL);
		return NULL;
	}
	/*
	 * Set up: from here on only the run loop's system calls. A guest's
	 * context loaded on another vCPU opens its events on that vCPU's
	 * thread (a PMC write from here): the filter names every vCPU's.
	 */
	if (vm->sandbox) {
		vmm_vm_wait_vcpu_tids(vm);
		nr_tids = vmm_vm_vcpu_tids(vm, tids, VMM_VCPUS_MAX);
	}
	if (vm->sandbox && vmm_sandbox_enter(VMM_SANDBOX_VCPU, tids, nr_tids))
		fatal(vcpu,
		      "cannot enter the seccomp sandbox (--no-sandbox "
		      "runs without it)",
		      VMM_STATUS_INTERNAL);
	else {
		vmm_vm_wait_run_started(vm);
		if (vmm_snapshot_vcpu_restored_halted(vcpu))
			halt(vcpu); /* it was saved in HLT */
		run_loop(vcpu);
	}
	vcpu->stats.cpu_ns = vmm_thread_cpu_ns(); /* for --stats */
	for (i = vm->nr_mods; i-- > 0;) {
		if (vm->mods[i]->vcpu_end)
			vm->mods[i]->vcpu_end(vcpu);
	}
	__atomic_store_n(&vcpu->tid, 0, __ATOMIC_RELEASE);
	tls_run = NULL;
	return NULL;
}

bool vmm_vcpu_is_self(const struct vmm_vcpu *vcpu)
{
	return tls_run && tls_run == vcpu->run;
}

int vmm_vcpu_fd(const struct vmm_vcpu *vcpu)
{
	return vcpu->fd;
}
