// SPDX-License-Identifier: MIT
/*
 * test_operator.c: host operators against real VMs running in
 * the background, each test in its own runtime directory:
 *   - with two VMs running, `vpmu list` shows both and `vpmu stat -a`
 *     counts the exact number of hypercalls each vCPU makes (op_calls);
 *   - `vpmu record` of a known hot loop (op_hot) attributes >= 90% of the
 *     samples to hot_loop();
 *   - perf events (`vpmu stat -e cycles,task-clock`, `vpmu record`) count
 *     every vCPU of a 2-vCPU VM under the control thread's sandbox;
 *   - `vpmu record -g` of a known call path (op_chain: outer -> middle ->
 *     hot) recovers the path in >= 90% of the samples, and `report`
 *     names the hot loop's source line;
 *   - malformed requests get error replies and the VM keeps serving;
 *     a client of another uid is refused;
 *   - killing a VM in the middle of a record leaves a valid file (and so
 *     does Ctrl-C);
 *   - host contexts belong to their connection and go with it;
 *   - a guest's own PMU context and the operator's count the same
 *     hypercalls exactly, side by side;
 *   - SIGTERM stops a VM cleanly and removes its entry and socket;
 *   - `vpmu stat -a --per-vcpu` on 8 vCPUs costs one request per VM per
 *     interval (frames counted by the VMM), the control thread does not
 *     wake while idle, and a read that could not be brought up to date is
 *     flagged stale, not returned as fresh.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <dirent.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "ctl_proto.h"
#include "kvm_harness.h"
#include "elf_symbols.h"
#include "record_file.h"
#include "vm_bg.h"

#define OP_CALLS 500 /* tests/kvm/guests/op_calls.c */

static char rundir[64];
static struct vm_bg vms[2];
static char text[OUT_MAX];

static void setup(void)
{
	kvm_require();
	cr_assert(eq(int, rundir_make(rundir, sizeof(rundir)), 0));
}

static void teardown(void)
{
	vm_bg_kill(&vms[0], SIGKILL);
	vm_bg_kill(&vms[1], SIGKILL);
	rundir_remove(rundir);
}

/* A hang guard only: the waits inside have their own bounds. */
TestSuite(operator, .init = setup, .fini = teardown, .timeout = 180);

static void start_vm(unsigned int i, const char *image, const char *name,
		     unsigned int vcpus, const char *ready, unsigned int n)
{
	cr_assert(eq(int, vm_bg_start(&vms[i], rundir, image, name, vcpus), 0));
	cr_assert(eq(int, vm_bg_wait(&vms[i], rundir, ready, n, 10000), 0),
		  "VM %s never became ready", name);
}

/* The count of the CSV row "...,<vm>,<uuid>,<vcpu>,<event>,count,...". */
static long long csv_event(const char *out, const char *vm, const char *vcpu,
			   const char *event)
{
	char want[128], ev[64];
	const char *p;

	snprintf(want, sizeof(want), ",%s,", vm);
	for (p = strstr(out, want); p; p = strstr(p + 1, want)) {
		const char *uuid_end = strchr(p + strlen(want), ',');
		char cpu[16];
		long long c;

		if (uuid_end &&
		    sscanf(uuid_end + 1, "%15[^,],%63[^,],%lld", cpu, ev, &c) ==
			    3 &&
		    !strcmp(cpu, vcpu) && !strcmp(ev, event))
			return c;
	}
	return -1;
}

static long long csv_count(const char *out, const char *vm, const char *vcpu)
{
	return csv_event(out, vm, vcpu, "hv_hypercalls");
}

static int64_t info_field(struct ops_client *c, const char *key);

/*
 * Wait (bounded, 20 s) until an operator has a session on VM (name) (at
 * least (nr_ctx) host contexts) and has then sent (frames) more request
 * frames to it (record drains every 100 ms: its samples are coming in).
 * Our own `info` polls are frames too; they are not counted.
 */
static void wait_operator(const char *name, int64_t nr_ctx, int64_t frames)
{
	struct vmm_reg_entry *e;
	struct ops_client c;
	int64_t f0 = -1, polls = 0, ctxs = 0, theirs = 0;
	unsigned int nr, i, waited;

	cr_assert(eq(int, ops_client_discover(rundir, &e, &nr, NULL), 0));
	for (i = 0; i < nr && strcmp(e[i].name, name); i++)
		;
	cr_assert(lt(u32, i, nr), "no VM %s", name);
	cr_assert(eq(int, ops_client_connect(&c, e[i].socket), 0), "%s", c.err);
	free(e);
	for (waited = 0; waited < 20000; waited += 20) {
		if (f0 < 0) {
			ctxs = info_field(&c, "host_contexts");
			if (ctxs >= nr_ctx)
				f0 = info_field(&c, "ctl_frames");
		} else {
			theirs = info_field(&c, "ctl_frames") - f0 - ++polls;
		}
		if (f0 >= 0 && theirs >= frames)
			break;
		usleep(20000);
	}
	ops_client_close(&c);
	cr_assert(ge(i64, theirs, frames),
		  "VM %s: %lld host contexts, %lld operator frames in 20 s",
		  name, (long long)ctxs, (long long)theirs);
}

/*
 * Start `vpmu stat (argv)` counting until Ctrl-C in the background; return
 * once its session is open on VM (name) ((nr_ctx) contexts) and its Ctrl-C
 * handler is in place (it says "until Ctrl-C" after both).
 */
static pid_t stat_bg(const char *const *argv, const char *name, int64_t nr_ctx,
		     const char *out, const char *err)
{
	pid_t pid = vpmu_bg(argv, out, err);
	unsigned int waited;

	cr_assert(lt(int, 0, pid));
	wait_operator(name, nr_ctx, 0);
	for (waited = 0; waited < 20000; waited += 20) {
		slurp_file(err, text, sizeof(text));
		if (strstr(text, "until Ctrl-C"))
			break;
		usleep(20000);
	}
	cr_assert(not(eq(ptr, strstr(text, "until Ctrl-C"), NULL)), "%s", text);
	return pid;
}

/* Ctrl-C to `vpmu stat` (pid): its exit status, its output into (buf). */
static int stat_end(pid_t pid, const char *out, char *buf, size_t len)
{
	int st;

	kill(pid, SIGINT);
	st = vpmu_bg_wait(pid, 20000);
	slurp_file(out, buf, len);
	return st;
}

