// SPDX-License-Identifier: MIT
/*
 * test_rootfs.c: the Linux guest a user gets (label "linux"): the test
 * kernel boots the root file system scripts/build-linux.sh makes
 * (build/linux/rootfs.ext4: busybox, Linux perf, pvpmu.ko, the SDK tools)
 * from a virtio disk, and the programs a user would run measure
 * themselves inside it: `perf stat` on the Intel and AMD models, with
 * multiplexing, `perf record` and `perf report` on both, and `pfstat`
 * through pvpmu.ko. A read-write disk keeps what the guest wrote; a
 * read-only one refuses writes.
 *
 * The root's /sbin/init runs the command after "--" on the kernel command
 * line (here `sh -c "..."`) and ends the VM with its exit status.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"

#define LINUX_DIR VPMU_BUILD_DIR "/linux/"
#define VMLINUX   LINUX_DIR "vmlinux"
#define ROOTFS    LINUX_DIR "rootfs.ext4"
#define BASE_LINE "console=ttyS0 panic=-1 reboot=k "
#define BOOT_SECS 900 /* perf starting under an emulated ring 0 is slow */

static struct vpmu_result res;

static void rootfs_require(void)
{
	kvm_require();
	cr_assert(eq(int, access(VMLINUX, R_OK), 0),
		  "%s is missing: scripts/build-linux.sh builds it", VMLINUX);
	cr_assert(eq(int, access(ROOTFS, R_OK), 0),
		  "%s is missing: scripts/build-linux.sh builds it", ROOTFS);
}

TestSuite(linux_rootfs, .init = rootfs_require, .timeout = BOOT_SECS + 60);

/*
 * Boot the root file system read-only on the model (pmu) and run (cmd)
 * with sh -c; the VM must end with its status 0. The console is in res.
 */
static void run_in_the_guest(const char *pmu, const char *cmd)
{
	char line[1024];

	snprintf(line, sizeof(line), BASE_LINE "-- sh -c \"%s\"", cmd);
	RUN_FOR(BOOT_SECS, "run", "--kernel", VMLINUX, "--disk", ROOTFS ",ro",
		"--mem", "256M", "--pmu", pmu, "--append", line);
	cr_log_info("%s", res.out);
	STATUS(0);
}

/*
 * Linux perf in the guest on the model (pmu): `perf stat` counts cycles
 * and names an event the host cannot count (on a host without a hardware
 * PMU: instructions; on AMD models Linux has no way to be told, so it
 * reads 0 after the #GP its kernel log names); with (mux), more events
 * than counters are multiplexed and perf scales them by enabled/running
 * time; pfstat counts through pvpmu.ko; the read-only disk refuses writes.
 */
static void perf_in_the_guest(const char *pmu, bool mux)
{
	run_in_the_guest(
		pmu,
		mux ? "echo ==stat==;"
		      " perf stat -e cycles,instructions -- pvpmu-hot 2>&1;"
		      " echo ==mux==;"
		      " perf stat -e cycles,cycles,cycles,cycles,cycles,"
		      "cycles,cycles,cycles -- pvpmu-hot 2>&1;"
		      " echo ==pfstat==;"
		      " pfstat -e hv_hypercalls -- true 2>&1 || exit 3;"
		      " echo ==ro==; touch /rw-check 2>&1; true"
		    : "echo ==stat==;"
		      " perf stat -e cycles,instructions -- pvpmu-hot 2>&1");
	HAS(res.out, "root=/dev/vda");
	HAS(res.out, "virtio_blk virtio0: [vda]");
	HAS(res.out, "vpmu-init: running: sh -c");
	HAS(res.out, "Performance counter stats for 'pvpmu-hot'");
	HAS(res.out, " cycles");
	HAS(res.out, " instructions");
	cr_expect(eq(ptr, strstr(res.out, "<not counted>      cycles"), NULL),
		  "cycles not counted:\n%s", res.out);
	HAS(res.out, "vpmu-init: exit status 0");
	if (!mux)
		return;
	/* Multiplexed: perf prints the share of time each one ran. */
	cr_expect(not(eq(ptr, strstr(strstr(res.out, "==mux=="), "%)"), NULL)),
		  "no multiplexing shown:\n%s", res.out);
	HAS(res.out, "hv_hypercalls");
	HAS(res.out, "Read-only file system");
}

