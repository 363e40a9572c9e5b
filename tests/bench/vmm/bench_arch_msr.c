// SPDX-License-Identifier: MIT
/*
 * bench_arch_msr.c: the architectural PMU benchmark: boots
 * bench_arch_msr_guest.elf in a VM with the PMU model given as argv[1]
 * ("auto" by default) plus one extra trapped MSR, BENCH_FLOOR_MSR, served
 * by a handler that does nothing: the raw MSR-exit floor. The guest
 * prints the cost of a trapped counter RDMSR against that floor, measured
 * in the same run; target ratio <= 1.1.
 */
#include <stdio.h>
#include <string.h>

#include "vmm_core.h"
#include "ctl_server.h"

/* The VM vpmu-vmm assembles (vmm/vmm_main.c). */
static const struct vmm_module *const vmm_modules[] = {&vmm_pv_module,
						       &vmm_ctl_module, NULL};

#define BENCH_FLOOR_MSR 0x00002fffU /* must match the guest */
#define BENCH_GUEST     VPMU_BUILD_DIR "/guests/bench_arch_msr_guest.elf"

static int floor_read(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t *val,
		      void *opaque)
{
	(void)vcpu;
	(void)msr;
	(void)opaque;
	*val = 0;
	return 0;
}

static const struct vmm_msr_ops floor_ops = {.read = floor_read};

int main(int argc, char **argv)
{
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg;
	struct vmm_vm *vm;
	int ret;

	vmm_config_defaults(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "bench-arch-msr");
	snprintf(cfg.pmu_model, sizeof(cfg.pmu_model), "%s",
		 argc > 1 ? argv[1] : "auto");
	ret = vmm_vm_create(&cfg, stdout, vmm_modules, &vm, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "bench_arch_msr: %s\n", err);
		return 1;
	}
	ret = vmm_msr_register(vm, BENCH_FLOOR_MSR, 1, &floor_ops, NULL);
	if (!ret)
		ret = vmm_vm_load(vm, BENCH_GUEST, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "floor MSR: %s", strerror(-ret));
	if (!ret)
		ret = vmm_vm_run(vm);
	else
		fprintf(stderr, "bench_arch_msr: %s\n", err);
	vmm_vm_destroy(vm);
	return ret ? 1 : 0;
}