Test(operator, list_and_stat_two_vms_exact)
{
	const char *list[] = {"list", "--libvirt-uri", "test:///default", NULL};
	const char *stat[] = {"stat",       "-a", "-e", "hv_hypercalls",
			      "--per-vcpu", "-x", ",",  "--vpmu-fields",
			      NULL};
	static struct vpmu_result res;
	static char out[OUT_MAX];
	char fout[128], ferr[128];
	pid_t pid;

	snprintf(fout, sizeof(fout), "%s/stat.out", rundir);
	snprintf(ferr, sizeof(ferr), "%s/stat.err", rundir);
	start_vm(0, GUEST("op_calls"), "opA", 2, "op_calls: ready", 2);
	start_vm(1, GUEST("op_calls"), "opB", 1, "op_calls: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 20, list), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_assert(count_str(res.out, "opA") == 1 &&
			  count_str(res.out, "opB") == 1,
		  "%s", res.out);
	/* libvirt domains through its API: the test driver has "test". */
	cr_expect(not(eq(ptr, strstr(res.out, "libvirt domains (test:///"),
			 NULL)),
		  "%s", res.out);
	/*
	 * The window covers the calls: counting from before the go signal
	 * (a byte of console input) until every vCPU said "done".
	 */
	pid = stat_bg(stat, "opA", 2, fout, ferr);
	wait_operator("opB", 1, 0);
	cr_assert(eq(int, vm_bg_input(&vms[0], "g"), 0));
	cr_assert(eq(int, vm_bg_input(&vms[1], "g"), 0));
	cr_expect(eq(int,
		     vm_bg_wait(&vms[0], rundir, "op_calls: done", 2, 30000),
		     0));
	cr_expect(eq(int,
		     vm_bg_wait(&vms[1], rundir, "op_calls: done", 1, 30000),
		     0));
	cr_assert(eq(int, stat_end(pid, fout, out, sizeof(out)), 0));
	cr_log_info("%s", out);
	cr_expect(eq(i64, csv_count(out, "opA", "0"), OP_CALLS), "%s", out);
	cr_expect(eq(i64, csv_count(out, "opA", "1"), 2 * OP_CALLS), "%s", out);
	cr_expect(eq(i64, csv_count(out, "opB", "0"), OP_CALLS), "%s", out);
}

/* Share of hot_loop in the flat profile of (out), in percent. */
static double hot_pct(const char *out)
{
	const char *p = strstr(out, "hot_loop");
	const char *l = p;
	double pct    = -1;

	while (l && l > out && l[-1] != '\n')
		l--;
	if (l)
		sscanf(l, " %lf%%", &pct);
	return pct;
}

Test(operator, record_attributes_hot_loop)
{
	char file[128];
	const char *rec[]  = {"record", "-m", "hot", "-F", "1000",
			      "-o",     file, "--",  "2",  NULL};
	const char *rep[]  = {"report", file, NULL};
	const char *fold[] = {"report", "--folded", file, NULL};
	const char *top[]  = {"top", "-m", "hot", "-n", "1", NULL};
	static struct vpmu_result res;
	double pct;

	snprintf(file, sizeof(file), "%s/hot.rec", rundir);
	start_vm(0, GUEST("op_hot"), "hot", 1, "op_hot: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rec), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rep), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_log_info("%s", res.out);
	pct = hot_pct(res.out);
	cr_expect(ge(dbl, pct, 90.0), "hot_loop has %.2f%% of the samples:\n%s",
		  pct, res.out);
	cr_assert(eq(int, vpmu_cmd(&res, 30, fold), 0));
	cr_expect(not(eq(ptr, strstr(res.out, "hot;vcpu0;hot_loop "), NULL)),
		  "%s", res.out);
	/* The live view finds it too. */
	cr_assert(eq(int, vpmu_cmd(&res, 30, top), 0));
	cr_expect(eq(int, res.status, 0), "%s", res.err);
	cr_expect(not(eq(ptr, strstr(res.out, "hot_loop"), NULL)), "%s",
		  res.out);
}

/*
 * The control thread opens operators' perf events on the vCPU threads,
 * under its sandbox, which lets perf_event_open name only those threads:
 * `vpmu stat` of perf events and `vpmu record` of cycles (a perf event,
 * task-clock where the host has no PMU) on every vCPU of a 2-vCPU VM
 * count each vCPU, and the VM runs on (a refused call would end it with
 * status 159).
 */
Test(operator, perf_events_on_every_vcpu_under_the_sandbox)
{
	char file[128];
	const char *stat[] = {"stat",
			      "-m",
			      "hot2",
			      "-e",
			      "cycles,task-clock",
			      "--per-vcpu",
			      "-x",
			      ",",
			      "--vpmu-fields",
			      "--",
			      "1",
			      NULL};
	const char *rec[]  = {"record", "-m", "hot2", "-F", "1000",
			      "-o",     file, "--",   "1",  NULL};
	const char *rep[]  = {"report", "--folded", file, NULL};
	static struct vpmu_result res;
	const char *const evs[]  = {"cycles", "task-clock"};
	const char *const cpus[] = {"0", "1"};
	unsigned int e, c;
	int st;

	snprintf(file, sizeof(file), "%s/hot2.rec", rundir);
	start_vm(0, GUEST("op_hot"), "hot2", 2, "op_hot: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 30, stat), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_log_info("%s", res.out);
	for (e = 0; e < 2; e++)
		for (c = 0; c < 2; c++)
			cr_expect(
				lt(i64, 0,
				   csv_event(res.out, "hot2", cpus[c], evs[e])),
				"%s of vCPU %s:\n%s", evs[e], cpus[c], res.out);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rec), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rep), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_expect(not(eq(ptr, strstr(res.out, "hot2;vcpu0;hot_loop "), NULL)),
		  "%s", res.out);
	cr_expect(not(eq(ptr, strstr(res.out, "hot2;vcpu1;hot_loop "), NULL)),
		  "%s", res.out);
	/* Still running: not ended by its sandbox. */
	if (waitpid(vms[0].pid, &st, WNOHANG) == vms[0].pid) {
		vms[0].pid = 0;
		cr_assert(false, "the VM ended (wait status %#x)", st);
	}
}

/*
 * -F at the VM's maximum sample rate (the default, 100000/s) is a rate
 * the VM allows: the period it becomes, in TSC cycles or ns, must not
 * round to a rate above it. A rate 1 % above the maximum is refused,
 * naming it. (Just one above is not always: the period is rounded up to
 * whole units, and 100001/s in ns, or in cycles of a 2.3 GHz TSC, gives
 * the same period as 100000/s.)
 */
