/* SPDX-License-Identifier: MIT */
/*
 * vm_thread.h: an in-process VM (vmm_vm_create with a console file) run
 * by a thread of the test, for tests that read the VMM's own state while
 * its guest runs. Header-only: kvm_harness does not link the VMM.
 */
#ifndef VM_THREAD_H
#define VM_THREAD_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "kvm_harness.h"
#include "vmm_core.h"

/* A thread's start routine: vmm_vm_run(vm), its status the result. */
static inline void *vm_thread_run(void *vm)
{
	return (void *)(intptr_t)vmm_vm_run(vm);
}

/*
 * Wait up to (timeout_s) seconds for (line) on (console), the file of
 * (vm), run by (th). If it never comes, stop the VM, join its thread and
 * fail the test: the guest never ran.
 */
static inline void vm_thread_wait_line(struct vmm_vm *vm, pthread_t *th,
				       FILE *console, const char *line,
				       unsigned int timeout_s)
{
	if (console_wait_for(console, line, timeout_s))
		return;
	vmm_vm_stop(vm, VMM_STATUS_STOPPED);
	pthread_join(*th, NULL);
	cr_fatal("the guest never printed \"%s\" in %u s", line, timeout_s);
}

#endif /* VM_THREAD_H */
