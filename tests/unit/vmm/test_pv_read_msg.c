// SPDX-License-Identifier: MIT
/*
 * test_pv_read_msg.c: PVPMU_HC_READ_MSG's timed wait (vmm/pv/pv_read_msg.c)
 * without KVM: a VM of one vCPU whose "guest memory" is a buffer, a libvpmu
 * domain without backends and a guest context with an empty queue. A timed
 * read must sleep until its deadline (a handful of condvar wake-ups), not
 * spin (the deadline was on CLOCK_MONOTONIC, the condvar on the
 * realtime clock, so every timed wait returned at once, millions of times).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm_pv.h"

#include "vpmu_common.h"
#include "vpmu_core.h"

#define MEM_SIZE  (64U << 10)
#define BLOCK_GPA 0x1000U

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;
static int ctx_fd;

static void setup(void)
{
	struct vpmu_domain_config cfg = {0};
	struct vpmu_caller guest      = {.owner = VPMU_OWNER_GUEST};
	struct pfarg_ctx pc           = {0};

	vm.mem = calloc(1, MEM_SIZE);
	cr_assert(not(eq(ptr, vm.mem, NULL)));
	vm.mem_size = MEM_SIZE;
	vm.nr_vcpus = 1;
	vm.vcpus    = &vcpu;
	vcpu.vm     = &vm;
	pthread_mutex_init(&vm.lock, NULL);
	pthread_cond_init(&vm.cond, NULL);
	cr_assert(eq(int, vmm_pv_attach(&vm), 0));
	cr_assert(eq(int, vmm_pv_msg_init(vmm_pv(&vm)), 0));
	vpmu_limits_default(&cfg.limits);
	cr_assert(eq(int, vpmu_domain_create(&cfg, &vmm_pv(&vm)->domain), 0));
	cr_assert(eq(int,
		     vpmu_cpu_create(vmm_pv(&vm)->domain, 0,
				     &vmm_pv_vcpu(&vcpu)->cpu),
		     0));
	guest.cpu = vmm_pv_vcpu(&vcpu)->cpu;
	cr_assert(eq(
		int,
		vpmu_ctx_create(vmm_pv(&vm)->domain, &guest, &pc, 1, NULL, 0),
		0));
	ctx_fd = pc.ctx_fd;
}

static void teardown(void)
{
	vpmu_domain_destroy(vmm_pv(&vm)->domain);
	vmm_pv_detach(&vm);
	free(vm.mem);
}

TestSuite(vmm_read_msg, .init = setup, .fini = teardown, .timeout = 30);

/* What the guest writes: a READ_MSG block at BLOCK_GPA. */
static void guest_request(uint64_t timeout_ns)
{
	struct pvpmu_hc_read_msg req = {
		.size = sizeof(req), .fd = ctx_fd, .timeout_ns = timeout_ns};

	memcpy((char *)vm.mem + BLOCK_GPA, &req, sizeof(req));
}

Test(vmm_read_msg, timed_wait_sleeps_until_the_deadline)
{
	const uint64_t timeout =
		1000000000ULL; /* the logic is the same at 5 s */
	uint64_t t0, dt;
	int ret;

	guest_request(timeout);
	t0  = vpmu_monotonic_ns();
	ret = vmm_pv_hc_read_msg(&vcpu, BLOCK_GPA, NULL);
	dt  = vpmu_monotonic_ns() - t0;
	cr_expect(eq(int, ret, vmm_pv_status(-ETIMEDOUT)));
	cr_expect(ge(u64, dt, timeout), "returned after %llu ns",
		  (unsigned long long)dt);
	/* One sleep that times out; a spurious wake-up or two at most. */
	cr_expect(le(u64, vmm_pv(&vm)->msg_sleeps, 4),
		  "%llu condvar wake-ups in a %llu ns wait: it spun",
		  (unsigned long long)vmm_pv(&vm)->msg_sleeps,
		  (unsigned long long)timeout);
}

static void *stop_later(void *arg)
{
	struct timespec ts = {.tv_nsec = 100000000L};

	(void)arg;
	nanosleep(&ts, NULL);
	__atomic_store_n(&vm.stopping, true, __ATOMIC_RELEASE);
	vmm_pv_wake_waiters(&vm);
	return NULL;
}

Test(vmm_read_msg, stop_ends_a_long_wait_at_once)
{
	pthread_t t;
	uint64_t t0, dt;
	int ret;

	guest_request(20000000000ULL); /* 20 s */
	cr_assert(eq(int, pthread_create(&t, NULL, stop_later, NULL), 0));
	t0  = vpmu_monotonic_ns();
	ret = vmm_pv_hc_read_msg(&vcpu, BLOCK_GPA, NULL);
	dt  = vpmu_monotonic_ns() - t0;
	pthread_join(t, NULL);
	cr_expect(eq(int, ret, vmm_pv_status(-EINTR)));
	cr_expect(lt(u64, dt, 10000000000ULL), "took %llu ns",
		  (unsigned long long)dt);
	cr_expect(le(u64, vmm_pv(&vm)->msg_sleeps, 4), "%llu wake-ups",
		  (unsigned long long)vmm_pv(&vm)->msg_sleeps);
}