Test(operator, record_at_the_maximum_rate_accepted)
{
	char file[128];
	const char *at_ns[]  = {"record", "-m", "hot", "-e", "hv_run_ns", "-F",
				"100000", "-o", file,  "--", "1",         NULL};
	const char *at_cyc[] = {"record", "-m", "hot", "-F", "100000",
				"-o",     file, "--",  "1",  NULL};
	const char *above[]  = {"record", "-m", "hot", "-F", "101000",
				"-o",     file, "--",  "1",  NULL};
	static struct vpmu_result res;

	snprintf(file, sizeof(file), "%s/max.rec", rundir);
	start_vm(0, GUEST("op_hot"), "hot", 1, "op_hot: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 30, at_ns), 0));
	cr_expect(eq(int, res.status, 0), "hv_run_ns -F 100000: %s", res.err);
	cr_assert(eq(int, vpmu_cmd(&res, 30, at_cyc), 0));
	cr_expect(eq(int, res.status, 0), "hv_guest_cycles -F 100000: %s",
		  res.err);
	cr_assert(eq(int, vpmu_cmd(&res, 30, above), 0));
	cr_expect(not(eq(int, res.status, 0)), "-F 101000 accepted: %s",
		  res.err);
	cr_expect(not(eq(ptr, strstr(res.err, "maximum sample rate of 100000"),
			 NULL)),
		  "%s", res.err);
}

/* The thread named (comm) of process (pid), or 0. */
static pid_t thread_named(pid_t pid, const char *comm)
{
	char path[PATH_MAX], name[32];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dp;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dp = opendir(path);
	while (dp && !tid && (d = readdir(dp))) {
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid,
			 d->d_name);
		if (!slurp_file(path, name, sizeof(name)) &&
		    !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			tid = atoi(d->d_name);
	}
	if (dp)
		closedir(dp);
	return tid;
}

/*
 * The CPU time of thread (tid) of (pid) by the kernel, ns: utime + stime
 * of /proc/PID/task/TID/stat (fields 14 and 15, in clock ticks: the
 * scheduler's precise figure cut to ticks). 0 if none.
 */
static uint64_t proc_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[1024];
	unsigned long long ut, st;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (slurp_file(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')'); /* the comm may hold spaces */
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu "
			 "%llu",
			 &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

/*
 * hv_cpu_ns as an operator reads it is the vCPU thread's CPU time in the
 * window, checked against the kernel's figure for the same thread
 * (/proc/PID/task/TID/stat) read around the whole command, give or take
 * a clock tick at each end: every interval and the total within it, and
 * above 0 for a vCPU that never stops.
 */
static void cpu_time_within_proc_stat(const char *guest, const char *ready)
{
	const char *stat[] = {
		"stat", "-m", "cpu",           "-e", "hv_cpu_ns", "--per-vcpu",
		"-x",   ",",  "--vpmu-fields", "-I", "300",       "--",
		"1",    NULL};
	static struct vpmu_result res;
	unsigned long long last = 0, rows = 0;
	uint64_t s0, s1, tick;
	char image[PATH_MAX];
	const char *p;
	pid_t tid;

	snprintf(image, sizeof(image), "%s/guests/%s.elf", VPMU_BUILD_DIR,
		 guest);
	start_vm(0, image, "cpu", 1, ready, 1);
	tid = thread_named(vms[0].pid, "vpmu-vcpu0");
	cr_assert(lt(int, 0, tid), "no thread vpmu-vcpu0 in VMM %d",
		  vms[0].pid);
	s0 = proc_cpu_ns(vms[0].pid, tid);
	cr_assert(eq(int, vpmu_cmd(&res, 30, stat), 0));
	s1   = proc_cpu_ns(vms[0].pid, tid);
	tick = 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK);
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_log_info("%s: the kernel's %llu ns (+- %llu) over the command\n%s",
		    guest, (unsigned long long)(s1 - s0),
		    (unsigned long long)tick, res.out);
	/* Every interval row, then the total (the last row). */
	for (p = strstr(res.out, ",hv_cpu_ns,"); p;
	     p = strstr(p + 1, ",hv_cpu_ns,"), rows++) {
		last = strtoull(p + strlen(",hv_cpu_ns,"), NULL, 10);
		cr_expect(le(u64, last, s1 - s0 + 2 * tick),
			  "%s: a row above the kernel's %llu ns:\n%s", guest,
			  (unsigned long long)(s1 - s0), res.out);
	}
	cr_assert(ge(u64, rows, 2), "%s", res.out);
	cr_expect(lt(u64, 0, last), "%s: %s", guest, res.out);
}

Test(operator, vcpu_cpu_time_of_a_spinning_vcpu)
{
	cpu_time_within_proc_stat("op_hot", "op_hot: ready");
}

/* Its vCPU polls the console, exiting at every read. */
Test(operator, vcpu_cpu_time_of_a_vcpu_polling_the_console)
{
	cpu_time_within_proc_stat("op_calls", "op_calls: ready");
}

/*
 * The CPU time of thread (tid) of (pid) by the scheduler, ns: the first
 * field of /proc/PID/task/TID/schedstat (exact), else proc_cpu_ns().
 */
static uint64_t sched_cpu_ns(pid_t pid, pid_t tid)
{
	char path[64], buf[128];
	unsigned long long ns;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (slurp_file(path, buf, sizeof(buf)) || sscanf(buf, "%llu", &ns) != 1)
		return proc_cpu_ns(pid, tid);
	return ns;
}

/*
 * The share of the time record says a spinning vCPU ran is its thread's
 * share of the CPU by the kernel's figure (schedstat, read around the
 * whole command): never above 100 %, never above what the thread got
 * over the command (record's wall time is at least its 1 s), and not far
 * below the thread's share over the command (the vCPU never stops). A
 * 5 s period: the guest's loop makes no exit of its own, so the vCPU
 * stays inside one KVM_RUN for the whole recording (time inside KVM_RUN,
 * known only when it returns, read 0 % here).
 */
Test(operator, record_run_share_is_the_vcpu_threads_cpu_share)
{
	char file[128];
	const char *rec[] = {"record",    "-m", "hot",        "-e",
			     "hv_run_ns", "-c", "5000000000", "-o",
			     file,        "--", "1",          NULL};
	static struct vpmu_result res;
	uint64_t s0, s1, w0, w1;
	double ran = -1, cpu_s, share;
	const char *p;
	pid_t tid;

	snprintf(file, sizeof(file), "%s/share.rec", rundir);
	start_vm(0, GUEST("op_hot"), "hot", 1, "op_hot: ready", 1);
	tid = thread_named(vms[0].pid, "vpmu-vcpu0");
	cr_assert(lt(int, 0, tid), "no thread vpmu-vcpu0 in VMM %d",
		  vms[0].pid);
	w0 = vpmu_monotonic_ns();
	s0 = sched_cpu_ns(vms[0].pid, tid);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rec), 0));
	s1 = sched_cpu_ns(vms[0].pid, tid);
	w1 = vpmu_monotonic_ns();
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	p = strstr(res.err, "vCPUs ran ");
	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", res.err);
	cr_assert(eq(int, sscanf(p, "vCPUs ran %lf %%", &ran), 1), "%s",
		  res.err);
	cpu_s = (double)(s1 - s0) / 1e9;
	share = 100.0 * (double)(s1 - s0) / (double)(w1 - w0);
	cr_log_info("record: vCPUs ran %.0f %%; the kernel: %.3f s of CPU in "
		    "%.3f s (%.0f %%)\n%s",
		    ran, cpu_s, (double)(w1 - w0) / 1e9, share, res.err);
	cr_expect(le(dbl, ran, 100.0), "%s", res.err);
	cr_expect(le(dbl, ran, 100.0 * cpu_s + 3.0),
		  "above the thread's %.3f s of CPU: %s", cpu_s, res.err);
	cr_expect(ge(dbl, ran, share / 2), "the thread ran %.0f %%: %s", share,
		  res.err);
}

