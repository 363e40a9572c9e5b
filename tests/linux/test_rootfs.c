// SPDX-License-Identifier: MIT
/*
 * test_rootfs.c: the Linux guest a user gets (label "linux"): the test
 * kernel boots the root file system scripts/build-linux.sh makes
 * (build/linux/rootfs.ext4: busybox, Linux perf, pvpmu.ko, the SDK tools)
 * from a virtio disk, and the programs a user would run measure
 * themselves inside it: `perf stat` on the Intel and AMD models, with
 * multiplexing, `perf record` and `perf report` on both, and `pfstat`
 * through pvpmu.ko. A read-write disk keeps what the guest wrote; a
 * read-only one refuses writes. A host operator's profile of the guest
 * names its processes and their functions.
 *
 * The root's /sbin/init runs the command after "--" on the kernel command
 * line (here `sh -c "..."`) and ends the VM with its exit status.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <signal.h>
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

/* One row of a `vpmu report --sort comm,dso,sym` table. */
struct prof_row {
	double pct;
	char comm[32], dso[64], sym[128];
};

/* The rows of the "all vCPUs" table of (out), most periods first. */
static unsigned int all_vcpu_rows(const char *out, struct prof_row *rows,
				  unsigned int max)
{
	const char *p  = strstr(out, "all vCPUs");
	unsigned int n = 0;
	unsigned long samples;

	p = p ? strstr(p, "FUNCTION") : NULL;
	while (p && (p = strchr(p, '\n')) && n < max) {
		p++;
		if (sscanf(p, "%lf%% %lu %31s %63s %127s", &rows[n].pct,
			   &samples, rows[n].comm, rows[n].dso,
			   rows[n].sym) == 5)
			n++;
		else if (*p != ' ')
			break; /* the end of the table */
	}
	return n;
}

/* The first row of process (comm): its hottest file and function. */
static struct prof_row *first_of(struct prof_row *rows, unsigned int n,
				 const char *comm)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(rows[i].comm, comm))
			return &rows[i];
	}
	return NULL;
}

/* The first function row of `go tool pprof -top` output (out), or "". */
static void first_pprof_row(const char *out, char *name, size_t len)
{
	const char *p = strstr(out, "flat%");
	char f[6][64];

	name[0] = '\0';
	while (p && (p = strchr(p, '\n'))) {
		p++;
		if (sscanf(p, "%63s %63s %63s %63s %63s %63s", f[0], f[1], f[2],
			   f[3], f[4], f[5]) == 6) {
			snprintf(name, len, "%s", f[5]);
			return;
		}
	}
}

/*
 * `vpmu serve --symfs rootfs.d`'s live /debug/pprof/profile of the
 * running guest, read by `go tool pprof -top` for the samples of process
 * (comm) (-tagfocus comm=...): its first function into (top).
 */
static void live_pprof_top(const char *dir, const char *comm, char *top,
			   size_t len)
{
	/* Loopback, the test's own user: no token to share with curl. */
	const char *argv[] = {"serve",     "--listen", "127.0.0.1:0",
			      "--no-auth", "--symfs",  LINUX_DIR "rootfs.d",
			      NULL};
	char log[128], out[128], cmd[1024];
	static char text[64 << 10];
	unsigned int port = 0, i;
	pid_t serve;
	FILE *p;
	size_t n;

	snprintf(log, sizeof(log), "%s/serve.log", dir);
	snprintf(out, sizeof(out), "%s/serve.out", dir);
	serve = vpmu_bg(argv, out, log);
	cr_assert(lt(int, 0, serve));
	for (i = 0; i < 100 && !port; i++) {
		const char *at;

		usleep(100000);
		if (slurp_file(log, text, sizeof(text)))
			continue;
		at = strstr(text, "(port ");
		if (at)
			sscanf(at, "(port %u)", &port);
	}
	cr_assert(lt(u32, 0, port), "vpmu serve did not listen: %s", text);
	snprintf(cmd, sizeof(cmd),
		 "export HOME=%s GOCACHE=%s/go PPROF_TMPDIR=%s; sleep 2; curl "
		 "-sf -o %s/p.pb.gz 'http://127.0.0.1:%u/debug/pprof/"
		 "profile?seconds=5' && go tool pprof -top "
		 "-sample_index=samples "
		 "-tagfocus=comm=%s %s/p.pb.gz 2>&1",
		 dir, dir, dir, dir, port, comm, dir);
	p = popen(cmd, "r");
	cr_assert(not(eq(ptr, p, NULL)));
	n       = fread(text, 1, sizeof(text) - 1, p);
	text[n] = '\0';
	pclose(p);
	kill(serve, SIGTERM);
	vpmu_bg_wait(serve, 10000);
	cr_log_info("%s", text);
	first_pprof_row(text, top, len);
}

/*
 * A host operator's profile of a Linux guest names its processes: two
 * programs with hot loops in binaries of their own (pvpmu-alpha, static;
 * pvpmu-beta, PIE on musl's shared libc) run on 2 vCPUs; `vpmu record -a
 * -g` from the host, then `vpmu report --sort comm,dso,sym --symfs
 * rootfs.d` (the guest's root on the host) must put each program's hot
 * function first under its own name, and leave under 5 % of the periods
 * without a function; `go tool pprof -top` of `vpmu serve`'s live
 * profile, focused on each program's comm label, puts the same function
 * first, and so does `vpmu top`'s live table. pvpmu.ko reports the
 * processes (names at exec, executable mappings, the running thread in
 * the shared page); the kernel's functions come from vmlinux.
 */
