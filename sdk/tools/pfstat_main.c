// SPDX-License-Identifier: MIT
/*
 * pfstat_main.c: the pfstat guest image (vCPU 0; others halt). Exit
 * status 0 when its exactness checks held, 1 otherwise.
 */
#include "tool.h"

int user_main(unsigned int vcpu)
{
	return vcpu ? 0 : pfstat_run(vcpu);
}
