// SPDX-License-Identifier: MIT
/*
 * vm_pmu.c: the logical PMU inside the VMM (see vmm_pv.h).
 *
 * Every KVM_RUN return (exit or kick) accounts the guest run time it
 * covered on the vCPU's vpmu cpu, after the exit itself was counted in the
 * vCPU statistics, so hv exit-count events overflow at the very exit.
 * libvpmu says when it must run next (a set timeout, a predictable
 * overflow) in vCPU run time; a per-vCPU POSIX timer sends the kick signal
 * to the vCPU thread then. Run time only advances inside KVM_RUN, so the
 * timer can only fire early (by the time spent handling exits). So the
 * timer is re-armed whenever that drift passes VMM_TIMER_DRIFT_NS (one
 * timer_settime); when it still fires during an exit's handling, it is
 * re-armed before the next KVM_RUN without a kick; and an early kick that
 * interrupts the guest accounts, finds the deadline not reached and
 * re-arms.
 */
#include "vmm_pv.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <x86intrin.h>

#include "arch_msrs.h"
#include "vm_registry.h"

#define VMM_TIMER_GRAN_NS  100000ULL /* set-switch granularity: 100 us */
#define VMM_TIMER_MIN_NS   10000ULL  /* never arm shorter than 10 us */
#define VMM_TIMER_DRIFT_NS 20000ULL  /* re-arm once 20 us early */

/*
 * Where each statistic libvpmu reads lives in the vCPU's statistics;
 * libvpmu says which event or virtual PMD counts which statistic.
 */
static const size_t stat_offset[VPMU_HV_STAT_EXIT_REASON] = {
	[VPMU_HV_STAT_EXITS]      = offsetof(struct vmm_vcpu_stats, nr_exits),
	[VPMU_HV_STAT_HYPERCALLS] = offsetof(struct vmm_vcpu_stats, hypercalls),
	[VPMU_HV_STAT_MSR_READS]  = offsetof(struct vmm_vcpu_stats, msr_read),
	[VPMU_HV_STAT_MSR_WRITES] = offsetof(struct vmm_vcpu_stats, msr_write),
	[VPMU_HV_STAT_PIO]        = offsetof(struct vmm_vcpu_stats, pio),
	[VPMU_HV_STAT_MMIO]       = offsetof(struct vmm_vcpu_stats, mmio),
	[VPMU_HV_STAT_IRQS]       = offsetof(struct vmm_vcpu_stats, irqs),
	[VPMU_HV_STAT_HALTS]      = offsetof(struct vmm_vcpu_stats, halts),
	[VPMU_HV_STAT_HALTED_NS]  = offsetof(struct vmm_vcpu_stats, halted_ns),
	[VPMU_HV_STAT_STEAL_NS]   = offsetof(struct vmm_vcpu_stats, steal_ns),
	[VPMU_HV_STAT_CPU_NS]     = offsetof(struct vmm_vcpu_stats, cpu_ns),
};

_Static_assert(VPMU_HV_EXIT_REASONS <= VMM_EXIT_REASONS,
	       "every exit reason libvpmu reads is counted");

static uint64_t hv_stat(void *opaque, uint32_t cpu, unsigned int stat)
{
	struct vmm_vm *vm = opaque;
	const struct vmm_vcpu_stats *s;

	if (cpu >= vm->nr_vcpus || stat >= VPMU_HV_NR_STATS)
		return 0;
	/*
	 * The thread's CPU time costs a system call: read only for an
	 * hv_cpu_ns event, from the vCPU thread's own clock even when an
	 * operator reads on another thread (the last figure the vCPU
	 * stored could be a whole run old).
	 */
	if (stat == VPMU_HV_STAT_CPU_NS)
		return vmm_vcpu_cpu_ns(&vm->vcpus[cpu]);
	s = &vm->vcpus[cpu].stats;
	if (stat >= VPMU_HV_STAT_EXIT_REASON)
		return s->exits[stat - VPMU_HV_STAT_EXIT_REASON];
	return *(const uint64_t *)((const char *)s + stat_offset[stat]);
}

static int vcpu_fd(void *opaque, uint32_t cpu)
{
	struct vmm_vm *vm = opaque;

	return cpu < vm->nr_vcpus ? vm->vcpus[cpu].fd : -1;
}

