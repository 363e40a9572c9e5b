// SPDX-License-Identifier: MIT
/*
 * fake_vm.c: see fake_vm.h.
 */
#include "fake_vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ctl_server.h"

#define RUN_PAGE 8192 /* sizeof(struct kvm_run) is 2.3 KiB */

static void need(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "fake_vm: %s: %d\n", what, ret);
		abort();
	}
}

static struct vmm_vm *vm;
static struct vmm_config cfg;

static void create(void)
{
	unsigned int i;

	vm = calloc(1, sizeof(*vm));
	if (!vm)
		abort();
	vmm_config_defaults(&cfg);
	cfg.nr_vcpus      = FAKE_VM_VCPUS;
	cfg.mem_size      = FAKE_VM_MEM;
	vm->kvm_fd        = -1;
	vm->vm_fd         = -1;
	vm->mem_size      = FAKE_VM_MEM;
	vm->mem           = mmap(NULL, FAKE_VM_MEM, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	vm->nr_vcpus      = FAKE_VM_VCPUS;
	vm->vcpus         = calloc(FAKE_VM_VCPUS, sizeof(*vm->vcpus));
	vm->stopping      = true;
	vm->has_sync_regs = true;
	snprintf(vm->name, sizeof(vm->name), "fuzz");
	if (vm->mem == MAP_FAILED || !vm->vcpus)
		abort();
	/* Small pages: a reset drops only the few pages an input touched. */
	madvise(vm->mem, FAKE_VM_MEM, MADV_NOHUGEPAGE);
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	for (i = 0; i < FAKE_VM_VCPUS; i++) {
		vm->vcpus[i].vm    = vm;
		vm->vcpus[i].index = i;
		vm->vcpus[i].fd    = -1;
		vm->vcpus[i].run   = calloc(1, RUN_PAGE);
		if (!vm->vcpus[i].run)
			abort();
	}
	need(vmm_pv_create(vm, &cfg), "vmm_pv_create");
	need(vmm_hc_init(vm), "vmm_hc_init");
	need(vmm_pv_hc_init(vm), "vmm_pv_hc_init");
	need(vmm_control_init(vm, &cfg), "vmm_control_init");
}

struct vmm_vm *fake_vm_fresh(bool ram_written)
{
	struct vmm_control *ctl;
	unsigned int i;

	if (!vm) {
		create();
		return vm;
	}
	ctl = vmm_ctl(vm);
	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		if (ctl->clients[i].fd >= 0)
			abort(); /* the target closes its clients */
	}
	vmm_pv_destroy(vm);
	for (i = 0; i < FAKE_VM_VCPUS; i++) {
		memset(&vm->vcpus[i].stats, 0, sizeof(vm->vcpus[i].stats));
		memset(vmm_pv_vcpu(&vm->vcpus[i]), 0,
		       sizeof(struct vmm_pv_vcpu));
		memset(vm->vcpus[i].run, 0, RUN_PAGE);
		atomic_store(&vm->vcpus[i].requests, 0);
	}
	/*
	 * Zero RAM by dropping its pages: an input touches a few of the 512,
	 * and storing 2 MiB was a third of a hypercall input's time.
	 */
	if (ram_written && madvise(vm->mem, FAKE_VM_MEM, MADV_DONTNEED))
		abort();
	need(vmm_pv_create(vm, &cfg), "vmm_pv_create");
	return vm;
}

int64_t fake_vm_out32(struct vmm_vcpu *vcpu, uint16_t port, uint32_t value)
{
	struct kvm_run *run = vcpu->run;

	run->exit_reason    = KVM_EXIT_IO;
	run->io.direction   = KVM_EXIT_IO_OUT;
	run->io.size        = 4;
	run->io.port        = port;
	run->io.count       = 1;
	run->io.data_offset = RUN_PAGE - 64;
	memcpy((uint8_t *)run + run->io.data_offset, &value, sizeof(value));
	run->s.regs.regs.rax = (uint64_t)-1;
	vmm_pio_dispatch(vcpu);
	return (int64_t)run->s.regs.regs.rax;
}
