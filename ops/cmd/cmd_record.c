// SPDX-License-Identifier: MIT
/*
 * cmd_record.c: `vpmu record`, sampling every vCPU of the chosen VMs into
 * a record file (record_file.h). Each vCPU gets a host context with a
 * default-format buffer; the VMM drains full buffers promptly and this
 * command fetches the samples every 100 ms, sleeping in between. The file is
 * written to FILE.tmp and renamed when complete, also on Ctrl-C or SIGTERM, so
 * FILE is never truncated. A VM that disappears is reported and noted in the
 * file; the others go on.
 */
#include "ops_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_parse.h"
#include "pvpmu/abi.h"
#include "ctl_client.h"
#include "elf_symbols.h"
#include "record_file.h"
#include "vm_config.h"

struct record_opts {
	struct ops_select sel; /* first: OPS_SELECT_ROWS */
	const char *out;
	uint64_t period, freq, buf_kib;
	uint64_t max_overhead; /* %, 0: the VM's budget */
	double duration;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct record {
	struct record_opts o; /* first: the parser's ctx is the record */
	struct ops_session s;
	struct rec_writer w;
	int write_err;
	uint64_t lost, t0;
	uint64_t *vm_lost;
	uint64_t *vm_samples;       /* samples written per VM */
	struct record_tasks *tasks; /* per VM */
};

/* A VM's process records: the newest one written, the stream's counts. */
struct record_tasks {
	uint64_t gen;
	struct ops_task_stats st;
	bool unsupported; /* an older VMM */
	bool gone_noted;  /* its vm_gone note is written */
};

static void put_sample(void *opaque, const struct ops_sample *smp)
{
	struct record *r     = opaque;
	struct rec_sample rs = {
		.vm      = smp->vm,
		.cpu     = smp->vcpu,
		.set     = smp->set,
		.ip      = smp->ip,
		.tstamp  = smp->tstamp,
		.nr_vals = smp->nr_vals,
		.missed  = smp->missed,
		.period  = smp->period,
		.pid     = smp->pid,
		.tid     = smp->tid,
	};

	memcpy(rs.vals, smp->vals, sizeof(rs.vals));
	rs.nr_chain =
		smp->nr_chain < REC_CHAIN_MAX ? smp->nr_chain : REC_CHAIN_MAX;
	memcpy(rs.chain, smp->chain, rs.nr_chain * sizeof(rs.chain[0]));
	if (!r->write_err)
		r->write_err = rec_sample(&r->w, &rs);
	if (!r->write_err && smp->vm < r->s.nr_vms)
		r->vm_samples[smp->vm]++;
}

static int put_task(void *opaque, const struct rec_task *t)
{
	struct record *r = opaque;

	if (!r->write_err)
		r->write_err = rec_task_note(&r->w, t);
	return r->write_err;
}

/*
 * The guest processes' names and mappings reported since the last call,
 * written before the samples that name them.
 */
static void tasks_all(struct record *r)
{
	struct record_tasks *t;
	unsigned int vm;

	for (vm = 0; vm < r->s.nr_vms; vm++) {
		t = &r->tasks[vm];
		if (r->s.vms[vm].gone || t->unsupported)
			continue;
		if (ops_guest_tasks(&r->s, vm, &t->gen, put_task, r, &t->st) ==
		    -ENOSYS)
			t->unsupported = true;
	}
}

/*
 * Fetch every live VM's samples; note VMs that went away. Called every
 * 100 ms (DRAIN_NS): the VMM keeps what it copied out of full buffers, so this
 * rate only bounds memory and latency, not the sample rate.
 */
static void drain_all(struct record *r)
{
	unsigned int vm;
	uint64_t lost;

	for (vm = 0; vm < r->s.nr_vms; vm++) {
		if (!r->s.vms[vm].gone &&
		    !ops_drain(&r->s, vm, put_sample, r, &lost))
			r->vm_lost[vm] = lost;
		/*
		 * However its end was noticed (a failed drain, its socket
		 * closing while we slept), the file says so once.
		 */
		if (r->s.vms[vm].gone && !r->tasks[vm].gone_noted &&
		    !r->write_err) {
			r->write_err            = rec_note(&r->w, vm,
                                                r->s.vms[vm].cl.err[0]
								   ? r->s.vms[vm].cl.err
								   : "disappeared");
			r->tasks[vm].gone_noted = true;
		}
	}
}

static int add_events(const struct cli_cmd *cmd, void *ctx, const char *v)
{
	struct record *r = ctx;

	(void)cmd;
	return ops_parse_events(&r->s, v);
}

static int set_callgraph(const struct cli_cmd *cmd, void *ctx, const char *v)
{
	struct record *r = ctx;

	(void)cmd;
	(void)v;
	r->s.callchain = VMM_CTL_CHAIN_MAX;
	return 0;
}

static const struct cli_opt record_opts[] = {
	OPS_SELECT_ROWS,
	CLI_FN('e', "event", "EVENTS", add_events,
	       "sample on the first (default hv_guest_cycles);\n"
	       "the others are recorded in each sample;\n"
	       "modifiers NAME:u/k/G/h as in 'vpmu stat'"),
	CLI_UINT('c', "count", "PERIOD", struct record_opts, period, 1,
		 "a sample every PERIOD events"),
	CLI_UINT('F', "freq", "HZ", struct record_opts, freq, 1,
		 "HZ samples per second of guest run time\n"
		 "(time events only; default 1000)"),
	CLI_STR('o', "output", "FILE", struct record_opts, out,
		"write FILE (default vpmu.rec)"),
	CLI_UINT(0, "buffer-kib", "N", struct record_opts, buf_kib, 1,
		 "sampling buffer per vCPU (default 256)"),
	CLI_UINT(0, "max-overhead", "PCT", struct record_opts, max_overhead, 1,
		 "at most PCT % of each vCPU's time for this\n"
		 "recording (1-100; never above the VM's budget,\n"
		 "default 25): with -F the period is raised, with\n"
		 "-c samples are dropped and counted"),
	CLI_FN('g', "call-graph", NULL, set_callgraph,
	       "record the guest's call chain with each sample: the\n"
	       "VMM walks its frame pointers (up to 32 callers) through\n"
	       "its page tables"),
	{0},
};

static const struct cli_cmd record_cmd = {
	.name            = "record",
	.args            = "[-- SECONDS]",
	.summary         = "sample every vCPU of the chosen VMs into a file",
	.opts            = record_opts,
	.operands        = CLI_OPERANDS_ANY,
	.stop_at_operand = true,
	.help = "  Writes FILE (JSON lines: see 'vpmu report') atomically "
		"when\n"
		"  SECONDS have passed, on Ctrl-C or when every VM has gone.\n",
};

static int parse(int argc, char **argv, struct record *r)
{
	struct cli_rest rest;
	int ret;

	r->o.out     = "vpmu.rec";
	r->o.buf_kib = 256;
	ret          = cli_parse(&record_cmd, r, argc, argv, &rest);
	if (ret)
		return ret;
	if (rest.argc > 1)
		ret = cli_error(&record_cmd,
				"after --, one duration in seconds");
	else if (rest.argc == 1)
		ret = cli_parse_num(&record_cmd, "--", rest.argv[0], 1,
				    &r->o.duration);
	cli_rest_free(&rest);
	if (!ret && !r->s.nr_ev)
		ret = ops_parse_events(&r->s, "hv_guest_cycles");
	if (!ret && r->o.period && r->o.freq)
		ret = cli_error(&record_cmd, "-c and -F exclude each other");
	if (!ret && !r->o.period && !r->o.freq)
		r->o.freq = 1000;
	if (!ret && r->o.max_overhead > 100)
		ret = cli_error(&record_cmd,
				"--max-overhead %llu: a percentage from 1 to "
				"100",
				(unsigned long long)r->o.max_overhead);
	/* No VM accepts more (each VM may have a lower maximum). */
	if (!ret && r->o.freq > VMM_SMPL_RATE_CAP)
		ret = cli_error(&record_cmd,
				"-F %llu: above the maximum sample rate of "
				"%u Hz (a VM's own maximum, 'vpmu run "
				"--max-sample-rate', may be lower)",
				(unsigned long long)r->o.freq,
				VMM_SMPL_RATE_CAP);
	r->s.max_overhead = (unsigned int)r->o.max_overhead;
	r->s.freq_mode    = r->o.freq != 0;
	return ret;
}

/* The sampling period for -F: time events only. */
static int period_of(struct record *r)
{
	const struct ops_event *ev = &r->s.ev[0];
	uint64_t khz               = 0;
	unsigned int i;

	if (r->o.period)
		return 0;
	for (i = 0; i < r->s.nr_vms && !khz; i++)
		khz = r->s.vms[i].gone ? 0 : r->s.vms[i].e.tsc_khz;
	/*
	 * Rounded up: a period rounded down samples faster than asked, and
	 * a rate at a VM's maximum would then be refused as above it.
	 */
	if (ev->code == PVPMU_EV_HV_RUN_NS)
		r->o.period = (1000000000ULL + r->o.freq - 1) / r->o.freq;
	else if (ev->code == PVPMU_EV_HV_GUEST_CYCLES && khz)
		r->o.period = (khz * 1000ULL + r->o.freq - 1) / r->o.freq;
	if (!r->o.period) {
		fprintf(stderr,
			"vpmu record: -F needs a time event (hv_run_ns, "
			"hv_guest_cycles with a known TSC rate); use -c "
			"PERIOD for %s\n",
			ev->name);
		return -EINVAL;
	}
	return 0;
}

/* The image's GNU build-id, checked by `vpmu report` ("" if none). */
static void image_build_id(const char *image, char *buf, size_t len)
{
	struct symtab t;

	buf[0] = '\0';
	if (!symtab_load(&t, image)) {
		symtab_build_id_hex(&t, buf, len);
		symtab_free(&t);
	}
}

static int open_file(struct record *r)
{
	struct rec_header h = {.code    = r->s.ev[0].code,
			       .period  = r->o.period,
			       .freq    = r->o.freq,
			       .created = (int64_t)time(NULL)};
	unsigned int i;
	int ret;

	snprintf(h.event, sizeof(h.event), "%s", r->s.ev[0].name);
	for (i = 0; i < r->s.nr_ev && i < REC_EVENTS_MAX; i++)
		snprintf(h.events[i], sizeof(h.events[i]), "%s",
			 r->s.ev[i].name);
	h.nr_events = i;
	h.callchain = r->s.callchain > 0;
	h.nr_vms    = r->s.nr_vms;
	h.vms       = calloc(h.nr_vms, sizeof(*h.vms));
	if (!h.vms)
		return -ENOMEM;
	for (i = 0; i < h.nr_vms; i++) {
		const struct vmm_reg_entry *e = &r->s.vms[i].e;

		snprintf(h.vms[i].uuid, sizeof(h.vms[i].uuid), "%s", e->uuid);
		snprintf(h.vms[i].name, sizeof(h.vms[i].name), "%s", e->name);
		snprintf(h.vms[i].image, sizeof(h.vms[i].image), "%s",
			 e->image);
		h.vms[i].nr_vcpus = e->nr_vcpus;
		h.vms[i].tsc_khz  = e->tsc_khz;
		image_build_id(e->image, h.vms[i].build_id,
			       sizeof(h.vms[i].build_id));
	}
	ret = rec_open(&r->w, r->o.out, &h);
	free(h.vms);
	if (ret)
		fprintf(stderr, "vpmu record: %s.tmp: %s%s\n", r->o.out,
			strerror(-ret),
			ret == -EEXIST || ret == -EPERM
				? " (another user's file is in the way: "
				  "choose another -o FILE)"
				: "");
	return ret;
}

static void progress(struct record *r, uint64_t *last)
{
	uint64_t now = vpmu_monotonic_ns();
	bool tty     = isatty(STDERR_FILENO);

	if (now - *last < (tty ? 1 : 10) * 1000000000ULL)
		return;
	*last = now;
	fprintf(stderr, "%svpmu record: %.0f s, %llu samples from %u VM%s%s",
		tty ? "\r" : "", (double)(now - r->t0) / 1e9,
		(unsigned long long)r->w.samples, r->s.nr_live,
		r->s.nr_live == 1 ? "" : "s", tty ? "  " : "\n");
}

#define DRAIN_NS 100000000ULL /* fetch the samples every 100 ms */

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

/*
 * Sleep (ops_wait) until the next drain, the progress line, the
 * end, a signal or a VM's end: no other wake-up.
 */
static const char *run(struct record *r)
{
	static const int sigs[] = {SIGINT, SIGTERM, 0};
	uint64_t end            = r->o.duration > 0
					  ? r->t0 + (uint64_t)(r->o.duration * 1e9)
					  : UINT64_MAX;
	uint64_t step = (isatty(STDERR_FILENO) ? 1 : 10) * 1000000000ULL;
	uint64_t last = r->t0, next = r->t0, now; /* drain at once */
	struct ops_wait w;

	if (ops_wait_begin(&w, &r->s, 0, sigs))
		r->write_err = -ENOMEM;
	while (!stop_flag && r->s.nr_live && !r->write_err) {
		now = vpmu_monotonic_ns();
		if (now >= end)
			break;
		if (now >= next) {
			tasks_all(r);
			drain_all(r);
			next += DRAIN_NS;
			if (next <= now) /* a slow drain: no burst after it */
				next = now + DRAIN_NS;
		}
		progress(r, &last);
		ops_wait(&w, &r->s, min3(end, next, last + step));
	}
	if (w.p)
		ops_wait_end(&w);
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);
	tasks_all(r);
	drain_all(r); /* what the VMs still hold */
	if (stop_flag)
		return "interrupted";
	return r->s.nr_live ? "done" : "every VM disappeared";
}

