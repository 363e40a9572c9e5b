// SPDX-License-Identifier: MIT
/*
 * demo_main.c: the vPMU demo (configs/demo.xml): pfinfo, then pfstat, then
 * pfrecord, then the exit-free read (pffast), all in ring 3 on vCPU 0 through
 * libvpmu's paravirtual perfmon2 ABI, with real results. Other vCPUs report and
 * halt. Exit status 0 when every tool's checks held.
 */
#include "tool_bare.h"

int user_main(unsigned int vcpu)
{
	static char pfinfo[] = "pfinfo", pfstat[] = "pfstat",
		    pfrecord[] = "pfrecord", pffast[] = "pffast";
	static const struct {
		const char *title;
		int (*main)(int, char **);
		char *name;
	} tools[] = {
		{"pfinfo: the virtual PMU", pfinfo_main, pfinfo},
		{"pfstat: counting, exact and multiplexed", pfstat_main,
		 pfstat},
		{"pfrecord: sampling and a flat profile", pfrecord_main,
		 pfrecord},
		{"pffast: reading counters without an exit", pffast_main,
		 pffast},
	};
	unsigned int i;
	int bad = 0;

	if (vcpu) {
		uprintf("demo: vcpu %u idle (the tools monitor vcpu 0)\n",
			vcpu);
		return 0;
	}
	for (i = 0; i < TOOL_ARRAY_SIZE(tools); i++) {
		char *argv[] = {tools[i].name, 0};

		uprintf("demo: === %s ===\n", tools[i].title);
		bad |= tool_bare_run(vcpu, tools[i].main, 1, argv);
	}
	uprintf("demo: %s\n", bad ? "FAILED" : "all tools ok");
	return bad;
}