/* 0 until the vCPU thread runs: perf then answers -ESRCH. */
static pid_t vcpu_tid(void *opaque, uint32_t cpu)
{
	struct vmm_vm *vm = opaque;

	if (cpu >= vm->nr_vcpus)
		return 0;
	return __atomic_load_n(&vm->vcpus[cpu].tid, __ATOMIC_ACQUIRE);
}

/* Runs with the domain lock held: no call back into libvpmu. */
static void notify(void *opaque, const struct vpmu_notify *n)
{
	struct vmm_vm *vm = opaque;
	struct vmm_pv *pv = vmm_pv(vm);

	/* The architectural PMU model's contexts (no messages). */
	if (n->owner == VPMU_OWNER_ARCH) {
		vmm_pv_arch_notify(vm, n);
		return;
	}
	if (n->owner == VPMU_OWNER_HOST && pv->host_notify)
		pv->host_notify(vm, n); /* operator contexts */
	if (n->owner == VPMU_OWNER_GUEST && (n->flags & VPMU_NOTIFY_BLOCK))
		vmm_pv_mark_blocked(vm, n->cpu_index, true);
	if (vmm_pv_notify_raises(n) && n->cpu_index < vm->nr_vcpus)
		vmm_pv_raise_irq(&vm->vcpus[n->cpu_index]);
	vmm_pv_wake_waiters(vm);
}

static const struct vpmu_host_ops host_ops = {
	.vcpu_fd  = vcpu_fd,
	.vcpu_tid = vcpu_tid,
	.hv_stat  = hv_stat,
	.notify   = notify,
};

void vmm_pv_mark_blocked(struct vmm_vm *vm, uint32_t cpu, bool blocked)
{
	struct pvpmu_boot_info *bi;
	uint64_t bit;

	/* Only vpmu's own images have the boot info (Linux has RAM there). */
	if (cpu >= 64 || vmm_vm_image_kind(vm) != VMM_IMAGE_ELF)
		return;
	bi = vmm_gpa_ptr(vm, PVPMU_BOOT_INFO_GPA, sizeof(*bi));
	if (!bi)
		return;
	bit = 1ULL << cpu;
	if (blocked)
		__atomic_or_fetch(&bi->block_vcpus, bit, __ATOMIC_RELEASE);
	else
		__atomic_and_fetch(&bi->block_vcpus, ~bit, __ATOMIC_RELEASE);
}

void vmm_pv_wake_waiters(struct vmm_vm *vm)
{
	struct vmm_pv *pv = vmm_pv(vm);
	pthread_mutex_lock(&pv->msg_lock);
	pv->msg_gen++;
	pthread_cond_broadcast(&pv->msg_cond);
	pthread_mutex_unlock(&pv->msg_lock);
}

static void set_limits(struct vpmu_limits *l, const struct vmm_config *cfg)
{
	vpmu_limits_default(l);
	l->max_contexts  = cfg->limits.max_contexts; /* the guest's */
	l->arch_contexts = cfg->nr_vcpus;            /* one per vCPU */
	/* Operators never compete with the guest. */
	l->host_contexts     = VMM_PV_HOST_CONTEXTS;
	l->host_smpl_mem_max = VMM_PV_HOST_SMPL_MEM;
	l->max_sets          = cfg->limits.max_sets;
	l->msgq_depth        = cfg->limits.max_msgs;
	l->arg_size_max      = cfg->limits.max_arg_size;
	l->smpl_mem_max      = cfg->limits.max_smpl_mem;
	l->timer_gran_ns     = VMM_TIMER_GRAN_NS;
	l->min_kick_ns       = VMM_TIMER_MIN_NS;
	l->max_smpl_rate     = cfg->limits.max_smpl_rate;
	l->max_overhead_pct  = cfg->limits.max_overhead_pct;
}

static void fmt_refused(void *opaque, const char *msg)
{
	vmm_log(opaque, VMM_LOG_ERROR, "sampling format refused: %s", msg);
}

/*
 * Spec 3.5, 3.5.8: the run-time formats of cfg->format_dir, loaded during
 * set-up (dlopen needs no more than that). A bad object is refused with a
 * message naming it and the VM runs without it; an unreadable directory
 * is a configuration error. The formats this VM added are remembered.
 */