/*
 * The achieved sample rate of VM (vm) per sampled vCPU and
 * second of wall time, beside the requested one, and why it falls short
 * (below 90 %): sample_rate.c.
 */
/*
 * The monitoring cost the VMM measured on the sampled vCPUs over
 * the recording, the share of vCPU time the overhead budget holds: of the
 * threads' CPU time where the VMM reports it (time inside KVM_RUN is
 * known only when KVM_RUN returns: a vCPU inside it all along read as
 * nothing but cost), else of run time plus cost.
 */
static void print_cost(const struct ops_vm *v, const char *lead)
{
	uint64_t run = 0, cost = 0, cpu = 0;
	unsigned int i;

	for (i = 0; i < VMM_CTL_SESSION_VCPUS; i++) {
		if (!v->thr[i].seen)
			continue;
		run += v->thr[i].run_ns - v->thr[i].run0;
		cost += v->thr[i].cost_ns - v->thr[i].cost0;
		cpu += v->thr[i].cpu_ns - v->thr[i].cpu0;
	}
	if (cpu)
		run = cost < cpu ? cpu - cost : 0;
	if (run + cost)
		fprintf(stderr,
			"%smonitoring cost %.1f %% of vCPU time (VMM's "
			"measure)\n",
			lead, 100.0 * (double)cost / (double)(run + cost));
}

