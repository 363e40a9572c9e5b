// SPDX-License-Identifier: MIT
/*
 * pfrecord_main.c: the pfrecord guest image (vCPU 0; others halt), drained
 * on the notification vector. Exit status 0 when the profile is sane.
 */
#include "tool.h"

int user_main(unsigned int vcpu)
{
	return vcpu ? 0 : pfrecord_run(vcpu, 1);
}
