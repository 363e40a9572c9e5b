// SPDX-License-Identifier: MIT
/*
 * vcpu_stats.c: per-vCPU exit statistics (`vpmu run --stats`).
 */
#include "vmm_core_priv.h"

#include <time.h>

/* (clock) in ns into (*ns): 0, or -1 when the kernel refuses it. */
static int clock_ns(clockid_t clock, uint64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return -1;
	*ns = (uint64_t)ts.tv_sec * VPMU_NS_PER_SEC + (uint64_t)ts.tv_nsec;
	return 0;
}

uint64_t vmm_thread_cpu_ns(void)
{
	uint64_t ns = 0;

	clock_ns(CLOCK_THREAD_CPUTIME_ID, &ns);
	return ns;
}

/* The kernel's per-thread CPU clock of (tid), as pthread_getcpuclockid()
 * makes it (CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD); by tid, which stays
 * valid for a thread that already ended (EINVAL), unlike its pthread_t. */
static clockid_t thread_cpu_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid) << 3) | 2 | 4;
}

uint64_t vmm_vcpu_cpu_ns(const struct vmm_vcpu *vcpu)
{
	pid_t tid = __atomic_load_n(&vcpu->tid, __ATOMIC_ACQUIRE);
	uint64_t ns;

	if (vmm_vcpu_is_self(vcpu))
		return vmm_thread_cpu_ns();
	if (!tid || clock_ns(thread_cpu_clock(tid), &ns))
		return vcpu->stats.cpu_ns; /* not started, or ended */
	return ns;
}

static const char *const exit_names[VMM_EXIT_REASONS] = {
	[KVM_EXIT_UNKNOWN]        = "unknown",
	[KVM_EXIT_IO]             = "io",
	[KVM_EXIT_HLT]            = "hlt",
	[KVM_EXIT_MMIO]           = "mmio",
	[KVM_EXIT_SHUTDOWN]       = "shutdown",
	[KVM_EXIT_FAIL_ENTRY]     = "fail_entry",
	[KVM_EXIT_INTR]           = "intr",
	[KVM_EXIT_INTERNAL_ERROR] = "internal_error",
	[KVM_EXIT_SYSTEM_EVENT]   = "system_event",
	[KVM_EXIT_X86_RDMSR]      = "rdmsr",
	[KVM_EXIT_X86_WRMSR]      = "wrmsr",
};

/* Cycles -> us at the vCPU's TSC rate; NaN when the rate is unknown. */
static double kick_us(const struct vmm_vcpu *vcpu, uint64_t cycles)
{
	uint64_t khz = vcpu->vm->tsc_khz;

	if (!khz)
		return __builtin_nan("");
	return (double)cycles * 1e3 / (double)khz / (double)vcpu->stats.kicks;
}

/* The kicks and their user-space path (struct vmm_kick_stats). */
static void print_kicks(const struct vmm_vcpu *vcpu, FILE *out)
{
	const struct vmm_kick_stats *k = &vcpu->kick;

	fprintf(out,
		"  %-16s %12llu  (timer %llu, of which early %llu; taken "
		"outside KVM_RUN %llu; timer re-armed %llu)\n",
		"(kicks)", (unsigned long long)vcpu->stats.kicks,
		(unsigned long long)k->timer, (unsigned long long)k->early,
		(unsigned long long)k->outside, (unsigned long long)k->rearms);
	if (k->absorbed)
		fprintf(out,
			"  %-16s %12llu  (timer fired while an exit was "
			"handled: re-armed, no kick)\n",
			"(timer between exits)",
			(unsigned long long)k->absorbed);
	fprintf(out,
		"  kick path, mean us: exit %.2f, accounting %.2f, shared page "
		"%.2f, to re-entry %.2f (timer_settime %.2f, requests and "
		"deadline %.2f); kernel part charged %.2f us",
		kick_us(vcpu, k->exit), kick_us(vcpu, k->acct),
		kick_us(vcpu, k->shared), kick_us(vcpu, k->arm + k->deadline),
		kick_us(vcpu, k->arm), kick_us(vcpu, k->deadline),
		vcpu->stats.kicks ? (double)k->kernel_charged / 1e3 /
					    (double)vcpu->stats.kicks
				  : 0.0);
	if (vcpu->vm->kick_cost.kernel_ns)
		fprintf(out,
			" (probed at start: a kick cost a bare guest %.2f us, "
			"%.2f of it in user space; it stood still %.2f; exit "
			"%.2f, scaled by each kick's; the kernel part per ns "
			"of exit %.3f, from %u probe%s of this host%s)\n",
			(double)vcpu->vm->kick_cost.lost_ns / 1e3,
			(double)vcpu->vm->kick_cost.user_ns / 1e3,
			(double)vcpu->vm->kick_cost.gap_ns / 1e3,
			(double)vcpu->vm->kick_cost.exit_ns / 1e3,
			vcpu->vm->kick_cost.exit_ns
				? (double)vcpu->vm->kick_cost.kernel_ns /
					  (double)vcpu->vm->kick_cost.exit_ns
				: 0.0,
			vcpu->vm->kick_cost.nr_probes,
			vcpu->vm->kick_cost.nr_probes == 1 ? "" : "s",
			vcpu->vm->kick_cost.cpu_ppm < VMM_KICK_QUIET_PPM
				? "; this VM's own probe waited for a CPU: "
				  "not among them where there were others"
				: "");
	else
		fprintf(out, " (no probe: twice the exit's length)\n");
}

static void print_vcpu(const struct vmm_vcpu *vcpu, FILE *out)
{
	const struct vmm_vcpu_stats *s = &vcpu->stats;
	uint64_t total                 = 0;
	unsigned int r;

	for (r = 0; r < VMM_EXIT_REASONS; r++)
		total += s->exits[r];
	fprintf(out,
		"vcpu %u: %llu exits, %.3f ms in KVM_RUN (%.3f ms of CPU), "
		"%llu hypercalls, %llu guest errors\n",
		vcpu->index, (unsigned long long)total, s->run_ns / 1e6,
		s->cpu_ns / 1e6, (unsigned long long)s->hypercalls,
		(unsigned long long)s->guest_errors);
	for (r = 0; r < VMM_EXIT_REASONS; r++) {
		if (!s->exits[r])
			continue;
		if (exit_names[r])
			fprintf(out, "  %-16s %12llu\n", exit_names[r],
				(unsigned long long)s->exits[r]);
		else
			fprintf(out, "  reason %-9u %12llu\n", r,
				(unsigned long long)s->exits[r]);
	}
	if (s->kicks)
		print_kicks(vcpu, out);
	if (s->quirks)
		fprintf(out, "  %-16s %12llu\n", "(host quirks)",
			(unsigned long long)s->quirks);
}

void vmm_stats_print(struct vmm_vm *vm, FILE *out)
{
	unsigned int i;

	fprintf(out, "--- vpmu stats: %s (%s%s) ---\n", vm->name,
		vmm_image_kind_name(vm->image_kind),
		vm->irqchip ? ", in-kernel irqchip" : "");
	for (i = 0; i < vm->nr_vcpus; i++)
		print_vcpu(&vm->vcpus[i], out);
}