static void print_rate(struct record *r, unsigned int vm, double wall_s)
{
	const struct ops_vm *v = &r->s.vms[vm];
	char lead[128], warn[160];
	struct ops_rate_win win;
	struct ops_rate rate;

	ops_rate_window(v, r->vm_samples[vm], NULL, &win);
	r->w.throttled += win.throttled;
	r->w.missed += win.missed;
	ops_rate_judge(&win, wall_s,
		       ops_rate_requested(r->o.freq, r->o.period,
					  r->s.ev[0].code, v->e.tsc_khz),
		       &rate);
	snprintf(lead, sizeof(lead), "vpmu record: VM '%s': ", v->e.name);
	snprintf(warn, sizeof(warn), "vpmu record: warning: VM '%s' ",
		 v->e.name);
	ops_rate_print(stderr, lead, warn, &win, &rate);
	print_cost(v, lead);
}

static int finish(struct record *r, const char *why)
{
	double wall_s = (double)(vpmu_monotonic_ns() - r->t0) / 1e9;
	unsigned int i;
	int ret;

	for (i = 0; i < r->s.nr_vms; i++) {
		const struct ops_task_stats *st = &r->tasks[i].st;

		r->w.tasks_refused += st->refused;
		r->w.tasks_dropped += st->dropped;
		if (st->refused || st->dropped)
			fprintf(stderr,
				"vpmu record: VM '%s': its kernel's process "
				"records: %llu taken, %llu refused as "
				"malformed, %llu dropped over the limits "
				"(samples of those processes may show no "
				"name or symbol)\n",
				r->s.vms[i].e.name,
				(unsigned long long)st->taken,
				(unsigned long long)st->refused,
				(unsigned long long)st->dropped);
		r->lost += r->vm_lost[i];
		print_rate(r, i, wall_s);
		if (r->s.vms[i].snap_pauses && !r->write_err)
			r->write_err =
				rec_snap_note(&r->w, i, r->s.vms[i].snap_pauses,
					      r->s.vms[i].snap_pause_ns);
	}
	if (r->write_err) {
		fprintf(stderr, "vpmu record: writing %s.tmp: %s (removed)\n",
			r->o.out, strerror(-r->write_err));
		rec_abort(&r->w);
		return 1;
	}
	ret = rec_finish(&r->w, r->lost, vpmu_monotonic_ns() - r->t0, why);
	if (ret) {
		fprintf(stderr, "vpmu record: %s: %s\n", r->o.out,
			strerror(-ret));
		return 1;
	}
	fprintf(stderr, "vpmu record: %s: %llu samples (%llu lost), %s\n",
		r->o.out, (unsigned long long)r->w.samples,
		(unsigned long long)r->lost, why);
	return 0;
}

