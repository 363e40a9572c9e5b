// SPDX-License-Identifier: MIT
/*
 * pio_dispatch.c: port I/O dispatch for KVM_EXIT_IO.
 *
 * Ports are claimed in ranges (vmm_pio_register). An access to an
 * unclaimed port is reported once per port and ignored; reads of it return
 * all ones, as on an empty ISA bus.
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <string.h>

int vmm_pio_register(struct vmm_vm *vm, uint16_t port, unsigned int count,
		     vmm_pio_fn_t fn, void *opaque)
{
	unsigned int i;

	if (!count || !fn || port + count > 0x10000)
		return -EINVAL;
	for (i = 0; i < vm->nr_pio; i++) {
		const struct vmm_pio_range *r = &vm->pio[i];

		if (port < r->port + r->count && r->port < port + count)
			return -EBUSY;
	}
	if (vm->nr_pio == VMM_PIO_MAX)
		return -ENOSPC;
	vm->pio[vm->nr_pio++] = (struct vmm_pio_range){
		.port = port, .count = count, .fn = fn, .opaque = opaque};
	return 0;
}

static const struct vmm_pio_range *find(const struct vmm_vm *vm, uint16_t port)
{
	unsigned int i;

	for (i = 0; i < vm->nr_pio; i++) {
		const struct vmm_pio_range *r = &vm->pio[i];

		if (port >= r->port &&
		    (unsigned int)(port - r->port) < r->count)
			return r;
	}
	return NULL;
}

void vmm_report_unknown_pio(struct vmm_vm *vm, uint16_t port, bool is_write)
{
	bool first;

	pthread_mutex_lock(&vm->lock);
	first = !(vm->pio_reported[port / 8] & (1U << (port % 8)));
	vm->pio_reported[port / 8] |= 1U << (port % 8);
	pthread_mutex_unlock(&vm->lock);
	if (first)
		vmm_log(vm, VMM_LOG_WARN,
			"unknown port 0x%x %s (ignored, reported once)", port,
			is_write ? "write" : "read");
}

void vmm_pio_dispatch(struct vmm_vcpu *vcpu)
{
	struct kvm_run *run           = vcpu->run;
	uint8_t *data                 = (uint8_t *)run + run->io.data_offset;
	bool is_write                 = run->io.direction == KVM_EXIT_IO_OUT;
	const struct vmm_pio_range *r = find(vcpu->vm, run->io.port);
	unsigned int i;

	if (!r) {
		vmm_report_unknown_pio(vcpu->vm, run->io.port, is_write);
		if (!is_write)
			memset(data, 0xff,
			       (size_t)run->io.size * run->io.count);
		return;
	}
	/* String I/O (rep ins/outs) arrives as count consecutive items. */
	for (i = 0; i < run->io.count; i++) {
		void *item = data + (size_t)i * run->io.size;

		if (r->fn(vcpu, run->io.port, is_write, item, run->io.size,
			  r->opaque) < 0) {
			vcpu->stats.guest_errors++;
			if (!is_write)
				memset(item, 0xff, run->io.size);
		}
	}
}
