// SPDX-License-Identifier: MIT
/*
 * test_backends_perf.c: the perf backend with host perf_event. Software
 * events count a worker thread standing in for a vCPU thread; hardware
 * events skip with the backend's reason where the host has no PMU.
 *
 * Skid: an overflow armed for N events is noticed after N + skid events
 * (the signal is delivered when the kernel next returns to the thread).
 * The tests measure and print it; they only bound it generously.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvpmu/catalog.h>

#include "backends/perf.h"

#define NS_PER_MS 1000000ULL

/* A stand-in for a vCPU thread running a workload on command. */
struct worker {
	pthread_t th;
	pid_t tid;
	sem_t ready, go, done;
	void (*work)(struct worker *w);
	struct vpmu_bevent *e; /* for work that arms from the thread */
	uint64_t cpu_ns;       /* CPU time of the workload */
	uint64_t before;       /* delta read by the worker before arming */
};

static struct vpmu_perf *perf;
static struct vpmu_backend be;
static struct worker W;
static atomic_int fired;
static atomic_int fired_tid;
static int overflow_sig;

static pid_t worker_tid(void *opaque, uint32_t cpu)
{
	struct worker *w = opaque;

	(void)cpu;
	return w->tid;
}

static void on_overflow(int sig)
{
	(void)sig;
	atomic_store(&fired_tid, gettid());
	atomic_fetch_add(&fired, 1);
}

static void setup(void)
{
	struct vpmu_perf_source src = {.vcpu_tid = worker_tid, .opaque = &W};
	struct sigaction sa;

	overflow_sig = SIGRTMIN + 3;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_overflow;
	sigemptyset(&sa.sa_mask);
	sigaction(overflow_sig, &sa, NULL);
	src.signo = overflow_sig;
	cr_assert(eq(int, vpmu_perf_create(&src, &perf), 0));
	vpmu_perf_instance(perf, &be);
	memset(&W, 0, sizeof(W));
	atomic_store(&fired, 0);
	atomic_store(&fired_tid, 0);
}

static void teardown(void)
{
	vpmu_perf_destroy(perf);
}

TestSuite(backend_perf, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t t0;

	w->tid = gettid();
	sem_post(&w->ready);
	sem_wait(&w->go);
	t0 = thread_cpu_ns();
	w->work(w);
	w->cpu_ns = thread_cpu_ns() - t0;
	sem_post(&w->done);
	return NULL;
}

static void worker_start(void (*work)(struct worker *w))
{
	W.work = work;
	sem_init(&W.ready, 0, 0);
	sem_init(&W.go, 0, 0);
	sem_init(&W.done, 0, 0);
	cr_assert(eq(int, pthread_create(&W.th, NULL, worker_main, &W), 0));
	sem_wait(&W.ready);
}

static void worker_run(void)
{
	sem_post(&W.go);
	sem_wait(&W.done);
	pthread_join(W.th, NULL);
}

static void open_event(struct vpmu_bevent *e, uint16_t code)
{
	const char *why = vpmu_perf_unavailable_reason(perf, code);

	if (why)
		cr_skip_test("perf event 0x%04x unavailable here: %s", code,
			     why);
	*e = (struct vpmu_bevent){
		.be = &be, .ev = {.code = code, .usr = true, .os = true}};
	cr_assert(eq(int, be.ops->open(e, 0), 0));
}

static uint64_t read_event(struct vpmu_bevent *e)
{
	uint64_t d = ~0ULL;

	cr_assert(eq(int, be.ops->read(e, 0, &d), 0));
	return d;
}

static void spin_cpu(uint64_t ns)
{
	uint64_t t0 = thread_cpu_ns();

	while (thread_cpu_ns() - t0 < ns && !atomic_load(&fired))
		;
}

static void spin_100ms(struct worker *w)
{
	(void)w;
	spin_cpu(100 * NS_PER_MS);
}

Test(backend_perf, task_clock_counts_the_thread_cpu_time)
{
	struct vpmu_bevent e;
	uint64_t d;

	worker_start(spin_100ms);
	open_event(&e, PVPMU_EV_SW_TASK_CLOCK);
	worker_run();
	d = read_event(&e);
	fprintf(stderr, "task-clock: %llu ns for %llu ns of thread CPU time\n",
		(unsigned long long)d, (unsigned long long)W.cpu_ns);
	cr_assert(ge(u64, d, W.cpu_ns / 2));
	cr_assert(le(u64, d, W.cpu_ns * 3 / 2 + 10 * NS_PER_MS));
	cr_assert(eq(u64, read_event(&e), 0)); /* the thread has ended */
	be.ops->close(&e);
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000L};

	nanosleep(&ts, NULL);
}

