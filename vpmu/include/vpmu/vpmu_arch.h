/* SPDX-License-Identifier: MIT */
/*
 * vpmu_arch.h: architectural PMU models, the second front end of
 * libvpmu, part of the libvpmu API: include <vpmu/vpmu.h>, which includes
 * this. A guest kernel that knows nothing about vpmu programs the PMU
 * with RDMSR/WRMSR as on hardware; the VMM traps those MSRs and hands them
 * to the model of the VM, which keeps the guest-visible registers and
 * programs one vCPU-wide libvpmu context per vCPU (owner VPMU_OWNER_ARCH).
 *
 * Models (const struct vpmu_arch_ops, the kvm_pmu_ops analogue):
 *   intel-v2  Intel architectural perfmon version 2 (intel.c): 4 GP
 *             counters (PERFEVTSELx 0x186, PMCx 0xc1, full-width A_PMCx
 *             0x4c1), 3 fixed counters (0x309, FIXED_CTR_CTRL 0x38d),
 *             GLOBAL_STATUS/CTRL/OVF_CTRL (0x38e-0x390),
 *             PERF_CAPABILITIES (0x345, FW_WRITE), CPUID leaf 0xA.
 *   amd-core  AMD K7 legacy PerfEvtSel0-3/PerfCtr0-3 (0xc0010000) and the
 *             F15h core extension, 6 counters (0xc0010200-0xc001020b),
 *             CPUID 0x80000001 ECX perfctr_core (amd.c).
 *   amd-v2    amd-core plus PerfMonV2 GLOBAL_STATUS/CTL/STATUS_CLR/
 *             STATUS_SET (0xc0000300-0xc0000303), CPUID 0x80000022.
 *
 * Index namespaces
 *   MSR address    what the guest uses; a model's ranges (vpmu_arch_ranges)
 *   GP index       general-purpose counter i of the model (0..nr_gp-1)
 *   fixed index    Intel fixed counter j (0..2)
 *   logical ctr    counting PMC/PMD pair of the libvpmu context: GP i is
 *                  counter i, fixed j is counter nr_gp + j
 *   status bit     GLOBAL_STATUS bit: GP i -> i, Intel fixed j -> 32 + j
 *
 * Counters are 48 bits wide (PFM_REGFL_NO_EMUL64 over the domain's 48-bit
 * counter width): an overflow is the 48-bit wrap. The effective enable of
 * a counter (what is programmed into libvpmu) is derived from the guest
 * registers and kept apart from them: event-select EN (or FIXED_CTR_CTRL
 * ring bits), at least one of USR/OS, and the GLOBAL_CTRL bit (intel-v2,
 * amd-v2).
 *
 * Threading: every function here is called on the vCPU's own thread (MSR
 * exits and the notification of its context), so a struct vpmu_arch_pmu
 * needs no lock of its own; libvpmu calls take the domain lock.
 */
#ifndef VPMU_ARCH_H
#define VPMU_ARCH_H

#include <stdbool.h>
#include <stdint.h>

struct vpmu_domain;
struct vpmu_cpu;

struct vpmu_arch_pmu;
struct vpmu_arch_ops;

/* A range of MSRs a model serves: exactly the ranges vmm traps. */
struct vpmu_arch_range {
	uint32_t base, count;
};

/* One CPUID leaf as the guest sees it. */
struct vpmu_arch_cpuid {
	uint32_t eax, ebx, ecx, edx;
};

/* PMI delivery as the model wants it (vpmu_arch_overflow()). */
#define VPMU_ARCH_PMI (1U << 0) /* raise a PMI through LVTPC */

/*
 * The model called (name) ("intel-v2", "amd-core", "amd-v2"), or NULL
 * (unknown name, or "none"). "auto" is resolved by vpmu_arch_auto().
 */
const struct vpmu_arch_ops *vpmu_arch_find(const char *name);

/*
 * The model "auto" stands for on a host whose CPUID leaf 0 vendor string
 * is (vendor) (12 bytes, EBX EDX ECX): intel-v2 for GenuineIntel, amd-v2
 * for AuthenticAMD and HygonGenuine, NULL (no PMU) otherwise.
 */
const struct vpmu_arch_ops *vpmu_arch_auto(const char vendor[12]);

