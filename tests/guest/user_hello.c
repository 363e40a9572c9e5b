// SPDX-License-Identifier: MIT
/*
 * user_hello.c: every vCPU runs the same ring-3 program, which proves it
 * runs in ring 3 (CS.RPL) and exits 0; the VM ends with status 0 once all
 * vCPUs have halted.
 */
#include "user.h"

int user_main(unsigned int vcpu)
{
	uprintf("user hello from vcpu %u (cpl %u)\n", vcpu, user_cpl());
	return 0;
}
