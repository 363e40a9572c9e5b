// SPDX-License-Identifier: MIT
/*
 * tm_cycles.c: hv_guest_cycles and hv_run_ns against the guest's own TSC
 * over a CPU-bound ring-3 loop (within 2 %).
 *
 * Each of TM_ROUNDS rounds reads both PMDs (pfm_read_pmds: one exit, the
 * values as of that exit), reads the TSC, spins TM_LOOP_MS of TSC time,
 * and reads the PMDs again. The hv values cover the run time from the
 * first read's exit to the second's, the TSC the loop inside it; the
 * difference is two half exits (~85 us together on the PVM development
 * host, where the emulation of a ring-3 OUT runs inside KVM_RUN), under
 * 0.1 % of TM_LOOP_MS. Nothing is armed (no overflow within reach, one
 * set), so the loop itself makes no exit to the VMM; host interrupts and
 * preemption happen inside KVM_RUN and count in both clocks.
 *
 * Every vCPU measures under its own vCPU-wide context, at the same time
 * (each vCPU's run time is its own). Prints one line per round, each
 * vCPU's medians, and, from vCPU 0, the medians farthest from exact:
 *   tm_cycles: summary cycles_ppm=<ppm> run_ns_ppm=<ppm>
 * (ppm: parts per million; 1000000 is exact). tests/kvm/test_timing.c
 * asserts both medians within 2 %.
 */
#include "tm.h"

#define TM_ROUNDS  5
#define TM_LOOP_MS 100

static const char *const events[2] = {"hv_guest_cycles", "hv_run_ns"};

static int read2(int fd, uint64_t *v)
{
	pfarg_pmd_t pmd[2] = {{.reg_num = 0}, {.reg_num = 1}};
	int ret;

	ret  = pfm_read_pmds(fd, pmd, 2);
	v[0] = pmd[0].reg_value;
	v[1] = pmd[1].reg_value;
	return ret;
}

/* Spin in ring 3 until (cycles) of TSC have passed; the TSC at the end. */
static uint64_t spin_for(uint64_t t0, uint64_t cycles)
{
	uint64_t t;

	do {
		tool_sink = tool_spin(10000);
		t         = rdtsc_ordered();
	} while (t - t0 < cycles);
	return t;
}

/* Per-vCPU medians, published for vCPU 0's summary. */
#define TM_MAX_VCPUS 8
static volatile uint64_t res_cyc[TM_MAX_VCPUS], res_ns[TM_MAX_VCPUS];
static volatile int res_done[TM_MAX_VCPUS];

/* Rounds on (vcpu) under its own context; its medians into res_*. */
static int measure(unsigned int vcpu)
{
	uint64_t cyc_ppm[TM_ROUNDS], ns_ppm[TM_ROUNDS], a[2], b[2];
	uint64_t t0, t1, tsc;
	char s1[16], s2[16];
	unsigned int r;
	int fd = -1;

	if (tm_program("tm_cycles", &fd, 0, events, 2) ||
	    tm_load_start("tm_cycles", fd, vcpu))
		return 1;
	for (r = 0; r < TM_ROUNDS; r++) {
		if (read2(fd, a))
			return tool_err("tm_cycles", "PFM_READ_PMDS", -1);
		t0 = rdtsc_ordered();
		t1 = spin_for(t0, tm_khz() * TM_LOOP_MS);
		if (read2(fd, b))
			return tool_err("tm_cycles", "PFM_READ_PMDS", -1);
		tsc        = t1 - t0;
		cyc_ppm[r] = tm_ppm(b[0] - a[0], tsc);
		ns_ppm[r]  = tm_ppm(b[1] - a[1], tm_cyc_to_ns(tsc));
		uprintf("tm_cycles: vcpu %u round %u: tsc %llu, "
			"hv_guest_cycles %llu (%s), hv_run_ns %llu (%s of "
			"%llu tsc ns)\n",
			vcpu, r, (unsigned long long)tsc,
			(unsigned long long)(b[0] - a[0]),
			tm_fix4(s1, sizeof(s1), cyc_ppm[r]),
			(unsigned long long)(b[1] - a[1]),
			tm_fix4(s2, sizeof(s2), ns_ppm[r]),
			(unsigned long long)tm_cyc_to_ns(tsc));
	}
	res_cyc[vcpu] = tm_median(cyc_ppm, TM_ROUNDS);
	res_ns[vcpu]  = tm_median(ns_ppm, TM_ROUNDS);
	uprintf("tm_cycles: vcpu %u: median cycles/tsc %s, run_ns/tsc_ns %s\n",
		vcpu, tm_fix4(s1, sizeof(s1), res_cyc[vcpu]),
		tm_fix4(s2, sizeof(s2), res_ns[vcpu]));
	pfm_close(fd);
	return 0;
}

static uint64_t dist(uint64_t ppm)
{
	return ppm > TM_PPM ? ppm - TM_PPM : TM_PPM - ppm;
}

int user_main(unsigned int vcpu)
{
	unsigned int i, n = user_boot_info()->nr_vcpus;
	uint64_t wc = TM_PPM, wn = TM_PPM;
	int ret;

	if (vcpu >= TM_MAX_VCPUS)
		return 0;
	ret            = measure(vcpu);
	res_done[vcpu] = ret ? -1 : 1;
	if (vcpu)
		return ret;
	/* vCPU 0: the worst medians over all vCPUs. */
	for (i = 0; i < n && i < TM_MAX_VCPUS; i++) {
		while (!res_done[i])
			__asm__ __volatile__("pause" ::: "memory");
		if (res_done[i] < 0)
			return 1;
		wc = dist(res_cyc[i]) > dist(wc) ? res_cyc[i] : wc;
		wn = dist(res_ns[i]) > dist(wn) ? res_ns[i] : wn;
	}
	uprintf("tm_cycles: tsc_khz %llu, loop %u ms, %u rounds, %u vCPUs\n",
		(unsigned long long)tm_khz(), TM_LOOP_MS, TM_ROUNDS, n);
	uprintf("tm_cycles: summary cycles_ppm=%llu run_ns_ppm=%llu\n",
		(unsigned long long)wc, (unsigned long long)wn);
	return 0;
}
