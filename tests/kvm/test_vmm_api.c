// SPDX-License-Identifier: MIT
/*
 * test_vmm_api.c: the VMM core's in-process API with real KVM VMs:
 * registration tables, guest memory bounds, MSR handlers, hypercall
 * handlers, kicks and stopping a running VM from another thread.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvpmu/abi.h>

#include "kvm_harness.h"
#include "vm_thread.h"
#include "vmm_core.h"
#include "ctl_server.h"

/* The VM vpmu-vmm assembles (vmm/vmm_main.c). */
static const struct vmm_module *const vmm_modules[] = {&vmm_pv_module,
						       &vmm_ctl_module, NULL};

static struct vmm_vm *vm;
static FILE *console;

static void setup(void)
{
	struct vmm_config cfg;
	char err[VMM_CONFIG_ERR_LEN];

	kvm_require();
	vmm_config_defaults(&cfg);
	cfg.nr_vcpus = 2;
	/* No PMU model, so the PMU MSR ranges stay unclaimed. */
	snprintf(cfg.pmu_model, sizeof(cfg.pmu_model), "none");
	snprintf(cfg.name, sizeof(cfg.name), "api-test");
	console = tmpfile();
	cr_assert(not(eq(ptr, console, NULL)));
	cr_assert(eq(int,
		     vmm_vm_create(&cfg, console, vmm_modules, &vm, err,
				   sizeof(err)),
		     0),
		  "%s", err);
}

static void teardown(void)
{
	vmm_vm_destroy(vm);
	if (console)
		fclose(console);
}

TestSuite(vmm_api, .init = setup, .fini = teardown, .timeout = 60);

static int hc_dummy(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	(void)vcpu;
	(void)gpa;
	(void)opaque;
	return 0;
}

Test(vmm_api, hypercall_registration_is_checked)
{
	cr_assert(eq(int,
		     vmm_hc_register(vm, PVPMU_HC_RESERVED, hc_dummy, NULL),
		     -EINVAL));
	cr_assert(eq(int, vmm_hc_register(vm, PVPMU_HC_MAX, hc_dummy, NULL),
		     -EINVAL));
	cr_assert(eq(int, vmm_hc_register(vm, PVPMU_HC_NOP, hc_dummy, NULL),
		     -EBUSY));
	cr_assert(eq(int, vmm_hc_register(vm, 40, hc_dummy, NULL), 0));
	cr_assert(eq(int, vmm_hc_register(vm, 40, hc_dummy, NULL), -EBUSY));
}

static int pio_dummy(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		     void *data, unsigned int size, void *opaque)
{
	(void)vcpu;
	(void)port;
	(void)is_write;
	(void)data;
	(void)size;
	(void)opaque;
	return 0;
}

Test(vmm_api, pio_ranges_cannot_overlap)
{
	cr_assert(eq(int, vmm_pio_register(vm, 0x3fc, 2, pio_dummy, NULL),
		     -EBUSY));
	cr_assert(eq(int, vmm_pio_register(vm, 0xfffe, 4, pio_dummy, NULL),
		     -EINVAL));
	cr_assert(eq(int, vmm_pio_register(vm, 0x2f8, 8, pio_dummy, NULL), 0));
}

Test(vmm_api, guest_memory_bounds)
{
	uint64_t size = vmm_vm_mem_size(vm);
	uint8_t b;

	cr_assert(not(eq(ptr, vmm_gpa_ptr(vm, size - 1, 1), NULL)));
	cr_assert(not(eq(ptr, vmm_gpa_ptr(vm, size, 0), NULL)));
	cr_assert(eq(ptr, vmm_gpa_ptr(vm, size, 1), NULL));
	cr_assert(eq(ptr, vmm_gpa_ptr(vm, size - 1, 2), NULL));
	cr_assert(eq(ptr, vmm_gpa_ptr(vm, ~0ULL, 2), NULL));
	cr_assert(eq(ptr, vmm_gpa_ptr(vm, 16, ~0ULL), NULL));
	cr_assert(eq(int, vmm_guest_read(vm, size, &b, 1), -EFAULT));
	cr_assert(eq(int, vmm_guest_write(vm, size - 1, &b, 1), 0));
}

