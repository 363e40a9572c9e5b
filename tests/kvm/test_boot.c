// SPDX-License-Identifier: MIT
/*
 * test_boot.c: boot real guest images with the `vpmu run` command and check
 * console output, exit status and the VMM's survival of guest errors.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_harness.h"

static struct vpmu_result res;

TestSuite(vmm_boot, .init = kvm_require, .timeout = 120);

Test(vmm_boot, hello_prints_and_halts_with_status_0)
{
	RUN("run", GUEST("hello"));
	HAS(res.out, "hello from vcpu 0");
	cr_assert(eq(int, res.status, 0), "stderr: %s", res.err);
}

Test(vmm_boot, four_vcpus_each_report)
{
	char line[64];
	unsigned int i;

	RUN("run", GUEST("smp"), "--vcpus", "4");
	cr_assert(eq(int, res.status, 0), "stderr: %s", res.err);
	for (i = 0; i < 4; i++) {
		snprintf(line, sizeof(line),
			 "vcpu %u of 4 reporting, apic id %u", i, i);
		HAS(res.out, line);
	}
	HAS(res.out, "all 4 vcpus reported");
}

Test(vmm_boot, exit_port_value_is_the_exit_status)
{
	RUN("run", GUEST("exit_status"));
	cr_assert(eq(int, res.status, 42), "stderr: %s", res.err);
}

Test(vmm_boot, triple_fault_dumps_registers_and_fails)
{
	RUN("run", GUEST("triple_fault"));
	cr_assert(eq(int, res.status, 250), "stderr: %s", res.err);
	HAS(res.err, "triple fault");
	HAS(res.err, "rip=0x");
	HAS(res.err, "cr0=0x");
}

Test(vmm_boot, trapped_msr_without_handler_raises_gp_and_vmm_survives)
{
	/* With a PMU model these MSRs exist; "none" keeps #GP. */
	RUN("run", GUEST("msr_gp"), "--stats", "--pmu", "none");
	cr_assert(eq(int, res.status, 0), "out: %s\nstderr: %s", res.out,
		  res.err);
	HAS(res.out, "#GP");
	/* The VMM served each access as a userspace MSR exit. */
	HAS(res.err, "rdmsr");
	HAS(res.err, "wrmsr");
}

Test(vmm_boot, unknown_hypercall_gets_enosys)
{
	RUN("run", GUEST("hc_unknown"));
	cr_assert(eq(int, res.status, 0), "out: %s\nstderr: %s", res.out,
		  res.err);
}

Test(vmm_boot, hypervisor_cpuid_leaves)
{
	RUN("run", GUEST("cpuid"), "--vcpus", "2");
	cr_assert(eq(int, res.status, 0), "out: %s\nstderr: %s", res.out,
		  res.err);
	HAS(res.out, "vpmuvpmuvpmu");
}

Test(vmm_boot, console_goes_to_file)
{
	char path[] = "/tmp/vpmu-console-XXXXXX";
	char buf[4096];
	size_t n;
	FILE *f;
	int fd = mkstemp(path);

	cr_assert(ge(int, fd, 0));
	close(fd);
	RUN("run", GUEST("hello"), "--console", path);
	cr_assert(eq(int, res.status, 0), "stderr: %s", res.err);
	cr_assert(eq(ptr, strstr(res.out, "hello from vcpu 0"), NULL));
	f = fopen(path, "r");
	cr_assert(not(eq(ptr, f, NULL)));
	n      = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	HAS(buf, "hello from vcpu 0");
}

Test(vmm_boot, stats_report_exits_by_reason)
{
	RUN("run", GUEST("hello"), "--stats", "--vcpus", "2");
	cr_assert(eq(int, res.status, 0), "stderr: %s", res.err);
	HAS(res.err, "vcpu 0:");
	HAS(res.err, "vcpu 1:");
	HAS(res.err, "ms in KVM_RUN");
	HAS(res.err, "io ");
	HAS(res.err, "hlt");
}

Test(vmm_boot, xml_config_boots_four_vcpus)
{
	RUN("run", CONFIG("smp4"));
	cr_assert(eq(int, res.status, 0), "stderr: %s", res.err);
	HAS(res.out, "all 4 vcpus reported");
}

Test(vmm_boot, missing_image_is_one_clear_error)
{
	RUN("run", "/nonexistent/guest.elf");
	cr_assert(eq(int, res.status, 1));
	HAS(res.err, "/nonexistent/guest.elf");
	cr_assert(eq(int, count_str(res.err, "\n"), 1), "%s", res.err);
}

Test(vmm_boot, non_elf_image_is_rejected)
{
	RUN("run", VPMU_SOURCE_DIR "/README.md");
	cr_assert(eq(int, res.status, 1));
	HAS(res.err, "bad magic");
}

Test(vmm_boot, unknown_pio_and_mmio_read_all_ones_reported_once)
{
	RUN("run", GUEST("unknown_io"));
	cr_assert(eq(int, res.status, 0), "out: %s\nstderr: %s", res.out,
		  res.err);
	cr_assert(eq(int, count_str(res.err, "unknown port 0x510"), 1), "%s",
		  res.err);
	cr_assert(eq(int, count_str(res.err, "unknown MMIO"), 1), "%s",
		  res.err);
}
