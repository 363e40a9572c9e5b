// SPDX-License-Identifier: MIT
/*
 * vm_run.c: running a VM to its end, stopping it, and the once-only report
 * of unknown MMIO addresses.
 */
#include "vmm_core_priv.h"

#include "vmm_sandbox.h"
#include "vmm_snapshot.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

void vmm_vm_stop(struct vmm_vm *vm, int status)
{
	unsigned int i;

	pthread_mutex_lock(&vm->lock);
	if (!vm->stopping) {
		vm->stopping = true;
		vm->status   = status;
	}
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	vmm_modules_vm_stopping(vm);
	for (i = 0; i < vm->nr_vcpus; i++)
		vmm_vcpu_kick(&vm->vcpus[i], VMM_REQ_STOP);
}

void vmm_vcpu_set_tid(struct vmm_vcpu *vcpu)
{
	struct vmm_vm *vm = vcpu->vm;

	pthread_mutex_lock(&vm->lock);
	__atomic_store_n(&vcpu->tid, gettid(), __ATOMIC_RELEASE);
	vm->nr_tids++;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}

void vmm_vm_wait_vcpu_tids(struct vmm_vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	/* A thread that failed to start stops the VM: no one waits for it. */
	while (vm->nr_tids < vm->nr_vcpus && !vm->stopping)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
}

void vmm_vm_wait_run_started(struct vmm_vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	while (!vm->run_started && !vm->stopping)
		pthread_cond_wait(&vm->cond, &vm->lock);
	pthread_mutex_unlock(&vm->lock);
}

static void set_run_started(struct vmm_vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	vm->run_started = true;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}

unsigned int vmm_vm_vcpu_tids(const struct vmm_vm *vm, pid_t *tids,
			      unsigned int max)
{
	unsigned int i, n = vm->nr_vcpus < max ? vm->nr_vcpus : max;

	for (i = 0; i < n; i++)
		tids[i] = __atomic_load_n(&vm->vcpus[i].tid, __ATOMIC_ACQUIRE);
	return n;
}

int vmm_vm_run(struct vmm_vm *vm)
{
	sigset_t kick, old;
	unsigned int i;
	int ret;

	ret = vmm_vcpu_signal_init();
	if (!ret && vm->sandbox)
		ret = vmm_sandbox_init(); /* threads enter it once set up */
	if (ret)
		return ret;
	if (!vm->snap && vmm_snapshot_init(vm))
		vmm_log(vm, VMM_LOG_WARN, "snapshots unavailable: no memory");
	for (i = 0; i < vm->nr_mods; i++) { /* e.g. the kick probe */
		if (vm->mods[i]->run_prepare)
			vm->mods[i]->run_prepare(vm);
	}
	/* vCPU threads inherit this mask; only they take the kick signal. */
	sigemptyset(&kick);
	sigaddset(&kick, SIGUSR1);
	pthread_mutex_lock(&vm->lock);
	vm->nr_tids     = 0;
	vm->run_started = false;
	pthread_mutex_unlock(&vm->lock);
	for (i = 0; i < vm->nr_vcpus; i++) {
		struct vmm_vcpu *vcpu = &vm->vcpus[i];

		ret = -pthread_create(&vcpu->thread, NULL, vmm_vcpu_thread,
				      vcpu);
		if (ret) {
			vmm_vm_stop(vm, VMM_STATUS_INTERNAL);
			break;
		}
		vcpu->has_thread = true;
	}
	/*
	 * The control thread's sandbox names the vCPU threads its operators'
	 * perf events may count: their ids must be known when it starts.
	 */
	if (!ret && vm->sandbox)
		vmm_vm_wait_vcpu_tids(vm);
	/* E.g. the operator control socket; failure only warns. */
	for (i = 0; !ret && i < vm->nr_mods; i++) {
		if (vm->mods[i]->run_start)
			vm->mods[i]->run_start(vm);
	}
	set_run_started(vm); /* the vCPUs may enter the guest */
	pthread_sigmask(SIG_BLOCK, &kick, &old);
	if (!ret)
		vmm_snapshot_serve(vm); /* until the VM stops */
	for (i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].has_thread) {
			pthread_join(vm->vcpus[i].thread, NULL);
			vm->vcpus[i].has_thread = false;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < vm->nr_mods; i++) { /* e.g. the control socket */
		if (vm->mods[i]->run_end)
			vm->mods[i]->run_end(vm);
	}
	if (vm->uart.out)
		fflush(vm->uart.out);
	return ret ? ret : vm->status;
}

void vmm_report_unknown_mmio(struct vmm_vm *vm, uint64_t addr, bool is_write)
{
	bool first = true;
	unsigned int i;

	pthread_mutex_lock(&vm->lock);
	for (i = 0; i < vm->nr_mmio_reported; i++) {
		if (vm->mmio_reported[i] == addr)
			first = false;
	}
	if (first && vm->nr_mmio_reported < VMM_MMIO_REPORTED)
		vm->mmio_reported[vm->nr_mmio_reported++] = addr;
	else if (first)
		first = false; /* table full: stay quiet rather than flood */
	pthread_mutex_unlock(&vm->lock);
	if (first)
		vmm_log(vm, VMM_LOG_WARN,
			"unknown MMIO %s at 0x%llx (ignored, reported once)",
			is_write ? "write" : "read", (unsigned long long)addr);
}
