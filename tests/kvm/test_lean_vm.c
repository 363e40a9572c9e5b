// SPDX-License-Identifier: MIT
/*
 * test_lean_vm.c: a running `vpmu run` process is vpmu-vmm (same
 * pid, after the exec) and maps no library only the operator commands use:
 * /proc/PID/maps names no libvirt, libxml2, libdw, GnuTLS, microhttpd or
 * protobuf-c, and on a host without a hardware PMU no libpfm4 either (the
 * perf backend loads it only where raw host-PMU events can count, though
 * the VM's CPUID set-up probes the architectural events). Its resident set
 * is printed (scripts/bench.sh measures it against a bare KVM loop), not
 * asserted.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
	if (access("/sys/bus/event_source/devices/cpu", F_OK) &&
	    access("/sys/bus/event_source/devices/cpu_core", F_OK))
		cr_expect(eq(ptr, strstr(maps, "libpfm"), NULL),
			  "no host PMU, yet the running VM maps libpfm4");
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

/*
 * `vpmu run --stats` breaks the kicks' time down: with event
 * sets switched every 1 ms of run time (1000 kicks a second, as in
 * bench_operator), the line "kick path, mean us: exit E, ..." follows the
 * kick count, with a positive exit time (handler to KVM_RUN return).
 */
Test(lean_vm, stats_break_kicks_down, .timeout = 120)
{
	const char *run[]  = {"run",    GUEST("op_hot"), "--name",
			      "kicked", "--stats",       NULL};
	const char *stat[] = {
		"stat",
		"-m",
		"kicked",
		"--switch-ms",
		"1",
		"-e",
		"hv_run_ns,hv_exits,hv_pio,hv_mmio,hv_irqs,hv_halts,"
		"hv_msr_reads,hv_msr_writes,hv_hypercalls",
		"--",
		"1",
		NULL,
	};
	char dir[64], out[96], err[96], sout[96], serr[96];
	static char text[1 << 16];
	double exit_us  = 0;
	struct vm_bg vm = {0};
	char *p;

	kvm_require();
	cr_assert(eq(int, rundir_make(dir, sizeof(dir)), 0));
	snprintf(out, sizeof(out), "%s/kicked.console", dir);
	snprintf(err, sizeof(err), "%s/kicked.stderr", dir);
	snprintf(sout, sizeof(sout), "%s/stat.out", dir);
	snprintf(serr, sizeof(serr), "%s/stat.err", dir);
	vm.pid = vpmu_bg(run, out, err);
	cr_assert(lt(int, 0, vm.pid));
	snprintf(vm.name, sizeof(vm.name), "kicked");
	snprintf(vm.console, sizeof(vm.console), "%s", out);
	cr_assert(eq(int, vm_bg_wait(&vm, dir, "op_hot: ready", 1, 60000), 0));
	cr_assert(eq(int, vpmu_bg_wait(vpmu_bg(stat, sout, serr), 60000), 0));
	vm_bg_kill(&vm, SIGTERM);
	cr_assert(eq(int, slurp_file(err, text, sizeof(text)), 0));
	p = strstr(text, "kick path, mean us: exit ");
	cr_assert(not(eq(ptr, p, NULL)), "no kick breakdown in:\n%s", text);
	sscanf(p + strlen("kick path, mean us: exit "), "%lf", &exit_us);
	cr_expect(lt(dbl, 0.0, exit_us), "%s", p);
	cr_log_info("%.200s", p);
	rundir_remove(dir);
}
