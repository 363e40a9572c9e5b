// SPDX-License-Identifier: MIT
/*
 * checks_perf.c: Linux perf on vpmu's architectural PMU, through
 * perf_event_open(2) directly. Raw events use vpmu's hypervisor codes
 * (pvpmu/abi.h section 9): the same config on Intel (umask << 8 | event)
 * and AMD (event bits 0-7, umask 8-15).
 */
#include "init.h"

#include "pvpmu/abi.h"

#include <linux/perf_event.h>

#define PIO_COUNT     1000ULL
#define LOOP_MS       200ULL
#define SAMPLE_MS     300ULL   /* at least, sampling */
#define CHUNK_MS      50ULL    /* hot_loop runs between two ring looks */
#define SAMPLE_CAP_MS 20000ULL /* at most, whatever the samples */
/*
 * Cycle samples per second. Where the guest kernel is slow (PVM: ring 0
 * emulated, every PMU MSR access an exit) perf's PMI handler takes about
 * 2 ms: at 1 kHz the handler's own cycles overflow the counter again and
 * nearly every sample lands in it (10 user samples against 421 in the kernel in
 * 60 s), and perf throttles. At 100 Hz the handler is a fifth of the period at
 * most.
 */
#define SAMPLE_HZ      100ULL
#define MS_PER_SEC     1000ULL
#define RING_PAGES     8UL
#define PAGE_BYTES     4096UL
#define MIN_SAMPLES    20ULL
#define MIN_HOT_PCT    90ULL             /* of the user-mode samples */
#define USER_TOP       0x800000000000ULL /* x86-64 user addresses are below */
#define CYCLES_TOL_PPM 10000ULL          /* 1 % */
#define PPM            1000000ULL

/* What a PERF_FORMAT_GROUP read of a 2-event group returns. */
struct group_read {
	unsigned long long nr;
	unsigned long long time_enabled;
	unsigned long long time_running;
	unsigned long long value[4];
};

/* A PERF_SAMPLE_IP | PERF_SAMPLE_TID record. */
struct sample_rec {
	struct perf_event_header header;
	unsigned long long ip;
	unsigned int pid, tid;
};

/* A counting event; a group leader (group_fd < 0) reads the group. */
static long open_event(unsigned int type, unsigned long long config,
		       int group_fd, int group)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size     = sizeof(attr);
	attr.type     = type;
	attr.config   = config;
	attr.disabled = group_fd < 0;
	if (group_fd < 0 && group)
		attr.read_format = PERF_FORMAT_GROUP |
				   PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
	return sys_call_perf_event_open(&attr, 0, -1, group_fd, 0);
}

static long ctl(long fd, unsigned long req, unsigned long arg)
{
	return sys_ioctl((int)fd, req, (void *)arg);
}

/*
 * hv-pio-exact: PIO exits counted by the VMM while the task runs N OUTs to
 * the null port. The enable/disable ioctls are WRMSRs, not PIO: exactly N.
 */
static enum result check_hv_pio_exact(struct report *r)
{
	unsigned long long count = 0, i;
	long fd, ret;

	fd = open_event(PERF_TYPE_RAW, PVPMU_EV_HV_PIO, -1, 0);
	if (fd < 0)
		return fail_errno(r, "perf_event_open(raw hv_pio)", fd);
	ret = sys_call_ioperm(PVPMU_PORT_NULL, 1, 1);
	if (ret < 0) {
		sys_close((int)fd);
		return fail_errno(r, "ioperm(null port)", ret);
	}
	ctl(fd, PERF_EVENT_IOC_RESET, 0);
	ctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < PIO_COUNT; i++)
		outb_port(0, PVPMU_PORT_NULL);
	ctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ret = sys_read((int)fd, &count, sizeof(count));
	sys_close((int)fd);
	if (ret != sizeof(count))
		return fail_errno(r, "read", ret < 0 ? ret : -5);
	detail(r, "outs=%llu counted=%llu", PIO_COUNT, count);
	return count == PIO_COUNT ? RES_PASS : RES_FAIL;
}

static unsigned long long ppm_of(unsigned long long a, unsigned long long b)
{
	unsigned long long d = a > b ? a - b : b - a;

	return b ? d * PPM / b : PPM;
}

/* a/b as "x.yyyy" (b > 0). */
static void detail_ratio(struct report *r, const char *name,
			 unsigned long long a, unsigned long long b)
{
	unsigned long long x = b ? a * 10000ULL / b : 0;

	detail(r, "%s=%llu.%04llu", name, x / 10000ULL, x % 10000ULL);
}

/*
 * The cycles leader and, in its group, what vpmu counts them from on a host
 * without a PMU: the vCPU thread's task-clock (ns), and the VMM's own TSC
 * rate as hv_guest_cycles / hv_run_ns (both from one run-time clock).
 */