struct msr_log {
	unsigned int reads, writes;
	uint32_t last_msr;
};

static int msr_read(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t *val,
		    void *opaque)
{
	struct msr_log *log = opaque;

	(void)vcpu;
	__atomic_add_fetch(&log->reads, 1, __ATOMIC_RELAXED);
	log->last_msr = msr;
	*val          = 0x1234;
	return 0;
}

static int msr_write(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t val,
		     void *opaque)
{
	struct msr_log *log = opaque;

	(void)vcpu;
	(void)val;
	__atomic_add_fetch(&log->writes, 1, __ATOMIC_RELAXED);
	log->last_msr = msr;
	return 0;
}

Test(vmm_api, msr_range_registration_rules)
{
	static const struct vmm_msr_ops ops = {.read  = msr_read,
					       .write = msr_write};
	static struct msr_log log;

	/* The PMU ranges are trapped without handlers at creation. */
	cr_assert(eq(int, vmm_msr_register(vm, 0x186, 8, &ops, &log), 0));
	cr_assert(eq(int, vmm_msr_register(vm, 0x186, 8, &ops, &log), -EBUSY));
	cr_assert(eq(int, vmm_msr_register(vm, 0x180, 8, &ops, &log), -EBUSY));
	cr_assert(eq(int, vmm_msr_register(vm, 0x10, 0, &ops, &log), -EINVAL));
}

Test(vmm_api, claimed_msr_range_reaches_its_handler)
{
	static const struct vmm_msr_ops ops = {.read  = msr_read,
					       .write = msr_write};
	static struct msr_log log;
	char err[VMM_CONFIG_ERR_LEN];
	int status;

	cr_assert(eq(int, vmm_msr_register(vm, 0x186, 8, &ops, &log), 0));
	cr_assert(eq(int, vmm_msr_register(vm, 0xc1, 8, &ops, &log), 0));
	cr_assert(
		eq(int, vmm_vm_load(vm, GUEST("msr_gp"), err, sizeof(err)), 0),
		"%s", err);
	status = vmm_vm_run(vm);
	/* msr_gp exits 1 because the PMU MSRs no longer fault. */
	cr_assert(eq(int, status, 1));
	cr_assert(ge(u32, log.reads, 2));
	cr_assert(ge(u32, log.writes, 2));
}

static int hc_count(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	unsigned int *n = opaque;

	(void)vcpu;
	(void)gpa;
	__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
	return -PVPMU_EBUSY;
}

Test(vmm_api, registered_hypercall_replaces_enosys)
{
	static unsigned int calls;
	char err[VMM_CONFIG_ERR_LEN];
	int status;

	/* hc_unknown expects -ENOSYS from call 63; a handler breaks that. */
	cr_assert(eq(int, vmm_hc_register(vm, 63, hc_count, &calls), 0));
	cr_assert(eq(int,
		     vmm_vm_load(vm, GUEST("hc_unknown"), err, sizeof(err)), 0),
		  "%s", err);
	status = vmm_vm_run(vm);
	cr_assert(eq(int, status, 1));
	cr_assert(ge(u32, calls, 1));
}

Test(vmm_api, stop_kicks_spinning_vcpus_out)
{
	struct timespec settle = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
	char err[VMM_CONFIG_ERR_LEN];
	pthread_t t;
	void *status;

	cr_assert(eq(int, vmm_vm_load(vm, GUEST("spin"), err, sizeof(err)), 0),
		  "%s", err);
	cr_assert(eq(int, pthread_create(&t, NULL, vm_thread_run, vm), 0));
	/* Its line printed, vCPU 0 is back in the guest within the pause. */
	vm_thread_wait_line(vm, &t, console, "all vcpus spinning", 30);
	nanosleep(&settle, NULL);
	vmm_vm_stop(vm, VMM_STATUS_STOPPED);
	pthread_join(t, &status);
	cr_assert(eq(int, (int)(intptr_t)status, VMM_STATUS_STOPPED));
	cr_assert(ge(u64, vmm_vcpu_stats(vmm_vm_vcpu(vm, 0))->kicks, 1));
	cr_assert(ge(u64, vmm_vcpu_stats(vmm_vm_vcpu(vm, 1))->kicks, 1));
}
