// SPDX-License-Identifier: MIT
/*
 * tm_exact.c: exact hv counts of a ring-0 guest that makes a known number
 * of hypercalls, PIO exits, trapped MSR reads and writes, and halts
 * (run with --pmu none, where every PMU MSR is trapped and #GPs,
 * but its exit is counted all the same).
 *
 * Halts need an interrupt to end them, and a halted vCPU's run time stands
 * still, so no timer can provide one. Two contexts on vCPU 0 do it:
 *
 *   A  vCPU-wide, hv_hypercalls with PFM_REGFL_OVFL_NOTIFY and period 1:
 *      every hypercall it sees overflows at its very exit, queues a
 *      message and makes the notification vector pending, and masks A.
 *   B  per-thread (thread TM_TID, scheduled in with pvpmu_sched()),
 *      counting the eight hv events under test. It never overflows and
 *      is never masked, so it counts across A's masked periods.
 *
 * One halt round, in ring 0 with interrupts off: a NOP hypercall (A
 * overflows: vector pending, not deliverable while IF=0), `sti; hlt`
 * (the HLT exit is counted; the VMM returns from HLT at once because a
 * deliverable interrupt is pending, and injects it at the next entry),
 * pfm_read_msg(A) to drain the queue (a lost message would raise no
 * interrupt) and pfm_restart(A) to unmask it. A counts neither of the last
 * two: it is masked at their exits. Per round: 3 hypercalls, 4 exits,
 * 1 halt, 1 injected interrupt, and the notification handler ran once.
 *
 * With --vcpus 2, vCPU 1 makes NOP hypercalls all through the window under
 * its own context (second_vcpu()): neither vCPU sees the other's exits.
 *
 * B's window opens at its SCHED_IN (that exit is accounted before B is
 * attached) and closes at its SCHED_OUT, whose exit is counted. Nothing
 * between them prints (console output is PIO). Prints "tm_exact: <event>
 * <count>" for each event, then "tm_exact: ok (N checks)" and exits 0 when
 * every count is exact.
 */
#include "kernel.h"

#include <pvpmu/pvpmu.h>

#include "pvpmu_hc.h"

#define TM_TID    7
#define TM_VECTOR KERNEL_NOTIFY_VECTOR
#define TM_MSR    0x186 /* IA32_PERFEVTSEL0: trapped, #GP with --pmu none */
#define N_HC      50
#define N_PIO     40
#define N_RD      30
#define N_WR      20
#define N_HLT     25
#define NR_EV     8

static const char *const events[NR_EV] = {
	"hv_hypercalls", "hv_pio",
	"hv_msr_reads",  "hv_msr_writes",
	"hv_halts",      "hv_irqs",
	"hv_exits",      "hv_exit_reason:umask=5", /* KVM_EXIT_HLT */
};

enum { E_HC, E_PIO, E_RD, E_WR, E_HLT, E_IRQ, E_EXITS, E_RHLT };

static unsigned int nr_checks, nr_failed;

static void expect(const char *what, long long got, long long want)
{
	nr_checks++;
	if (got == want)
		return;
	nr_failed++;
	kprintf("tm_exact: FAIL %s: got %lld, want %lld\n", what, got, want);
}

/* A: every hypercall it sees overflows and notifies. */
static int notifier(unsigned int vcpu)
{
	pfarg_ctx_t ctx = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmc_t pmc = {.reg_num = 0, .reg_flags = PFM_REGFL_OVFL_NOTIFY};
	pfarg_pmd_t pmd = {.reg_num         = 0,
			   .reg_value       = -1ULL,
			   .reg_short_reset = -1ULL,
			   .reg_long_reset  = -1ULL};
	pfarg_load_t ld = {.load_pid = vcpu};

	expect("A create", pfm_create_context(&ctx, 0, 0), 0);
	expect("A encode",
	       pvpmu_event_encode("hv_hypercalls", &pmc.reg_value, 0), 0);
	expect("A write_pmcs", pfm_write_pmcs(ctx.ctx_fd, &pmc, 1), 0);
	expect("A write_pmds", pfm_write_pmds(ctx.ctx_fd, &pmd, 1), 0);
	expect("A load", pfm_load_context(ctx.ctx_fd, &ld), 0);
	expect("A start", pfm_start(ctx.ctx_fd, 0), 0);
	return ctx.ctx_fd;
}

/* B: the eight events under test, on thread TM_TID. */
static int counter(void)
{
	pfarg_ctx_t ctx = {0};
	pfarg_pmc_t pmc[NR_EV];
	pfarg_load_t ld = {.load_pid = TM_TID};
	unsigned int i;

	expect("B create", pfm_create_context(&ctx, 0, 0), 0);
	for (i = 0; i < NR_EV; i++) {
		pmc[i] = (pfarg_pmc_t){.reg_num = (uint16_t)i};
		expect(events[i],
		       pvpmu_event_encode(events[i], &pmc[i].reg_value, 0), 0);
	}
	expect("B write_pmcs", pfm_write_pmcs(ctx.ctx_fd, pmc, NR_EV), 0);
	expect("B load", pfm_load_context(ctx.ctx_fd, &ld), 0);
	expect("B start", pfm_start(ctx.ctx_fd, 0), 0);
	return ctx.ctx_fd;
}

static unsigned int msr_faults, bad_msgs;

/*
 * With 2 vCPUs, vCPU 1 makes NOP hypercalls all through vCPU 0's window
 * under its own vCPU-wide context (hv_hypercalls, hv_halts): each vCPU
 * counts only its own exits, exactly.
 */
static volatile int v1_ready, v1_stop, v1_done, v1_err;
static volatile uint64_t v1_calls, v1_hc, v1_halts;

