// SPDX-License-Identifier: MIT
/*
 * pv_callchain.c: guest call chains for host sampling (`vpmu record -g`). When
 * a sample is due on a vCPU whose host contexts want chains, its thread reads
 * RIP/RBP/RSP and CR3 of the stopped vCPU and walks the frame pointers through
 * the guest's page tables (guest_walk.c), storing the return addresses in a
 * per-vCPU ring keyed by the sample's run time; the control thread attaches
 * them to the samples it copies out of the default-format buffers. A bad frame
 * ends the chain; nothing the guest puts in memory or registers can make the
 * walk read outside guest RAM.
 */
#include "vmm_pv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define CR0_PG   (1ULL << 31)
#define CR4_LA57 (1ULL << 12)
#define EFER_LMA (1ULL << 10)

int vmm_pv_chain_enable(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(vcpu);
	struct vmm_pv_chain_ring *r;

	if (!atomic_load(&p->chains)) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		pthread_mutex_init(&r->lock, NULL);
		atomic_store(&p->chains, r); /* before users: see capture */
	}
	atomic_fetch_add(&p->chain_users, 1);
	return 0;
}

void vmm_pv_chain_disable(struct vmm_vcpu *vcpu)
{
	atomic_fetch_sub(&vmm_pv_vcpu(vcpu)->chain_users, 1);
}

void vmm_pv_chain_free(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_chain_ring *r =
		atomic_exchange(&vmm_pv_vcpu(vcpu)->chains, NULL);

	if (r) {
		pthread_mutex_destroy(&r->lock);
		free(r);
	}
}

/* The guest's registers; false outside 64-bit mode with 4-level paging. */
static bool guest_regs(struct vmm_vcpu *vcpu, uint64_t *rip, uint64_t *rbp,
		       uint64_t *rsp, uint64_t *cr3)
{
	struct kvm_sregs sr;
	struct kvm_regs r;

	if (vcpu->vm->has_sync_regs)
		r = vcpu->run->s.regs.regs;
	else if (ioctl(vcpu->fd, KVM_GET_REGS, &r) < 0)
		return false;
	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sr) < 0 || !(sr.cr0 & CR0_PG) ||
	    !(sr.efer & EFER_LMA) || (sr.cr4 & CR4_LA57))
		return false;
	*rip = r.rip;
	*rbp = r.rbp;
	*rsp = r.rsp;
	*cr3 = sr.cr3;
	return true;
}

void vmm_pv_chain_capture(struct vmm_vcpu *vcpu, uint64_t tstamp)
{
	const struct vmm_gmem_view m = {.base = vcpu->vm->mem,
					.size = vcpu->vm->mem_size};
	uint64_t ret[VMM_PV_CHAIN_DEPTH_MAX], rip, rbp, rsp, cr3;
	unsigned int n = 0;

	if (!atomic_load(&vmm_pv_vcpu(vcpu)->chains))
		return;
	if (guest_regs(vcpu, &rip, &rbp, &rsp, &cr3)) {
		/* A frameless leaf's caller first, then the rbp chain. */
		n = vmm_leaf_caller(&m, cr3, rip, rsp, ret) ? 1 : 0;
		n += vmm_fp_unwind(&m, cr3, rbp, rsp, ret + n,
				   VMM_PV_CHAIN_DEPTH_MAX - n);
	}
	/* An empty chain attaches nothing: keep the ring's slot. */
	if (n)
		vmm_pv_chain_store(vcpu, tstamp, ret, n);
}

void vmm_pv_chain_store(struct vmm_vcpu *vcpu, uint64_t tstamp,
			const uint64_t *ret, unsigned int n)
{
	struct vmm_pv_chain_ring *r = atomic_load(&vmm_pv_vcpu(vcpu)->chains);

	if (!r)
		return;
	if (n > VMM_PV_CHAIN_DEPTH_MAX)
		n = VMM_PV_CHAIN_DEPTH_MAX;
	pthread_mutex_lock(&r->lock);
	r->slot[r->head].tstamp = tstamp;
	r->slot[r->head].n      = n;
	memcpy(r->slot[r->head].ret, ret, n * sizeof(ret[0]));
	r->head = (r->head + 1) % VMM_PV_CHAIN_RING;
	pthread_mutex_unlock(&r->lock);
}

unsigned int vmm_pv_chain_lookup(struct vmm_vcpu *vcpu, uint64_t tstamp,
				 uint64_t *out, unsigned int max)
{
	struct vmm_pv_chain_ring *r = atomic_load(&vmm_pv_vcpu(vcpu)->chains);
	unsigned int i, k, n = 0;

	if (!r || !tstamp)
		return 0;
	pthread_mutex_lock(&r->lock);
	/* Newest first: samples are drained soon after they are taken. */
	for (i = 1; i <= VMM_PV_CHAIN_RING; i++) {
		k = (r->head + VMM_PV_CHAIN_RING - i) % VMM_PV_CHAIN_RING;
		if (r->slot[k].tstamp == tstamp) {
			n = r->slot[k].n < max ? r->slot[k].n : max;
			memcpy(out, r->slot[k].ret, n * sizeof(*out));
			break;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return n;
}
