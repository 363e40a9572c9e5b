// SPDX-License-Identifier: MIT
/*
 * user_own.c: each vCPU runs its own ring-3 program, chosen by
 * user_program(): even vCPUs count up, odd ones count down, and the last
 * vCPU of three or more runs a third program. Exit status 0.
 */
#include "user.h"

static int count_up(unsigned int vcpu)
{
	unsigned int i, sum = 0;

	for (i = 1; i <= 10; i++)
		sum += i;
	uprintf("user_own: vcpu %u runs program A (sum %u)\n", vcpu, sum);
	return 0;
}

static int count_down(unsigned int vcpu)
{
	unsigned int i, prod = 1;

	for (i = 5; i > 0; i--)
		prod *= i;
	uprintf("user_own: vcpu %u runs program B (product %u)\n", vcpu, prod);
	return 0;
}

static int third(unsigned int vcpu)
{
	uprintf("user_own: vcpu %u runs program C\n", vcpu);
	return 0;
}

user_main_fn_t user_program(unsigned int vcpu)
{
	if (vcpu == 2)
		return third;
	return vcpu % 2 ? count_down : count_up;
}
