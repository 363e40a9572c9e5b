// SPDX-License-Identifier: MIT
/*
 * catalog.c: the virtual PMU's event catalogue (see pvpmu/catalog.h).
 * Freestanding: no libc, so the guest SDK links it too.
 */
#include "pvpmu/catalog.h"

#define EV(c, src, t, n, d)                                                    \
	{                                                                      \
		.code = (c), .source = (src), .is_time = (t), .name = (n),     \
		.desc = (d)                                                    \
	}

static const struct pvpmu_event_desc catalog[] = {
	EV(PVPMU_EV_CYCLES, PVPMU_SRC_PERF_HW, 0, "cycles",
	   "unhalted core cycles in the guest"),
	EV(PVPMU_EV_INSTRUCTIONS, PVPMU_SRC_PERF_HW, 0, "instructions",
	   "instructions retired in the guest"),
	EV(PVPMU_EV_REF_CYCLES, PVPMU_SRC_PERF_HW, 0, "ref-cycles",
	   "unhalted reference cycles in the guest"),
	EV(PVPMU_EV_LLC_REFERENCES, PVPMU_SRC_PERF_HW, 0, "cache-references",
	   "last-level cache references in the guest"),
	EV(PVPMU_EV_LLC_MISSES, PVPMU_SRC_PERF_HW, 0, "cache-misses",
	   "last-level cache misses in the guest"),
	EV(PVPMU_EV_BRANCHES, PVPMU_SRC_PERF_HW, 0, "branches",
	   "branch instructions retired in the guest"),
	EV(PVPMU_EV_BRANCH_MISSES, PVPMU_SRC_PERF_HW, 0, "branch-misses",
	   "mispredicted branches retired in the guest"),
	EV(PVPMU_EV_HV_RUN_NS, PVPMU_SRC_HV, 1, "hv_run_ns",
	   "guest run time of the vCPU, ns"),
	EV(PVPMU_EV_HV_GUEST_CYCLES, PVPMU_SRC_HV, 1, "hv_guest_cycles",
	   "guest run time in TSC cycles at the host TSC frequency"),
	EV(PVPMU_EV_HV_EXITS, PVPMU_SRC_HV, 0, "hv_exits",
	   "VM exits of the vCPU, all reasons"),
	EV(PVPMU_EV_HV_HYPERCALLS, PVPMU_SRC_HV, 0, "hv_hypercalls",
	   "doorbell hypercalls"),
	EV(PVPMU_EV_HV_MSR_READS, PVPMU_SRC_HV, 0, "hv_msr_reads",
	   "trapped RDMSR instructions"),
	EV(PVPMU_EV_HV_MSR_WRITES, PVPMU_SRC_HV, 0, "hv_msr_writes",
	   "trapped WRMSR instructions"),
	EV(PVPMU_EV_HV_PIO, PVPMU_SRC_HV, 0, "hv_pio", "port I/O exits"),
	EV(PVPMU_EV_HV_MMIO, PVPMU_SRC_HV, 0, "hv_mmio", "MMIO exits"),
	EV(PVPMU_EV_HV_IRQS, PVPMU_SRC_HV, 0, "hv_irqs",
	   "interrupts injected into the vCPU"),
	EV(PVPMU_EV_HV_HALTS, PVPMU_SRC_HV, 0, "hv_halts", "HLT exits"),
	EV(PVPMU_EV_HV_HALTED_NS, PVPMU_SRC_HV, 1, "hv_halted_ns",
	   "time the vCPU spent halted, ns"),
	EV(PVPMU_EV_HV_CPU_NS, PVPMU_SRC_HV, 1, "hv_cpu_ns",
	   "CPU time the vCPU thread received, ns (hv_run_ns is wall time "
	   "in KVM_RUN)"),
	EV(PVPMU_EV_HV_EXIT_REASON(0), PVPMU_SRC_HV, 0, "hv_exit_reason",
	   "VM exits of one KVM exit reason (umask = KVM_EXIT_*)"),
	EV(PVPMU_EV_KVMSTAT(0), PVPMU_SRC_KVMSTAT, 0, "kvmstat",
	   "a KVM binary statistic of the vCPU (umask = index)"),
	EV(PVPMU_EV_SW_TASK_CLOCK, PVPMU_SRC_PERF_SW, 1, "task-clock",
	   "host CPU time of the vCPU thread, ns"),
	EV(PVPMU_EV_SW_PAGE_FAULTS, PVPMU_SRC_PERF_SW, 0, "page-faults",
	   "host page faults of the vCPU thread"),
	EV(PVPMU_EV_SW_CONTEXT_SWITCHES, PVPMU_SRC_PERF_SW, 0,
	   "context-switches", "host context switches of the vCPU thread"),
	EV(PVPMU_EV_SW_CPU_MIGRATIONS, PVPMU_SRC_PERF_SW, 0, "cpu-migrations",
	   "host CPU migrations of the vCPU thread"),
};

unsigned int pvpmu_catalog_size(void)
{
	return sizeof(catalog) / sizeof(catalog[0]);
}

const struct pvpmu_event_desc *pvpmu_catalog_at(unsigned int i)
{
	return i < pvpmu_catalog_size() ? &catalog[i] : 0;
}

static int same(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

const struct pvpmu_event_desc *pvpmu_catalog_find(const char *name)
{
	unsigned int i;

	for (i = 0; name && i < pvpmu_catalog_size(); i++) {
		if (same(catalog[i].name, name))
			return &catalog[i];
	}
	return 0;
}

static int is_family(pvpmu_u16 code)
{
	return PVPMU_EV_IS_FAMILY(code);
}

const struct pvpmu_event_desc *pvpmu_catalog_by_code(pvpmu_u16 code)
{
	unsigned int i;

	if (is_family(code))
		code = PVPMU_EV_EVENT(code);
	for (i = 0; i < pvpmu_catalog_size(); i++) {
		if (catalog[i].code == code)
			return &catalog[i];
	}
	return 0;
}