static void second_vcpu(unsigned int vcpu)
{
	static const char *const ev[2] = {"hv_hypercalls", "hv_halts"};
	pfarg_ctx_t ctx                = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_pmd_t pmd[2]             = {{.reg_num = 0}, {.reg_num = 1}};
	pfarg_pmc_t pmc[2]             = {{.reg_num = 0}, {.reg_num = 1}};
	pfarg_load_t ld                = {.load_pid = vcpu};
	uint64_t n                     = 0;
	int err;

	err = pfm_create_context(&ctx, 0, 0);
	if (!err)
		err = pvpmu_event_encode(ev[0], &pmc[0].reg_value, 0);
	if (!err)
		err = pvpmu_event_encode(ev[1], &pmc[1].reg_value, 0);
	if (!err)
		err = pfm_write_pmcs(ctx.ctx_fd, pmc, 2);
	if (!err)
		err = pfm_load_context(ctx.ctx_fd, &ld);
	if (!err)
		err = pfm_start(ctx.ctx_fd, 0);
	v1_ready = 1;
	while (!err && !v1_stop) {
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
		n++;
	}
	if (!err)
		err = pfm_stop(ctx.ctx_fd);
	if (!err)
		err = pfm_read_pmds(ctx.ctx_fd, pmd, 2);
	v1_calls = n;
	v1_hc    = pmd[0].reg_value;
	v1_halts = pmd[1].reg_value;
	v1_err   = err;
	v1_done  = 1;
}

/* vCPU 0, after its window: vCPU 1's own counts. */
static void check_second_vcpu(void)
{
	v1_stop = 1;
	while (!v1_done)
		cpu_relax();
	expect("vcpu 1 context", v1_err, 0);
	kprintf("tm_exact: vcpu 1: %llu NOPs, hv_hypercalls %llu (want %llu), "
		"hv_halts %llu (want 0)\n",
		(unsigned long long)v1_calls, (unsigned long long)v1_hc,
		(unsigned long long)v1_calls + 1, (unsigned long long)v1_halts);
	/* + 1: its PFM_STOP, counted at its own exit. */
	expect("vcpu 1 hv_hypercalls", (long long)v1_hc,
	       (long long)v1_calls + 1);
	expect("vcpu 1 hv_halts", (long long)v1_halts, 0);
}

static void workload(int a)
{
	unsigned int i;
	pfm_msg_t msg;
	uint64_t v;

	for (i = 0; i < N_HC; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	for (i = 0; i < N_PIO; i++)
		outb(PVPMU_PORT_NULL, 0);
	for (i = 0; i < N_RD; i++)
		msr_faults += guest_rdmsr_safe(TM_MSR, &v) == X86_VEC_GP;
	for (i = 0; i < N_WR; i++)
		msr_faults += guest_wrmsr_safe(TM_MSR, 0) == X86_VEC_GP;
	for (i = 0; i < N_HLT; i++) {
		pvpmu_hypercall(PVPMU_HC_NOP, 0); /* A overflows */
		kernel_idle();                    /* sti; hlt; cli */
		msg.msg_type = 0;
		if (pfm_read_msg(a, &msg, 0) || msg.msg_type != PFM_MSG_OVFL)
			bad_msgs++;
		pfm_restart(a);
	}
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	const uint64_t rounds = N_HLT;
	pfarg_pmd_t pmd[NR_EV];
	uint64_t want[NR_EV], irqs0;
	unsigned int i;
	int a, b;

	if (vcpu == 1)
		second_vcpu(vcpu);
	if (vcpu != 0)
		return;
	expect("vector", pvpmu_set_vector(TM_VECTOR), 0);
	a = notifier(vcpu);
	b = counter();
	while (bi->nr_vcpus > 1 && !v1_ready)
		cpu_relax();
	irqs0 = user_notify_count(vcpu);
	expect("B sched in", pvpmu_sched(b, PVPMU_SCHED_IN, TM_TID), 0);
	workload(a);
	expect("B sched out", pvpmu_sched(b, PVPMU_SCHED_OUT, TM_TID), 0);
	expect("MSR accesses #GP", msr_faults, N_RD + N_WR);
	expect("A's messages are overflows", bad_msgs, 0);
	expect("notifications handled", user_notify_count(vcpu) - irqs0, N_HLT);
	if (bi->nr_vcpus > 1)
		check_second_vcpu();

	/* + 1: the SCHED_OUT hypercall, counted at its own exit. */
	want[E_HC]    = N_HC + 3 * rounds + 1;
	want[E_PIO]   = N_HC + N_PIO + 3 * rounds + 1;
	want[E_RD]    = N_RD;
	want[E_WR]    = N_WR;
	want[E_HLT]   = rounds;
	want[E_IRQ]   = rounds;
	want[E_EXITS] = N_HC + N_PIO + N_RD + N_WR + 4 * rounds + 1;
	want[E_RHLT]  = rounds;
	for (i = 0; i < NR_EV; i++)
		pmd[i] = (pfarg_pmd_t){.reg_num = (uint16_t)i};
	expect("B read_pmds", pfm_read_pmds(b, pmd, NR_EV), 0);
	for (i = 0; i < NR_EV; i++) {
		kprintf("tm_exact: %s %llu (want %llu)\n", events[i],
			(unsigned long long)pmd[i].reg_value,
			(unsigned long long)want[i]);
		expect(events[i], (long long)pmd[i].reg_value,
		       (long long)want[i]);
	}
	expect("B close", pfm_close(b), 0);
	expect("A close", pfm_close(a), 0);
	if (nr_failed) {
		kprintf("tm_exact: FAILED %u of %u checks\n", nr_failed,
			nr_checks);
		guest_exit(1);
	}
	kprintf("tm_exact: ok (%u checks)\n", nr_checks);
	guest_exit(0);
}