/* voluntary_ctxt_switches of thread (tid) of (pid): its wake-ups. */
static uint64_t thread_wakes(pid_t pid, pid_t tid)
{
	char path[64], buf[2048];
	unsigned long long n = 0;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (!slurp_file(path, buf, sizeof(buf)) &&
	    (p = strstr(buf, "\nvoluntary_ctxt_switches:")))
		sscanf(p + strlen("\nvoluntary_ctxt_switches:"), "%llu", &n);
	return n;
}

/*
 * Each sample is a kick: a timer signal to the vCPU thread. It must wake
 * no other thread of the VMM. The thread that takes SIGINT and SIGTERM
 * once waited on a signalfd, whose pollers the kernel wakes for every
 * signal sent to any thread of the process: it woke once per sample and
 * took the CPU from the vCPU on a loaded host. Now it may wake a few
 * times (the command's start and end), never once per sample.
 */
Test(operator, sampling_kicks_wake_no_other_vmm_thread)
{
	char file[128];
	const char *rec[] = {"record", "-m", "hot", "-F", "2000",
			     "-o",     file, "--",  "1",  NULL};
	static struct vpmu_result res;
	unsigned long long samples = 0;
	uint64_t w0, w1;
	const char *p;
	pid_t tid;

	snprintf(file, sizeof(file), "%s/kicks.rec", rundir);
	start_vm(0, GUEST("op_hot"), "hot", 1, "op_hot: ready", 1);
	tid = thread_named(vms[0].pid, "vpmu-signals");
	cr_assert(lt(int, 0, tid), "no thread vpmu-signals in VMM %d",
		  vms[0].pid);
	w0 = thread_wakes(vms[0].pid, tid);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rec), 0));
	w1 = thread_wakes(vms[0].pid, tid);
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	p = strstr(res.err, ".rec: ");
	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", res.err);
	sscanf(p + strlen(".rec: "), "%llu", &samples);
	cr_log_info("%llu samples; the signal thread woke %llu times\n%s",
		    samples, (unsigned long long)(w1 - w0), res.err);
	cr_assert(lt(u64, 100, samples), "%s", res.err);
	cr_expect(le(u64, w1 - w0, samples / 20),
		  "the signal thread woke %llu times for %llu samples",
		  (unsigned long long)(w1 - w0), samples);
}

static int raw_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd                = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

/* Send (len) raw bytes as one frame; return the reply's "ok" (or -1). */
static int raw_frame(int fd, const void *body, uint32_t len, uint32_t hdr)
{
	unsigned char h[4] = {hdr >> 24, hdr >> 16, hdr >> 8, hdr};
	struct json_object *rep, *ok;
	int ret;

	if (send(fd, h, 4, MSG_NOSIGNAL) != 4 ||
	    (len && send(fd, body, len, MSG_NOSIGNAL) != (ssize_t)len))
		return -1;
	if (vmm_ctl_recv(fd, &rep, 5000))
		return -1;
	ret = json_object_object_get_ex(rep, "ok", &ok) &&
	      json_object_get_boolean(ok);
	json_object_put(rep);
	return ret;
}

/* The socket of the one VM in the runtime directory. */
static const char *sock_of(void)
{
	static char path[VMM_SOCK_PATH_MAX];
	struct vmm_reg_entry *e;
	unsigned int n;

	cr_assert(eq(int, ops_client_discover(rundir, &e, &n, NULL), 0));
	cr_assert(eq(u32, n, 1));
	snprintf(path, sizeof(path), "%s", e[0].socket);
	free(e);
	return path;
}

Test(operator, malformed_requests_refused)
{
	static const char *const bad[] = {
		"garbage",
		"[1,2,3]",
		"{\"v\":1,\"id\":1}",
		"{\"v\":2,\"id\":1,\"cmd\":\"hello\"}",
		"{\"v\":1,\"id\":1,\"cmd\":\"no_such_command\"}",
		"{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":\"0\"}",
		"{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":99999}",
		"{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":0,\"x\":1}",
		"{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":7}",
		"{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		"\"pmcs\":[{\"num\":64,\"value\":1}]}",
		"{\"v\":1,\"id\":1,\"cmd\":\"read_pmds\",\"ctx\":12345,"
		"\"pmds\":[{\"num\":0}]}",
		"{\"v\":1,\"id\":-5,\"cmd\":\"hello\"}",
		"{\"v\":1,\"id\":1,\"cmd\":\"hello\"} trailing",
	};
	const char *hello = "{\"v\":1,\"id\":9,\"cmd\":\"hello\"}";
	const char *path;
	unsigned int i;
	int fd;

	start_vm(0, GUEST("op_hot"), "victim", 1, "op_hot: ready", 1);
	path = sock_of();
	fd   = raw_connect(path);
	cr_assert(ge(int, fd, 0));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(eq(int,
			     raw_frame(fd, bad[i], strlen(bad[i]),
				       strlen(bad[i])),
			     0),
			  "accepted: %s", bad[i]);
	/* Random bytes in well-formed frames: an error reply each. */
	srand(11);
	for (i = 0; i < 300; i++) {
		char junk[256];
		size_t j, n = 1 + (size_t)rand() % sizeof(junk);

		for (j = 0; j < n; j++)
			junk[j] = (char)rand();
		cr_expect(eq(int, raw_frame(fd, junk, n, n), 0),
			  "random frame %u", i);
	}
	/* Still serving on the same connection. */
	cr_assert(
		eq(int, raw_frame(fd, hello, strlen(hello), strlen(hello)), 1));
	/* A bad length loses framing: error reply, then the VMM closes. */
	cr_expect(eq(int, raw_frame(fd, "", 0, 0x7fffffff), 0));
	close(fd);
	fd = raw_connect(path);
	cr_assert(ge(int, fd, 0));
	cr_expect(
		eq(int, raw_frame(fd, hello, strlen(hello), strlen(hello)), 1),
		"the VM stopped serving after bad requests");
	close(fd);
	cr_expect(eq(int, kill(vms[0].pid, 0), 0), "the VM died");
}

/*
 * In a child of uid 65534: 0 refused at connect, 1 refused by the VMM
 * (it answers "permission denied" at once and closes).
 */
static int other_uid(const char *path)
{
	struct json_object *rep, *err;
	int fd, ret = 12;

	if (setgid(65534) || setuid(65534))
		return 10;
	fd = raw_connect(path);
	if (fd == -EACCES)
		return 0;
	if (fd < 0)
		return 11;
	if (!vmm_ctl_recv(fd, &rep, 5000)) {
		if (json_object_object_get_ex(rep, "error", &err) &&
		    strstr(json_object_get_string(err), "permission denied"))
			ret = 1;
		json_object_put(rep);
	}
	close(fd);
	return ret;
}