/*
 * The first function row of `perf report`'s table in (out), or "". Rows
 * look like "    93.10%  [.] hot_work" (after a terminal's clear-line
 * escape on the console, and before its \r).
 */
static void first_report_row(const char *out, char *name, size_t len)
{
	const char *p = strstr(out, "==report==");

	name[0] = '\0';
	while (p && (p = strstr(p, "%  [.] "))) {
		size_t n;

		p += strlen("%  [.] ");
		n = strcspn(p, " \r\n");
		if (n && n < len) {
			memcpy(name, p, n);
			name[n] = '\0';
			return;
		}
	}
}

/*
 * `perf record` of a user program and `perf report` of its own functions
 * (--dsos): hot_work (8 units a round) must lead cold_work (1). The
 * period is 25 M cycles (~10 ms of vCPU time at the TSC rate the models
 * count cycles in without a host PMU): where guest ring 0 is emulated
 * (PVM) each PMI's handler takes ~3 ms, and at -F 1000 the guest would
 * spend its time handling them (the kernel then lowers its own rate;
 * scripts/bench_linux.sh measures that case).
 */
static void perf_record_in_the_guest(const char *pmu)
{
	char top[64];

	run_in_the_guest(pmu, "perf record -c 25000000 --no-buildid"
			      " -o /tmp/p.data -- pvpmu-hot 2>&1 || exit 3;"
			      " echo ==report==; perf report -i /tmp/p.data"
			      " --stdio --dsos pvpmu-hot --sort sym 2>&1");
	HAS(res.out, "[ perf record: Captured and wrote");
	HAS(res.out, "of event 'cycles'");
	first_report_row(res.out, top, sizeof(top));
	cr_expect(eq(str, top, "hot_work"), "perf report's first row:\n%s",
		  strstr(res.out, "==report==") ? strstr(res.out, "==report==")
						: res.out);
	HAS(res.out, "[.] cold_work");
}

Test(linux_rootfs, perf_record_and_report_on_the_intel_model)
{
	perf_record_in_the_guest("intel-v2");
}

Test(linux_rootfs, perf_record_and_report_on_the_amd_model)
{
	perf_record_in_the_guest("amd-v2");
}

Test(linux_rootfs, perf_stat_multiplexing_and_pfstat_on_the_intel_model)
{
	perf_in_the_guest("intel-v2", true);
}

Test(linux_rootfs, perf_stat_on_the_amd_model)
{
	perf_in_the_guest("amd-v2", false);
}

/* A file written on a read-write disk is on the host's image afterwards. */
Test(linux_rootfs, files_written_on_a_read_write_disk_reach_the_host)
{
	char dir[64], img[128], cmd[512], disk[160];
	static char out[4096];
	FILE *p;
	size_t n;

	cr_assert(eq(int, rundir_make(dir, sizeof(dir)), 0));
	snprintf(img, sizeof(img), "%s/root.ext4", dir);
	snprintf(cmd, sizeof(cmd), "cp --sparse=always %s %s", ROOTFS, img);
	cr_assert(eq(int, system(cmd), 0), "%s", cmd);
	snprintf(disk, sizeof(disk), "%s", img);
	RUN_FOR(BOOT_SECS, "run", "--kernel", VMLINUX, "--disk", disk, "--mem",
		"256M", "--append",
		BASE_LINE "-- sh -c \"echo vpmu-was-here > /root/note"
			  " && exit 7\"");
	cr_log_info("%s", res.out);
	/* The init ends the VM with the command's own exit status. */
	STATUS(7);
	snprintf(cmd, sizeof(cmd), "debugfs -R 'cat /root/note' %s 2>/dev/null",
		 img);
	p = popen(cmd, "r");
	cr_assert(not(eq(ptr, p, NULL)));
	n      = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	pclose(p);
	cr_expect(eq(str, out, "vpmu-was-here\n"), "%s", cmd);
	unlink(img);
	rundir_remove(dir);
}

Test(linux_rootfs, disks_are_refused_for_vpmus_own_images)
{
	RUN("run", VPMU_BUILD_DIR "/guests/tm_switch.elf", "--disk", ROOTFS);
	STATUS(1);
	HAS(res.err, "disks are for Linux images");
}
