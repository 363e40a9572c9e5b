// SPDX-License-Identifier: MIT
/*
 * syscall.c: ring 3 from the kernel's side: the syscall gate and table,
 * the syscall handlers, the start of each vCPU's program, the clock behind
 * the time syscall, and the notification vector's gate.
 *
 * The entry paths themselves are in syscall.S (which also says why the
 * syscall ABI is `int3`, not the `syscall` instruction). Handlers run
 * in ring 0 with interrupts off on the vCPU's kernel stack; they are plain
 * C functions of the syscall's three argument registers.
 */
#include "kernel.h"

#include <stdbool.h>

#include "pvpmu_core.h"

#define USER_MIN_ADDR 4096ULL      /* page 0 is unmapped (paging.c) */
#define USER_MAX_ADDR (4ULL << 30) /* the identity map ends at 4 GiB */

/* SFMASK: what `syscall` clears in RFLAGS (SDM vol. 3, 5.8.8). */
#define SYSCALL_RFLAGS_MASK                                                    \
	(X86_RFLAGS_TF | X86_RFLAGS_IF | X86_RFLAGS_DF | X86_RFLAGS_AC)

/* STAR[47:32]: syscall CS (SS = +8); STAR[63:48]: sysret base (unused). */
#define STAR_VALUE                                                             \
	(((uint64_t)GDT_KERNEL_CS << 32) | ((uint64_t)(GDT_USER_DS - 8) << 48))

_Static_assert(GDT_USER_CS == GDT_USER_DS + 8, "STAR wants DS, CS order");
_Static_assert(USER_SYSCALL_VECTOR == X86_VEC_BP, "syscall.S: int3");

typedef long (*syscall_fn_t)(uint64_t a0, uint64_t a1, uint64_t a2);

/* syscall.S */
void syscall_entry(void);
void syscall_unsupported(void);
void notify_entry(void);
noreturn void user_enter(unsigned int vcpu, user_main_fn_t fn,
			 uint64_t user_rsp, uint64_t kernel_rsp);

/* Called by notify_entry's C side; an aligned store, read without a lock. */
kernel_notify_fn_t kernel_notify_fn;
void kernel_notify_dispatch(const uint64_t *frame);
static unsigned int notify_vector;

volatile uint64_t user_notify_counts[KERNEL_MAX_VCPUS];
volatile uint64_t kernel_blocked_counts[KERNEL_MAX_VCPUS];

static uint8_t user_stacks[KERNEL_MAX_VCPUS][USER_STACK_SIZE]
	__attribute__((aligned(16)));

/* TSC at boot and ns per TSC tick << 32. */
static uint64_t boot_tsc, tsc_to_ns_mult;

/* The programs, when the image names none. */
#pragma weak user_main

__attribute__((weak)) user_main_fn_t user_program(unsigned int vcpu)
{
	(void)vcpu;
	return user_main;
}

static bool user_range_ok(uint64_t p, uint64_t len, uint64_t mem_size)
{
	uint64_t end,
		limit = mem_size < USER_MAX_ADDR ? mem_size : USER_MAX_ADDR;

	if (p < USER_MIN_ADDR || __builtin_add_overflow(p, len, &end))
		return false;
	return end <= limit;
}

static long sys_write(uint64_t buf, uint64_t len, uint64_t a2)
{
	(void)a2;
	if (!user_range_ok(buf, len, kernel_boot_info->mem_size))
		return -PVPMU_EFAULT;
	console_write((const char *)(uintptr_t)buf, len);
	return (long)len;
}

static long sys_read(uint64_t buf, uint64_t len, uint64_t a2)
{
	(void)a2;
	if (!user_range_ok(buf, len, kernel_boot_info->mem_size))
		return -PVPMU_EFAULT;
	return (long)console_read((char *)(uintptr_t)buf, len);
}

static long sys_exit(uint64_t status, uint64_t a1, uint64_t a2)
{
	int st = (int)status;

	(void)a1;
	(void)a2;
	if (st == 0)
		guest_halt();
	guest_exit(st > 0 && st < 256 ? st : 255);
}