Test(linux_rootfs, host_profile_names_guest_processes_and_their_functions)
{
	const char *argv[] = {"run",
			      "--kernel",
			      VMLINUX,
			      "--disk",
			      ROOTFS ",ro",
			      "--mem",
			      "256M",
			      "--vcpus",
			      "2",
			      "--name",
			      "prof",
			      "--append",
			      BASE_LINE
			      "-- sh -c \"pvpmu-alpha 120 & pvpmu-beta 120 &"
			      " wait\"",
			      NULL};
	char dir[64], rec[128], err[128], cmd[512], top_a[64], top_b[64];
	static char report[4 << 20];
	struct prof_row *a, *b;
	const char *all;
	size_t len;
	FILE *p;
	static struct prof_row rows[4096];
	struct vm_bg vm = {0};
	unsigned int n, i;
	double unknown = 0;

	cr_assert(eq(int, rundir_make(dir, sizeof(dir)), 0));
	snprintf(vm.name, sizeof(vm.name), "prof");
	snprintf(vm.console, sizeof(vm.console), "%s/prof.console", dir);
	snprintf(err, sizeof(err), "%s/prof.stderr", dir);
	snprintf(rec, sizeof(rec), "%s/prof.rec", dir);
	vm.pid = vpmu_bg(argv, vm.console, err);
	cr_assert(lt(int, 0, vm.pid));
	/*
	 * Both programs say when they spin: an exec under an emulated ring
	 * 0 on a loaded host can take seconds after the shell started it.
	 */
	cr_assert(eq(int,
		     vm_bg_wait(&vm, dir, "pvpmu-alpha: spinning", 1,
				BOOT_SECS * 1000),
		     0));
	cr_assert(eq(int,
		     vm_bg_wait(&vm, dir, "pvpmu-beta: spinning", 1,
				BOOT_SECS * 1000),
		     0));
	RUN("record", "-a", "-g", "-o", rec, "--", "8");
	cr_log_info("%s", res.err);
	STATUS(0);
	/* Source lines from the program's own DWARF (built with -g). */
	RUN("report", "--sort", "comm,sym,srcline", "-g", "none", "--symfs",
	    LINUX_DIR "rootfs.d", "--min-pct", "0.5", rec);
	STATUS(0);
	HAS(res.out, "alpha_spin spin.c:");
	HAS(res.out, "beta_spin spin.c:");
	/* `vpmu top` shows processes and their functions, live. */
	RUN("top", "-n", "1", "-d", "3", "--symfs", LINUX_DIR "rootfs.d");
	STATUS(0);
	cr_log_info("%s", res.out);
	HAS(res.out, "COMMAND          FUNCTION");
	HAS(res.out, "pvpmu-alpha      alpha_spin");
	HAS(res.out, "pvpmu-beta       beta_spin");
	live_pprof_top(dir, "pvpmu-alpha", top_a, sizeof(top_a));
	live_pprof_top(dir, "pvpmu-beta", top_b, sizeof(top_b));
	vm_bg_kill(&vm, SIGKILL);
	cr_expect(eq(str, top_a, "alpha_spin"), "go tool pprof -top");
	cr_expect(eq(str, top_b, "beta_spin"), "go tool pprof -top");
	/* Every row (hundreds of kernel functions): more than res holds. */
	snprintf(cmd, sizeof(cmd),
		 VPMU_BIN " report --sort comm,dso,sym -g none --symfs "
			  "%s %s 2>&1",
		 LINUX_DIR "rootfs.d", rec);
	p = popen(cmd, "r");
	cr_assert(not(eq(ptr, p, NULL)));
	len         = fread(report, 1, sizeof(report) - 1, p);
	report[len] = '\0';
	cr_assert(eq(int, pclose(p), 0), "%s\n%s", cmd, report);
	all = strstr(report, "all vCPUs") ? strstr(report, "all vCPUs")
					  : report;
	cr_log_info("%.4000s", all);
	n = all_vcpu_rows(report, rows, 4096);
	cr_assert(lt(u32, 2, n), "no table in:\n%.8000s", all);
	a = first_of(rows, n, "pvpmu-alpha");
	b = first_of(rows, n, "pvpmu-beta");
	cr_assert(not(eq(ptr, (void *)a, NULL)), "%.8000s", all);
	cr_assert(not(eq(ptr, (void *)b, NULL)), "%.8000s", all);
	cr_expect(eq(str, a->dso, "pvpmu-alpha"), "%.8000s", all);
	cr_expect(eq(str, a->sym, "alpha_spin"), "%.8000s", all);
	cr_expect(eq(str, b->dso, "pvpmu-beta"), "%.8000s", all);
	cr_expect(eq(str, b->sym, "beta_spin"), "%.8000s", all);
	for (i = 0; i < n; i++)
		unknown += strcmp(rows[i].sym, "[unknown]") ? 0 : rows[i].pct;
	cr_log_info("[unknown]: %.2f %% of the periods", unknown);
	cr_expect(lt(dbl, unknown, 5.0), "%.2f %% [unknown]:\n%.8000s", unknown,
		  all);
	rundir_remove(dir);
}
