// SPDX-License-Identifier: MIT
/*
 * msr_dispatch.c: MSR trapping through KVM's userspace MSR exits.
 *
 * Ranges registered with vmm_msr_register() are denied in KVM's MSR filter
 * (KVM_X86_SET_MSR_FILTER, default allow), so every guest RDMSR/WRMSR of
 * them exits to userspace with KVM_MSR_EXIT_REASON_FILTER. MSRs KVM does
 * not know exit too (KVM_MSR_EXIT_REASON_UNKNOWN). Dispatch finds the
 * range's handler; a range without one, or an MSR in no range, gets #GP.
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

static const struct vmm_msr_range *find(const struct vmm_vm *vm, uint32_t msr)
{
	unsigned int i;

	for (i = 0; i < vm->nr_msr; i++) {
		const struct vmm_msr_range *r = &vm->msr[i];

		if (msr >= r->base && msr - r->base < r->count)
			return r;
	}
	return NULL;
}

static int apply_filter(struct vmm_vm *vm)
{
	struct kvm_msr_filter filter = {.flags = KVM_MSR_FILTER_DEFAULT_ALLOW};
	uint8_t *bitmaps[VMM_MSR_RANGES_MAX] = {0};
	unsigned int i;
	int ret = 0;

	for (i = 0; i < vm->nr_msr; i++) {
		/* All bits clear: deny, i.e. exit to userspace. */
		bitmaps[i] = calloc(1, (vm->msr[i].count + 7) / 8);
		if (!bitmaps[i]) {
			ret = -ENOMEM;
			goto out_free;
		}
		filter.ranges[i] = (struct kvm_msr_filter_range){
			.flags  = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE,
			.nmsrs  = vm->msr[i].count,
			.base   = vm->msr[i].base,
			.bitmap = bitmaps[i],
		};
	}
	if (ioctl(vm->vm_fd, KVM_X86_SET_MSR_FILTER, &filter) < 0)
		ret = -errno;
out_free:
	for (i = 0; i < vm->nr_msr; i++)
		free(bitmaps[i]);
	return ret;
}

int vmm_msr_register(struct vmm_vm *vm, uint32_t base, uint32_t count,
		     const struct vmm_msr_ops *ops, void *opaque)
{
	struct vmm_msr_range *r;
	unsigned int i;

	if (!count || base + (uint64_t)count > 0x100000000ULL)
		return -EINVAL;
	for (i = 0; i < vm->nr_msr; i++) {
		r = &vm->msr[i];
		if (base == r->base && count == r->count && !r->ops) {
			r->ops    = ops;
			r->opaque = opaque;
			return 0;
		}
		if (base < r->base + (uint64_t)r->count &&
		    r->base < base + (uint64_t)count)
			return -EBUSY;
	}
	if (vm->nr_msr == VMM_MSR_RANGES_MAX)
		return -ENOSPC;
	vm->msr[vm->nr_msr++] = (struct vmm_msr_range){
		.base = base, .count = count, .ops = ops, .opaque = opaque};
	return apply_filter(vm);
}

/*
 * The architectural PMU MSRs belong to vpmu's own PMU models, never to
 * KVM's in-kernel vPMU: trap them all; until a model claims a range, its
 * MSRs raise #GP (CPUID advertises no PMU then).
 */
static const struct {
	uint32_t base, count;
} pmu_ranges[] = {
	{0x000000c1, 8},  /* IA32_PMC0-7 */
	{0x00000186, 8},  /* IA32_PERFEVTSEL0-7 */
	{0x00000309, 3},  /* IA32_FIXED_CTR0-2 */
	{0x00000345, 1},  /* IA32_PERF_CAPABILITIES */
	{0x0000038d, 4},  /* FIXED_CTR_CTRL, GLOBAL_STATUS/CTRL/OVF_CTRL */
	{0x000004c1, 8},  /* IA32_A_PMC0-7 (full width) */
	{0xc0010000, 8},  /* AMD K7 PerfEvtSel0-3, PerfCtr0-3 */
	{0xc0010200, 12}, /* AMD F15h core PerfEvtSel/PerfCtr 0-5 */
	{0xc0000300, 4},  /* AMD PerfMonV2 GLOBAL_STATUS/CTL/STATUS_CLR/SET */
};

int vmm_msr_init(struct vmm_vm *vm)
{
	struct kvm_enable_cap cap = {
		.cap     = KVM_CAP_X86_USER_SPACE_MSR,
		.args[0] = KVM_MSR_EXIT_REASON_FILTER |
			   KVM_MSR_EXIT_REASON_UNKNOWN |
			   KVM_MSR_EXIT_REASON_INVAL,
	};
	unsigned int i;
	int ret;

	if (ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0)
		return -errno;
	for (i = 0; i < ARRAY_SIZE(pmu_ranges); i++) {
		ret = vmm_msr_register(vm, pmu_ranges[i].base,
				       pmu_ranges[i].count, NULL, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

void vmm_msr_dispatch(struct vmm_vcpu *vcpu)
{
	struct kvm_run *run           = vcpu->run;
	bool is_write                 = run->exit_reason == KVM_EXIT_X86_WRMSR;
	const struct vmm_msr_range *r = find(vcpu->vm, run->msr.index);
	uint64_t val                  = 0;
	int ret                       = -EPERM;

	if (r && r->ops && is_write && r->ops->write)
		ret = r->ops->write(vcpu, run->msr.index, run->msr.data,
				    r->opaque);
	else if (r && r->ops && !is_write && r->ops->read)
		ret = r->ops->read(vcpu, run->msr.index, &val, r->opaque);
	/* SDM: a #GP-ing RDMSR leaves EDX:EAX undefined; we give 0. */
	run->msr.error = ret ? 1 : 0;
	if (!is_write)
		run->msr.data = ret ? 0 : val;
	if (ret)
		vcpu->stats.guest_errors++;
}
