// SPDX-License-Identifier: MIT
/*
 * test_cli_wakeups.c: `vpmu stat` and `vpmu top` sleep between
 * the intervals they were asked for. Against fake VMs (fake_vms: real
 * control servers, threads as vCPUs, no KVM) each command runs for 2 s and
 * the kernel counts how often it blocked (wait4's ru_nvcsw, voluntary
 * context switches of the whole process). A client that polls (as `stat`
 * did, every 5 ms: 400 in 2 s) fails; one that sleeps until its deadline
 * blocks once per interval plus its request round trips. The same fake VM
 * shows `record` and `top` printing the achieved sample rate (cli_rate).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_vms_run.h"

static struct fake_vms_run F;

static void setup(void)
{
	fake_vms_start(&F, "wakeups", "idle:1");
}

static void teardown(void)
{
	fake_vms_stop(&F);
}

TestSuite(cli_wakeups, .init = setup, .fini = teardown, .timeout = 120);

/*
 * Run (argv) with its output in dir/(name), whose path is left in (out):
 * it must exit 0. Its voluntary context switches.
 */
static long run_ok(char *const argv[], const char *name, char *out, size_t size)
{
	int status;
	long n;

	snprintf(out, size, "%s/%s", F.dir, name);
	n = fake_run(argv, out, &status);
	cr_assert(eq(int, status, 0), "%s", fake_slurp(out));
	return n;
}

/*
 * `vpmu stat -- 2` prints once, at the end: it blocks for the set-up round
 * trips (hello, session_open: a few each), once for the 2 s, and for the
 * final read and close: 5 measured; 15 leaves room for a loaded
 * machine's partial reads. Polling every 5 ms was 360.
 */
Test(cli_wakeups, stat_sleeps_until_its_end)
{
	char out[128];
	char *argv[] = {VPMU_BUILD_DIR "/vmm/vpmu",
			"stat",
			"-a",
			"-e",
			"hv_run_ns",
			"--",
			"2",
			NULL};
	long n;

	n = run_ok(argv, "stat.out", out, sizeof(out));
	cr_expect(le(long, n, 15), "%ld voluntary switches in 2 s:\n%s", n,
		  fake_slurp(out));
}

/*
 * `vpmu stat -I 200 -- 2`: ten reports, each one timer sleep and one
 * session_read round trip (a few blocks while the VMM brings the vCPU up
 * to date): at most 3 per report plus the 15 above (22 measured; 356
 * when it polled).
 */
Test(cli_wakeups, stat_interval_wakes_once_per_interval)
{
	char out[128];
	char *argv[] = {VPMU_BUILD_DIR "/vmm/vpmu",
			"stat",
			"-a",
			"-e",
			"hv_run_ns",
			"-I",
			"200",
			"-x",
			",",
			"--vpmu-fields",
			"--",
			"2",
			NULL};
	long n;

	n = run_ok(argv, "stat-i.out", out, sizeof(out));
	cr_expect(le(long, n, 15 + 10 * 3), "%ld voluntary switches:\n%s", n,
		  fake_slurp(out));
}

/*
 * `vpmu top -n 2` (not on a terminal): two refreshes, 1 s apart, each one
 * timer wake-up and the drain of the samples (a few round trips): at
 * most 5 per refresh plus 15 (4 to 6 measured).
 */
Test(cli_wakeups, top_sleeps_between_refreshes)
{
	char out[128];
	char *argv[] = {VPMU_BUILD_DIR "/vmm/vpmu",
			"top",
			"-a",
			"-e",
			"hv_run_ns",
			"-n",
			"2",
			NULL};
	long n;

	n = run_ok(argv, "top.out", out, sizeof(out));
	cr_expect(le(long, n, 15 + 2 * 5), "%ld voluntary switches:\n%s", n,
		  fake_slurp(out));
}

/*
 * `vpmu record -- 2` fetches the samples every 100 ms: 21 drains, each one
 * timer sleep and one smpl_drain round trip (a few blocks while the reply
 * comes), at most 3 per drain plus the 15 of set-up and end. Its old loop
 * slept 10 ms at a time: 200 wake-ups in 2 s on top of the drains.
 */
Test(cli_wakeups, record_sleeps_between_drains)
{
	char out[128], rec[128];
	char *argv[] = {VPMU_BUILD_DIR "/vmm/vpmu",
			"record",
			"-a",
			"-e",
			"hv_run_ns",
			"-F",
			"1000",
			"-o",
			rec,
			"--",
			"2",
			NULL};
	long n;

	snprintf(rec, sizeof(rec), "%s/vpmu.rec", F.dir);
	n = run_ok(argv, "record.out", out, sizeof(out));
	cr_expect(fake_file_has(out, "samples/s per vCPU achieved"), "%s",
		  fake_slurp(out));
	cr_expect(le(long, n, 15 + 21 * 3), "%ld voluntary switches:\n%s", n,
		  fake_slurp(out));
}

TestSuite(cli_rate, .init = setup, .fini = teardown, .timeout = 120);

/*
 * `vpmu top` prints each VM's achieved rate of the last refresh next to
 * the requested one. The fake vCPU exits once per ms of run time, so at
 * -F 50000 it cannot reach 90 % (at most 1000 samples/s, the other periods
 * missed or throttled): top warns with a reason.
 */
Test(cli_rate, top_prints_rate_and_warns_below_90_percent)
{
	char out[128];
	char *argv[] = {VPMU_BUILD_DIR "/vmm/vpmu",
			"top",
			"-a",
			"-e",
			"hv_run_ns",
			"-F",
			"50000",
			"-n",
			"1",
			NULL};
	run_ok(argv, "top-rate.out", out, sizeof(out));
	cr_expect(fake_file_has(out, "  rate: "), "%s", fake_slurp(out));
	cr_expect(fake_file_has(out, "of 50000 requested"), "%s",
		  fake_slurp(out));
	cr_expect(fake_file_has(out,
				"warning: below 90 % of the requested rate: "),
		  "%s", fake_slurp(out));
}
