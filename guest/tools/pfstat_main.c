// SPDX-License-Identifier: MIT
/*
 * pfstat_main.c: the pfstat guest image (vCPU 0; others halt). Exit
 * status 0 when its exactness checks held, 1 otherwise.
 *
 * Events are chosen by name at run time through the VM name, the one
 * string a guest receives (boot info): `vpmu run pfstat.elf --name
 * pfstat.hv_exits.hv_pio.task-clock` is `pfstat -e
 * hv_exits,hv_pio,task-clock` ('.'-separated catalogue names; VM names
 * cannot carry ':' modifiers). Any other name selects the default list.
 */
#include "tool_bare.h"

int user_main(unsigned int vcpu)
{
	static const char prefix[] = "pfstat.";
	char name[sizeof(user_boot_info()->name) + 1];
	static char tool[] = "pfstat", opt[] = "-e";
	char *argv[] = {tool, opt, name, 0};
	unsigned int i;

	if (vcpu)
		return 0;
	tool_bare_vm_name(name, sizeof(name));
	for (i = 0; prefix[i] && name[i] == prefix[i]; i++)
		;
	if (prefix[i] || !name[i])
		return tool_bare_run(vcpu, pfstat_main, 1, argv);
	/* "pfstat.a.b" -> "a,b": the prefix goes, dots become commas. */
	argv[2] = name + i;
	for (; name[i]; i++) {
		if (name[i] == '.')
			name[i] = ',';
	}
	return tool_bare_run(vcpu, pfstat_main, 3, argv);
}
