// SPDX-License-Identifier: MIT
/*
 * user_irq.c: the notification vector, delivered in ring 0 and in ring 3.
 *
 * vCPU 0
 *   1. in ring 0: registers the vector with PVPMU_HC_SET_VECTOR, arms a
 *      vCPU-wide perfmon2 context whose hv_hypercalls counter overflows
 *      (with notification) after ARM_CALLS hypercalls, makes them with
 *      interrupts off, and waits in kernel_idle() (sti; hlt) for the
 *      interrupt;
 *   2. puts the kernel's default handler back and, in ring 3, registers
 *      the vector again, arms a new context, and spins making NOP
 *      hypercalls until user_notify_count() has grown, with a timeout
 *      measured by rdtsc (what a ring-3-only program does).
 * Prints "user_irq: ok" and exits 0; exits 1 on a timeout or error. If the
 * VMM answers -ENOSYS to SET_VECTOR or to the perfmon2 call, it prints
 * "user_irq: SET_VECTOR not supported" (the KVM test then skips) and
 * exits 0. Other vCPUs spin in ring 3 until vCPU 0 is out of
 * kernel_idle() (the VMM ends a VM whose vCPUs are all halted), then exit
 * 0; run it with two or more vCPUs.
 */
#include "kernel.h"
#include "pvpmu_hc.h"

#define NOT_SUPPORTED "user_irq: SET_VECTOR not supported"
#define ARM_CALLS     3
#define TIMEOUT_MS    2000
#define EVSEL(code)   ((code) | (1ULL << 16) | (1ULL << 17) | (1ULL << 22))

static volatile uint32_t nr_notified;
static volatile uint32_t notified_vcpu;
static volatile uint32_t ring0_done; /* vCPU 0 left kernel_idle() */

static struct pvpmu_hc_pfm req;
static struct pfarg_ctx ctx;
static struct pfarg_pmc pmc;
static struct pfarg_pmd pmd;
static struct pfarg_load load;

/* Ring 0, interrupts off, on the kernel stack. */
static void on_notify(void)
{
	notified_vcpu = this_cpu()->id;
	nr_notified++;
}

static long pfm(unsigned int cmd, int fd, void *arg, unsigned int size)
{
	req = (struct pvpmu_hc_pfm){
		.size     = sizeof(req),
		.cmd      = cmd,
		.fd       = fd,
		.nargs    = arg ? 1 : 0,
		.arg_gpa  = arg ? virt_to_gpa(arg) : 0,
		.arg_size = size,
	};
	return pvpmu_hypercall(PVPMU_HC_PFM, virt_to_gpa(&req));
}

static long set_vector(unsigned int vector)
{
	struct pvpmu_hc_vector v = {.size = sizeof(v), .vector = vector};

	return pvpmu_hypercall(PVPMU_HC_SET_VECTOR, virt_to_gpa(&v));
}

/*
 * Register the vector and start a context that notifies after (n) more
 * hypercalls. Both rings. Returns the fd, or a negative status.
 */
static long arm(unsigned int n)
{
	long r = set_vector(KERNEL_NOTIFY_VECTOR);

	ctx = (struct pfarg_ctx){.ctx_flags = PFM_FL_SYSTEM_WIDE};
	if (r == 0)
		r = pfm(PFM_CREATE_CONTEXT, 0, &ctx, sizeof(ctx));
	if (r)
		return r;
	pmc = (struct pfarg_pmc){.reg_num   = 0,
				 .reg_flags = PFM_REGFL_OVFL_NOTIFY,
				 .reg_value = EVSEL(PVPMU_EV_HV_HYPERCALLS)};
	pmd = (struct pfarg_pmd){.reg_num = 0, .reg_value = -(uint64_t)n};
	load.load_pid = 0;
	r             = pfm(PFM_WRITE_PMCS, ctx.ctx_fd, &pmc, sizeof(pmc));
	if (!r)
		r = pfm(PFM_WRITE_PMDS, ctx.ctx_fd, &pmd, sizeof(pmd));
	if (!r)
		r = pfm(PFM_LOAD_CONTEXT, ctx.ctx_fd, &load, sizeof(load));
	if (!r)
		r = pfm(PFM_START, ctx.ctx_fd, NULL, 0);
	return r ? r : ctx.ctx_fd;
}

