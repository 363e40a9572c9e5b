// SPDX-License-Identifier: MIT
/*
 * test_snapshot.c: snapshot and restore of a running VM under KVM.
 * The guest snap_count (tests/kvm/guests/snap_count.c) counts its own
 * hypercalls in a perfmon2 context and has an overflow message pending;
 * the VM is snapshotted with --stop while it counts, restored from the
 * file, and must print the same exact total and message as a run that
 * was never interrupted. Then the file, damaged, is refused by
 * `vpmu run --restore` with a message naming the section. A VM snapshotted
 * while `vpmu record` samples it gets the pause noted in the record file.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvm_harness.h"
#include "vm_bg.h"

static struct vpmu_result res;
static char rundir[256];
static struct vm_bg vm;

static void setup(void)
{
	kvm_require();
	cr_assert(eq(int, rundir_make(rundir, sizeof(rundir)), 0));
}

static void teardown(void)
{
	vm_bg_kill(&vm, SIGKILL);
	rundir_remove(rundir);
}

TestSuite(kvm_snapshot, .init = setup, .fini = teardown, .timeout = 600);

/* The line "snap_count: KEY ..." of (text), or "" (static buffer). */
static const char *line_of(const char *text, const char *key)
{
	static char buf[128];
	const char *p = strstr(text, key), *e;

	buf[0] = '\0';
	if (p) {
		e = strchr(p, '\n');
		snprintf(buf, sizeof(buf), "%.*s",
			 (int)(e ? e - p : (long)strlen(p)), p);
	}
	return buf;
}

Test(kvm_snapshot, exact_count_and_pending_message_across_restore)
{
	char file[300], total[128], msg[128], text[OUT_MAX];
	int st;

	/* The uninterrupted run. */
	RUN_LONG("run", GUEST("snap_count"));
	cr_assert(eq(int, res.status, 0), "%s\n%s", res.out, res.err);
	snprintf(total, sizeof(total), "%s",
		 line_of(res.out, "snap_count: total"));
	snprintf(msg, sizeof(msg), "%s", line_of(res.out, "snap_count: msg"));
	cr_assert(not(eq(str, total, "")), "%s", res.out);
	cr_assert(eq(str, msg, "snap_count: msg 1 1"), "one PFM_MSG_OVFL");

	/* Snapshot it while it counts, stopping it. */
	snprintf(file, sizeof(file), "%s/count.vps", rundir);
	cr_assert(eq(int,
		     vm_bg_start(&vm, rundir, GUEST("snap_count"), "snapme", 1),
		     0));
	cr_assert(eq(int, vm_bg_wait(&vm, rundir, "snap_count: go", 1, 60000),
		     0));
	RUN_LONG("snapshot", "snapme", file, "--stop");
	cr_assert(eq(int, res.status, 0), "%s\n%s", res.out, res.err);
	HAS(res.out, "stopped");
	st     = vpmu_bg_wait(vm.pid, 60000);
	vm.pid = 0;
	slurp_file(vm.console, text, sizeof(text));
	cr_assert(eq(int, st, 252), "stopped by the snapshot: %d\n%s", st,
		  text);
	cr_assert(eq(ptr, strstr(text, "snap_count: total"), NULL),
		  "the snapshot must land mid-count:\n%s", text);

	/* Restore: the same exact total, the same pending message. */
	RUN_LONG("run", "--restore", file);
	cr_assert(eq(int, res.status, 0), "%s\n%s", res.out, res.err);
	cr_assert(eq(str, (char *)line_of(res.out, "snap_count: total"), total),
		  "restored:\n%s\nstderr:\n%s", res.out, res.err);
	cr_assert(eq(str, (char *)line_of(res.out, "snap_count: msg"), msg));
	cr_assert(eq(ptr, strstr(res.out, "snap_count: go"), NULL),
		  "continued, not rebooted");

	/* A damaged file is refused, naming the section. */
	{
		FILE *f = fopen(file, "r+b");

		cr_assert(not(eq(ptr, f, NULL)));
		fseek(f, 200, SEEK_SET); /* inside section 0 (VM) */
		fputc(0x5a, f);
		fclose(f);
	}
	RUN("run", "--restore", file);
	cr_assert(eq(int, res.status, 1));
	HAS(res.err, "section 0 (VM): checksum mismatch");
}

/*
 * Snapshot (without --stop) while an operator records: the record file
 * notes the pause and `vpmu report` prints it.
 */
Test(kvm_snapshot, record_notes_the_snapshot_pause)
{
	char rec[300], tmp[310], out[300], err[300], file[300];
	const char *argv[] = {"record", "-m", "recme", "-F",
			      "1000",   "-o", rec,     NULL};
	struct stat sb;
	unsigned int waited;
	pid_t pid;
	int st;

	snprintf(rec, sizeof(rec), "%s/snap.rec", rundir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", rec);
	snprintf(out, sizeof(out), "%s/record.out", rundir);
	snprintf(err, sizeof(err), "%s/record.err", rundir);
	snprintf(file, sizeof(file), "%s/rec.vps", rundir);
	cr_assert(eq(int, vm_bg_start(&vm, rundir, GUEST("op_hot"), "recme", 1),
		     0));
	cr_assert(
		eq(int, vm_bg_wait(&vm, rundir, "op_hot: ready", 1, 60000), 0));
	pid = vpmu_bg(argv, out, err);
	cr_assert(lt(int, 0, pid));
	for (waited = 0; waited < 20000 && stat(tmp, &sb); waited += 20)
		usleep(20000);
	cr_assert(eq(int, stat(tmp, &sb), 0), "record did not start");
	sleep(1); /* its contexts are created after the file */
	RUN_LONG("snapshot", "recme", file);
	cr_assert(eq(int, res.status, 0), "%s\n%s", res.out, res.err);
	sleep(1);
	kill(pid, SIGINT);
	st = vpmu_bg_wait(pid, 60000);
	cr_assert(eq(int, st, 0), "record: %d", st);
	RUN("report", rec);
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	HAS(res.out, "# VM 'recme' paused 1 time(s) for snapshot, ");
}