static int in_child(const char *path)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(other_uid(path));
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

Test(operator, other_uid_refused)
{
	struct stat st;
	const char *path;

	if (geteuid() != 0)
		cr_skip_test("needs root to act as another uid");
	start_vm(0, GUEST("op_hot"), "guarded", 1, "op_hot: ready", 1);
	path = sock_of();
	cr_assert(eq(int, stat(path, &st), 0));
	cr_expect(eq(u32, st.st_mode & 0777, 0600));
	/* The socket's mode refuses it at connect... */
	chmod(rundir, 0755);
	cr_expect(eq(int, in_child(path), 0));
	/* ...and with the mode opened up, SO_PEERCRED still does. */
	chmod(path, 0666);
	cr_expect(eq(int, in_child(path), 1));
}

static int count_samples(void *opaque, const struct rec_sample *s)
{
	uint64_t *per_vm = opaque;

	per_vm[s->vm < 2 ? s->vm : 0]++;
	return 0;
}

static void check_file(const char *file, uint64_t *per_vm)
{
	struct rec_header h;
	char err[512];

	per_vm[0] = per_vm[1] = 0;
	cr_assert(
		eq(int,
		   rec_read(file, &h, count_samples, per_vm, err, sizeof(err)),
		   0),
		"%s", err);
	cr_expect(eq(u32, h.nr_vms, 2));
	rec_header_free(&h);
}

static struct vpmu_result lres;

static void list_once(void)
{
	const char *list[] = {"list", "--no-libvirt", NULL};

	cr_assert(eq(int, vpmu_cmd(&lres, 20, list), 0));
	cr_assert(eq(int, lres.status, 0), "%s", lres.err);
}

