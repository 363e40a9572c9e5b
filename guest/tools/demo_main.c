// SPDX-License-Identifier: MIT
/*
 * demo_main.c: the vPMU demo (configs/demo.xml): pfinfo, then pfstat, then
 * pfrecord, then the exit-free read (pffast), all in ring 3 on vCPU 0 through
 * libvpmu's paravirtual perfmon2 ABI, with real results. Other vCPUs report and
 * halt. Exit status 0 when every tool's checks held.
 */
#include "tool.h"

int user_main(unsigned int vcpu)
{
	int bad = 0;

	if (vcpu) {
		uprintf("demo: vcpu %u idle (the tools monitor vcpu 0)\n",
			vcpu);
		return 0;
	}
	uprintf("demo: === pfinfo: the virtual PMU ===\n");
	bad |= pfinfo_run(vcpu);
	uprintf("demo: === pfstat: counting, exact and multiplexed ===\n");
	bad |= pfstat_run(vcpu, 0, 0);
	uprintf("demo: === pfrecord: sampling and a flat profile ===\n");
	bad |= pfrecord_run(vcpu, 1);
	uprintf("demo: === pffast: reading counters without an exit ===\n");
	bad |= pffast_run(vcpu);
	uprintf("demo: %s\n", bad ? "FAILED" : "all tools ok");
	return bad;
}