static void yield_and_sleep(struct worker *w)
{
	int i;

	(void)w;
	for (i = 0; i < 20; i++) {
		sched_yield();
		sleep_us(200);
	}
}

Test(backend_perf, context_switches_count_sleeps)
{
	struct vpmu_bevent e;
	uint64_t d;

	worker_start(yield_and_sleep);
	open_event(&e, PVPMU_EV_SW_CONTEXT_SWITCHES);
	worker_run();
	d = read_event(&e);
	fprintf(stderr, "context-switches: %llu for 20 sleeps\n",
		(unsigned long long)d);
	cr_assert(ge(u64, d, 20));
	cr_assert(le(u64, d, 200));
	be.ops->close(&e);
}

Test(backend_perf, software_events_ignore_usr_os_and_describe)
{
	struct vpmu_event_info info;

	cr_assert(eq(int, be.ops->describe(&be, PVPMU_EV_SW_PAGE_FAULTS, &info),
		     0));
	cr_assert(eq(str, (char *)info.name, "page-faults"));
	cr_assert(eq(int, be.ops->enumerate(&be, 0, &info), 0));
	/* vpmu's own families are never raw host events. */
	cr_assert(eq(int, be.ops->describe(&be, PVPMU_EV_HV_EXITS, NULL),
		     -ENOENT));
	cr_assert(eq(int, be.ops->describe(&be, PVPMU_EV_SW(0x05), NULL),
		     -ENOENT));
	cr_assert(not(eq(
		ptr,
		strstr(vpmu_perf_unavailable_reason(perf, PVPMU_EV_KVMSTAT(3)),
		       "kvmstat"),
		NULL)));
}

Test(backend_perf, open_without_a_thread_is_esrch)
{
	struct vpmu_bevent e = {.be = &be, .ev.code = PVPMU_EV_SW_TASK_CLOCK};

	W.tid = 0;
	cr_assert(eq(int, be.ops->open(&e, 0), -ESRCH));
}

Test(backend_perf, hardware_events_count_guest_only)
{
	const char *why = vpmu_perf_unavailable_reason(perf, PVPMU_EV_CYCLES);
	struct vpmu_event_info info;
	struct vpmu_bevent e;

	if (why) {
		cr_assert(eq(int, be.ops->describe(&be, PVPMU_EV_CYCLES, NULL),
			     -ENOENT));
		cr_skip_test("hardware events unavailable on this host: %s",
			     why);
	}
	cr_assert(eq(int, be.ops->describe(&be, PVPMU_EV_CYCLES, &info), 0));
	cr_assert(eq(str, (char *)info.name, "cycles"));
	/* exclude_host: a host thread that never enters a guest counts 0. */
	worker_start(spin_100ms);
	open_event(&e, PVPMU_EV_INSTRUCTIONS);
	worker_run();
	cr_assert(eq(u64, read_event(&e), 0));
	be.ops->close(&e);
}

/* 0x00c2: not a catalogue code (those use perf's generic events). */
#define RAW_CODE 0x00c2

Test(backend_perf, raw_events_are_named_by_libpfm4)
{
	const char *why = vpmu_perf_unavailable_reason(perf, RAW_CODE);
	struct vpmu_event_info info;

	if (why) {
		cr_assert(eq(int, be.ops->describe(&be, RAW_CODE, NULL),
			     -ENOENT));
		cr_skip_test("raw host events unavailable on this host: %s",
			     why);
	}
	cr_assert(eq(int, be.ops->describe(&be, RAW_CODE, &info), 0));
	cr_assert(eq(str, (char *)info.name, "raw:0x00c2"));
	fprintf(stderr, "raw 0x00c2: %s\n", info.desc);
	/* The catalogue's code for instructions is the generic event. */
	cr_assert(eq(int, be.ops->describe(&be, PVPMU_EV_INSTRUCTIONS, &info),
		     0));
	cr_assert(eq(str, (char *)info.name, "instructions"));
}

