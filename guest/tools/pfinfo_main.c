// SPDX-License-Identifier: MIT
/*
 * pfinfo_main.c: the pfinfo guest image (vCPU 0; others halt).
 */
#include "tool.h"

int user_main(unsigned int vcpu)
{
	return vcpu ? 0 : pfinfo_run(vcpu);
}