static void disarm(int fd)
{
	struct pvpmu_hc_ctx c = {.size = sizeof(c), .fd = fd};

	pfm(PFM_STOP, fd, NULL, 0);
	pvpmu_hypercall(PVPMU_HC_CLOSE, virt_to_gpa(&c));
}

/* Ring 3 on vCPU 0. */
static int irq_from_ring3(unsigned int vcpu)
{
	uint64_t khz       = user_boot_info()->tsc_khz;
	uint64_t timeout   = (khz ? khz : 1000000) * TIMEOUT_MS;
	uint64_t before    = user_notify_count(vcpu);
	uint64_t t0        = rdtsc();
	unsigned int calls = 0;
	long fd;

	if (vcpu != 0) {
		/*
		 * Stay busy while vCPU 0 waits in HLT: the VMM ends the VM
		 * once every vCPU has halted, even with an interrupt pending
		 * for one of them (reported to the VMM engineer).
		 */
		while (!ring0_done && rdtsc() - t0 < timeout)
			cpu_relax();
		return 0;
	}
	fd = arm(ARM_CALLS);
	if (fd == -PVPMU_ENOSYS) {
		uprintf("%s\n", NOT_SUPPORTED);
		return 0;
	}
	if (fd < 0) {
		uprintf("user_irq: ring 3 arm failed: %ld\n", fd);
		return 1;
	}
	t0 = rdtsc();
	while (user_notify_count(vcpu) == before) {
		if (rdtsc() - t0 > timeout) {
			uprintf("user_irq: timeout in ring 3 after %u calls\n",
				calls);
			return 1;
		}
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
		calls++;
	}
	disarm((int)fd);
	uprintf("user_irq: ring 3 notified on vcpu %u after %u hypercalls "
		"(cpl %u, count %llu, custom handler %u)\n",
		vcpu, calls, user_cpl(),
		(unsigned long long)user_notify_count(vcpu), nr_notified);
	uprintf("user_irq: ok\n");
	return 0;
}

/* Ring 0 on vCPU 0: the kernel_idle() wait. Returns 0, 1 or -ENOSYS. */
static long irq_in_ring0(void)
{
	unsigned int i;
	long fd = arm(ARM_CALLS);

	if (fd == -PVPMU_ENOSYS) {
		kprintf("%s\n", NOT_SUPPORTED);
		return fd;
	}
	if (fd < 0) {
		kprintf("user_irq: ring 0 arm failed: %ld\n", fd);
		return 1;
	}
	for (i = 0; i < ARM_CALLS + 1; i++)
		pvpmu_hypercall(PVPMU_HC_NOP, 0);
	if (nr_notified) {
		kprintf("user_irq: delivered with interrupts off\n");
		return 1;
	}
	kernel_idle();
	if (!nr_notified) {
		kprintf("user_irq: kernel_idle returned without it\n");
		return 1;
	}
	disarm((int)fd);
	kprintf("user_irq: kernel_idle woke for the notification on vcpu "
		"%u\n",
		notified_vcpu);
	return 0;
}

user_main_fn_t user_program(unsigned int vcpu)
{
	(void)vcpu;
	return irq_from_ring3;
}

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	long r;

	(void)bi;
	if (vcpu == 0) {
		kernel_set_notify_handler(KERNEL_NOTIFY_VECTOR, on_notify);
		r = irq_in_ring0();
		kernel_set_notify_handler(KERNEL_NOTIFY_VECTOR, NULL);
		ring0_done = 1;
		if (r == -PVPMU_ENOSYS)
			guest_exit(0);
		if (r)
			guest_exit(1);
	}
	kernel_user_run(vcpu);
}
