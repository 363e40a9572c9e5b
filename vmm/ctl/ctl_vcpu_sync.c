// SPDX-License-Identifier: MIT
/*
 * ctl_vcpu_sync.c: bringing vCPUs' accounting up to date for operator
 * reads, with a completion instead of a poll.
 *
 * The VMM accounts guest run time when KVM_RUN returns, so a vCPU spinning
 * in the guest holds unaccounted time until its next exit. Before reading
 * (or loading) host contexts the control thread posts a request number in
 * the vCPU's (want), kicks it out of KVM_RUN, and sleeps on (sync_cond).
 * The vCPU thread, right after accounting (vmm_pv_after_run) or when it
 * blocks (HLT, a message wait), copies (want) into (done) and signals the
 * condition. A vCPU already halted or blocked has nothing unaccounted: it
 * is not kicked. The wait is bounded (VMM_CTL_SYNC_WAIT_NS); a vCPU that
 * did not complete in time is reported stale with the age of its data.
 *
 * Ordering: the control thread stores (want) and then reads (halted); the
 * vCPU sets (halted) under the VM lock (whose release is a full barrier on
 * x86) and then reads (want). So either the control thread sees the vCPU
 * halted, or the vCPU sees the request and completes it.
 */
#include "ctl_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm_pv.h"

/* The test hook: a wait of 0 ns makes every running vCPU's read stale. */
static uint64_t wait_from_env(void)
{
	const char *s = getenv("VPMU_TEST_SYNC_WAIT_NS");
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return VMM_CTL_SYNC_WAIT_NS;
	v = strtoull(s, &end, 10);
	return *end ? VMM_CTL_SYNC_WAIT_NS : v;
}

int vmm_ctl_sync_init(struct vmm_control *ctl, unsigned int nr_vcpus)
{
	size_t size = (nr_vcpus ? nr_vcpus : 1) * sizeof(*ctl->sync);
	pthread_condattr_t ca;
	int ret;

	/* One cache line each: every vCPU writes its own at every exit. */
	ctl->sync = aligned_alloc(_Alignof(struct vmm_ctl_vcpu_sync), size);
	if (!ctl->sync)
		return -ENOMEM;
	memset(ctl->sync, 0, size);
	ctl->nr_sync      = nr_vcpus;
	ctl->sync_wait_ns = wait_from_env();
	pthread_condattr_init(&ca);
	ret = -pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!ret)
		ret = -pthread_cond_init(&ctl->sync_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret) {
		free(ctl->sync);
		ctl->sync = NULL;
		return ret;
	}
	pthread_mutex_init(&ctl->sync_lock, NULL);
	ctl->has_sync = true;
	return 0;
}

void vmm_ctl_sync_free(struct vmm_control *ctl)
{
	if (!ctl->has_sync)
		return;
	pthread_cond_destroy(&ctl->sync_cond);
	pthread_mutex_destroy(&ctl->sync_lock);
	free(ctl->sync);
	ctl->sync     = NULL;
	ctl->has_sync = false;
}

void vmm_control_vcpu_accounted(struct vmm_vcpu *vcpu)
{
	struct vmm_control *ctl = vmm_ctl(vcpu->vm);
	struct vmm_ctl_vcpu_sync *s;
	uint64_t want;

	if (!ctl || !ctl->has_sync || vcpu->index >= ctl->nr_sync)
		return;
	s = &ctl->sync[vcpu->index];
	atomic_store_explicit(&s->accounted_ns, vpmu_monotonic_ns(),
			      memory_order_relaxed);
	want = atomic_load(&s->want);
	if (want == atomic_load_explicit(&s->done, memory_order_relaxed))
		return;
	atomic_store(&s->done, want);
	/* Under the lock: the waiter cannot miss it between check and wait. */
	pthread_mutex_lock(&ctl->sync_lock);
	pthread_cond_broadcast(&ctl->sync_cond);
	pthread_mutex_unlock(&ctl->sync_lock);
}

static bool is_blocked(struct vmm_vcpu *v)
{
	return __atomic_load_n(&v->halted, __ATOMIC_SEQ_CST);
}

void vmm_ctl_kick(struct vmm_control *ctl, unsigned int vcpu)
{
	struct vmm_vcpu *v = vmm_vm_vcpu(ctl->vm, vcpu);

	if (v && v->has_thread)
		vmm_vcpu_kick(v, VMM_REQ_TIMER);
}

/*
 * Post request (seq) to vCPU (idx). Returns true when a completion is to
 * be waited for; false when the vCPU has nothing unaccounted (no thread,
 * halted or blocked).
 */
static bool post(struct vmm_control *ctl, unsigned int idx, uint64_t seq)
{
	struct vmm_vcpu *v = vmm_vm_vcpu(ctl->vm, idx);

	if (!v || !v->has_thread || idx >= ctl->nr_sync || is_blocked(v))
		return false;
	atomic_store(&ctl->sync[idx].want, seq);
	if (is_blocked(v))
		return false; /* it blocked meanwhile: accounted */
	vmm_vcpu_kick(v, VMM_REQ_TIMER);
	return true;
}

static bool completed(struct vmm_control *ctl, unsigned int idx, uint64_t seq)
{
	return atomic_load(&ctl->sync[idx].done) >= seq ||
	       is_blocked(vmm_vm_vcpu(ctl->vm, idx));
}

static bool all_completed(struct vmm_control *ctl, const unsigned int *vcpus,
			  const bool *pending, unsigned int n, uint64_t seq)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (pending[i] && !completed(ctl, vcpus[i], seq))
			return false;
	}
	return true;
}

static void wait_all(struct vmm_control *ctl, const unsigned int *vcpus,
		     const bool *pending, unsigned int n, uint64_t seq)
{
	uint64_t deadline  = vpmu_monotonic_ns() + ctl->sync_wait_ns;
	struct timespec ts = {
		.tv_sec  = (time_t)(deadline / 1000000000ULL),
		.tv_nsec = (long)(deadline % 1000000000ULL),
	};

	if (!ctl->sync_wait_ns)
		return;
	pthread_mutex_lock(&ctl->sync_lock);
	while (!all_completed(ctl, vcpus, pending, n, seq)) {
		if (pthread_cond_timedwait(&ctl->sync_cond, &ctl->sync_lock,
					   &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&ctl->sync_lock);
}

void vmm_ctl_sync(struct vmm_control *ctl, const unsigned int *vcpus,
		  unsigned int n, struct vmm_ctl_fresh *fresh)
{
	bool pending[VMM_CTL_SESSION_VCPUS];
	uint64_t seq, now;
	unsigned int i;

	for (i = 0; fresh && i < n; i++)
		fresh[i] = (struct vmm_ctl_fresh){0};
	if (!ctl->has_sync || n > VMM_CTL_SESSION_VCPUS)
		return;
	seq = ++ctl->sync_seq;
	/* Kick them all first: they account in parallel, one wait for all. */
	for (i = 0; i < n; i++)
		pending[i] = post(ctl, vcpus[i], seq);
	wait_all(ctl, vcpus, pending, n, seq);
	now = vpmu_monotonic_ns();
	for (i = 0; fresh && i < n; i++) {
		/* A zero budget (the test hook) never counts as in time. */
		if (!pending[i] ||
		    (ctl->sync_wait_ns && completed(ctl, vcpus[i], seq)))
			continue;
		fresh[i].stale = true;
		fresh[i].age_ns =
			now - atomic_load(&ctl->sync[vcpus[i]].accounted_ns);
	}
}
