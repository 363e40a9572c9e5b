// SPDX-License-Identifier: MIT
/*
 * tm_switch.c: time-based set switching at a 1 ms period (the
 * achieved period within 10 % of the request on average), and the
 * granularity the VMM gives back.
 *
 * Granularity: a scratch context asks for set timeouts of 1 ns, 1 ms,
 * 1.05 ms and 1.2345 ms and prints what PFM_CREATE_EVTSETS returns in
 * set_timeout (the effective timeout: the request rounded up to the
 * VMM's timer granularity, 100 us).
 *
 * Period: TM_NR_SETS sets, each PFM_SETFL_TIME_SWITCH with a 1 ms
 * timeout and two hv events (plus task-clock and hv_run_ns for the CPU
 * share, where perf allows), over a ring-3 loop of TM_SPIN_MS of TSC
 * time. After PFM_STOP, PFM_GETINFO_EVTSETS gives each set's set_runs
 * (LOAD's activation counts as a run) and set_act_duration (run time
 * active). The average achieved period is the total active time over the
 * total runs; every run but the last (cut short by PFM_STOP) is a full
 * period, so the estimate is low by at most one period over the number
 * of runs (~0.5 % here). Each period is the timeout plus the skid of the
 * kick that ends it (see tm_skid.c). The loop's TSC time is printed next
 * to the total active time, and the vCPU thread's CPU share while in
 * KVM_RUN (task-clock / hv_run_ns, see cpu_share()). The loop also
 * watches the shared page for switches: the median of the single periods
 * (spin_and_watch()) shows the VMM's own precision where host preemption
 * stretched a minority of periods.
 *
 * With the VM name "tm_switch-mixed" the loop makes a NOP hypercall after
 * each short chunk (one every ~60 us): time spent handling exits is not
 * run time, so the VMM's wall-clock timer fires before the run-time
 * deadline; tests/kvm/test_timing.c counts the VMM's kicks per switch
 * (`--stats`) in both workloads.
 *
 * Prints "tm_switch: granularity: ...", the figures, and "tm_switch:
 * summary period_ns=.. period_ppm=.. runs=.. share_ppm=.. median_ppm=.."
 * (ppm of the request, the CPU share); tests/kvm/test_timing.c asserts
 * the 10 %.
 */
#include "tm.h"

#include "pvpmu_hc.h"

#define TM_NR_SETS 2
#define TM_SPIN_MS 200
#define TM_REQ_NS  1000000ULL
#define TM_MAX_SW  1024

#define TM_NR_EV 2
static const char *const events[TM_NR_EV] = {"hv_guest_cycles", "hv_exits"};
static int has_share; /* task-clock and hv_run_ns in PMCs 2, 3 of each set */
static int mixed;     /* VM name "tm_switch-mixed": exits in the loop */
static uint64_t nr_calls;

static int granularity(void)
{
	static const uint64_t req[] = {1, 1000000, 1050000, 1234500};
	pfarg_setdesc_t sd[4]       = {0};
	pfarg_ctx_t ctx             = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	unsigned int i;
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("tm_switch", "PFM_CREATE_CONTEXT", ret);
	for (i = 0; i < 4; i++) {
		sd[i].set_id              = (uint16_t)i;
		sd[i].set_flags           = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout.tv_nsec = req[i];
	}
	ret = pfm_create_evtsets(ctx.ctx_fd, sd, 4);
	if (ret)
		return tool_err("tm_switch", "PFM_CREATE_EVTSETS", ret);
	uprintf("tm_switch: granularity:");
	for (i = 0; i < 4; i++)
		uprintf(" %llu ns -> %llu ns%s", (unsigned long long)req[i],
			(unsigned long long)(sd[i].set_timeout.tv_sec *
						     1000000000ULL +
					     sd[i].set_timeout.tv_nsec),
			i < 3 ? "," : "\n");
	pfm_close(ctx.ctx_fd);
	return 0;
}