/* Name of (ops), e.g. "intel-v2". */
const char *vpmu_arch_name(const struct vpmu_arch_ops *ops);

/*
 * The MSR ranges (ops) serves: stores the array in (*out) and returns its
 * length. Each range is one of those vmm traps at VM creation.
 */
unsigned int vpmu_arch_ranges(const struct vpmu_arch_ops *ops,
			      const struct vpmu_arch_range **out);

/*
 * Does (ops) set the LVT performance-counter mask bit when it delivers a
 * PMI (Intel: yes, as KVM does for Intel-compatible guests; AMD: no)?
 */
bool vpmu_arch_masks_lvtpc(const struct vpmu_arch_ops *ops);

/*
 * Create the model (ops) of vCPU (cpu) in domain (d): a vCPU-wide context
 * of owner VPMU_OWNER_ARCH (PFM_FL_OVFL_NO_MSG), loaded on (cpu) and
 * started, with every register at its reset value. The domain needs
 * limits.arch_contexts free and a 48-bit counter width (-EINVAL
 * otherwise). Returns 0 and (*out), or -errno; nothing is left behind on
 * failure.
 */
int vpmu_arch_create(struct vpmu_domain *d, struct vpmu_cpu *cpu,
		     const struct vpmu_arch_ops *ops,
		     struct vpmu_arch_pmu **out);

/* Destroy (p) and its context. NULL is allowed. */
void vpmu_arch_destroy(struct vpmu_arch_pmu *p);

/* The libvpmu handle of (p)'s context (to match notifications). */
int vpmu_arch_handle(const struct vpmu_arch_pmu *p);

/*
 * Snapshot of a model's guest-visible registers: what
 * vpmu_domain_save() does not hold. (fd) is the handle of the model's
 * ARCH context, which the domain blob carries.
 */
struct vpmu_arch_state {
	char model[16];
	int32_t fd;
	uint32_t nr_gp, nr_fixed;
	uint64_t evtsel[8];
	uint64_t fixed_ctrl, global_ctrl, global_status, perf_caps;
	uint64_t prog[8];
};

void vpmu_arch_save(const struct vpmu_arch_pmu *p, struct vpmu_arch_state *st);

/*
 * Put (st) back into (p) after vpmu_domain_restore() brought the ARCH
 * context (st->fd) back on (p)'s cpu. Returns 0, or -EINVAL if (st) is of
 * another model, another counter layout or names no ARCH context of that
 * cpu ((p) is then unchanged).
 */
int vpmu_arch_restore(struct vpmu_arch_pmu *p,
		      const struct vpmu_arch_state *st);

/*
 * Guest RDMSR/WRMSR of (msr). Returns 0 (with (*val) for reads), or
 * -EPERM when the guest must get #GP (no such MSR in this model, a
 * reserved bit set, a read-only register, an event the host cannot
 * count enabled).
 */
int vpmu_arch_rdmsr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t *val);
int vpmu_arch_wrmsr(struct vpmu_arch_pmu *p, uint32_t msr, uint64_t val);

/*
 * The context of (p) notified an overflow of the logical counters
 * (ovfl_pmds): set the status bits and say whether a PMI is due
 * (VPMU_ARCH_PMI if an overflowed counter has its interrupt bit set).
 * Runs inside the libvpmu notification (domain lock held): it makes no
 * libvpmu call.
 */
unsigned int vpmu_arch_overflow(struct vpmu_arch_pmu *p, uint64_t ovfl_pmds);

/*
 * Fill CPUID (leaf) in (*r), which holds what the host offers: the model
 * rewrites leaf 1 (Intel PDCM), 0xA, 0x80000001 (perfctr_core) and
 * 0x80000022 to match the MSRs it implements, and leaves other leaves
 * alone. (p) may be any vCPU's model of the VM (it tells which events the
 * host can count). Returns true if it changed the leaf.
 */
bool vpmu_arch_cpuid(struct vpmu_arch_pmu *p, uint32_t leaf,
		     struct vpmu_arch_cpuid *r);

/*
 * Zero the PMU leaves (0xA, perfctr_core, 0x80000022): CPUID for a VM
 * without an architectural PMU (model "none").
 */
void vpmu_arch_cpuid_none(uint32_t leaf, struct vpmu_arch_cpuid *r);

#endif /* VPMU_ARCH_H */