int ops_cmd_record(int argc, char **argv)
{
	struct record r     = {.s.prog = "vpmu record"};
	struct sigaction sa = {.sa_handler = on_signal};
	const char *why;
	int ret;

	ret = parse(argc, argv, &r);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	if (ops_open(&r.s, &r.o.sel))
		return 1;
	r.vm_lost    = calloc(r.s.nr_vms, sizeof(*r.vm_lost));
	r.vm_samples = calloc(r.s.nr_vms, sizeof(*r.vm_samples));
	r.tasks      = calloc(r.s.nr_vms, sizeof(*r.tasks));
	/* Signals only stop the loop: the file is always finished. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = !r.vm_lost || !r.vm_samples || !r.tasks || period_of(&r) ||
	      open_file(&r);
	if (!ret && ops_start_sampling(&r.s, r.o.period, r.o.buf_kib << 10)) {
		rec_abort(&r.w);
		fprintf(stderr, "vpmu record: no VM could be sampled\n");
		ret = 1;
	}
	if (ret) {
		ops_close(&r.s);
		free(r.vm_lost);
		free(r.vm_samples);
		free(r.tasks);
		return 1;
	}
	r.t0 = vpmu_monotonic_ns();
	why  = run(&r);
	ret  = finish(&r, why);
	ops_close(&r.s);
	free(r.vm_lost);
	free(r.vm_samples);
	free(r.tasks);
	return ret;
}
