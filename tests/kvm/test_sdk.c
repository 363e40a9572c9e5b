// SPDX-License-Identifier: MIT
/*
 * test_sdk.c: libpvpmu and the guest tools against the real VMM. Each test
 * boots a ring-3 guest image (tests/kvm/guests/sdk_*.c or a tool of
 * guest/tools) that exercises the SDK through the hypercall path, prints its
 * findings and exits with a status; the test asserts both.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"

static struct vpmu_result res;

TestSuite(sdk_kvm, .init = kvm_require, .timeout = 240);

/*
 * Every call and its error paths: states (EBUSY), bad handles (EBADF),
 * bad guest addresses (EFAULT), counts over the limit, format argument
 * sizes (E2BIG), the context limit (ENOMEM), RETFL flags, per-thread
 * scheduling and PFM_MSG_END.
 */
Test(sdk_kvm, every_call_and_error_path)
{
	RUN_LONG("run", GUEST("sdk_calls"));
	STATUS(0);
	HAS(res.out, "(ring 3)");
	HAS(res.out, "sdk_calls: ok (");
}

/*
 * The fast read agrees with pfm_read_pmds while counting and stopped;
 * time PMDs advance without exits wherever the host trusts its TSC (the
 * nested rig's L1 does not: there they are values as of the last exit).
 */
Test(sdk_kvm, fast_read_agrees_with_read_pmds)
{
	RUN_LONG("run", GUEST("sdk_fast"), "--stats");
	STATUS(0);
	HAS(res.out, "sdk_fast: ok (");
	HAS(res.err, "  TSC: ");
	if (strstr(res.err, "  TSC: stable"))
		cr_assert(eq(ptr, strstr(res.out, "no TSC scale"), NULL),
			  "the host's TSC is stable, yet no TSC scale:\n%s",
			  res.out);
}

/* Buffer full -> notification (vector, then polling) -> restart, 3x each. */
Test(sdk_kvm, sampling_buffer_full_notify_restart_cycle)
{
	RUN_LONG("run", GUEST("sdk_smpl"));
	STATUS(0);
	HAS(res.out, "sdk_smpl: vector cycle 2:");
	HAS(res.out, "sdk_smpl: polling cycle 2:");
	cr_assert(eq(u32, count_str(res.out, "restarted"), 6));
	HAS(res.out, "sdk_smpl: ok (");
}

/*
 * The perfmon2 monitor model over two vCPUs: vCPU 0 waits in pfm_read_msg
 * (halted in the VMM) for the overflow messages of vCPU 1's context, parses
 * its buffer and restarts it.
 */
Test(sdk_kvm, monitor_vcpu_waits_for_another_vcpus_buffer)
{
	RUN_LONG("run", GUEST("sdk_smpl"), "--vcpus", "2");
	STATUS(0);
	HAS(res.out, "sdk_smpl: remote cycle 2: 99 samples of vcpu 1");
	cr_assert(eq(u32, count_str(res.out, "restarted"), 9));
	HAS(res.out, "sdk_smpl: ok (");
}

/*
 * The n-way format: regions fill, are notified, drained oldest first and
 * released by PFM_RESTART while sampling goes on; nothing lost or masked.
 */
Test(sdk_kvm, nway_regions_drain_without_masking)
{
	RUN_LONG("run", GUEST("sdk_nway"));
	STATUS(0);
	HAS(res.out, "drained from 12 regions");
	HAS(res.out, "never masked");
	HAS(res.out, "sdk_nway: ok (");
}

static long handle_in(const char *out)
{
	const char *p = strstr(out, "sdk_xvm: handle ");

	cr_assert(not(eq(ptr, (void *)p, NULL)), "no handle in:\n%s", out);
	return strtol(p + strlen("sdk_xvm: handle "), NULL, 10);
}

/*
 * A handle is valid only in its VM: the handle VM A got is EBADF in VM B,
 * probed once a third VM announced it holds a live context with that very
 * number; B's own first context gets the same number and works there.
 * The VMs live in a runtime directory of their own, so no VM of another
 * test can hold their names.
 */