static int load_formats(struct vmm_vm *vm, const struct vmm_config *cfg)
{
	struct vmm_pv *pv = vmm_pv(vm);
	struct vpmu_format_info fi[VMM_PV_FMTS_MAX + 8];
	size_t before, after, i;
	int ret;

	if (!cfg->format_dir[0])
		return 0;
	before = vpmu_format_list(NULL, 0);
	ret    = vpmu_format_load_dir(cfg->format_dir, fmt_refused, vm);
	if (ret < 0)
		return ret;
	after = vpmu_format_list(fi, ARRAY_SIZE(fi));
	for (i = before; i < after && i < ARRAY_SIZE(fi); i++) {
		if (pv->nr_fmts == VMM_PV_FMTS_MAX)
			break;
		memcpy(pv->fmt_uuids[pv->nr_fmts++], fi[i].uuid, 16);
		vmm_log(vm, VMM_LOG_INFO, "sampling format '%s' loaded from %s",
			fi[i].name, fi[i].origin);
	}
	return 0;
}

static void unload_formats(struct vmm_vm *vm)
{
	struct vmm_pv *pv = vmm_pv(vm);

	while (pv->nr_fmts)
		vpmu_format_unload(pv->fmt_uuids[--pv->nr_fmts]);
}

int vmm_pv_create(struct vmm_vm *vm, const struct vmm_config *cfg)
{
	struct vpmu_host_config hc = {
		.ops = &host_ops, .opaque = vm, .kick_signo = SIGUSR1};
	struct vmm_pv *p;
	unsigned int i;
	int ret, khz;

	ret = vmm_pv_attach(vm);
	if (ret)
		return ret;
	p   = vmm_pv(vm);
	ret = vmm_pv_msg_init(p);
	if (ret)
		return ret;
	pthread_mutex_init(&p->map_lock, NULL);
	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX; i++)
		p->maps[i].fd = -1;
	khz           = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);
	p->tsc_khz    = khz > 0 ? (uint64_t)khz : 0;
	p->tsc_stable = vmm_vm_host(vm)->tsc_stable;
	hc.tsc_khz    = p->tsc_khz;

	ret = load_formats(vm, cfg);
	if (ret)
		return ret;
	set_limits(&hc.limits, cfg);
	p->arg_size_max  = hc.limits.arg_size_max;
	p->max_smpl_rate = hc.limits.max_smpl_rate;
	ret              = vpmu_domain_create_hosted(&hc, &p->domain);
	if (ret)
		return ret;
	for (i = 0; i < vm->nr_vcpus; i++) {
		ret = vpmu_cpu_create(p->domain, i,
				      &vmm_pv_vcpu(&vm->vcpus[i])->cpu);
		if (ret)
			return ret;
	}
	return 0;
}

void vmm_pv_destroy(struct vmm_vm *vm)
{
	struct vmm_pv *p = vmm_pv(vm);
	unsigned int i;

	for (i = 0; i < VMM_PV_SMPL_MAPS_MAX; i++) {
		if (p->maps[i].fd >= 0)
			vmm_pv_smpl_unmap(vm, p->maps[i].fd);
	}
	vmm_pv_arch_destroy(vm);
	for (i = 0; vm->vcpus && i < vm->nr_vcpus; i++)
		vmm_pv_chain_free(&vm->vcpus[i]);
	vpmu_domain_destroy(p->domain);
	p->domain = NULL;
	unload_formats(vm); /* after the contexts that used them */
	pthread_mutex_destroy(&p->map_lock);
	pthread_cond_destroy(&p->msg_cond);
	pthread_mutex_destroy(&p->msg_lock);
}

/*
 * What a kick costs a guest here, the kernel's part of which no VMM can
 * time: measured once per VM on a bare vCPU, before the vCPU threads and
 * the control socket exist (a probe that shared the host with them, or
 * with an operator's client starting, read up to a third more) and
 * before the sandbox (it creates a VM). Charged for every kick of our
 * timer (vmm_pv_after_run), as the mean with the host's recent probes
 * (one probe's moment is not the minutes the VM runs). The probe times
 * the guest with its TSC: not where the host does not trust it.
 */
