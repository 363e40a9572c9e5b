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
 * (vmm_pv_msg_init): a timed wait sleeps until it, however the wall
 * clock is set (a condvar on the realtime clock timed out at
 * once and the vCPU spun until the deadline).
 */
#include "vmm_pv.h"

#include <errno.h>
#include <time.h>

int vmm_pv_msg_init(struct vmm_pv *p)
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
	struct vmm_pv *p = vmm_pv(vm);
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
	struct vmm_pv *pv = vmm_pv(vm);
	uint64_t gen;

	pthread_mutex_lock(&pv->msg_lock);
	gen = pv->msg_gen;
	pthread_mutex_unlock(&pv->msg_lock);
	return gen;
}

/*
 * What a waiting hypercall waits for: -EAGAIN while it must wait, anything
 * else ends the wait with that result.
 */
typedef int (*wait_poll_fn)(struct vmm_vcpu *vcpu,
			    const struct vpmu_caller *who, void *arg);

/*
 * Poll (poll) until it is done, (timeout_ns) passes (0: poll once;
 * PVPMU_WAIT_FOREVER: no deadline, the vCPU counts as halted meanwhile) or
 * the VM stops (-EINTR).
 */
static int wait_until(struct vmm_vcpu *vcpu, uint64_t timeout_ns,
		      wait_poll_fn poll, void *arg)
{
	struct vmm_vm *vm      = vcpu->vm;
	struct vpmu_caller who = {.owner = VPMU_OWNER_GUEST,
				  .cpu   = vmm_pv_vcpu(vcpu)->cpu};
	bool forever           = timeout_ns == PVPMU_WAIT_FOREVER;
	uint64_t deadline =
		forever ? UINT64_MAX : vpmu_monotonic_ns() + timeout_ns;
	uint64_t gen;
	int ret;

	for (;;) {
		gen = generation(vm);
		ret = poll(vcpu, &who, arg);
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

struct read_arg {
	int fd;
	union pfm_msg *msg;
};

/* A message of context (fd), or -EAGAIN while its queue is empty. */
static int poll_msg(struct vmm_vcpu *vcpu, const struct vpmu_caller *who,
		    void *arg)
{
	struct read_arg *a = arg;
	unsigned int nr;

	return vpmu_ctx_read_msgs(vmm_pv(vcpu->vm)->domain, who, a->fd, a->msg,
				  1, &nr);
}

int vmm_pv_hc_read_msg(struct vmm_vcpu *vcpu, uint64_t gpa, void *opaque)
{
	struct pvpmu_hc_read_msg req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_READ_MSG_SIZE_VER1);
	if (ret)
		return ret;
	ret = wait_until(vcpu, req.timeout_ns, poll_msg,
			 &(struct read_arg){.fd = req.fd, .msg = &req.msg});
	if (ret)
		return vmm_pv_status(ret);
	return vmm_hc_write(vcpu, gpa, &req, sizeof(req));
}

/*
 * 3.1.9, 3.4.3: wait while the thread is blocked. RESTART, UNLOAD and close
 * wake every waiter (hc_pfm, hc_close), like a message does.
 */
static int poll_unblocked(struct vmm_vcpu *vcpu, const struct vpmu_caller *who,
			  void *arg)
{
	int ret = vpmu_thread_blocked(vmm_pv(vcpu->vm)->domain, who,
				      *(const uint32_t *)arg);

	return ret > 0 ? -EAGAIN : ret;
}

int vmm_pv_hc_block(struct vmm_vcpu *vcpu, uint64_t gpa, void *opaque)
{
	struct pvpmu_hc_block req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_BLOCK_SIZE_VER1);
	if (ret)
		return ret;
	ret = wait_until(vcpu, req.timeout_ns, poll_unblocked, &req.tid);
	if (!ret) /* the guest kernel lets its thread go on */
		vmm_pv_mark_blocked(vcpu->vm, vcpu->index, false);
	return vmm_pv_status(ret);
}