Test(sdk_kvm, handle_of_another_vm_is_ebadf)
{
	static char tail[4096], etail[4096];
	const char *hold[] = {"run", GUEST("sdk_xvm"), "--name", "hold", NULL};
	char dir[64], console[128], err[128], name[32];
	int status = -1, ret;
	long h;
	pid_t pid;

	cr_assert(eq(int, rundir_make(dir, sizeof(dir)), 0));
	RUN_LONG("run", GUEST("sdk_xvm"), "--name", "xvm-owner");
	STATUS(0);
	h = handle_in(res.out);
	snprintf(console, sizeof(console), "%s/hold.console", dir);
	snprintf(err, sizeof(err), "%s/hold.stderr", dir);
	pid = vpmu_bg(hold, console, err);
	cr_assert(lt(int, 0, pid));
	ret = vpmu_bg_wait_text(pid, console, "sdk_xvm: holding handle", 120000,
				&status);
	cr_assert(eq(int, ret, 0),
		  "the holding VM never held its context (%s, status %d)\n"
		  "--- console:\n%s\n--- stderr:\n%s",
		  ret == -ESRCH ? "it ended" : "timed out", status,
		  file_tail(console, 20, tail, sizeof(tail)),
		  file_tail(err, 20, etail, sizeof(etail)));
	snprintf(name, sizeof(name), "probe-%ld", h);
	RUN_LONG("run", GUEST("sdk_xvm"), "--name", name);
	STATUS(0);
	snprintf(name, sizeof(name), "foreign handle %ld is EBADF", h);
	HAS(res.out, name);
	cr_assert(eq(i64, handle_in(res.out), h),
		  "the probe VM's own first handle");
	status = vpmu_bg_wait(pid, 120000);
	cr_assert(eq(int, status, 0),
		  "the holding VM ended with %d\n--- console:\n%s\n"
		  "--- stderr:\n%s",
		  status, file_tail(console, 20, tail, sizeof(tail)),
		  file_tail(err, 20, etail, sizeof(etail)));
	HAS(slurp_file(console, tail, sizeof(tail)) ? "" : tail,
	    "sdk_xvm: ok (");
	rundir_remove(dir);
}

/* pfinfo: config, registers, catalogue availability (hv yes, hw no). */
Test(sdk_kvm, pfinfo)
{
	RUN_LONG("run", GUEST("pfinfo"));
	STATUS(0);
	HAS(res.out, "pfinfo: perfmon2 interface 1.0");
	HAS(res.out, "pfinfo: PMC0  msr");
	HAS(res.out, "pfinfo: PMD16 virtual");
	/* 3.5.2: the list call names each format with its UUID. */
	HAS(res.out, "pfinfo: format default          "
		     "4d72bec0-0664-4143-82b4-d3fd27243c97 built-in");
	HAS(res.out, "pfinfo: format n-way            ");
	HAS(res.out, "pfinfo: hv_exits          0x02e0  hv       yes");
	HAS(res.out, "catalogue events available on this host");
}

/* pfstat: exact counts in one set, scaled counts over several. */
Test(sdk_kvm, pfstat)
{
	RUN_LONG("run", GUEST("pfstat"));
	STATUS(0);
	HAS(res.out, "pfstat: check ok: hv_hypercalls 3001 == 3000");
	HAS(res.out, "pfstat: multiplexed pass, 18 events over ");
	HAS(res.out, "pfstat: check ok: scaled hv_hypercalls");
	/* cycles count without a host PMU (task-clock); instructions don't. */
	HAS(res.out, "<not supported>  instructions");
}

/* pfstat with events chosen at run time (the VM name carries them). */
Test(sdk_kvm, pfstat_events_by_name)
{
	RUN_LONG("run", GUEST("pfstat"), "--name",
		 "pfstat.hv_hypercalls.hv_pio.instructions.nosuch");
	STATUS(0);
	HAS(res.out, "pfstat: second pass, 4 events in one set:");
	HAS(res.out, "<not supported>  instructions");
	HAS(res.out, "<unknown event>  nosuch");
	HAS(res.out, "pfstat: check ok: scaled hv_hypercalls 3,001 vs 3,000");
}

