// SPDX-License-Identifier: MIT
/*
 * test_lean_vm.c (issue 15): a running `vpmu run` process is vpmu-vmm (same
 * pid, after the exec) and maps no library only the operator commands use:
 * /proc/PID/maps names no libvirt, libxml2, libdw, GnuTLS, microhttpd or
 * protobuf-c. Its resident set is printed (scripts/bench.sh measures it
 * against a bare KVM loop), not asserted.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "kvm_harness.h"
#include "vm_bg.h"

static char maps[1 << 16];

Test(lean_vm, running_vm_maps_no_operator_library, .timeout = 120)
{
	static const char *const heavy[] = {
		"libvirt",       "libxml2",       "libdw",   "libgnutls",
		"libmicrohttpd", "libprotobuf-c", "libicuuc"};
	char dir[64], path[64], line[128];
	struct vm_bg vm;
	unsigned int i;
	FILE *f;

	kvm_require();
	cr_assert(eq(int, rundir_make(dir, sizeof(dir)), 0));
	cr_assert(
		eq(int, vm_bg_start(&vm, dir, GUEST("op_hot"), "lean", 1), 0));
	cr_assert(eq(int, vm_bg_wait(&vm, dir, "op_hot: ready", 1, 60000), 0));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)vm.pid);
	cr_assert(eq(int, slurp_file(path, maps, sizeof(maps)), 0));
	cr_expect(not(eq(ptr, strstr(maps, "/vpmu-vmm"), NULL)),
		  "the VM process is not vpmu-vmm:\n%s", maps);
	for (i = 0; i < sizeof(heavy) / sizeof(heavy[0]); i++)
		cr_expect(eq(ptr, strstr(maps, heavy[i]), NULL),
			  "the running VM maps %s", heavy[i]);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)vm.pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			cr_log_info("idle 1-vCPU VM, 64 MiB: %s", line);
	}
	if (f)
		fclose(f);
	vm_bg_kill(&vm, SIGTERM);
	rundir_remove(dir);
}
