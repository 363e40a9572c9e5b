// SPDX-License-Identifier: MIT
/*
 * pfrecord_main.c: the pfrecord guest image (vCPU 0; others halt). It
 * drains on the notification vector, or by polling pfm_read_msg() when the
 * VM name ends in "-poll" (`vpmu run pfrecord.elf --name pfrecord-poll`).
 * Exit status 0 when the profile is sane.
 */
#include "tool.h"

static int polling(const char *name)
{
	const char *s = name, *e;

	while (*s)
		s++;
	e = "-poll";
	return s - name >= 5 && s[-5] == e[0] && s[-4] == e[1] &&
	       s[-3] == e[2] && s[-2] == e[3] && s[-1] == e[4];
}

int user_main(unsigned int vcpu)
{
	char name[sizeof(user_boot_info()->name) + 1] = {0};
	unsigned int i;

	if (vcpu)
		return 0;
	for (i = 0; i + 1 < sizeof(name); i++)
		name[i] = (char)user_boot_info()->name[i];
	return pfrecord_run(vcpu, !polling(name));
}