/* pfrecord draining by polling pfm_read_msg instead of the vector. */
Test(sdk_kvm, pfrecord_polling)
{
	RUN_LONG("run", GUEST("pfrecord"), "--name", "pfrecord-poll");
	STATUS(0);
	HAS(res.out, "notifications (polling)");
	HAS(res.out, "pfrecord: check ok");
}

/* pfrecord: buffer refills on notifications, a 6:3:1 profile. */
Test(sdk_kvm, pfrecord)
{
	RUN_LONG("run", GUEST("pfrecord"));
	STATUS(0);
	HAS(res.out, "notifications (vector)");
	HAS(res.out, "%  work_hot");
	HAS(res.out, "pfrecord: check ok");
}

/* The vPMU demo runs all the tools; the demo config's 2 vCPUs. */
Test(sdk_kvm, demo)
{
	RUN_LONG("run", GUEST("demo_pmu"), "--vcpus", "2");
	STATUS(0);
	HAS(res.out, "pfinfo: cpuid (ring 0): vpmu ABI 1");
	HAS(res.out, "pffast: stopped: fast read equals pfm_read_pmds");
	HAS(res.out, "demo: all tools ok");
}

/*
 * The perfmon2 behaviours a conformance check found missing, from a guest
 * through libpvpmu (image sdk_conform, 2 vCPUs):
 * 3.5.2 the format list, 3.3.7 OVFL_NO_MSG still raises the vector, 3.1.7
 * a vCPU-wide context is loaded only from the vCPU it names, 3.1.8 and
 * unloaded only from its vCPU, 3.1.9 NOTIFY_BLOCK
 * freezes the monitored thread from the notification to PFM_RESTART.
 */
Test(sdk_kvm, perfmon2_conformance_items)
{
	RUN_LONG("run", GUEST("sdk_conform"), "--vcpus", "2");
	STATUS(0);
	HAS(res.out, "sdk_conform: format default (built-in)");
	HAS(res.out, "OVFL_NO_MSG notified without a message");
	HAS(res.out, "vCPU-wide load refused for another vCPU");
	HAS(res.out, "vCPU-wide unload refused off its vCPU");
	HAS(res.out, "blocked cycle 1: frozen at");
	HAS(res.out, "sdk_conform: ok (");
}

/*
 * Spec 3.5 / 3.5.8: run-time formats from --format-dir. The directory
 * holds the example format and malformed objects (wrong version, the
 * default format's UUID, no handler, no descriptor, not an ELF): each bad
 * one is refused with a message naming it, the VM runs, and the guest
 * lists and uses "last-n".
 */
Test(sdk_kvm, runtime_formats_loaded_bad_ones_refused)
{
	static const char *const bad[] = {"version.so", "dup_uuid.so",
					  "no_handler.so", "no_symbol.so"};
	char dir[]                     = "/tmp/vpmu-kvmfmt-XXXXXX", p[512];
	unsigned int i;
	FILE *f;

	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(p, sizeof(p), "%s/lastn.so", dir);
	cr_assert(eq(int, symlink(VPMU_BUILD_DIR "/formats/lastn.so", p), 0));
	for (i = 0; i < 4; i++) {
		char t[512];

		snprintf(p, sizeof(p), "%s/%s", dir, bad[i]);
		snprintf(t, sizeof(t), "%s/tests/formats-bad/%s",
			 VPMU_BUILD_DIR, bad[i]);
		cr_assert(eq(int, symlink(t, p), 0));
	}
	snprintf(p, sizeof(p), "%s/garbage.so", dir);
	f = fopen(p, "w");
	cr_assert(not(eq(ptr, f, NULL)));
	fputs("not an object\n", f);
	fclose(f);
	RUN_LONG("run", GUEST("sdk_conform"), "--name", "fmts", "--format-dir",
		 dir);
	STATUS(0);
	for (i = 0; i < 4; i++)
		HAS(res.err, bad[i]);
	HAS(res.err, "garbage.so: cannot load");
	HAS(res.err, "format ABI version 99");
	HAS(res.err, "already registered by 'default'");
	HAS(res.err, "has no handler");
	HAS(res.out, "sdk_conform: format last-n (run-time)");
	HAS(res.out, "sdk_conform: last-n: ");
	HAS(res.out, "sdk_conform: ok (");
}
