// SPDX-License-Identifier: MIT
/*
 * bench_backends.c: the cost of one backend read (one event, one exit:
 * libvpmu reads every open event once per vpmu_cpu_account()), for the
 * hv, kvmstat and perf (software) backends, each printed next to a floor
 * measured in the same run and the ratio:
 *   - hv: a callback into the VMM's counters; floor: memcpy of 8 bytes;
 *   - kvmstat: a pread of the vCPU's KVM stats data block; floor: a bare
 *     read() system call on /dev/null; and 4 events read at one run time
 *     (one exit), which share one pread;
 *   - perf: a read() of {count, enabled, running} from a perf_event fd of
 *     this thread (task-clock, context-switches); same syscall floor.
 * kvmstat needs /dev/kvm (a VM with one vCPU, never run) and is skipped
 * with the reason without it; perf events the host lacks are skipped too.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <pvpmu/catalog.h>

#include "backends/backends.h"

#define ROUNDS 7
#define N      200000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Best-of-ROUNDS ns per read() of (e). */
static double time_read(struct vpmu_bevent *e)
{
	double best = 1e30, per;
	uint64_t d, sum = 0, t0;
	unsigned int r, i;

	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < N; i++) {
			e->be->ops->read(e, i, &d);
			sum += d;
		}
		per  = (double)(now_ns() - t0) / N;
		best = per < best ? per : best;
	}
	__asm__ volatile("" : : "r"(sum));
	return best;
}

static double time_memcpy8(void)
{
	static volatile uint64_t src[64];
	static uint64_t dst;
	double best = 1e30, per;
	unsigned int r, i;
	uint64_t t0;

	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < N; i++) {
			src[i & 63]++;
			memcpy(&dst, (const void *)&src[i & 63], sizeof(dst));
			__asm__ volatile("" : : "r"(&dst) : "memory");
		}
		per  = (double)(now_ns() - t0) / N;
		best = per < best ? per : best;
	}
	return best;
}

static double time_syscall(void)
{
	int fd      = open("/dev/null", O_RDONLY | O_CLOEXEC);
	double best = 1e30, per;
	unsigned int r, i;
	uint64_t t0, v;

	if (fd < 0)
		return 0;
	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < N; i++) {
			if (read(fd, &v, sizeof(v)) < 0)
				break;
		}
		per  = (double)(now_ns() - t0) / N;
		best = per < best ? per : best;
	}
	close(fd);
	return best;
}

static void report(const char *what, double ns, const char *floor_what,
		   double floor)
{
	printf("%-42s %8.1f ns   floor %-16s %6.1f ns   ratio %5.1f\n", what,
	       ns, floor_what, floor, floor > 0 ? ns / floor : 0.0);
}

/* ---- count sources ---------------------------------------------------- */

static uint64_t hv_counters[4];

static uint64_t hv_read(void *opaque, uint32_t cpu, uint16_t code)
{
	(void)opaque;
	(void)cpu;
	return ++hv_counters[code & 3];
}

static int kvm_vcpu_fd = -1;

static int vcpu_fd(void *opaque, uint32_t cpu)
{
	(void)opaque;
	return cpu == 0 ? kvm_vcpu_fd : -1;
}

static pid_t self_tid(void *opaque, uint32_t cpu)
{
	(void)opaque;
	(void)cpu;
	return gettid();
}

/* A VM with one vCPU (never run), for its stats file. */
static int make_vcpu(int *kvm, int *vm)
{
	*kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (*kvm < 0)
		return -errno;
	*vm = ioctl(*kvm, KVM_CREATE_VM, 0);
	if (*vm < 0)
		return -errno;
	kvm_vcpu_fd = ioctl(*vm, KVM_CREATE_VCPU, 0);
	return kvm_vcpu_fd < 0 ? -errno : 0;
}

/* Best-of-ROUNDS ns per exit reading the (n) events at (e). */
static double time_exit(struct vpmu_bevent *e, unsigned int n)
{
	double best = 1e30, per;
	uint64_t d, sum = 0, t0;
	unsigned int r, i, j;

	for (r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < N; i++) {
			for (j = 0; j < n; j++) {
				e[j].be->ops->read(&e[j], i, &d);
				sum += d;
			}
		}
		per  = (double)(now_ns() - t0) / N;
		best = per < best ? per : best;
	}
	__asm__ volatile("" : : "r"(sum));
	return best;
}