void vmm_pv_run_prepare(struct vmm_vm *vm)
{
	struct vmm_kick_cost cost;
	char dir[PATH_MAX];
	bool replaced;
	int ret;

	if (!vmm_vm_host(vm)->tsc_stable || vmm_kick_probe(vm->kvm_fd, &cost))
		return;
	/* With the host's recent probes (kick_history.c), where it keeps them.
	 */
	ret = vmm_runtime_dir(dir, sizeof(dir));
	if (!ret)
		ret = vmm_runtime_dir_create(dir);
	if (!ret) {
		ret = vmm_kick_history_update(dir, &cost, &replaced);
		if (replaced)
			vmm_log(vm, VMM_LOG_WARN,
				"%s/%s was not a kick probe history: replaced",
				dir, VMM_KICK_PROBES);
		if (ret)
			vmm_log(vm, VMM_LOG_WARN,
				"cannot keep the kick probe in %s/%s: %s "
				"(charging its mean with the host's earlier "
				"probes)",
				dir, VMM_KICK_PROBES, strerror(-ret));
	}
	/* Before the threads that read it exist: no ordering to add. */
	vm->kick_cost = cost;
}

int vmm_pv_vcpu_start(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	struct sigevent sev     = {
		    .sigev_notify = SIGEV_THREAD_ID,
		    .sigev_signo  = SIGUSR1,
        };

	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &pmu->timer) < 0)
		return -errno;
	pmu->has_timer      = true;
	pmu->armed_deadline = VPMU_NO_DEADLINE;
	return 0;
}

void vmm_pv_vcpu_end(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);

	if (pmu->has_timer)
		timer_delete(pmu->timer);
	pmu->has_timer = false;
}

/*
 * Time spent outside KVM_RUN since the timer was armed: the timer runs on
 * wall time, run time does not, so the timer would fire early by this.
 */
static uint64_t drift_ns(const struct vmm_pv_vcpu *p, uint64_t wall,
			 uint64_t run)
{
	uint64_t dw = wall - p->armed_wall_ns, dr = run - p->armed_run_ns;

	return dw > dr ? dw - dr : 0;
}

static void arm_timer(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(vcpu);
	uint64_t deadline     = vpmu_cpu_next_deadline(p->cpu);
	uint64_t now          = vpmu_cpu_run_ns(p->cpu), wall, rel, tsc;
	struct itimerspec its = {0};

	bool absorbed;

	if (!p->has_timer)
		return;
	/*
	 * Our timer fired while the VMM handled an exit (about half of the
	 * early ones where the guest exits every ~50 us): re-arm it here
	 * rather than take an empty KVM_RUN round trip as a kick.
	 */
	absorbed = vmm_vcpu_absorb_timer_kick(vcpu);
	if (absorbed) {
		p->armed_deadline = VPMU_NO_DEADLINE - 1;
		vcpu->kick.absorbed++;
	}
	if (deadline == p->armed_deadline) {
		/* Re-arm only once exits have pushed it noticeably early. */
		if (deadline == VPMU_NO_DEADLINE)
			return;
		wall = vpmu_monotonic_ns();
		if (drift_ns(p, wall, now) < VMM_TIMER_DRIFT_NS)
			return;
	} else {
		wall = vpmu_monotonic_ns();
	}
	p->armed_deadline = deadline;
	p->armed_wall_ns  = wall;
	p->armed_run_ns   = now;
	if (deadline != VPMU_NO_DEADLINE) {
		rel = deadline > now ? deadline - now : 0;
		if (rel < VMM_TIMER_MIN_NS)
			rel = VMM_TIMER_MIN_NS;
		its.it_value.tv_sec  = rel / 1000000000ULL;
		its.it_value.tv_nsec = rel % 1000000000ULL;
	}
	tsc = __rdtsc();
	timer_settime(p->timer, 0, &its, NULL);
	vcpu->kick.t_arm = __rdtsc() - tsc; /* --stats */
	if (absorbed) /* monitoring cost, as a kick's re-arm is */
		vpmu_cpu_charge(p->cpu, vpmu_monotonic_ns() - wall);
}

static bool inject_vector(struct vmm_vcpu *vcpu, uint32_t vector)
{
	struct kvm_run *run      = vcpu->run;
	struct kvm_interrupt irq = {.irq = vector};

	/* In-kernel local APIC (Linux guests): it holds the vector. */
	if (vcpu->vm->irqchip) {
		if (vmm_irq_vector(vcpu, vector))
			return false;
		vcpu->stats.irqs++;
		return true;
	}
	if (!run->ready_for_interrupt_injection || !run->if_flag ||
	    ioctl(vcpu->fd, KVM_INTERRUPT, &irq) != 0)
		return false;
	vcpu->stats.irqs++;
	return true;
}

