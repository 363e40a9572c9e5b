// SPDX-License-Identifier: MIT
/*
 * test_user.c: ring-3 programs of the minimal guest kernel, booted with the
 * real `vpmu run`: programs per vCPU, syscalls, exit status, ring-3 fault
 * dumps, the TSS I/O bitmap and the notification vector.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>

#include "kvm_harness.h"

static struct vpmu_result res;

TestSuite(guest_user, .init = kvm_require, .timeout = 120);

Test(guest_user, every_vcpu_runs_the_program_in_ring_3)
{
	char line[64];
	unsigned int i;

	RUN("run", GUEST("user_hello"), "--vcpus", "4");
	STATUS(0);
	for (i = 0; i < 4; i++) {
		snprintf(line, sizeof(line), "user hello from vcpu %u (cpl 3)",
			 i);
		HAS(res.out, line);
	}
	cr_assert(eq(int, count_str(res.out, "user hello"), 4), "%s", res.out);
}

Test(guest_user, each_vcpu_runs_its_own_program)
{
	RUN("run", GUEST("user_own"), "--vcpus", "4");
	STATUS(0);
	HAS(res.out, "user_own: vcpu 0 runs program A (sum 55)");
	HAS(res.out, "user_own: vcpu 1 runs program B (product 120)");
	HAS(res.out, "user_own: vcpu 2 runs program C");
	HAS(res.out, "user_own: vcpu 3 runs program B (product 120)");
}

Test(guest_user, syscalls_work_and_exit_sets_the_vm_status)
{
	RUN("run", GUEST("user_syscalls"), "--vcpus", "2");
	STATUS(7);
	HAS(res.out, "user_syscalls: write from ring 3\n");
	HAS(res.out, "user_syscalls: all ok, exit(7)");
	cr_assert(eq(int, count_str(res.out, "FAIL"), 0), "%s", res.out);
	cr_assert(eq(int, count_str(res.out, ": ok ("), 12), "%s", res.out);
}

Test(guest_user, ring_3_null_dereference_is_dumped_with_registers)
{
	RUN("run", GUEST("user_fault"), "--vcpus", "2");
	STATUS(128 + 14);
	HAS(res.out, "user_fault: vcpu 1 reads NULL from ring 3");
	HAS(res.out,
	    "*** vcpu 1: unhandled exception 14 (#PF) error 0x4 cpl 3");
	HAS(res.out, " cs 0023 ");
	HAS(res.out, " ss 001b ");
	HAS(res.out, "cr2 0000000000000000");
	HAS(res.out, "rbx 000000005eed5eed"); /* the program's marker */
	HAS(res.out, "r15 ");
	cr_assert(eq(ptr, strstr(res.out, "survived"), NULL), "%s", res.out);
}

Test(guest_user, ring_3_gets_the_doorbells_and_nothing_else)
{
	RUN("run", GUEST("user_ports"));
	STATUS(0);
	HAS(res.out, "user_ports: NOP doorbell from ring 3 returned 0");
	HAS(res.out, "user_ports: outl NOP doorbell -> allowed (vector 0)");
	HAS(res.out, "user_ports: outb COM1 -> fault (vector 13)");
	HAS(res.out, "user_ports: outl exit port -> fault (vector 13)");
	HAS(res.out, "user_ports: outl null port -> fault (vector 13)");
	HAS(res.out, "user_ports: cli -> fault (vector 13)");
	HAS(res.out, "user_ports: hlt -> fault (vector 13)");
	HAS(res.out, "user_ports: all as expected");
	/* The 'X' sent to COM1 from ring 3 never reached the console. */
	cr_assert(eq(ptr, strstr(res.out, "X"), NULL), "%s", res.out);
}

Test(guest_user, notification_vector_reaches_ring_0_and_ring_3)
{
	RUN("run", GUEST("user_irq"), "--vcpus", "2");
	if (strstr(res.out, "user_irq: SET_VECTOR not supported"))
		cr_skip_test("the VMM answers -ENOSYS to PVPMU_HC_SET_VECTOR "
			     "or PVPMU_HC_PFM: notification test skipped");
	STATUS(0);
	HAS(res.out,
	    "user_irq: kernel_idle woke for the notification on vcpu 0");
	HAS(res.out, "user_irq: ring 3 notified on vcpu 0");
	HAS(res.out, "(cpl 3, count 1, custom handler 1)");
	HAS(res.out, "user_irq: ok");
}

Test(guest_user, syscall_benchmark_runs)
{
	RUN("run", GUEST("bench_syscall"));
	STATUS(0);
	HAS(res.out, "bench_syscall: best iters=");
	HAS(res.out, "yield_ns=");
	HAS(res.out, "ratio_hc3_hc0=");
}