static const char *const kvm_names[] = {"exits", "io_exits", "halt_exits",
					"pf_taken"};

static void bench_kvmstat4(struct vpmu_backend_list *bl, double floor)
{
	struct vpmu_bevent e[4];
	unsigned int i;
	uint16_t code;
	int ret = 0;

	for (i = 0; i < 4 && !ret; i++) {
		ret  = vpmu_kvmstat_find(bl->kvmstat, kvm_names[i], &code);
		e[i] = (struct vpmu_bevent){.be = &bl->be[1], .ev.code = code};
		ret  = ret ? ret : e[i].be->ops->open(&e[i], 0);
	}
	if (ret) {
		printf("%-42s skipped: %s\n", "kvmstat 4 events",
		       strerror(-ret));
		return;
	}
	report("kvmstat read, 4 events (per exit)", time_exit(e, 4),
	       "read(/dev/null)", floor);
	for (i = 0; i < 4; i++)
		e[i].be->ops->close(&e[i]);
}

static void bench_event(const struct vpmu_backend *be, uint16_t code,
			const char *what, const char *floor_what, double floor)
{
	struct vpmu_bevent e = {.be = be,
				.ev = {.code = code, .usr = true, .os = true}};
	char line[64];
	int ret;

	ret = be->ops->open(&e, 0);
	if (ret) {
		printf("%-42s skipped: open: %s\n", what, strerror(-ret));
		return;
	}
	snprintf(line, sizeof(line), "%s (per event)", what);
	report(line, time_read(&e), floor_what, floor);
	be->ops->close(&e);
}

int main(void)
{
	struct vpmu_hv_source hv       = {.read = hv_read};
	struct vpmu_kvmstat_source kss = {.vcpu_fd = vcpu_fd};
	struct vpmu_perf_source ps     = {.vcpu_tid = self_tid};
	double mem = time_memcpy8(), sys = time_syscall();
	struct vpmu_backend_list bl;
	int kvm = -1, vm = -1, ret;
	const char *why;
	uint16_t code;

	ret = make_vcpu(&kvm, &vm);
	if (vpmu_backends_build(&bl, &hv, &kss, &ps)) {
		fprintf(stderr, "bench_backends: out of memory\n");
		return 1;
	}
	bench_event(&bl.be[0], PVPMU_EV_HV_EXITS, "hv read hv_exits",
		    "memcpy 8 B", mem);
	if (ret)
		printf("%-42s skipped: /dev/kvm: %s\n", "kvmstat read",
		       strerror(-ret));
	else if (vpmu_kvmstat_find(bl.kvmstat, "exits", &code) == 0)
		bench_event(&bl.be[1], code, "kvmstat read kvmstat:exits",
			    "read(/dev/null)", sys);
	if (!ret)
		bench_kvmstat4(&bl, sys);
	why = vpmu_perf_unavailable_reason(bl.perf, PVPMU_EV_SW_TASK_CLOCK);
	if (why)
		printf("%-42s skipped: %s\n", "perf read task-clock", why);
	else
		bench_event(&bl.be[2], PVPMU_EV_SW_TASK_CLOCK,
			    "perf read task-clock", "read(/dev/null)", sys);
	why = vpmu_perf_unavailable_reason(bl.perf,
					   PVPMU_EV_SW_CONTEXT_SWITCHES);
	if (why)
		printf("%-42s skipped: %s\n", "perf read context-switches",
		       why);
	else
		bench_event(&bl.be[2], PVPMU_EV_SW_CONTEXT_SWITCHES,
			    "perf read context-switches", "read(/dev/null)",
			    sys);
	why = vpmu_perf_unavailable_reason(bl.perf, PVPMU_EV_INSTRUCTIONS);
	if (why)
		printf("%-42s skipped: %s\n", "perf read instructions", why);
	else
		bench_event(&bl.be[2], PVPMU_EV_INSTRUCTIONS,
			    "perf read instructions", "read(/dev/null)", sys);
	vpmu_backends_release(&bl);
	if (kvm_vcpu_fd >= 0)
		close(kvm_vcpu_fd);
	if (vm >= 0)
		close(vm);
	if (kvm >= 0)
		close(kvm);
	return 0;
}