/*
 * The architectural PMI: an NMI is queued at once (KVM_NMI, no
 * in-kernel irqchip), a vector when the guest can take an interrupt.
 * Returns true while it is still pending.
 */
static bool inject_pmi(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	unsigned int pmi        = atomic_load(&pmu->pmi);

	if (!pmi)
		return false;
	if (pmi & VMM_PV_PMI_LVTPC) { /* the guest's LVTPC decides, in KVM */
		if (!vmm_irq_lvtpc_pmi(vcpu)) {
			vcpu->stats.irqs++;
			atomic_fetch_add(&pmu->pmis, 1);
		}
		atomic_compare_exchange_strong(&pmu->pmi, &pmi, 0);
		return false;
	}
	if (pmi == VMM_PV_PMI_NMI ? ioctl(vcpu->fd, KVM_NMI, 0) != 0
				  : !inject_vector(vcpu, pmi))
		return true;
	if (pmi == VMM_PV_PMI_NMI)
		vcpu->stats.irqs++;
	atomic_fetch_add(&pmu->pmis, 1);
	atomic_compare_exchange_strong(&pmu->pmi, &pmi, 0);
	return false;
}

static void inject_irq(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);
	bool want               = false;

	if (!atomic_load(&pmu->irq_pending) && !atomic_load(&pmu->pmi))
		return;
	if (atomic_load(&pmu->irq_pending)) {
		if (!pmu->vector) {
			atomic_store(&pmu->irq_pending, false);
		} else if (inject_vector(vcpu, pmu->vector)) {
			atomic_store(&pmu->irq_pending, false);
			atomic_fetch_add(&pmu->pmis, 1);
		} else
			want = true;
	}
	/* One interrupt per entry: a PMI after a notification waits. */
	if (!want)
		want = inject_pmi(vcpu);
	else if (atomic_load(&pmu->pmi) == VMM_PV_PMI_NMI)
		inject_pmi(vcpu);
	else
		want = true;
	vcpu->run->request_interrupt_window = want;
}

void vmm_pv_before_run(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *p = vmm_pv_vcpu(vcpu);

	arm_timer(vcpu);
	inject_irq(vcpu);
	vmm_pv_shared_stamp_entry(vcpu);
	/*
	 * The rest of our timer's kick in user space (shared page,
	 * requests, timer re-arm) is monitoring cost too.
	 */
	if (p->reentry_from) {
		vpmu_cpu_charge(p->cpu, vpmu_monotonic_ns() - p->reentry_from);
		p->reentry_from = 0;
	}
}

void vmm_pv_resumed(struct vmm_vcpu *vcpu)
{
	struct vmm_pv_vcpu *pmu = vmm_pv_vcpu(vcpu);

	if (pmu->reentry_from)
		pmu->reentry_from = vpmu_monotonic_ns();
}

void vmm_pv_raise_irq(struct vmm_vcpu *vcpu)
{
	atomic_store(&vmm_pv_vcpu(vcpu)->irq_pending, true);
	if (vcpu->has_thread && pthread_equal(pthread_self(), vcpu->thread))
		return; /* served before the next KVM_RUN anyway */
	vmm_vcpu_kick(vcpu, VMM_REQ_IRQ);
}

void vmm_pv_raise_pmi(struct vmm_vcpu *vcpu, unsigned int pmi)
{
	atomic_store(&vmm_pv_vcpu(vcpu)->pmi, pmi);
	if (vcpu->has_thread && pthread_equal(pthread_self(), vcpu->thread))
		return; /* served before the next KVM_RUN anyway */
	vmm_vcpu_kick(vcpu, VMM_REQ_IRQ);
}

bool vmm_pv_pmi_wakes(struct vmm_vcpu *vcpu)
{
	unsigned int pmi = atomic_load(&vmm_pv_vcpu(vcpu)->pmi);

	return pmi == VMM_PV_PMI_NMI || (pmi && vcpu->run->if_flag);
}

