// SPDX-License-Identifier: MIT
/*
 * shared_page.c: the per-vCPU shared page (struct pvpmu_shared_page, abi.h §5).
 *
 * After every exit the VMM publishes the guest context's PMD values, the
 * active set and the per-set times under a seqlock. Just before KVM_RUN it
 * stamps the guest TSC of the entry, so a guest extends a time-based PMD
 * exactly: the PMD stood still from the exit to this entry, and advances
 * with the TSC from here. Only pid and tid are written by the guest.
 */
#include "vmm_pv.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <x86intrin.h>

#define MSR_IA32_TSC     0x10
#define TSC_OFFSET_TRIES 8

static struct pvpmu_shared_page *page(struct vmm_vcpu *vcpu)
{
	return vmm_gpa_ptr(vcpu->vm, vmm_pv_vcpu(vcpu)->shared_gpa,
			   sizeof(struct pvpmu_shared_page));
}

/*
 * Guest TSC - host TSC, once per registration: KVM's own offset where it
 * tells it (KVM_VCPU_TSC_OFFSET, Linux 5.16; exact, as vpmu never scales
 * the guest TSC); else the guest's TSC MSR read between two host reads,
 * taking the narrowest of a few brackets. Its midpoint is off by up to
 * half the bracket, which under emulation (the nested rig) is long enough
 * to put a fast read past the next exact one.
 */
static int64_t tsc_offset(struct vmm_vcpu *vcpu)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} m = {.hdr.nmsrs = 1, .e.index = MSR_IA32_TSC};
	uint64_t off, t1, t2, best = UINT64_MAX;
	struct kvm_device_attr a = {.group = KVM_VCPU_TSC_CTRL,
				    .attr  = KVM_VCPU_TSC_OFFSET,
				    .addr  = (uint64_t)(uintptr_t)&off};
	int64_t ret              = 0;
	unsigned int i;

	if (ioctl(vcpu->fd, KVM_GET_DEVICE_ATTR, &a) == 0)
		return (int64_t)off;
	for (i = 0; i < TSC_OFFSET_TRIES; i++) {
		t1 = __rdtsc();
		if (ioctl(vcpu->fd, KVM_GET_MSRS, &m) != 1)
			return ret;
		t2 = __rdtsc();
		if (t2 - t1 < best) {
			best = t2 - t1;
			ret  = (int64_t)(m.e.data - (t1 + (t2 - t1) / 2));
		}
	}
	return ret;
}

int vmm_pv_shared_register(struct vmm_vcpu *vcpu, uint64_t gpa)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	struct pvpmu_shared_page *p;

	if (!gpa) {
		pmu->shared_gpa = 0;
		return 0;
	}
	if (gpa % 4096 || !vmm_gpa_ptr(vcpu->vm, gpa, 4096))
		return -EFAULT;
	pmu->shared_gpa = gpa;
	pmu->tsc_offset = tsc_offset(vcpu);
	p               = page(vcpu);
	memset(p, 0, sizeof(*p));
	p->abi = PVPMU_ABI_VERSION;
	p->fd  = -1;
	return 0;
}

void vmm_pv_shared_guest_ids(struct vmm_vcpu *vcpu, int32_t *pid, int32_t *tid)
{
	struct pvpmu_shared_page *p;

	if (!vmm_pv_vcpu(vcpu)->shared_gpa)
		return;
	p    = page(vcpu);
	*pid = __atomic_load_n(&p->pid, __ATOMIC_RELAXED);
	*tid = __atomic_load_n(&p->tid, __ATOMIC_RELAXED);
}

/*
 * Units of (code) per TSC tick as (mult, shift); 0 for non-time events,
 * and for every event where the host's TSC is unstable (then time PMDs
 * are, like the others, values as of the last exit).
 */
static void time_scale(uint16_t code, const struct vmm_pv *pmu, uint32_t *mult,
		       uint32_t *shift)
{
	uint64_t tsc_khz = pmu->tsc_khz;
	unsigned __int128 m;

	*mult  = 0;
	*shift = 0;
	if (!pmu->tsc_stable)
		return;
	if (code == PVPMU_EV_HV_GUEST_CYCLES) {
		*mult = 1;
	} else if (code == PVPMU_EV_HV_RUN_NS && tsc_khz) {
		*shift = 32;
		m      = ((unsigned __int128)1000000 << 32) / tsc_khz;
		while (m > UINT32_MAX) {
			m >>= 1;
			(*shift)--;
		}
		*mult = (uint32_t)m;
	}
}

static void seq_begin(struct pvpmu_shared_page *p)
{
	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_end(struct pvpmu_shared_page *p)
{
	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
}

static void publish(struct vmm_vcpu *vcpu, struct pvpmu_shared_page *p,
		    const struct vpmu_snapshot *s)
{
	unsigned int i;

	seq_begin(p);
	p->fd         = s->fd;
	p->active_set = s->active_set;
	p->active     = s->active;
	p->pmd_mask   = s->pmd_mask;
	p->run_ns     = s->run_ns;
	/* What the throttle dropped, periods missed. */
	p->nr_throttled = s->nr_dropped;
	p->nr_missed    = s->nr_missed;
	p->switch_ns    = s->switch_ns; /* stretched by the budget or not */
	for (i = 0; i < PFM_MAX_PMDS; i++) {
		if (!(s->pmd_mask & (1ULL << i)))
			continue;
		p->pmds[i].value = s->pmds[i];
		time_scale(s->pmd_code[i], vmm_pv(vcpu->vm),
			   &p->pmds[i].tsc_mult, &p->pmds[i].tsc_shift);
	}
	p->nr_sets = s->nr_sets < PVPMU_SHARED_MAX_SETS ? s->nr_sets
							: PVPMU_SHARED_MAX_SETS;
	for (i = 0; i < p->nr_sets; i++) {
		p->sets[i].id         = s->sets[i].id;
		p->sets[i].runs       = s->sets[i].runs;
		p->sets[i].enabled_ns = s->sets[i].enabled_ns;
		p->sets[i].running_ns = s->sets[i].running_ns;
	}
	seq_end(p);
}

void vmm_pv_shared_update(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	struct pvpmu_shared_page *p;
	struct vpmu_snapshot s;

	if (!pmu->shared_gpa)
		return;
	p = page(vcpu);
	if (vpmu_cpu_snapshot(pmu->cpu, &s) && p->fd == -1)
		return; /* nothing loaded, and the page already says so */
	publish(vcpu, p, &s);
}

void vmm_pv_shared_stamp_entry(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	struct pvpmu_shared_page *p;

	if (!pmu->shared_gpa)
		return;
	p = page(vcpu);
	if (p->fd == -1)
		return;
	seq_begin(p);
	p->tsc = __rdtsc() + (uint64_t)pmu->tsc_offset;
	seq_end(p);
}
