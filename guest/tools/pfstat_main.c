// SPDX-License-Identifier: MIT
/*
 * pfstat_main.c: the pfstat guest image (vCPU 0; others halt). Exit
 * status 0 when its exactness checks held, 1 otherwise.
 *
 * Events are chosen by name at run time through the VM name, the one
 * string a guest receives (boot info): `vpmu run pfstat.elf --name
 * pfstat.hv_exits.hv_pio.task-clock` counts those events ('.'-separated
 * catalogue names; VM names cannot carry ':' modifiers). Any other name
 * selects the default list.
 */
#include "tool.h"

#define MAX_NAMES 24
#define NAME_LEN  64

static char names[MAX_NAMES][NAME_LEN];
static const char *events[MAX_NAMES];

/* Split "pfstat.a.b.c" into events a, b, c; returns their number. */
static unsigned int parse(const char *s)
{
	static const char prefix[] = "pfstat.";
	unsigned int n = 0, i, k = 0;

	for (i = 0; prefix[i]; i++) {
		if (s[i] != prefix[i])
			return 0;
	}
	for (s += i; *s && n < MAX_NAMES; s++) {
		if (*s == '.') {
			if (k) {
				names[n][k] = '\0';
				events[n]   = names[n];
				n++;
			}
			k = 0;
		} else if (k + 1 < NAME_LEN) {
			names[n][k++] = *s;
		}
	}
	if (k && n < MAX_NAMES) {
		names[n][k] = '\0';
		events[n]   = names[n];
		n++;
	}
	return n;
}

int user_main(unsigned int vcpu)
{
	char name[sizeof(user_boot_info()->name) + 1] = {0};
	unsigned int i, n;

	if (vcpu)
		return 0;
	for (i = 0; i + 1 < sizeof(name); i++)
		name[i] = (char)user_boot_info()->name[i];
	n = parse(name);
	return pfstat_run(vcpu, n ? events : 0, n);
}