static int setup(unsigned int vcpu, int *fd)
{
	pfarg_setdesc_t sd[TM_NR_SETS] = {0};
	pfarg_ctx_t ctx                = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	unsigned int i;
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("tm_switch", "PFM_CREATE_CONTEXT", ret);
	*fd = ctx.ctx_fd;
	for (i = 0; i < TM_NR_SETS; i++) {
		sd[i].set_id              = (uint16_t)i;
		sd[i].set_flags           = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout.tv_nsec = TM_REQ_NS;
	}
	ret = pfm_create_evtsets(*fd, sd, TM_NR_SETS);
	if (ret)
		return tool_err("tm_switch", "PFM_CREATE_EVTSETS", ret);
	for (i = 0; i < TM_NR_SETS; i++) {
		ret = tm_program("tm_switch", fd, (uint16_t)i, events,
				 TM_NR_EV);
		if (ret)
			return ret;
	}
	has_share = 1;
	for (i = 0; i < TM_NR_SETS; i++)
		has_share &= tm_share_pmcs(*fd, (uint16_t)i, 2) == 0;
	return tm_load_start("tm_switch", *fd, vcpu);
}

/*
 * The vCPU thread's share of the CPU while inside KVM_RUN, in ppm: its
 * task-clock (perf: CPU time) over hv_run_ns (time inside KVM_RUN), both
 * summed over the sets (each counts while its set is active). Run time
 * includes host preemption inside KVM_RUN, during which no kick can be
 * taken: a share well below 1 says the host was overloaded.
 */
static uint64_t cpu_share(int fd)
{
	pfarg_pmd_t pmd[2 * TM_NR_SETS];
	uint64_t tc = 0, run = 0;
	unsigned int i;

	if (!has_share)
		return 0; /* unknown: no perf here */
	for (i = 0; i < 2 * TM_NR_SETS; i++)
		pmd[i] = (pfarg_pmd_t){.reg_num = (uint16_t)(2 + i % 2),
				       .reg_set = (uint16_t)(i / 2)};
	if (pfm_read_pmds(fd, pmd, 2 * TM_NR_SETS))
		return 0;
	for (i = 0; i < TM_NR_SETS; i++) {
		tc += pmd[2 * i].reg_value;
		run += pmd[2 * i + 1].reg_value;
	}
	return tm_ppm(tc, run);
}

/*
 * Each switch, seen on the shared page: while the loop runs, record the
 * page's run_ns (the vCPU run time at the exit that published it) every
 * time its active set changes; consecutive records are the run-time
 * lengths of single periods. Their median is robust to the periods a host
 * preemption stretched. Returns the number of switches seen.
 */
static struct pvpmu_shared_page page __attribute__((aligned(4096)));
static uint64_t sw_run[TM_MAX_SW];
static uint64_t page_switch_ns; /* the last interval shown */

static int page_read(uint16_t *set, uint64_t *run)
{
	uint64_t sw;
	uint32_t seq;

	seq = __atomic_load_n(&page.seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return -1;
	*set = page.active_set;
	*run = page.run_ns;
	sw   = page.switch_ns;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&page.seq, __ATOMIC_RELAXED) != seq)
		return -1;
	page_switch_ns = sw;
	return 0;
}

static unsigned int spin_and_watch(uint64_t cycles)
{
	uint64_t t0 = rdtsc_ordered(), run;
	uint16_t set, last = 0xffff;
	unsigned int n = 0;

	while (rdtsc_ordered() - t0 < cycles) {
		tool_sink = tool_spin(2000);
		if (mixed) {
			pvpmu_hypercall(PVPMU_HC_NOP, 0);
			nr_calls++;
		}
		if (page_read(&set, &run) || set == last)
			continue;
		last = set;
		if (n < TM_MAX_SW)
			sw_run[n++] = run;
	}
	return n;
}

/* Median and p90 of the single periods between the recorded switches. */
static void single_periods(unsigned int n, uint64_t *med, uint64_t *p90)
{
	unsigned int i;

	*med = *p90 = 0;
	if (n < 3)
		return;
	/* sw_run[0] is the state before the first switch seen. */
	for (i = 0; i + 2 < n; i++)
		sw_run[i] = sw_run[i + 2] - sw_run[i + 1];
	*med = tm_median(sw_run, n - 2);
	*p90 = sw_run[((n - 2) * 9) / 10];
}

