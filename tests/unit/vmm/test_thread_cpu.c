// SPDX-License-Identifier: MIT
/*
 * test_thread_cpu.c: vmm_thread_cpu_ns(), the source of the hv_cpu_ns
 * event: the CPU time a thread received, which (unlike hv_run_ns, the wall
 * time inside KVM_RUN) does not grow while the thread waits.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "vmm_core.h"
#include "vpmu_common.h"

#define MS 1000000ULL

static void *sleeper(void *arg)
{
	uint64_t *out = arg, c0 = vmm_thread_cpu_ns(), w0 = vpmu_monotonic_ns();
	struct timespec ts = {.tv_nsec = 60 * MS};

	nanosleep(&ts, NULL);
	out[0] = vmm_thread_cpu_ns() - c0;
	out[1] = vpmu_monotonic_ns() - w0;
	return NULL;
}

static void *spinner(void *arg)
{
	uint64_t *out = arg, c0 = vmm_thread_cpu_ns(), w0 = vpmu_monotonic_ns();

	/* Until 5 ms of CPU, or 10 s of wall time if the clock never moves. */
	while (vmm_thread_cpu_ns() - c0 < 5 * MS &&
	       vpmu_monotonic_ns() - w0 < 10000 * MS)
		;
	out[0] = vmm_thread_cpu_ns() - c0;
	return NULL;
}

Test(vmm_thread_cpu, counts_cpu_received_not_wall_time)
{
	uint64_t slept[2], spun[1];
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, sleeper, slept), 0);
	pthread_join(t, NULL);
	cr_expect_geq(slept[1], 60 * MS, "slept 60 ms of wall time");
	cr_expect_lt(slept[0], slept[1] / 2,
		     "a sleeping thread got %llu ns of CPU in %llu ns",
		     (unsigned long long)slept[0],
		     (unsigned long long)slept[1]);
	cr_assert_eq(pthread_create(&t, NULL, spinner, spun), 0);
	pthread_join(t, NULL);
	cr_expect_geq(spun[0], 5 * MS, "a spinning thread's CPU time grows");
}

Test(vmm_thread_cpu, is_per_thread)
{
	uint64_t spun[1], mine = vmm_thread_cpu_ns(), after;
	pthread_t t;

	cr_assert_eq(pthread_create(&t, NULL, spinner, spun), 0);
	pthread_join(t, NULL);
	after = vmm_thread_cpu_ns();
	cr_expect_lt(after - mine, spun[0],
		     "the other thread's 5 ms are not this thread's");
}
