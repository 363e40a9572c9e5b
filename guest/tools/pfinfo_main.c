// SPDX-License-Identifier: MIT
/*
 * pfinfo_main.c: the pfinfo guest image (vCPU 0; others halt).
 */
#include "tool_bare.h"

int user_main(unsigned int vcpu)
{
	static char name[] = "pfinfo";
	char *argv[]       = {name, 0};

	return vcpu ? 0 : tool_bare_run(vcpu, pfinfo_main, 1, argv);
}
