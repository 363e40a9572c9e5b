// SPDX-License-Identifier: MIT
/*
 * pv_read_msg.c: the hypercalls that may wait: PVPMU_HC_READ_MSG, read() on
 * a context with an optional wait, and PVPMU_HC_BLOCK, a guest thread held
 * back by PFM_FL_NOTIFY_BLOCK until PFM_RESTART (spec 3.1.9).
 *
 * A waiting vCPU sleeps on the VM's message condvar (no spinning) until the
 * notification callback bumps the generation, the timeout passes or the VM
 * stops. The generation is sampled before each attempt, so a message
 * queued between the attempt and the sleep is never missed. Waiting
 * forever counts as halted for the "all vCPUs halted" rule: no other
 * vCPU running means no overflow can ever come.
 *
 * The deadline is on CLOCK_MONOTONIC, and so is the condvar
 * (vmm_pmu_msg_init): a timed wait sleeps until it, however the wall
 * clock is set (issue 13: a condvar on the realtime clock timed out at
 * once and the vCPU spun until the deadline).
 */
#include "vm_pmu.h"

#include <errno.h>
#include <time.h>

#include "vmm_core_priv.h"

int vmm_pmu_msg_init(struct vmm_pmu *p)
{
	pthread_condattr_t attr;
	int ret;

	ret = -pthread_condattr_init(&attr);
	if (ret)
		return ret;
	ret = -pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = -pthread_cond_init(&p->msg_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret)
		return ret;
	ret = -pthread_mutex_init(&p->msg_lock, NULL);
	if (ret)
		pthread_cond_destroy(&p->msg_cond);
	return ret;
}

/* Sleep until the generation moves past (gen), (deadline) or a stop. */
static void wait_msg(struct vmm_vm *vm, uint64_t gen, uint64_t deadline)
{
	struct vmm_pmu *p = &vm->pmu;
	struct timespec ts;
	int ret;

	ts.tv_sec  = deadline / 1000000000ULL;
	ts.tv_nsec = deadline % 1000000000ULL;
	pthread_mutex_lock(&p->msg_lock);
	while (p->msg_gen == gen &&
	       !__atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE)) {
		if (deadline == UINT64_MAX)
			ret = pthread_cond_wait(&p->msg_cond, &p->msg_lock);
		else
			ret = pthread_cond_timedwait(&p->msg_cond, &p->msg_lock,
						     &ts);
		p->msg_sleeps++;
		if (ret == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&p->msg_lock);
}

static uint64_t generation(struct vmm_vm *vm)
{
	uint64_t gen;

	pthread_mutex_lock(&vm->pmu.msg_lock);
	gen = vm->pmu.msg_gen;
	pthread_mutex_unlock(&vm->pmu.msg_lock);
	return gen;
}

static int read_one(struct vmm_vcpu *vcpu, int fd, union pfm_msg *msg,
		    uint64_t timeout_ns)
{
	struct vmm_vm *vm      = vcpu->vm;
	struct vpmu_caller who = {.owner = VPMU_OWNER_GUEST,
				  .cpu   = vcpu->pmu.cpu};
	bool forever           = timeout_ns == PVPMU_WAIT_FOREVER;
	uint64_t deadline =
		forever ? UINT64_MAX : vpmu_monotonic_ns() + timeout_ns;
	unsigned int nr;
	uint64_t gen;
	int ret;

	for (;;) {
		gen = generation(vm);
		ret = vpmu_ctx_read_msgs(vm->pmu.domain, &who, fd, msg, 1, &nr);
		if (ret != -EAGAIN || !timeout_ns)
			return ret;
		if (__atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE))
			return -EINTR;
		if (!forever && vpmu_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		if (forever)
			vmm_vcpu_block_begin(vcpu);
		wait_msg(vm, gen, deadline);
		if (forever)
			vmm_vcpu_block_end(vcpu);
	}
}

int vmm_hc_read_msg(struct vmm_vcpu *vcpu, uint64_t gpa, void *opaque)
{
	struct pvpmu_hc_read_msg req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_READ_MSG_SIZE_VER1);
	if (ret)
		return ret;
	ret = read_one(vcpu, req.fd, &req.msg, req.timeout_ns);
	if (ret)
		return vmm_pv_status(ret);
	return vmm_hc_write(vcpu, gpa, &req, sizeof(req));
}

/*
 * 3.1.9, 3.4.3: wait while the thread is blocked. RESTART, UNLOAD and close
 * wake every waiter (hc_pfm, hc_close), like a message does.
 */
static int wait_unblocked(struct vmm_vcpu *vcpu, uint32_t tid,
			  uint64_t timeout_ns)
{
	struct vmm_vm *vm      = vcpu->vm;
	struct vpmu_caller who = {.owner = VPMU_OWNER_GUEST,
				  .cpu   = vcpu->pmu.cpu};
	bool forever           = timeout_ns == PVPMU_WAIT_FOREVER;
	uint64_t deadline =
		forever ? UINT64_MAX : vpmu_monotonic_ns() + timeout_ns;
	uint64_t gen;
	int ret;

	for (;;) {
		gen = generation(vm);
		ret = vpmu_thread_blocked(vm->pmu.domain, &who, tid);
		if (ret <= 0)
			return ret;
		if (!timeout_ns)
			return -EAGAIN;
		if (__atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE))
			return -EINTR;
		if (!forever && vpmu_monotonic_ns() >= deadline)
			return -ETIMEDOUT;
		if (forever)
			vmm_vcpu_block_begin(vcpu);
		wait_msg(vm, gen, deadline);
		if (forever)
			vmm_vcpu_block_end(vcpu);
	}
}

int vmm_hc_block(struct vmm_vcpu *vcpu, uint64_t gpa, void *opaque)
{
	struct pvpmu_hc_block req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_BLOCK_SIZE_VER1);
	if (ret)
		return ret;
	ret = wait_unblocked(vcpu, req.tid, req.timeout_ns);
	if (!ret) /* the guest kernel lets its thread go on */
		vmm_pmu_mark_blocked(vcpu->vm, vcpu->index, false);
	return vmm_pv_status(ret);
}
