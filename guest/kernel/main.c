// SPDX-License-Identifier: MIT
/*
 * main.c: per-vCPU bring-up (kernel_main), spinlocks, idle and VM exit.
 *
 * vCPU 0 sets up what is shared (the console, the null-page guard, the
 * clock, the driver core's OS glue) and checks the boot info; the other
 * vCPUs wait for it, then every vCPU loads the GDT, TSS and IDT, sets its
 * syscall MSRs and runs the image's guest_main() (by default: this vCPU's
 * ring-3 program).
 */
#include "kernel.h"

#include <stdbool.h>

#include "pvpmu_core.h"

const struct pvpmu_boot_info *kernel_boot_info;

/* Set by vCPU 0 once the shared state is ready (release/acquire). */
static uint32_t kernel_ready;

void spin_lock(struct spinlock *l)
{
	uint32_t me = this_cpu()->id + 1;
	uint32_t expected;

	for (;;) {
		expected = 0;
		if (__atomic_compare_exchange_n(&l->owner, &expected, me, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* Spin read-only: each emulated CAS is dearer than a load. */
		while (__atomic_load_n(&l->owner, __ATOMIC_RELAXED))
			cpu_relax();
	}
}

void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE);
}

noreturn void guest_halt(void)
{
	for (;;) {
		cli();
		hlt();
	}
}

void kernel_idle(void)
{
	/* STI delays interrupts by one instruction: none slips before HLT. */
	__asm__ __volatile__("sti; hlt; cli" : : : "memory");
}

noreturn void guest_exit(int status)
{
	outl(PVPMU_PORT_EXIT, (uint32_t)status);
	guest_halt();
}

static void check_boot_info(const struct pvpmu_boot_info *bi)
{
	if (bi->magic != PVPMU_BOOT_MAGIC || bi->abi != PVPMU_ABI_VERSION) {
		kprintf("kernel: bad boot info at %p: magic 0x%llx abi %u "
			"(want 0x%llx abi %u)\n",
			(const void *)bi, (unsigned long long)bi->magic,
			bi->abi, PVPMU_BOOT_MAGIC, PVPMU_ABI_VERSION);
		guest_exit(KERNEL_EXIT_BAD_BOOT);
	}
	if (bi->nr_vcpus > KERNEL_MAX_VCPUS)
		kprintf("kernel: %u vcpus, only %u supported; the rest halt\n",
			bi->nr_vcpus, KERNEL_MAX_VCPUS);
}

/* The image's entry when it defines none: run this vCPU's program. */
__attribute__((weak)) void guest_main(unsigned int vcpu,
				      const struct pvpmu_boot_info *bi)
{
	(void)bi;
	kernel_user_run(vcpu);
}

void kernel_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	struct cpu *cpu = this_cpu();

	cpu->id = vcpu;
	cpu->bi = bi;
	gdt_load();
	if (vcpu == 0) {
		console_init();
		trap_load();
		check_boot_info(bi);
		paging_guard_null();
		syscall_init(bi);
		pvpmu_os_register(&kernel_pvpmu_drv);
		kernel_boot_info = bi;
		__atomic_store_n(&kernel_ready, 1, __ATOMIC_RELEASE);
	} else {
		while (!__atomic_load_n(&kernel_ready, __ATOMIC_ACQUIRE))
			cpu_relax();
		trap_load();
	}
	paging_flush();
	tss_load(vcpu, (uintptr_t)cpu + KERNEL_STACK_SIZE);
	syscall_init_cpu();
	guest_main(vcpu, bi);
}