static const unsigned long long cycles_members[] = {
	PVPMU_EV_SW_TASK_CLOCK,
	PVPMU_EV_HV_GUEST_CYCLES,
	PVPMU_EV_HV_RUN_NS,
};

#define NR_MEMBERS (sizeof(cycles_members) / sizeof(cycles_members[0]))

static enum result open_cycles_group(struct report *r, long *fds)
{
	unsigned int i;

	fds[0] =
		open_event(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, -1, 1);
	if (fds[0] < 0)
		return fail_errno(r, "perf_event_open(cycles)", fds[0]);
	for (i = 0; i < NR_MEMBERS; i++) {
		fds[i + 1] = open_event(PERF_TYPE_RAW, cycles_members[i],
					(int)fds[0], 1);
		if (fds[i + 1] < 0) {
			long err = fds[i + 1];

			detail(r, "member 0x%llx: ", cycles_members[i]);
			while (i-- > 0)
				sys_close((int)fds[i + 1]);
			sys_close((int)fds[0]);
			return fail_errno(r, "perf_event_open(raw)", err);
		}
	}
	return RES_PASS;
}

/*
 * cycles-vs-source: on a host without a PMU vpmu counts cycles as the vCPU
 * thread's task-clock at the VMM's TSC rate (vpmu events,
 * vpmu/arch/README.md). In one group over a ring-3 loop: cycles within 1 %
 * of task-clock ns x (hv_guest_cycles / hv_run_ns). The group is started
 * and stopped by one GLOBAL_CTRL write each, and vpmu switches the counters
 * of one write at one point (it rebases the events it opened once they are
 * all open): both count the vCPU thread's CPU time over the same window,
 * whatever the host's load. (Before, each counter started after its own
 * perf_event_open(2) on the host, which the earlier ones counted: cycles
 * ran 0.5 % above on a quiet host, 1.4 % on a loaded one.) cycles against
 * the loop's own TSC ticks is printed only (it also holds host time spent
 * on this vCPU's exits, and the guest's TSC calibration).
 */
static enum result check_cycles_vs_source(struct report *r)
{
	unsigned long long loop = tsc_hz() * LOOP_MS / MS_PER_SEC, t0, t1, want;
	struct group_read g;
	long fds[1 + NR_MEMBERS], ret;
	unsigned int i;

	if (open_cycles_group(r, fds) != RES_PASS)
		return RES_FAIL;
	memset(&g, 0, sizeof(g));
	ctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	t0 = rdtsc_now();
	spin_tsc(loop);
	t1 = rdtsc_now();
	ctl(fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	ret = sys_read((int)fds[0], &g, sizeof(g));
	for (i = 0; i <= NR_MEMBERS; i++)
		sys_close((int)fds[i]);
	if (ret != sizeof(g))
		return fail_errno(r, "read group", ret < 0 ? ret : -5);
	want = g.value[3] ? (unsigned long long)((unsigned __int128)g.value[1] *
						 g.value[2] / g.value[3])
			  : 0;
	detail(r,
	       "cycles=%llu task_clock_ns=%llu vmm_tsc_khz=%llu "
	       "source_cycles=%llu dev_ppm=%llu",
	       g.value[0], g.value[1],
	       g.value[3] ? g.value[2] * 1000000ULL / g.value[3] : 0, want,
	       ppm_of(g.value[0], want));
	detail_ratio(r, "cycles/loop_tsc", g.value[0], t1 - t0);
	if (g.nr != 1 + NR_MEMBERS || g.time_running != g.time_enabled || !want)
		return RES_FAIL;
	return ppm_of(g.value[0], want) <= CYCLES_TOL_PPM ? RES_PASS : RES_FAIL;
}

/* The sampled hot function, alone in its section to know its range. */
extern const char __start_vpmu_hot[], __stop_vpmu_hot[];
static volatile unsigned long long hot_sink;

__attribute__((noinline, section("vpmu_hot"))) static unsigned long long
hot_loop(unsigned long long end)
{
	unsigned long long x = 1, lo, hi;

	do {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	} while (((hi << 32) | lo) < end);
	return x;
}

static long open_sampling(unsigned long long period)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size          = sizeof(attr);
	attr.type          = PERF_TYPE_HARDWARE;
	attr.config        = PERF_COUNT_HW_CPU_CYCLES;
	attr.sample_period = period;
	attr.sample_type   = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	attr.disabled      = 1;
	return sys_call_perf_event_open(&attr, 0, -1, -1, 0);
}

/* Copy `len` bytes at ring offset `off` (records may wrap). */
static void ring_copy(void *dst, const unsigned char *data, unsigned long off,
		      unsigned long len)
{
	unsigned char *d = dst;
	unsigned long i, size = RING_PAGES * PAGE_BYTES;

	for (i = 0; i < len; i++)
		d[i] = data[(off + i) % size];
}