Test(backend_perf, generic_hardware_events_refuse_modifiers)
{
	struct vpmu_bevent e = {
		.be = &be,
		.ev = {.code = PVPMU_EV_CYCLES, .usr = true, .cmask = 1}};
	const char *why = vpmu_perf_unavailable_reason(perf, PVPMU_EV_CYCLES);

	W.tid = gettid();
	if (why) {
		cr_assert(eq(int, be.ops->open(&e, 0), -ENOENT));
		cr_skip_test("hardware events unavailable on this host: %s",
			     why);
	}
	cr_assert(eq(int, be.ops->open(&e, 0), -EINVAL));
}

Test(backend_perf, no_pmu_reason_is_retrievable)
{
	const char *why = vpmu_perf_unavailable_reason(perf, PVPMU_EV_CYCLES);

	if (!why)
		cr_skip_test("this host has a hardware PMU");
	cr_assert(not(eq(ptr, strstr(why, "perf_event_open"), NULL)), "%s",
		  why);
	cr_assert(eq(
		ptr, (void *)why,
		(void *)vpmu_perf_unavailable_reason(perf, PVPMU_EV_CYCLES)));
}

/* ---- overflow arming ------------------------------------------------- */

Test(backend_perf, task_clock_overflow_signals_the_thread)
{
	const uint64_t period = 20 * NS_PER_MS;
	struct vpmu_bevent e;
	uint64_t in_ns = 0, d;

	worker_start(spin_100ms);
	open_event(&e, PVPMU_EV_SW_TASK_CLOCK);
	/* Armed from another thread, as the operator's thread would. */
	cr_assert(eq(int, be.ops->arm(&e, period, &in_ns), 0));
	cr_assert(eq(u64, in_ns, VPMU_NO_DEADLINE));
	worker_run();
	d = read_event(&e);
	cr_assert(ge(int, atomic_load(&fired), 1), "no overflow signal");
	cr_assert(eq(int, atomic_load(&fired_tid), W.tid));
	fprintf(stderr,
		"task-clock overflow: period %llu ns, count at stop %llu ns, "
		"skid %lld ns\n",
		(unsigned long long)period, (unsigned long long)d,
		(long long)(d - period));
	cr_assert(ge(u64, d, period * 9 / 10));
	cr_assert(lt(u64, d, 100 * NS_PER_MS), "the spin did not stop early");
	be.ops->close(&e);
}

static void arm_then_sleep(struct worker *w)
{
	uint64_t in_ns;
	int i;

	/* Like the VMM: read, then re-arm, on the vCPU thread itself. */
	cr_assert(eq(int, be.ops->read(w->e, 0, &w->before), 0));
	cr_assert(eq(int, be.ops->arm(w->e, 5, &in_ns), 0));
	for (i = 0; i < 200 && !atomic_load(&fired); i++)
		sleep_us(200);
}

Test(backend_perf, context_switch_overflow_armed_on_the_thread)
{
	struct vpmu_bevent e;
	uint64_t d;

	worker_start(arm_then_sleep);
	open_event(&e, PVPMU_EV_SW_CONTEXT_SWITCHES);
	W.e = &e;
	worker_run();
	d = read_event(&e);
	cr_assert(ge(int, atomic_load(&fired), 1), "no overflow signal");
	cr_assert(eq(int, atomic_load(&fired_tid), W.tid));
	fprintf(stderr,
		"context-switches overflow: period 5, count at stop %llu "
		"(%llu before arming), skid %lld events\n",
		(unsigned long long)d, (unsigned long long)W.before,
		(long long)d - 5);
	/* An active software counter must not fire at its next event. */
	cr_assert(ge(u64, d, 5));
	cr_assert(le(u64, d, 20));
	be.ops->close(&e);
}

Test(backend_perf, rearming_the_same_point_is_free_and_moving_it_works)
{
	struct vpmu_bevent e;
	uint64_t in_ns;

	worker_start(spin_100ms);
	open_event(&e, PVPMU_EV_SW_TASK_CLOCK);
	cr_assert(eq(int, be.ops->arm(&e, 1000 * NS_PER_MS, &in_ns), 0));
	cr_assert(eq(int, be.ops->arm(&e, 1000 * NS_PER_MS, &in_ns), 0));
	/* Moved closer: the new period counts from now. */
	cr_assert(eq(int, be.ops->arm(&e, 10 * NS_PER_MS, &in_ns), 0));
	worker_run();
	cr_assert(ge(int, atomic_load(&fired), 1));
	cr_assert(lt(u64, read_event(&e), 100 * NS_PER_MS));
	be.ops->close(&e);
}