static uint64_t ts_ns(const struct pfarg_timespec *t)
{
	return t->tv_sec * 1000000000ULL + t->tv_nsec;
}

static int is_mixed(void)
{
	static const char want[] = "tm_switch-mixed";
	const pvpmu_u8 *name     = user_boot_info()->name;
	unsigned int i;

	for (i = 0; i < sizeof(want); i++) {
		if (name[i] != (pvpmu_u8)want[i])
			return 0;
	}
	return 1;
}

int user_main(unsigned int vcpu)
{
	pfarg_setinfo_t si[TM_NR_SETS] = {0};
	uint64_t t0, loop_ns, runs = 0, act = 0, avg, share, med, p90;
	unsigned int i, nsw;
	int fd = -1, ret;
	char b1[16], b2[16];

	if (vcpu)
		return 0;
	mixed = is_mixed();
	if (granularity() || setup(vcpu, &fd))
		return 1;
	if (pvpmu_shared_attach(&page))
		return tool_err("tm_switch", "shared page", -1);
	t0      = rdtsc_ordered();
	nsw     = spin_and_watch(tm_khz() * TM_SPIN_MS);
	loop_ns = tm_cyc_to_ns(rdtsc_ordered() - t0);
	pfm_stop(fd);
	pvpmu_shared_attach(0);
	single_periods(nsw, &med, &p90);
	if (mixed)
		uprintf("tm_switch: mixed workload: %llu NOP hypercalls, one "
			"every %llu ns of the loop\n",
			(unsigned long long)nr_calls,
			(unsigned long long)(nr_calls ? loop_ns / nr_calls
						      : 0));
	for (i = 0; i < TM_NR_SETS; i++)
		si[i].set_id = (uint16_t)i;
	ret = pfm_getinfo_evtsets(fd, si, TM_NR_SETS);
	if (ret)
		return tool_err("tm_switch", "PFM_GETINFO_EVTSETS", ret);
	for (i = 0; i < TM_NR_SETS; i++) {
		uprintf("tm_switch: set %u: %llu runs, active %llu ns\n", i,
			(unsigned long long)si[i].set_runs,
			(unsigned long long)ts_ns(&si[i].set_act_duration));
		runs += si[i].set_runs;
		act += ts_ns(&si[i].set_act_duration);
	}
	avg   = runs ? act / runs : 0;
	share = cpu_share(fd);
	uprintf("tm_switch: vCPU thread CPU share %llu ppm (task-clock / "
		"hv_run_ns)\n",
		(unsigned long long)share);
	uprintf("tm_switch: loop %llu ns, sets active %llu ns (%s of the "
		"loop)\n",
		(unsigned long long)loop_ns, (unsigned long long)act,
		tm_fix4(b1, sizeof(b1), tm_ppm(act, loop_ns)));
	uprintf("tm_switch: average period %llu ns over %llu runs "
		"(requested %llu ns), %llu ppm of the request (%s)\n",
		(unsigned long long)avg, (unsigned long long)runs,
		(unsigned long long)TM_REQ_NS,
		(unsigned long long)tm_ppm(avg, TM_REQ_NS),
		tm_fix4(b2, sizeof(b2), tm_ppm(avg, TM_REQ_NS)));
	uprintf("tm_switch: single periods (shared page): median %llu ns, "
		"p90 %llu ns over %u\n",
		(unsigned long long)med, (unsigned long long)p90,
		nsw > 2 ? nsw - 2 : 0);
	uprintf("tm_switch: summary period_ns=%llu period_ppm=%llu runs=%llu "
		"share_ppm=%llu median_ppm=%llu switch_ns=%llu\n",
		(unsigned long long)avg,
		(unsigned long long)tm_ppm(avg, TM_REQ_NS),
		(unsigned long long)runs, (unsigned long long)share,
		(unsigned long long)tm_ppm(med, TM_REQ_NS),
		(unsigned long long)page_switch_ns);
	pfm_close(fd);
	return 0;
}
