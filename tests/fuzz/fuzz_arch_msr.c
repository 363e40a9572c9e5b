// SPDX-License-Identifier: MIT
/*
 * fuzz_arch_msr.c: the architectural PMU models (vpmu/arch: Intel arch
 * perfmon v2, AMD core, AMD PerfMonV2) driven as the VMM's trapped MSR
 * exits drive them, without KVM: a domain whose count source is a replay
 * backend, one vCPU, and overflow notifications fed back to
 * vpmu_arch_overflow() as vmm/pv/arch_msrs.c does.
 *
 * The input is: u8 model (intel-v2, amd-core, amd-v2), then operations:
 *   u8 op % 4 = 0  RDMSR of msr()
 *             = 1  WRMSR of msr() with u64 value
 *             = 2  u32 events of every declared event on the next slice,
 *                  then account u16 ns of run time (counters move,
 *                  overflow, raise PMIs)
 *             = 3  CPUID leaf (0xa, 0x80000001, 0x80000022 or u32)
 *   msr(): u8 sel; sel < 0xf0: in the model's range sel % ranges, offset
 *          u8 % (count + 2) - 1 (one below and one past each range too);
 *          else any u32 index.
 * Every access must succeed or be refused (#GP) without crashing.
 */
#include "fuzz_input.h"

#include <stdlib.h>

#include "backends/replay.h"
#include "vpmu_core.h"
#include <vpmu/vpmu_arch.h>

static const char *const models[] = {"intel-v2", "amd-core", "amd-v2"};

static const uint16_t codes[] = {
	PVPMU_EV_HV_MSR_READS,
	PVPMU_EV_INSTRUCTIONS,
	PVPMU_EV_CYCLES,
	PVPMU_EV_HV_GUEST_CYCLES,
};

static struct vpmu_arch_pmu *pmu;

static void note(void *opaque, const struct vpmu_notify *n)
{
	(void)opaque;
	if (pmu && n->owner == VPMU_OWNER_ARCH &&
	    n->handle == vpmu_arch_handle(pmu))
		vpmu_arch_overflow(pmu, n->ovfl_pmds);
}

static uint32_t pick_msr(struct fuzz_in *in, const struct vpmu_arch_range *r,
			 unsigned int nr)
{
	uint8_t sel = (uint8_t)fuzz_take(in, 1);
	uint32_t off;

	if (sel >= 0xf0 || !nr)
		return (uint32_t)fuzz_take(in, 4);
	r += sel % nr;
	off = (uint32_t)(fuzz_take(in, 1) % (r->count + 2));
	return r->base + off - 1;
}

static void run(struct vpmu_replay *rp, struct vpmu_cpu *cpu,
		struct fuzz_in *in, const struct vpmu_arch_ops *ops)
{
	static const uint32_t leaves[] = {0xa, 0x80000001, 0x80000022};
	const struct vpmu_arch_range *r;
	unsigned int nr = vpmu_arch_ranges(ops, &r), i;
	struct vpmu_arch_cpuid id;
	uint64_t v, n;
	uint32_t leaf;

	while (in->left) {
		switch (fuzz_take(in, 1) % 4) {
		case 0:
			vpmu_arch_rdmsr(pmu, pick_msr(in, r, nr), &v);
			break;
		case 1:
			v = pick_msr(in, r, nr);
			vpmu_arch_wrmsr(pmu, (uint32_t)v, fuzz_take(in, 8));
			break;
		case 2:
			n = fuzz_take(in, 4);
			for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
				vpmu_replay_set_steps(rp, 0, codes[i], &n, 1);
			vpmu_cpu_account(cpu, 1 + fuzz_take(in, 2), NULL);
			break;
		default:
			leaf = (uint32_t)fuzz_take(in, 1);
			leaf = leaf < 3 ? leaves[leaf]
					: (uint32_t)fuzz_take(in, 4);
			vpmu_arch_cpuid(pmu, leaf, &id);
			break;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in             = {.p = data, .left = size};
	struct vpmu_domain_config cfg = {0};
	const struct vpmu_arch_ops *ops;
	struct vpmu_domain *dom;
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_cpu *cpu;
	unsigned int i;

	ops = vpmu_arch_find(models[fuzz_take(&in, 1) % 3]);
	if (!ops || vpmu_replay_create(&rp))
		abort();
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		vpmu_replay_add_event(rp, codes[i], "ev");
	vpmu_replay_instance(rp, &be);
	vpmu_limits_default(&cfg.limits);
	cfg.limits.max_contexts  = 2;
	cfg.limits.arch_contexts = 1;
	cfg.backends             = &be;
	cfg.nr_backends          = 1;
	cfg.notify               = note;
	if (vpmu_domain_create(&cfg, &dom) || vpmu_cpu_create(dom, 0, &cpu) ||
	    vpmu_arch_create(dom, cpu, ops, &pmu))
		abort();
	run(rp, cpu, &in, ops);
	vpmu_arch_destroy(pmu);
	pmu = NULL;
	vpmu_domain_destroy(dom);
	vpmu_replay_destroy(rp);
	return 0;
}