uint64_t kernel_time_ns(void)
{
	uint64_t t = rdtsc() - boot_tsc;

	return (uint64_t)(((unsigned __int128)t * tsc_to_ns_mult) >> 32);
}

static long sys_time(uint64_t a0, uint64_t a1, uint64_t a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return (long)kernel_time_ns();
}

static long sys_yield(uint64_t a0, uint64_t a1, uint64_t a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return 0;
}

static long sys_enosys(uint64_t a0, uint64_t a1, uint64_t a2)
{
	(void)a0;
	(void)a1;
	(void)a2;
	return -PVPMU_ENOSYS;
}

/* Indexed by syscall.S after its bounds check. */
const syscall_fn_t syscall_table[USER_NR_SYS] = {
	[0]              = sys_enosys,
	[USER_SYS_WRITE] = sys_write,
	[USER_SYS_EXIT]  = sys_exit,
	[USER_SYS_TIME]  = sys_time,
	[USER_SYS_YIELD] = sys_yield,
	[USER_SYS_READ]  = sys_read,
};

void syscall_init(const struct pvpmu_boot_info *bi)
{
	uint64_t khz = bi->tsc_khz ? bi->tsc_khz : 1000000;

	tsc_to_ns_mult = (1000000ULL << 32) / khz;
	boot_tsc       = rdtsc();
	trap_set_gate(USER_SYSCALL_VECTOR, (uintptr_t)syscall_entry, 3);
	kernel_set_notify_handler(KERNEL_NOTIFY_VECTOR, NULL);
}

void syscall_init_cpu(void)
{
	wrmsr(MSR_STAR, STAR_VALUE);
	wrmsr(MSR_LSTAR, (uintptr_t)syscall_unsupported);
	wrmsr(MSR_SFMASK, SYSCALL_RFLAGS_MASK);
}

noreturn void kernel_user_run(unsigned int vcpu)
{
	user_main_fn_t fn = user_program(vcpu);

	if (!fn || vcpu >= KERNEL_MAX_VCPUS)
		guest_halt();
	user_enter(vcpu, fn, (uintptr_t)user_stacks[vcpu] + USER_STACK_SIZE,
		   (uintptr_t)this_cpu() + KERNEL_STACK_SIZE);
}

/*
 * The notification vector's C side: the handler, then the spec's blocking
 * rule (3.1.9, 3.4.3): a thread the VMM marked blocked
 * (pvpmu_boot_info.block_vcpus, PFM_FL_NOTIFY_BLOCK) makes no user-level
 * progress until PFM_RESTART. Interrupted in ring 3 (frame[1] is CS), it
 * is held here: PVPMU_HC_BLOCK waits in the VMM, this vCPU halted there,
 * until the controlling thread's RESTART (or UNLOAD, or close); the VMM
 * clears the bit. Interrupted in ring 0, the kernel finishes first and
 * the next notification (or this bit at the next one) holds the thread.
 */
void kernel_notify_dispatch(const uint64_t *frame)
{
	const struct pvpmu_boot_info *bi = kernel_boot_info;
	unsigned int id                  = this_cpu()->id;

	kernel_notify_fn();
	if ((frame[1] & 3) != 3 || !bi || id >= 64)
		return;
	if (__atomic_load_n(&bi->block_vcpus, __ATOMIC_ACQUIRE) &
	    (1ULL << id)) {
		kernel_blocked_counts[id]++;
		pvpmu_hc_block(&kernel_pvpmu_drv, 0, PVPMU_WAIT_FOREVER);
	}
}

/* The default notification handler: count, for ring 3 to poll. */
static void notify_count(void)
{
	user_notify_counts[this_cpu()->id]++;
}

int kernel_set_notify_handler(unsigned int vector, kernel_notify_fn_t fn)
{
	if (vector < 32 || vector > 255)
		return -1;
	if (notify_vector && notify_vector != vector)
		trap_set_gate(notify_vector, 0, 0);
	__atomic_store_n(&kernel_notify_fn, fn ? fn : notify_count,
			 __ATOMIC_RELEASE);
	trap_set_gate(vector, (uintptr_t)notify_entry, 0);
	notify_vector = vector;
	return 0;
}