Test(operator, killed_vm_mid_record_leaves_valid_file)
{
	char file[128], out[160], err[160], cmd[256];
	const char *rec[]  = {"record", "-a", "-o", file, "--", "3", NULL};
	const char *rec2[] = {"record", "-a", "-o", file, NULL};
	uint64_t per_vm[2];
	pid_t pid;
	int st;

	snprintf(file, sizeof(file), "%s/kill.rec", rundir);
	snprintf(out, sizeof(out), "%s/record.out", rundir);
	snprintf(err, sizeof(err), "%s/record.err", rundir);
	start_vm(0, GUEST("op_hot"), "doomed", 1, "op_hot: ready", 1);
	start_vm(1, GUEST("op_hot"), "survivor", 1, "op_hot: ready", 1);
	pid = vpmu_bg(rec, out, err);
	cr_assert(lt(int, 0, pid));
	/* Record samples both (not a fixed time: its start may be slow). */
	wait_operator("survivor", 1, 0);
	wait_operator("doomed", 1, 3);
	vm_bg_kill(&vms[0], SIGKILL); /* "doomed" sorts first: VM 0 */
	st = vpmu_bg_wait(pid, 20000);
	slurp_file(err, text, sizeof(text));
	cr_assert(eq(int, st, 0), "record: %d\n%s", st, text);
	cr_expect(not(eq(ptr, strstr(text, "'doomed'"), NULL)), "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "disappeared"), NULL)), "%s", text);
	check_file(file, per_vm);
	cr_expect(lt(u64, 0, per_vm[0]));
	cr_expect(lt(u64, per_vm[0], per_vm[1]), "the survivor went on");
	/* The file itself says the VM went away (record_file.h). */
	snprintf(cmd, sizeof(cmd),
		 "grep -q '^{\"note\":\"vm_gone\",\"vm\":0,' %s", file);
	cr_expect(eq(int, system(cmd), 0), "no vm_gone note for VM 0 in %s",
		  file);
	/* The dead VM's entry is stale: the next scan removes it. */
	list_once();
	cr_expect(not(eq(ptr, strstr(lres.err, "stale entry of VM 'doomed'"),
			 NULL)),
		  "%s", lres.err);
	cr_expect(eq(ptr, strstr(lres.out, "doomed"), NULL), "%s", lres.out);
	/* Ctrl-C: the samples so far, in a complete file. */
	unlink(file);
	start_vm(0, GUEST("op_hot"), "doomed", 1, "op_hot: ready", 1);
	pid = vpmu_bg(rec2, out, err);
	cr_assert(lt(int, 0, pid));
	/* Its handler is in place once it samples: then Ctrl-C. */
	wait_operator("survivor", 1, 0);
	wait_operator("doomed", 1, 3);
	kill(pid, SIGINT);
	st = vpmu_bg_wait(pid, 20000);
	slurp_file(err, text, sizeof(text));
	cr_assert(eq(int, st, 0), "record: %d\n%s", st, text);
	check_file(file, per_vm);
	cr_expect(lt(u64, 0, per_vm[0] + per_vm[1]));
}

/* Field (key) of the VM's `info` reply. */
static int64_t info_field(struct ops_client *c, const char *key)
{
	struct json_object *rep, *v;
	int64_t n;

	cr_assert(eq(int, ops_client_call(c, ops_client_req("info"), &rep), 0),
		  "%s", c->err);
	cr_assert(json_object_object_get_ex(rep, key, &v), "no %s", key);
	n = json_object_get_int64(v);
	json_object_put(rep);
	return n;
}

static int64_t host_contexts(struct ops_client *c)
{
	return info_field(c, "host_contexts");
}

Test(operator, host_contexts_go_with_their_client)
{
	struct ops_client a, b;
	struct json_object *r;
	unsigned int i;

	start_vm(0, GUEST("op_hot"), "ctxs", 2, "op_hot: ready", 1);
	cr_assert(eq(int, ops_client_connect(&a, sock_of()), 0));
	cr_assert(eq(int, ops_client_connect(&b, sock_of()), 0));
	for (i = 0; i < 2; i++) {
		r = ops_client_req("ctx_create");
		json_object_object_add(r, "vcpu", json_object_new_int((int)i));
		json_object_object_add(r, "smpl_buf_size",
				       json_object_new_int(65536));
		cr_assert(eq(int, ops_client_call(&a, r, NULL), 0), "%s",
			  a.err);
	}
	cr_expect(eq(i64, host_contexts(&b), 2));
	/* Another connection cannot name them. */
	r = ops_client_req("destroy");
	json_object_object_add(r, "ctx", json_object_new_int(65536));
	cr_expect(eq(int, ops_client_call(&b, r, NULL), -EBADF), "%s", b.err);
	ops_client_close(&a);
	/* The control thread sees the hang-up at its own pace. */
	for (i = 0; i < 500 && host_contexts(&b) != 0; i++)
		usleep(20000);
	cr_expect(eq(i64, host_contexts(&b), 0), "still there after 10 s");
	ops_client_close(&b);
}

/*
 * The guest counts its own hypercalls in its own context while the
 * operator counts them in a host context on the same vCPU: both get the
 * exact number, and `vpmu list` shows the guest's context.
 */
Test(operator, guest_own_pmu_undisturbed)
{
	const char *list[] = {"list", "--json", "--no-libvirt", NULL};
	const char *stat[] = {
		"stat", "-m", "own",           "-e", "hv_hypercalls",
		"-x",   ",",  "--vpmu-fields", NULL};
	static struct vpmu_result res;
	static char out[OUT_MAX];
	const char *want = ",hv_hypercalls,301,"; /* op_own.c: 300 + read */
	char fout[128], ferr[128];
	pid_t pid;

	snprintf(fout, sizeof(fout), "%s/stat.out", rundir);
	snprintf(ferr, sizeof(ferr), "%s/stat.err", rundir);

	start_vm(0, GUEST("op_own"), "own", 1, "op_own: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 20, list), 0));
	cr_expect(not(eq(ptr, strstr(res.out, "\"guest_contexts\":1"), NULL)),
		  "%s", res.out);
	/* Counting from before the go signal until the guest's own read. */
	pid = stat_bg(stat, "own", 1, fout, ferr);
	cr_assert(eq(int, vm_bg_input(&vms[0], "g"), 0));
	cr_expect(eq(int,
		     vm_bg_wait(&vms[0], rundir, "op_own: own count", 1, 30000),
		     0));
	cr_assert(eq(int, stat_end(pid, fout, out, sizeof(out)), 0));
	cr_expect(not(eq(ptr, strstr(out, want), NULL)), "%s", out);
	slurp_file(vms[0].console, text, sizeof(text));
	cr_expect(not(eq(ptr, strstr(text, "op_own: own count 301 (read 0)"),
			 NULL)),
		  "%s", text);
}

/*
 * `vpmu run` stopped by SIGTERM ends cleanly: status 128 + 15, and its
 * registry entry and control socket are gone at once, with no scan needed.
 */
Test(operator, sigterm_stops_vm_and_removes_its_entry)
{
	char path[PATH_MAX];
	struct dirent *d;
	int status, left = 0;
	pid_t pid;
	DIR *dp;

	start_vm(0, GUEST("op_hot"), "term", 1, "op_hot: ready", 1);
	pid = vms[0].pid;
	kill(pid, SIGTERM);
	status     = vpmu_bg_wait(pid, 10000);
	vms[0].pid = 0;
	cr_assert(eq(int, status, 128 + SIGTERM));
	dp = opendir(rundir);
	cr_assert(not(eq(ptr, dp, NULL)));
	while ((d = readdir(dp))) {
		if (strstr(d->d_name, ".json") || strstr(d->d_name, ".sock")) {
			snprintf(path, sizeof(path), "%s", d->d_name);
			left++;
		}
	}
	closedir(dp);
	cr_assert(eq(int, left, 0), "left behind: %s", path);
}

/* Rows of vCPU (vcpu) in the CSV output (out) of `stat -e hv_run_ns`. */
static unsigned int vcpu_rows(const char *out, unsigned int vcpu)
{
	char want[32];

	snprintf(want, sizeof(want), ",%u,hv_run_ns,", vcpu);
	return count_str(out, want);
}

/*
 * Setup is one session_open and every interval one session_read per VM,
 * whatever the number of vCPUs (the per-context commands took 1 + 5N to
 * set up and 2N per read). The VMM counts the frames it receives.
 */
Test(operator, stat_per_vcpu_one_request_per_vm_per_interval)
{
	const char *stat[] = {"stat",       "-a",  "-e", "hv_run_ns",
			      "--per-vcpu", "-x",  ",",  "--vpmu-fields",
			      "-I",         "500", "--", "2",
			      NULL};
	static struct vpmu_result res;
	int64_t before, after, reports;
	struct ops_client c;
	unsigned int i;

	/*
	 * 8 vCPUs on a loaded host may take longer than the default 50 ms
	 * to account a kick; this test is about requests, not that bound
	 * (stale_read_is_flagged is): give them 1 s.
	 */
	cr_assert(
		eq(int, setenv("VPMU_TEST_SYNC_WAIT_NS", "1000000000", 1), 0));
	start_vm(0, GUEST("op_hot"), "eight", 8, "op_hot: ready", 1);
	unsetenv("VPMU_TEST_SYNC_WAIT_NS");
	cr_assert(eq(int, ops_client_connect(&c, sock_of()), 0));
	before = info_field(&c, "ctl_frames");
	cr_assert(eq(int, vpmu_cmd(&res, 30, stat), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	after = info_field(&c, "ctl_frames");
	ops_client_close(&c);
	cr_log_info("%s", res.out);
	/*
	 * Every report (each interval, then the total) has all 8 vCPUs. A
	 * slow host may make fewer than 4 in 2 s (a read of 8 vCPUs can
	 * outlast an interval), but at least one interval and the total;
	 * the frames below must match however many there were.
	 */
	reports = vcpu_rows(res.out, 0);
	cr_assert(ge(i64, reports, 2), "%s", res.out);
	for (i = 1; i < 8; i++)
		cr_expect(eq(i64, vcpu_rows(res.out, i), reports), "vCPU %u",
			  i);
	/* Frames of stat: hello, session_open, one session_read a report. */
	cr_expect(eq(i64, after - before - 1, 2 + reports),
		  "%lld frames for %lld reports",
		  (long long)(after - before - 1), (long long)reports);
	/* The CSV columns end with stale,kind: all fresh here. */
	cr_expect(eq(int,
		     count_str(res.out, ",0,interval\n") +
			     count_str(res.out, ",0,total\n"),
		     8 * reports),
		  "%s", res.out);
}

/*
 * No periodic wake-ups: over 1 s with a client connected and nothing
 * asked, the control thread wakes only for the request that reads the
 * counter (its header and body may arrive separately: at most 2).
 */
Test(operator, control_thread_sleeps_while_idle)
{
	struct ops_client c;
	int64_t w0, w1;

	start_vm(0, GUEST("op_hot"), "idle", 1, "op_hot: ready", 1);
	cr_assert(eq(int, ops_client_connect(&c, sock_of()), 0));
	w0 = info_field(&c, "ctl_wakeups");
	usleep(1000000);
	w1 = info_field(&c, "ctl_wakeups");
	ops_client_close(&c);
	cr_expect(le(i64, w1 - w0, 2), "%lld wake-ups in 1 s idle",
		  (long long)(w1 - w0));
}

/*
 * VPMU_TEST_SYNC_WAIT_NS=0 gives the VMM no time to bring a vCPU up to
 * date: op_hot spins in ring 3 and never halts, so every read is stale,
 * deterministically. The reply says so (stale, age_ns) and `vpmu stat`
 * marks the counts ('*' and a footnote in text, 1 in the CSV column).
 */
Test(operator, stale_read_is_flagged)
{
	const char *text_stat[] = {"stat", "-m",        "stale",
				   "-e",   "hv_run_ns", "--per-vcpu",
				   "--",   "1",         NULL};
	const char *csv_stat[]  = {"stat",      "-m", "stale", "-e",
				   "hv_run_ns", "-x", ",",     "--vpmu-fields",
				   "--",        "1",  NULL};
	struct json_object *r, *rep, *vcpus, *o, *v;
	static struct vpmu_result res;
	struct ops_client c;

	cr_assert(eq(int, setenv("VPMU_TEST_SYNC_WAIT_NS", "0", 1), 0));
	start_vm(0, GUEST("op_hot"), "stale", 2, "op_hot: ready", 1);
	unsetenv("VPMU_TEST_SYNC_WAIT_NS");
	cr_assert(eq(int, vpmu_cmd(&res, 30, text_stat), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_expect(eq(int, count_str(res.out, "* hv_run_ns"), 2), "%s", res.out);
	cr_expect(not(eq(ptr, strstr(res.out, "* not up to date"), NULL)), "%s",
		  res.out);
	cr_assert(eq(int, vpmu_cmd(&res, 30, csv_stat), 0));
	cr_expect(eq(int, count_str(res.out, ",hv_run_ns,"), 1), "%s", res.out);
	cr_expect(eq(int, count_str(res.out, ",1,total\n"), 1), "%s", res.out);
	/* The protocol: per vCPU, stale with the age of its data. */
	cr_assert(eq(int, ops_client_connect(&c, sock_of()), 0));
	/* hv_run_ns (0xe0), enabled, user+kernel+interrupt: 0x5300e0. */
	r = ops_client_req("session_open");
	json_object_object_add(
		r, "pmcs",
		json_tokener_parse("[{\"num\":0,\"value\":5439712}]"));
	cr_assert(eq(int, ops_client_call(&c, r, NULL), 0), "%s", c.err);
	r = ops_client_req("session_read");
	json_object_object_add(r, "session", json_object_new_int(0));
	cr_assert(eq(int, ops_client_call(&c, r, &rep), 0), "%s", c.err);
	cr_assert(json_object_object_get_ex(rep, "vcpus", &vcpus));
	cr_assert(eq(sz, json_object_array_length(vcpus), 2));
	o = json_object_array_get_idx(vcpus, 1);
	cr_expect(json_object_object_get_ex(o, "stale", &v) &&
		  json_object_get_boolean(v));
	cr_expect(json_object_object_get_ex(o, "age_ns", &v) &&
			  json_object_get_uint64(v) > 0,
		  "%s", json_object_to_json_string(rep));
	json_object_put(rep);
	ops_client_close(&c);
}

/* Samples of op_chain whose chain is hot <- middle <- outer. */
struct chain_count {
	struct symtab st;
	uint64_t n, full;
};

static bool named(const struct symtab *st, uint64_t ip, const char *name)
{
	const struct sym *s = symtab_find(st, ip);

	return s && !strcmp(s->name, name);
}

static int count_chain(void *opaque, const struct rec_sample *s)
{
	struct chain_count *c = opaque;

	c->n++;
	/* Return addresses: the call is at (address - 1). */
	if (named(&c->st, s->ip, "hot") && s->nr_chain >= 2 &&
	    named(&c->st, s->chain[0] - 1, "middle") &&
	    named(&c->st, s->chain[1] - 1, "outer"))
		c->full++;
	return 0;
}

/* The line of op_chain.c after the tag (tag), found in (src). */
static int line_after(const char *src, const char *tag)
{
	const char *p = strstr(src, tag);
	int line      = 2; /* the line after the tag's */

	cr_assert(not(eq(ptr, (void *)p, NULL)), "no %s in op_chain.c", tag);
	for (const char *q = src; q < p; q++)
		line += *q == '\n';
	return line;
}

/*
 * The lines of op_chain.c's inner loop in hot(): from its "for" (after
 * the tag OP_CHAIN_LOOP_FIRST) to its body (after OP_CHAIN_HOT_LINE).
 */
static void chain_loop_lines(int *first, int *last)
{
	static char src[1 << 16];

	slurp_file(VPMU_SOURCE_DIR "/tests/kvm/guests/op_chain.c", src,
		   sizeof(src));
	*first = line_after(src, "/* OP_CHAIN_LOOP_FIRST is the next line. */");
	*last  = line_after(src, "/* OP_CHAIN_HOT_LINE is the next line. */");
	cr_assert(lt(int, *first, *last));
}

/*
 * In the "all vCPUs" table of `report --sort srcline` (out): the share of
 * samples on op_chain.c lines (first)..(last); the first row's place in
 * (top).
 */
static double srcline_share(const char *out, int first, int last, char *top,
			    size_t toplen)
{
	const char *p = strstr(out, " all vCPUs: ");
	double pct, sum = 0;
	char where[128];
	int line;

	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", out);
	p = strchr(p, '\n');
	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", out);
	cr_assert(eq(int, strncmp(p + 1, "OVERHEAD", 8), 0), "%s", out);
	top[0] = '\0';
	/* Rows "  98.07%       1934  op_chain.c:24" up to the next header. */
	for (p = strchr(p + 1, '\n'); p && p[1] && p[1] != '#';
	     p = strchr(p + 1, '\n')) {
		if (sscanf(p + 1, " %lf%% %*u %127s", &pct, where) != 2)
			break;
		if (!top[0])
			snprintf(top, toplen, "%s", where);
		if (sscanf(where, "op_chain.c:%d", &line) == 1 &&
		    line >= first && line <= last)
			sum += pct;
	}
	cr_assert(not(eq(chr, top[0], '\0')), "no rows: %s", out);
	return sum;
}

Test(operator, record_call_graph_three_deep)
{
	char file[128], top[128], err[256];
	const char *rec[]  = {"record", "-m", "chain", "-g", "-F", "1000",
			      "-o",     file, "--",    "2",  NULL};
	const char *fold[] = {"report", "--folded", file, NULL};
	const char *src[]  = {"report",  "-i", file,   "--sort",
			      "srcline", "-g", "none", NULL};
	static struct vpmu_result res;
	struct chain_count c = {0};
	struct rec_header h;
	int first, last, line = 0;
	double pct;

	snprintf(file, sizeof(file), "%s/chain.rec", rundir);
	start_vm(0, GUEST("op_chain"), "chain", 1, "op_chain: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rec), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_assert(eq(int, symtab_load(&c.st, GUEST("op_chain")), 0));
	cr_assert(eq(int, rec_read(file, &h, count_chain, &c, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_expect(h.callchain);
	cr_expect(lt(sz, 0, strlen(h.vms[0].build_id)), "no build-id recorded");
	rec_header_free(&h);
	symtab_free(&c.st);
	cr_log_info("%llu of %llu samples: hot <- middle <- outer",
		    (unsigned long long)c.full, (unsigned long long)c.n);
	cr_assert(ge(u64, c.n, 100), "%llu samples", (unsigned long long)c.n);
	cr_expect(ge(u64, c.full * 100, c.n * 90),
		  "the call path is in %llu of %llu samples",
		  (unsigned long long)c.full, (unsigned long long)c.n);
	/* Full stacks for flame graphs. */
	cr_assert(eq(int, vpmu_cmd(&res, 30, fold), 0));
	cr_expect(not(eq(ptr, strstr(res.out, ";outer;middle;hot "), NULL)),
		  "%s", res.out);
	/*
	 * The hot loop's file and lines lead the source-line profile. Which
	 * of its lines gets most depends on the host (see op_chain.c), so the
	 * loop is taken whole: one of its lines is first, and together they
	 * hold most samples.
	 */
	cr_assert(eq(int, vpmu_cmd(&res, 30, src), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_log_info("%s", res.out);
	chain_loop_lines(&first, &last);
	pct = srcline_share(res.out, first, last, top, sizeof(top));
	cr_log_info("inner loop op_chain.c:%d-%d: %.2f%% of samples; first "
		    "row %s",
		    first, last, pct, top);
	cr_expect(eq(int, sscanf(top, "op_chain.c:%d", &line), 1), "%s",
		  res.out);
	cr_expect(ge(int, line, first), "first row %s\n%s", top, res.out);
	cr_expect(le(int, line, last), "first row %s\n%s", top, res.out);
	cr_expect(ge(dbl, pct, 50.0), "%s", res.out);
}

/*
 * At a configured limit the throttle engages on a real guest and
 * is reported: a 1 % budget for a 10 kHz recording of a ring-3 loop
 * (every sample a kick) drops samples, counted in the file's end line and
 * named in record's warning; report prints the count.
 */
Test(operator, throttle_engages_at_configured_budget)
{
	char file[128];
	const char *rec[] = {"record",    "-m", "hot",    "-e",
			     "hv_run_ns", "-c", "100000", "--max-overhead",
			     "1",         "-o", file,     "--",
			     "2",         NULL};
	const char *rep[] = {"report", file, NULL};
	static struct vpmu_result res;
	struct rec_header h;
	char err[256];

	snprintf(file, sizeof(file), "%s/thr.rec", rundir);
	start_vm(0, GUEST("op_hot"), "hot", 1, "op_hot: ready", 1);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rec), 0));
	cr_assert(eq(int, res.status, 0), "%s", res.err);
	cr_log_info("%s", res.err);
	cr_assert(eq(int, rec_read(file, &h, NULL, NULL, err, sizeof(err)), 0),
		  "%s", err);
	cr_expect(lt(u64, 0, h.throttled), "%s", res.err);
	rec_header_free(&h);
	cr_expect(
		not(eq(ptr, strstr(res.err, "throttled by its limits"), NULL)),
		"%s", res.err);
	cr_assert(eq(int, vpmu_cmd(&res, 30, rep), 0));
	cr_expect(not(eq(ptr, strstr(res.out, "# throttled "), NULL)), "%s",
		  res.out);
}

/*
 * A guest kernel that lies in its process records (PVPMU_HC_TASK) is
 * refused, record by record, and a flood is cut at the VMM's rate and
 * table: the guest (pv_tasks) counts the answers it got, and the VMM's
 * counters, read by an operator with guest_tasks, must agree with them
 * exactly; the well-behaved process's records, sent first, are intact.
 */
Test(operator, hostile_process_records_are_refused_and_counted)
{
	unsigned int sent = 0, refused = 0, taken = 0, dropped = 0, nr, i;
	struct json_object *rep, *req, *tasks, *o, *v;
	struct vmm_reg_entry *e;
	struct ops_client c;
	const char *line;

	start_vm(0, GUEST("pv_tasks"), "tasks", 1, "pv_tasks: sent", 1);
	cr_assert(eq(int, slurp_file(vms[0].console, text, sizeof(text)), 0));
	line = strstr(text, "pv_tasks: sent");
	cr_assert(eq(int,
		     sscanf(line,
			    "pv_tasks: sent %u, refused %u, taken %u, "
			    "dropped %u",
			    &sent, &refused, &taken, &dropped),
		     4),
		  "%s", text);
	cr_expect(eq(u32, refused, 8), "%s", text);
	cr_expect(lt(u32, 0, dropped), "%s", text);
	cr_assert(eq(int, ops_client_discover(rundir, &e, &nr, NULL), 0));
	cr_assert(eq(u32, nr, 1));
	cr_assert(eq(int, ops_client_connect(&c, e[0].socket), 0), "%s", c.err);
	free(e);
	req = ops_client_req("guest_tasks");
	json_object_object_add(req, "since", json_object_new_uint64(0));
	cr_assert(eq(int, ops_client_call(&c, req, &rep), 0), "%s", c.err);
	json_object_object_get_ex(rep, "refused", &v);
	cr_expect(eq(u64, json_object_get_uint64(v), refused));
	json_object_object_get_ex(rep, "dropped", &v);
	cr_expect(eq(u64, json_object_get_uint64(v), dropped));
	json_object_object_get_ex(rep, "taken", &v);
	cr_expect(eq(u64, json_object_get_uint64(v), taken));
	json_object_object_get_ex(rep, "held", &v);
	cr_expect(le(u64, json_object_get_uint64(v), 4096));
	json_object_object_get_ex(rep, "more", &v);
	cr_expect(json_object_get_boolean(v), "a reply holds at most 256");
	cr_assert(json_object_object_get_ex(rep, "tasks", &tasks));
	cr_assert(eq(u64, json_object_array_length(tasks), 256));
	o = json_object_array_get_idx(tasks, 0);
	cr_expect(eq(str,
		     (char *)json_object_get_string(
			     json_object_object_get(o, "comm")),
		     "victim"));
	o = json_object_array_get_idx(tasks, 1);
	cr_expect(eq(str,
		     (char *)json_object_get_string(
			     json_object_object_get(o, "path")),
		     "/bin/victim"));
	cr_expect(eq(int, json_object_get_int(json_object_object_get(o, "pid")),
		     7));
	for (i = 2; i < 256; i++) {
		o = json_object_array_get_idx(tasks, i);
		cr_expect(eq(str,
			     (char *)json_object_get_string(
				     json_object_object_get(o, "comm")),
			     "flood"),
			  "record %u", i);
	}
	json_object_put(rep);
	ops_client_close(&c);
	cr_assert(eq(int, vm_bg_input(&vms[0], "q"), 0));
	cr_assert(eq(int, vpmu_bg_wait(vms[0].pid, 10000), 0));
	vms[0].pid = 0; /* reaped */
	cr_assert(eq(int, slurp_file(vms[0].console, text, sizeof(text)), 0));
	cr_expect(not(eq(ptr, strstr(text, "pv_tasks: ok"), NULL)), "%s", text);
}
