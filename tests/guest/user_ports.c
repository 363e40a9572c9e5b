// SPDX-License-Identifier: MIT
/*
 * user_ports.c: the TSS I/O bitmap seen from ring 3. The NOP hypercall
 * doorbell works (RAX = 0); COM1, the exit port and the null port take
 * #GP, and so do `cli` and `hlt` (IOPL 0). Each line says what happened;
 * the VM exits 0 if all is as expected, 1 otherwise.
 */
#include "user.h"

#include "pvpmu_hc.h"

static int failures;

static void expect(const char *what, int vec, int want)
{
	uprintf("user_ports: %s -> %s (vector %d)\n", what,
		vec ? "fault" : "allowed", vec);
	if (vec != want)
		failures++;
}

/* `cli` (or `hlt`) in ring 3; returns 0 or the vector it raised. */
static int try_priv(int halt)
{
	uint64_t vec;

	if (halt)
		__asm__ __volatile__("xor %%esi, %%esi\n"
				     "1:\thlt\n"
				     "2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
				     : "=&S"(vec)
				     : [reg] "i"(TRAP_REG_RSI)
				     : "memory");
	else
		__asm__ __volatile__("xor %%esi, %%esi\n"
				     "1:\tcli\n"
				     "2:\n\t" EXTABLE_ENTRY(1b, 2b, reg)
				     : "=&S"(vec)
				     : [reg] "i"(TRAP_REG_RSI)
				     : "memory");
	return (int)(vec & 0xff);
}

int user_main(unsigned int vcpu)
{
	long ret;

	if (vcpu != 0)
		return 0;
	ret = pvpmu_hypercall(PVPMU_HC_NOP, 0);
	uprintf("user_ports: NOP doorbell from ring 3 returned %ld\n", ret);
	if (ret != 0)
		failures++;
	expect("outl NOP doorbell",
	       user_outl_safe(PVPMU_PORT_HC_BASE + PVPMU_HC_NOP, 0), 0);
	expect("outb COM1", user_outb_safe(PVPMU_PORT_COM1, 'X'), X86_VEC_GP);
	expect("outl exit port", user_outl_safe(PVPMU_PORT_EXIT, 99),
	       X86_VEC_GP);
	expect("outl null port", user_outl_safe(PVPMU_PORT_NULL, 0),
	       X86_VEC_GP);
	expect("outb below the doorbells",
	       user_outb_safe(PVPMU_PORT_HC_BASE - 1, 0), X86_VEC_GP);
	expect("outb above the doorbells",
	       user_outb_safe(PVPMU_PORT_HC_BASE + PVPMU_HC_MAX, 0),
	       X86_VEC_GP);
	expect("cli", try_priv(0), X86_VEC_GP);
	expect("hlt", try_priv(1), X86_VEC_GP);
	uprintf("user_ports: %s\n", failures ? "FAILED" : "all as expected");
	return failures ? 1 : 0;
}