/*
 * The kernel's part of a kick of our timer that ended KVM_RUN at (t0)
 * after (run_ns) in it, when the kick came inside KVM_RUN. A timer due
 * before this KVM_RUN began fired outside the guest: KVM_RUN returned at
 * once, no world switch (0). The exit as the VMM sees it runs from the
 * moment the timer was due (armed for at least VMM_TIMER_MIN_NS) to
 * KVM_RUN's return; above 1 ms it is the host's scheduling, not a kick.
 * With a probe: the probed kernel part, scaled by this exit against the
 * probe's (a nested host's kicks were seen to drift by 8 % within seconds,
 * their exits with them), between half and twice the probed part (a
 * preempted vCPU thread's long exit is not monitoring's cost). Without
 * one, the exit twice: once for the way out, once for the way back in.
 */
static uint64_t kick_kernel_ns(const struct vmm_vcpu *vcpu, uint64_t t0,
			       uint64_t run_ns)
{
	const struct vmm_pv_vcpu *p = vmm_pv_vcpu(vcpu);
	uint64_t due, rel, exit_ns, scaled, start = t0 - run_ns;
	uint64_t probed      = vcpu->vm->kick_cost.kernel_ns;
	uint64_t probed_exit = vcpu->vm->kick_cost.exit_ns;

	if (p->armed_deadline == VPMU_NO_DEADLINE ||
	    p->armed_deadline < p->armed_run_ns)
		return 0;
	rel = p->armed_deadline - p->armed_run_ns;
	due = p->armed_wall_ns +
	      (rel < VMM_TIMER_MIN_NS ? VMM_TIMER_MIN_NS : rel);
	if (due < start)
		return 0;
	exit_ns = t0 > due && t0 - due < 1000000ULL ? t0 - due : 0;
	if (!probed)
		return 2 * exit_ns;
	if (!probed_exit || !exit_ns)
		return probed;
	scaled = (uint64_t)((unsigned __int128)probed * exit_ns / probed_exit);
	if (scaled < probed / 2)
		return probed / 2;
	return scaled > 2 * probed ? 2 * probed : scaled;
}

void vmm_pv_after_run(struct vmm_vcpu *vcpu, uint64_t run_ns, uint64_t t_ret,
		      bool kicked)
{
	struct vpmu_guest_state gs = {0};
	struct vmm_pv_vcpu *p      = vmm_pv_vcpu(vcpu);
	bool timer                 = kicked && vcpu->kick.by_timer;
	uint64_t now, kernel_ns;

	if (vcpu->vm->has_sync_regs)
		gs.ip = vcpu->run->s.regs.regs.rip;
	vmm_pv_shared_guest_ids(vcpu, &gs.pid, &gs.tid);
	/*
	 * When a sample is due (the timer's kick, or the run time
	 * passes the predicted overflow), its call chain is stored first,
	 * under the time the sample will carry, so that the control thread
	 * never sees the sample before its chain.
	 */
	if (atomic_load(&p->chain_users)) {
		now = vpmu_cpu_run_ns(p->cpu) + run_ns;
		if (kicked || now >= vpmu_cpu_next_deadline(p->cpu))
			vmm_pv_chain_capture(vcpu, now);
	}
	vpmu_cpu_account(p->cpu, run_ns, &gs);
	/* Complete an operator's pending read: its counts are now current. */
	vmm_vcpu_accounted(vcpu);
	/*
	 * Charge what monitoring cost this vCPU: the accounting (samples
	 * written, chains walked) since KVM_RUN returned at (t_ret), and for
	 * a kick of our timer its kernel part, which passed inside KVM_RUN.
	 */
	now = vpmu_monotonic_ns();
	vpmu_cpu_charge(p->cpu, now - t_ret);
	if (timer) {
		kernel_ns = kick_kernel_ns(vcpu, t_ret, run_ns);
		vpmu_cpu_charge_in_run(p->cpu, kernel_ns);
		vcpu->kick.kernel_charged += kernel_ns; /* --stats */
	}
	/* The rest of our timer's kick: charged by vmm_pv_before_run(). */
	p->reentry_from = timer ? now : 0;
	if (!timer)
		return;
	/*
	 * Our one-shot timer fired: arm it again before the next run. Other
	 * kicks (operators' reads, interrupts) leave it armed as it was.
	 */
	if (p->armed_deadline != VPMU_NO_DEADLINE &&
	    vpmu_cpu_run_ns(p->cpu) < p->armed_deadline)
		vcpu->kick.early++; /* fired early: nothing was due yet */
	p->armed_deadline = VPMU_NO_DEADLINE - 1;
}
