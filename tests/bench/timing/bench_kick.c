// SPDX-License-Identifier: MIT
/*
 * bench_kick.c: what the VMM's kick mechanism costs on this host without
 * KVM, next to its floor, in one run: the host-side part of the
 * guest slowdown that bench_slowdown (tests/kvm/guests) measures under
 * 1 ms multiplexing and 1 kHz sampling.
 *
 * A kick is a POSIX timer (CLOCK_MONOTONIC, SIGEV_THREAD_ID) that sends
 * SIGUSR1 to the vCPU thread, whose handler sets kvm_run.immediate_exit;
 * the thread then re-arms the timer with timer_settime() for the next
 * deadline (vmm/pv/vm_pmu.c, vmm/core/vcpu_loop.c). Here a thread runs a fixed
 * CPU-bound loop (the same xorshift chain as the guests' tool_spin()) in
 * BENCH_CHUNKS chunks, interleaved over BENCH_ROUNDS rounds in three ways:
 *
 *   none     no timer: the floor
 *   signal   the timer fires every 1 ms (it_interval): signal delivery,
 *            handler and sigreturn only
 *   rearm    one-shot 1 ms timers re-armed by the loop after each signal
 *            with timer_settime(), as the VMM does
 *
 * It prints the median and best round of each, the ratios to none, the
 * cost per signal (rounds' extra time over their signals) and the median
 * cost of one timer_settime() call. A guest kick costs this plus the
 * forced exit and re-entry of the vCPU (bench_slowdown: "one kick").
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BENCH_ROUNDS 9
#define BENCH_CHUNKS 1000
#define BENCH_MS     100 /* per round, about */
#define NR_SETTIME   1000

enum kind { K_NONE, K_SIGNAL, K_REARM, NR_KINDS };

static const char *const names[NR_KINDS] = {
	"none (floor)", "1 kHz timer signal", "1 kHz one-shot + rearm"};

static volatile sig_atomic_t hits;
static volatile uint64_t sink;
static uint64_t ns[NR_KINDS][BENCH_ROUNDS];
static uint64_t nsig[NR_KINDS];

static void on_kick(int sig)
{
	(void)sig;
	hits++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) uint64_t spin(uint64_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Keep every step: at -O2 the chain must not be folded away. */
		__asm__ __volatile__("" : "+r"(x));
	}
	return x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static void arm(timer_t t, int periodic)
{
	struct itimerspec its = {.it_value = {.tv_nsec = 1000000}};

	if (periodic)
		its.it_interval.tv_nsec = 1000000;
	timer_settime(t, 0, &its, NULL);
}

static void disarm(timer_t t)
{
	struct itimerspec its = {0};

	timer_settime(t, 0, &its, NULL);
}

/* One round of kind (k); returns its ns and adds its signals. */
static uint64_t round_of(enum kind k, timer_t t, uint64_t chunk)
{
	sig_atomic_t seen;
	uint64_t t0;
	unsigned int i;

	hits = 0;
	seen = 0;
	if (k != K_NONE)
		arm(t, k == K_SIGNAL);
	t0 = now_ns();
	for (i = 0; i < BENCH_CHUNKS; i++) {
		sink = spin(chunk);
		if (k == K_REARM && hits != seen) {
			seen = hits;
			arm(t, 0);
		}
	}
	t0 = now_ns() - t0;
	if (k != K_NONE)
		disarm(t);
	nsig[k] += (uint64_t)hits;
	return t0;
}

/* Loop rounds per chunk for about BENCH_MS per round (best of 3). */
static uint64_t calibrate(void)
{
	uint64_t n = 1000000, best = ~0ULL, t;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		t    = now_ns();
		sink = spin(n);
		t    = now_ns() - t;
		best = t < best ? t : best;
	}
	return n * BENCH_MS * 1000000ULL / (best ? best : 1) / BENCH_CHUNKS;
}

static uint64_t settime_ns(timer_t t)
{
	static uint64_t v[NR_SETTIME];
	struct itimerspec its = {.it_value = {.tv_sec = 10}};
	unsigned int i;
	uint64_t t0;

	for (i = 0; i < NR_SETTIME; i++) {
		t0 = now_ns();
		timer_settime(t, 0, &its, NULL);
		v[i] = now_ns() - t0;
	}
	disarm(t);
	return median(v, NR_SETTIME);
}

int main(void)
{
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID,
			       .sigev_signo  = SIGUSR1};
	struct sigaction sa;
	uint64_t chunk, med[NR_KINDS], best[NR_KINDS], per;
	unsigned int r, i;
	timer_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;
	sigemptyset(&sa.sa_mask);
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (sigaction(SIGUSR1, &sa, NULL) ||
	    timer_create(CLOCK_MONOTONIC, &sev, &t)) {
		perror("bench_kick: timer");
		return 1;
	}
	chunk = calibrate();
	for (r = 0; r < BENCH_ROUNDS; r++) {
		for (i = 0; i < NR_KINDS; i++) {
			enum kind k = (enum kind)((i + r) % NR_KINDS);

			ns[k][r] = round_of(k, t, chunk);
		}
	}
	printf("bench_kick: %u rounds of ~%u ms, interleaved; host thread, "
	       "no KVM\n",
	       BENCH_ROUNDS, BENCH_MS);
	printf("bench_kick: %-24s %12s %12s %8s %8s %10s\n", "config",
	       "median ns", "best ns", "median", "best", "signals/s");
	for (i = 0; i < NR_KINDS; i++) {
		med[i]  = median(ns[i], BENCH_ROUNDS);
		best[i] = ns[i][0];
	}
	for (i = 0; i < NR_KINDS; i++)
		printf("bench_kick: %-24s %12llu %12llu %8.4f %8.4f %10.0f\n",
		       names[i], (unsigned long long)med[i],
		       (unsigned long long)best[i],
		       (double)med[i] / (double)med[K_NONE],
		       (double)best[i] / (double)best[K_NONE],
		       nsig[i] * 1e9 / (double)(med[i] * BENCH_ROUNDS));
	for (i = K_SIGNAL; i < NR_KINDS; i++) {
		per = nsig[i] && best[i] > best[K_NONE]
			      ? (best[i] - best[K_NONE]) * BENCH_ROUNDS /
					nsig[i]
			      : 0;
		printf("bench_kick: %s: %llu ns per signal (best rounds over "
		       "none)\n",
		       names[i], (unsigned long long)per);
	}
	printf("bench_kick: timer_settime(): %llu ns (median of %u)\n",
	       (unsigned long long)settime_ns(t), NR_SETTIME);
	timer_delete(t);
	return 0;
}
