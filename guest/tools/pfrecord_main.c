// SPDX-License-Identifier: MIT
/*
 * pfrecord_main.c: the pfrecord guest image (vCPU 0; others halt). The VM
 * name is its one input: a name ending in "-poll" (`vpmu run pfrecord.elf
 * --name pfrecord-poll`) is pfrecord -p, draining by polling
 * pfm_read_msg() instead of on the notification vector. Exit status 0
 * when the profile is sane.
 */
#include "tool_bare.h"

static int ends_with(const char *s, const char *tail)
{
	size_t n = 0, k = 0;

	while (s[n])
		n++;
	while (tail[k])
		k++;
	return n >= k && tool_streq(s + n - k, tail);
}

int user_main(unsigned int vcpu)
{
	char name[sizeof(user_boot_info()->name) + 1];
	static char tool[] = "pfrecord", poll[] = "-p";
	char *argv[] = {tool, poll, 0};

	if (vcpu)
		return 0;
	tool_bare_vm_name(name, sizeof(name));
	if (!ends_with(name, "-poll"))
		argv[1] = 0;
	return tool_bare_run(vcpu, pfrecord_main, argv[1] ? 2 : 1, argv);
}