/* Count samples, and those whose IP is in the hot function. */
static void ring_count(const struct perf_event_mmap_page *meta,
		       unsigned long long *all, unsigned long long *hot,
		       unsigned long long *kernel)
{
	const unsigned char *data = (const unsigned char *)meta + PAGE_BYTES;
	unsigned long long head = meta->data_head, off = meta->data_tail;
	struct sample_rec s;

	__sync_synchronize();
	while (off + sizeof(s.header) <= head) {
		ring_copy(&s, data, (unsigned long)off, sizeof(s));
		if (!s.header.size)
			break;
		if (s.header.type == PERF_RECORD_SAMPLE && s.ip >= USER_TOP) {
			(*kernel)++; /* e.g. the PMI handler's own exits */
		} else if (s.header.type == PERF_RECORD_SAMPLE) {
			(*all)++;
			*hot += s.ip >= (unsigned long)__start_vpmu_hot &&
				s.ip < (unsigned long)__stop_vpmu_hot;
		}
		off += s.header.size;
	}
}

static enum result sampling_verdict(struct report *r, unsigned long long all,
				    unsigned long long hot,
				    unsigned long long kernel)
{
	detail(r, "user_samples=%llu in_hot=%llu kernel_samples=%llu", all, hot,
	       kernel);
	if (all < MIN_SAMPLES || hot * 100ULL < all * MIN_HOT_PCT)
		return RES_FAIL;
	return RES_PASS;
}

/*
 * Run the hot function in CHUNK_MS pieces for at least SAMPLE_MS, until
 * MIN_SAMPLES user-mode samples are in the ring or SAMPLE_CAP_MS passed.
 * Without a host PMU cycles are the vCPU thread's CPU time: a host busy
 * with other work gives the vCPU less of it per guest TSC second, and
 * slow PMI handlers (each MSR access an exit) make this kernel lower
 * perf_event_max_sample_rate and throttle the event, so the samples of a
 * fixed time would be few (9 in 300 ms on a loaded nested host; 23 took
 * 6 s there with a CPU hog beside the VMM). Only the ring is looked at
 * between the pieces: the user-mode samples taken there (outside the hot
 * function) are at most 1 in CHUNK_MS of cycles.
 */
static unsigned long long
run_hot_until_sampled(const struct perf_event_mmap_page *meta,
		      unsigned long long hz)
{
	unsigned long long t0 = rdtsc_now(), now = t0, all, hot, kernel;

	do {
		hot_sink = hot_loop(now + hz * CHUNK_MS / MS_PER_SEC);
		now      = rdtsc_now();
		all = hot = kernel = 0;
		ring_count(meta, &all, &hot, &kernel);
	} while (
		(now - t0 < hz * SAMPLE_MS / MS_PER_SEC || all < MIN_SAMPLES) &&
		now - t0 < hz * SAMPLE_CAP_MS / MS_PER_SEC);
	return now - t0;
}

/*
 * cycles-sampling: 100 Hz cycle samples of a hot function: at least 20
 * user-mode samples (run_hot_until_sampled: 300 ms to 20 s of guest time),
 * at least 90 % of their IPs in the function. Kernel-mode samples (cycles
 * also count the guest kernel, e.g. its PMI handler, whose MSR accesses
 * are exits) are counted and printed.
 */
static enum result check_cycles_sampling(struct report *r)
{
	unsigned long long hz = tsc_hz(), all = 0, hot = 0, kernel = 0, ticks;
	unsigned long size = (1 + RING_PAGES) * PAGE_BYTES;
	void *ring;
	long fd;

	fd = open_sampling(hz / SAMPLE_HZ);
	if (fd < 0)
		return fail_errno(r, "perf_event_open(cycles, sampling)", fd);
	ring = sys_mmap(0, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd,
			0);
	if ((unsigned long)ring >= (unsigned long)-4095) {
		sys_close((int)fd);
		return fail_errno(r, "mmap ring", (long)ring);
	}
	ctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	ticks = run_hot_until_sampled(ring, hz);
	ctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	ring_count(ring, &all, &hot, &kernel);
	detail(r, "period=%llu hot=[0x%lx,0x%lx) ran_ms=%llu", hz / SAMPLE_HZ,
	       (unsigned long)__start_vpmu_hot, (unsigned long)__stop_vpmu_hot,
	       ticks * MS_PER_SEC / hz);
	sys_munmap(ring, size);
	sys_close((int)fd);
	return sampling_verdict(r, all, hot, kernel);
}

const struct check perf_checks[] = {
	{"hv-pio-exact", GROUP_PERF, check_hv_pio_exact},
	{"cycles-vs-source", GROUP_PERF, check_cycles_vs_source},
	{"cycles-sampling", GROUP_PERF, check_cycles_sampling},
};
const unsigned int perf_checks_count =
	sizeof(perf_checks) / sizeof(perf_checks[0]);
