// SPDX-License-Identifier: MIT
/*
 * cmd_stat.c: `vpmu stat`, counting events on every vCPU of the chosen VMs
 * through host contexts. More events than the 8 counters are spread over
 * event sets switched on vCPU run time (PFM_SETFL_TIME_SWITCH); counts are
 * then scaled by enabled / running time, and both times are shown.
 */
#include "ops_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_parse.h"
#include "ctl_client.h"
#include "run_stats.h"

struct stat_opts {
	struct ops_select sel; /* first: OPS_SELECT_ROWS */
	const char *sep, *output;
	bool json, per_vcpu, vpmu_fields, detailed;
	uint64_t interval_ms, switch_ms, repeat;
	uint64_t max_overhead; /* %, 0: the VM's budget */
	double duration;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* One output row: counts of one event for a VM (or all VMs), one vCPU
 * (or all). */
struct stat_row {
	const char *vm, *uuid;
	unsigned int vmi; /* index of the VM; nr_vms for "all" */
	int vcpu;         /* -1: all vCPUs */
	unsigned int ev;
	uint64_t raw, enabled, running;
	uint64_t count;   /* scaled */
	bool stale;       /* some of it could not be brought up to date */
	bool unsupported; /* -d: refused by this host (ev: s.refused[]) */
	const struct run_stats *rs; /* -r: the count over the runs */
};

/* -r N: what a row of the output saw over the runs. */
struct rep_slot {
	struct stat_row start; /* cumulative at the start of this run */
	struct stat_row sum;   /* deltas of the runs, summed */
	struct run_stats rs;   /* the scaled count of each run */
};

/* What report_vm() does with its rows. */
enum stat_pass {
	PASS_PRINT, /* print them */
	PASS_START, /* -r: keep them as the start of a run */
	PASS_END,   /* -r: end of a run: add the deltas to the slots */
};

/* Per VM, per vCPU: counts at the start of the interval. */
struct stat_state {
	struct stat_opts o; /* first: the parser's ctx is the state */
	struct ops_session s;
	struct ops_counts *prev; /* [vm * VMM_CTL_SESSION_VCPUS + vcpu] */
	struct ops_counts now[VMM_CTL_SESSION_VCPUS]; /* one VM's read */
	uint64_t t0;
	uint64_t stale_age_ns; /* oldest stale count of this report */
	uint64_t throttled;    /* of this report, all VMs */
	/* Effective set switch intervals seen (0: none), and the
	 * switches the overhead budget delayed, of this report. */
	uint64_t sw_min_ns, sw_max_ns, sw_stretched;
	bool has_stale;
	FILE *out;        /* stdout, or -o FILE */
	bool group;       /* thousands separators: text on a terminal */
	bool header_done; /* the text header is printed once */
	char **cmd;       /* -- COMMAND [ARGS...], or NULL */
	pid_t child;      /* its pid while it runs */
	int child_status; /* its exit status */
	enum stat_pass pass;
	struct rep_slot *rep; /* -r: [rep_index()] */
	unsigned int runs;    /* -r: runs done */
};

static uint64_t scaled(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (running && running < enabled)
		return (uint64_t)((double)raw * (double)enabled /
				  (double)running);
	return raw;
}

/* (v) with a ',' every three digits when (group). */
static const char *fmt_count(char *buf, size_t len, uint64_t v, bool group)
{
	char digits[32];
	size_t n, i, o = 0;

	n = (size_t)snprintf(digits, sizeof(digits), "%llu",
			     (unsigned long long)v);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (group && i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* -r: the slot of a row: VM-major, then vCPU (all first), then event. */
static size_t rep_index(const struct stat_state *st, const struct stat_row *r)
{
	return ((size_t)r->vmi * (VMM_CTL_SESSION_VCPUS + 1) +
		(size_t)(r->vcpu + 1)) *
		       st->s.nr_ev +
	       r->ev;
}

static size_t rep_slots(const struct stat_state *st)
{
	return ((size_t)st->s.nr_vms + 1) * (VMM_CTL_SESSION_VCPUS + 1) *
	       st->s.nr_ev;
}

/* -r: keep (r) as a run's start, or add its delta since the start. */
static void collect(struct stat_state *st, const struct stat_row *r)
{
	struct rep_slot *sl = &st->rep[rep_index(st, r)];
	struct stat_row d   = *r;

	if (st->pass == PASS_START) {
		sl->start = *r;
		return;
	}
	d.raw -= sl->start.raw;
	d.enabled -= sl->start.enabled;
	d.running -= sl->start.running;
	d.count -= sl->start.count;
	run_stats_add(&sl->rs, (double)d.count);
	if (sl->rs.n == 1)
		sl->sum = d;
	else {
		sl->sum.raw += d.raw;
		sl->sum.enabled += d.enabled;
		sl->sum.running += d.running;
		sl->sum.stale |= d.stale;
	}
}

/* The event of (r): a counted one, or one the host refused. */
static const char *ev_name(const struct stat_state *st,
			   const struct stat_row *r)
{
	return r->unsupported ? st->s.refused[r->ev] : st->s.ev[r->ev].name;
}

/* -x / -j in perf stat's shape (not --vpmu-fields)? */
static bool perf_fields(const struct stat_state *st)
{
	return (st->o.json || st->o.sep) && !st->o.vpmu_fields;
}

/* vpmu's own CSV / JSON fields (--vpmu-fields): VM, uuid, raw, stale... */
static void row_vpmu(struct stat_state *st, double t, bool total,
		     const struct stat_row *r, const char *cpu)
{
	const char *sep = st->o.sep, *ev = ev_name(st, r);
	const char *kind = r->unsupported ? "not_supported"
			   : r->rs        ? "mean"
			   : total        ? "total"
					  : "interval";
	FILE *out        = st->out;

	if (st->o.json) {
		fprintf(out,
			"{\"time_s\": %.3f, \"vm\": \"%s\", \"uuid\": "
			"\"%s\", \"vcpu\": \"%s\", \"event\": \"%s\", "
			"\"count\": %llu, \"raw\": %llu, \"enabled_ns\": "
			"%llu, \"running_ns\": %llu, \"stale\": %s, "
			"\"kind\": \"%s\"",
			t, r->vm, r->uuid, cpu, ev,
			(unsigned long long)r->count,
			(unsigned long long)r->raw,
			(unsigned long long)r->enabled,
			(unsigned long long)r->running,
			r->stale ? "true" : "false", kind);
		if (st->s.nr_sets > 1)
			fprintf(out, ", \"set\": %u", r->ev / OPS_COUNTERS);
		if (r->rs)
			fprintf(out,
				", \"runs\": %llu, \"stddev\": %.3f, "
				"\"rel_stddev_pct\": %.2f",
				(unsigned long long)r->rs->n,
				run_stats_stddev(r->rs),
				run_stats_rel_stddev_pct(r->rs));
		fputs("}\n", out);
		return;
	}
	fprintf(out,
		"%.3f%s%s%s%s%s%s%s%s%s%llu%s%llu%s%llu%s%llu%s%d%s%"
		"s",
		t, sep, r->vm, sep, r->uuid, sep, cpu, sep, ev, sep,
		(unsigned long long)r->count, sep, (unsigned long long)r->raw,
		sep, (unsigned long long)r->enabled, sep,
		(unsigned long long)r->running, sep, r->stale, sep, kind);
	if (r->rs) /* -r: runs, stddev, rel_stddev_pct */
		fprintf(out, "%s%llu%s%.3f%s%.2f", sep,
			(unsigned long long)r->rs->n, sep,
			run_stats_stddev(r->rs), sep,
			run_stats_rel_stddev_pct(r->rs));
	fputc('\n', out);
}

/*
 * The unit perf prints beside a count: "ns" for the events that count
 * nanoseconds (as perf's duration_time), none for the others.
 */
static const char *unit_of(const char *ev)
{
	size_t n = strcspn(ev, ":");

	return n > 3 && !strncmp(ev + n - 3, "_ns", 3) ? "ns" : "";
}

/*
 * perf stat's CSV (-x) and JSON (-j) fields, in perf's order and with its
 * keys (tools/perf/Documentation/perf-stat.txt, CSV FORMAT; stat-display.c):
 *   [interval,] [CPU<n>,] counter-value, unit, event, [cgroup,] [variance,]
 *   event-runtime, pcnt-running, metric-value, metric-unit
 * -A's vCPU is perf -A's CPU; with several VMs the VM's name sits where
 * perf -G puts the cgroup (a VM is the group of its vCPU threads). No
 * metric is derived: both metric fields are empty (JSON: 0 and "").
 */
static void row_perf(struct stat_state *st, double t, const struct stat_row *r)
{
	const char *sep = st->o.sep, *ev = ev_name(st, r);
	bool json = st->o.json, vm = st->s.nr_vms > 1;
	FILE *out = st->out;
	char val[40];
	double pct;

	if (r->vmi >= st->s.nr_vms)
		return; /* perf -G sums no cgroups: neither are VMs summed */
	pct = r->enabled ? 100.0 * (double)r->running / (double)r->enabled
			 : 100.0;
	if (r->unsupported)
		snprintf(val, sizeof(val), "<not supported>");
	else if (r->running == 0)
		snprintf(val, sizeof(val), "<not counted>");
	else
		snprintf(val, sizeof(val), "%llu",
			 (unsigned long long)r->count);
	if (json) {
		fputc('{', out);
		if (st->o.interval_ms && !r->rs)
			fprintf(out, "\"interval\" : %.9f, ", t);
		if (r->vcpu >= 0)
			fprintf(out, "\"cpu\" : \"%d\", ", r->vcpu);
		fprintf(out,
			"\"counter-value\" : \"%s\", \"unit\" : \"%s\", "
			"\"event\" : \"%s\", ",
			val, unit_of(ev), ev);
		if (vm)
			fprintf(out, "\"cgroup\" : \"%s\", ", r->vm);
		if (r->rs)
			fprintf(out, "\"variance\" : %.2f, ",
				run_stats_rel_stddev_pct(r->rs));
		fprintf(out,
			"\"event-runtime\" : %llu, \"pcnt-running\" : %.2f, "
			"\"metric-value\" : 0.000000, \"metric-unit\" : "
			"\"\"}\n",
			(unsigned long long)r->running, pct);
		return;
	}
	if (st->o.interval_ms && !r->rs)
		fprintf(out, "%16.9f%s", t, sep);
	if (r->vcpu >= 0)
		fprintf(out, "CPU%d%s", r->vcpu, sep);
	fprintf(out, "%s%s%s%s%s", val, sep, unit_of(ev), sep, ev);
	if (vm)
		fprintf(out, "%s%s", sep, r->vm);
	if (r->rs)
		fprintf(out, "%s%.2f%%", sep, run_stats_rel_stddev_pct(r->rs));
	fprintf(out, "%s%llu%s%.2f%s%s\n", sep, (unsigned long long)r->running,
		sep, pct, sep, sep);
}

static void row(struct stat_state *st, double t, bool total,
		const struct stat_row *r)
{
	const char *ev = ev_name(st, r);
	FILE *out      = st->out;
	char cpu[16], num[40];
	double pct;

	if (!r->unsupported && st->s.ev[r->ev].hole)
		return; /* pads a set before an event group: no event */
	if (st->pass != PASS_PRINT) {
		if (!r->unsupported)
			collect(st, r);
		return;
	}
	snprintf(cpu, sizeof(cpu), r->vcpu < 0 ? "all" : "%d", r->vcpu);
	if (perf_fields(st)) {
		row_perf(st, t, r);
		return;
	}
	if (st->o.json || st->o.sep) {
		row_vpmu(st, t, total, r, cpu);
		return;
	}
	pct = r->enabled ? 100.0 * (double)r->running / (double)r->enabled
			 : 0.0;
	if (r->unsupported) {
		fprintf(out, "%10.3f  %-16s %-4s %26s  %s\n", t, r->vm, cpu,
			"<not supported>", ev);
		return;
	}
	fprintf(out, "%10.3f  %-16s %-4s %26s%s %-20s", t, r->vm, cpu,
		fmt_count(num, sizeof(num), r->count, st->group),
		r->stale ? "*" : " ", ev);
	if (r->rs)
		fprintf(out, " ( +- %5.2f%% )",
			run_stats_rel_stddev_pct(r->rs));
	if (r->running == 0)
		fputs(" <not counted>\n", out);
	else if (r->running < r->enabled)
		fprintf(out, " (set %u, %.2f%% of %.3f s: scaled)\n",
			r->ev / OPS_COUNTERS, pct, (double)r->enabled / 1e9);
	else
		fputc('\n', out);
}

/* The footnote of the '*' marks of a text report. */
static void stale_note(struct stat_state *st)
{
	if (!st->has_stale || st->o.json || st->o.sep)
		return;
	fprintf(st->out,
		"  * not up to date: a vCPU did not account its run time in "
		"time; its counts are up to %.1f ms old\n",
		(double)st->stale_age_ns / 1e6);
}

/* Keep a vCPU's effective switch interval for switch_note(). */
static void note_switching(struct stat_state *st, const struct ops_counts *c)
{
	st->sw_stretched += c->switch_stretched;
	if (!c->switch_ns)
		return;
	if (!st->sw_min_ns || c->switch_ns < st->sw_min_ns)
		st->sw_min_ns = c->switch_ns;
	if (c->switch_ns > st->sw_max_ns)
		st->sw_max_ns = c->switch_ns;
}

/*
 * With event sets, the interval they were switched at (the
 * overhead budget lengthens it when switching costs too much) next to the
 * requested one, and how many switches came late because of it.
 */
static void switch_note(const struct stat_state *st)
{
	if (st->s.nr_sets < 2 || !st->sw_max_ns || st->o.json || st->o.sep)
		return;
	fprintf(st->out, "# set switches: every %.1f", st->sw_min_ns / 1e6);
	if (st->sw_max_ns != st->sw_min_ns)
		fprintf(st->out, "-%.1f", st->sw_max_ns / 1e6);
	fprintf(st->out,
		" ms of vCPU run time (requested %llu ms); %llu switches "
		"delayed by the overhead budget\n",
		(unsigned long long)st->o.switch_ms,
		(unsigned long long)st->sw_stretched);
}

/* Add (r) into the running total (sum). */
static void add_row(struct stat_row *sum, const struct stat_row *r)
{
	sum->raw += r->raw;
	sum->enabled += r->enabled;
	sum->running += r->running;
	sum->count += r->count;
	sum->stale |= r->stale;
}

/*
 * Read VM (vm), print its rows of the interval ending now and add its
 * per-event totals to (all).
 */
static void report_vm(struct stat_state *st, unsigned int vm, double t,
		      bool final, struct stat_row *all)
{
	bool cum         = final || !st->o.interval_ms;
	struct ops_vm *m = &st->s.vms[vm];
	struct stat_row sum[OPS_EVENTS_MAX], r;
	struct ops_counts *now, *p;
	unsigned int i, e;

	memset(sum, 0, sizeof(sum));
	/* Every vCPU of the VM in one request. */
	if (ops_read_vm(&st->s, vm, st->now))
		return; /* reported by ops */
	for (i = 0; i < m->e.nr_vcpus; i++) {
		if (m->ctx[i] < 0)
			continue; /* not chosen by -C */
		now = &st->now[i];
		p   = &st->prev[vm * VMM_CTL_SESSION_VCPUS + i];
		st->throttled += now->throttled;
		note_switching(st, now);
		if (now->stale) {
			st->has_stale = true;
			if (now->age_ns > st->stale_age_ns)
				st->stale_age_ns = now->age_ns;
		}
		for (e = 0; e < st->s.nr_ev; e++) {
			r = (struct stat_row){
				.vm   = m->e.name,
				.uuid = m->e.uuid,
				.vmi  = vm,
				.vcpu = (int)i,
				.ev   = e,
				.raw  = now->raw[e] - (cum ? 0 : p->raw[e]),
				.enabled =
					now->enabled - (cum ? 0 : p->enabled),
				.running = now->running[e] -
					   (cum ? 0 : p->running[e]),
				.stale = now->stale,
			};
			r.count = scaled(r.raw, r.enabled, r.running);
			if (st->o.per_vcpu)
				row(st, t, cum, &r);
			add_row(&sum[e], &r);
		}
		*p = *now;
	}
	for (e = 0; e < st->s.nr_ev; e++) {
		sum[e] = (struct stat_row){.vm      = m->e.name,
					   .uuid    = m->e.uuid,
					   .vmi     = vm,
					   .vcpu    = -1,
					   .ev      = e,
					   .raw     = sum[e].raw,
					   .enabled = sum[e].enabled,
					   .running = sum[e].running,
					   .count   = sum[e].count,
					   .stale   = sum[e].stale};
		if (!st->o.per_vcpu)
			row(st, t, cum, &sum[e]);
		add_row(&all[e], &sum[e]);
	}
}

/*
 * -d: a row per event the host refused, per live VM (per chosen vCPU
 * with -A), as perf prints <not supported> beside the counts.
 */
static void unsupported_rows(struct stat_state *st, double t)
{
	struct stat_row r;
	unsigned int vm, i, e;
	struct ops_vm *m;

	for (vm = 0; vm < st->s.nr_vms; vm++) {
		m = &st->s.vms[vm];
		for (e = 0; !m->gone && e < st->s.nr_refused; e++) {
			r = (struct stat_row){.vm          = m->e.name,
					      .uuid        = m->e.uuid,
					      .vmi         = vm,
					      .vcpu        = -1,
					      .ev          = e,
					      .unsupported = true};
			for (i = 0; st->o.per_vcpu && i < m->e.nr_vcpus; i++) {
				r.vcpu = (int)i;
				if (m->ctx[i] >= 0)
					row(st, t, true, &r);
			}
			if (!st->o.per_vcpu)
				row(st, t, true, &r);
		}
	}
}

/* Read every VM: rows per VM (or vCPU), then "all" with several VMs. */
static void rows(struct stat_state *st, double t, bool final)
{
	struct stat_row all[OPS_EVENTS_MAX];
	unsigned int vm, e, n = 0;

	memset(all, 0, sizeof(all));
	for (vm = 0; vm < st->s.nr_vms; vm++) {
		if (st->s.vms[vm].gone)
			continue;
		report_vm(st, vm, t, final, all);
		n++;
	}
	/* The sum over every VM ("all", uuid "-") when there are several. */
	for (e = 0; n > 1 && e < st->s.nr_ev; e++) {
		all[e].vm   = "all";
		all[e].uuid = "-";
		all[e].vmi  = st->s.nr_vms;
		all[e].vcpu = -1;
		all[e].ev   = e;
		row(st, t, final || !st->o.interval_ms, &all[e]);
	}
}

static void header(struct stat_state *st)
{
	if (st->o.json || st->o.sep || st->header_done)
		return;
	if (st->o.repeat)
		fprintf(st->out,
			"# mean of %u runs; +- is the standard deviation of "
			"the mean, in %% of it (as perf stat -r)\n",
			st->runs);
	fprintf(st->out, "%10s  %-16s %-4s %26s  %-20s\n", "TIME(s)", "VM",
		"VCPU", "COUNT", "EVENT");
	st->header_done = true;
}

/* -r: the rows of every slot that saw a run, their means. */
static void repeat_rows(struct stat_state *st, double t)
{
	struct stat_row r;
	struct rep_slot *sl;
	size_t i, n = rep_slots(st);

	for (i = 0; i < n; i++) {
		sl = &st->rep[i];
		if (!sl->rs.n)
			continue;
		r         = sl->sum;
		r.raw     = sl->sum.raw / sl->rs.n;
		r.enabled = sl->sum.enabled / sl->rs.n;
		r.running = sl->sum.running / sl->rs.n;
		r.count   = (uint64_t)(sl->rs.mean + 0.5);
		r.rs      = &sl->rs;
		row(st, t, true, &r);
	}
}

static void report(struct stat_state *st, bool final)
{
	double t = (double)(vpmu_monotonic_ns() - st->t0) / 1e9;

	if (!st->o.repeat) { /* -r: the marks of every read of the runs */
		st->has_stale    = false;
		st->stale_age_ns = 0;
	}
	st->throttled = 0; /* counted again by this read */
	st->sw_min_ns = st->sw_max_ns = st->sw_stretched = 0;
	if (!st->o.json && !st->o.sep && final && st->o.interval_ms)
		fprintf(st->out, "# total over %.3f s\n", t);
	header(st);
	/* perf -I prints no total at the end: neither do its fields here. */
	if (!(final && st->o.interval_ms && perf_fields(st))) {
		if (st->o.repeat)
			repeat_rows(st, t);
		else
			rows(st, t, final);
		unsupported_rows(st, t);
	}
	stale_note(st);
	/* Samples the VMs' sampling limits did not take. */
	if (final && !st->o.json && !st->o.sep)
		fprintf(st->out,
			"# throttled: %llu samples not taken by the sampling "
			"limits of these vCPUs\n",
			(unsigned long long)st->throttled);
	if (final)
		switch_note(st);
	fflush(st->out);
}

static void progress(struct stat_state *st, uint64_t *last)
{
	uint64_t now = vpmu_monotonic_ns();
	bool tty     = isatty(STDERR_FILENO);

	if (st->o.interval_ms || now - *last < (tty ? 1 : 10) * 1000000000ULL)
		return;
	*last = now;
	fprintf(stderr, "%svpmu stat: %.0f s, counting %u VM%s%s",
		tty ? "\r" : "", (double)(now - st->t0) / 1e9, st->s.nr_live,
		st->s.nr_live == 1 ? "" : "s", tty ? "  " : "\n");
}

/* -- COMMAND: has it ended (its status kept)? */
static bool child_ended(struct stat_state *st)
{
	int status;

	if (st->child <= 0 || waitpid(st->child, &status, WNOHANG) != st->child)
		return false;
	st->child        = 0;
	st->child_status = WIFEXITED(status) ? WEXITSTATUS(status)
					     : 128 + WTERMSIG(status);
	return true;
}

/* Start -- COMMAND: counting is already on, so it counts all of it. */
static int start_child(struct stat_state *st)
{
	st->child = fork();
	if (st->child < 0) {
		fprintf(stderr, "vpmu stat: cannot run '%s': %s\n", st->cmd[0],
			strerror(errno));
		return -errno;
	}
	if (st->child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(st->cmd[0], st->cmd);
		fprintf(stderr, "vpmu stat: cannot run '%s': %s\n", st->cmd[0],
			strerror(errno));
		_exit(127);
	}
	return 0;
}

/* After the counts: end and reap -- COMMAND if it still runs. */
static void end_child(struct stat_state *st)
{
	int status;

	if (st->child <= 0)
		return;
	kill(st->child, SIGTERM);
	if (waitpid(st->child, &status, 0) == st->child)
		st->child_status = WIFEXITED(status) ? WEXITSTATUS(status)
						     : 128 + WTERMSIG(status);
	st->child = 0;
}

static void on_child(int sig)
{
	(void)sig; /* only interrupts ppoll: child_ended() reaps */
}

static uint64_t min3(uint64_t a, uint64_t b, uint64_t c)
{
	return a < b ? (a < c ? a : c) : (b < c ? b : c);
}

static void run(struct stat_state *st)
{
	uint64_t end        = st->o.duration > 0
				      ? st->t0 + (uint64_t)(st->o.duration * 1e9)
				      : UINT64_MAX;
	uint64_t next       = st->o.interval_ms
				      ? st->t0 + st->o.interval_ms * 1000000ULL
				      : UINT64_MAX;
	uint64_t step       = (isatty(STDERR_FILENO) ? 1 : 10) * 1000000000ULL;
	uint64_t last       = st->t0, now;
	struct sigaction sa = {.sa_handler = on_child};
	/*
	 * Ctrl-C, SIGTERM and SIGCHLD of -- COMMAND end the sleep; nothing
	 * else but (until) and a VM's end does.
	 */
	static const int sigs[] = {SIGINT, SIGTERM, SIGCHLD, 0};
	struct ops_wait w;

	sigaction(SIGCHLD, &sa, NULL);
	if (ops_wait_begin(&w, &st->s, 0, sigs)) {
		fprintf(stderr, "vpmu stat: out of memory\n");
		return;
	}
	while (!stop_flag && st->s.nr_live) {
		now = vpmu_monotonic_ns();
		if (now >= end || child_ended(st))
			break;
		if (now >= next) {
			report(st, false);
			next += st->o.interval_ms * 1000000ULL;
		}
		progress(st, &last);
		ops_wait(&w, &st->s,
			 min3(end, next,
			      st->o.interval_ms ? UINT64_MAX : last + step));
	}
	ops_wait_end(&w);
	if (isatty(STDERR_FILENO) && !st->o.interval_ms)
		fputc('\n', stderr);
}

/*
 * -r N: N runs (of COMMAND, or of SECONDS each), each between two reads of
 * every VM; each row's count of each run goes into its slot.
 */
static int run_repeated(struct stat_state *st)
{
	uint64_t begin = st->t0;
	int ret        = 0;

	st->rep = calloc(rep_slots(st), sizeof(*st->rep));
	if (!st->rep)
		return -ENOMEM;
	while (st->runs < st->o.repeat && !stop_flag && st->s.nr_live) {
		st->pass = PASS_START;
		rows(st, 0, true);
		st->t0 = vpmu_monotonic_ns();
		ret    = st->cmd ? start_child(st) : 0;
		if (!ret)
			run(st);
		end_child(st);
		st->pass = PASS_END;
		rows(st, 0, true);
		st->runs++;
		if (ret || (st->cmd && st->child_status == 127))
			break; /* it could not be run: no use repeating */
	}
	st->pass = PASS_PRINT;
	st->t0   = begin;
	return ret;
}

/*
 * The events of `vpmu stat` without -e, and those -d adds (to -e's too,
 * as perf -d): what a VM spends its exits on, then the guest hardware
 * events of perf's default and -d lists (the last two are perf's LLC
 * events). Those the host cannot count (hardware events without a PMU)
 * are dropped and print <not supported> (ops_start_counting()); events
 * named with -e are refused with an error as before.
 */
#define STAT_DEFAULT "hv_run_ns,hv_guest_cycles,hv_exits,hv_hypercalls"
#define STAT_DETAILED                                                          \
	"hv_pio,hv_mmio,hv_msr_reads,hv_halts,cycles,instructions,branches,"   \
	"branch-misses,cache-references,cache-misses"

/* Events the user did not name: a refusal drops them, as perf does. */
static int add_optional(struct ops_session *s, const char *list)
{
	unsigned int first = s->nr_ev;
	int ret            = ops_parse_events(s, list);

	while (!ret && first < s->nr_ev)
		s->ev[first++].optional = true;
	return ret;
}

static int add_events(const struct cli_cmd *cmd, void *ctx, const char *v)
{
	struct stat_state *st = ctx;

	(void)cmd;
	return ops_parse_events(&st->s, v);
}

static const struct cli_opt stat_opts[] = {
	OPS_SELECT_ROWS,
	CLI_FN('e', "event", "EVENTS", add_events,
	       "events to count, comma-separated (names from\n"
	       "'vpmu events', or codes 0xNNNN), each with\n"
	       "modifiers NAME:u/k/G (guest hardware events)\n"
	       "or NAME:h (hv_*, host); groups {A,B}[:MOD]\n"
	       "count at the same time; repeatable"),
	CLI_FLAG('d', "detailed", struct stat_opts, detailed,
		 "also count STAT_DETAILED (exits by kind, guest\n"
		 "hardware events); those this host cannot count\n"
		 "print <not supported>"),
	CLI_UINT('I', "interval-print", "MS", struct stat_opts, interval_ms, 1,
		 "print the counts of every MS milliseconds"),
	CLI_STR('x', "field-separator", "SEP", struct stat_opts, sep,
		"CSV with separator SEP"),
	CLI_FLAG('j', "json", struct stat_opts, json,
		 "one JSON object per line"),
	CLI_FLAG(0, "vpmu-fields", struct stat_opts, vpmu_fields,
		 "-x / -j with vpmu's fields (time_s,vm,uuid,\n"
		 "vcpu,event,count,raw,...) instead of perf's"),
	CLI_STR('o', "output", "FILE", struct stat_opts, output,
		"write the counts to FILE (default stdout)"),
	CLI_FLAG('A', "no-aggr", struct stat_opts, per_vcpu,
		 "a row per vCPU (not summed per VM)"),
	CLI_FLAG(0, "per-vcpu", struct stat_opts, per_vcpu, "same as -A"),
	CLI_UINT('r', "repeat", "N", struct stat_opts, repeat, 1,
		 "run COMMAND (or count SECONDS) N times; print\n"
		 "the mean and +- the stddev of the mean in %"),
	CLI_UINT(0, "switch-ms", "MS", struct stat_opts, switch_ms, 1,
		 "event-set switch period in vCPU run time\n(default 10)"),
	CLI_UINT(0, "max-overhead", "PCT", struct stat_opts, max_overhead, 1,
		 "at most PCT % of each vCPU's time for this\n"
		 "count (1-100; never above the VM's budget,\n"
		 "default 25): event sets switch less often"),
	{0},
};

static const struct cli_cmd stat_cmd = {
	.name            = "stat",
	.args            = "[-- SECONDS | [--] COMMAND [ARGS...]]",
	.summary         = "count events on every vCPU of the chosen VMs",
	.opts            = stat_opts,
	.operands        = CLI_OPERANDS_ANY,
	.stop_at_operand = true,
	.help = "  Counts EVENTS (default hv_run_ns,hv_guest_cycles,hv_exits,\n"
		"  hv_hypercalls; -d adds hv_pio,hv_mmio,hv_msr_reads,"
		"hv_halts,\n"
		"  cycles,instructions,branches,branch-misses,"
		"cache-references,\n"
		"  cache-misses, those this host cannot count shown as\n"
		"  <not supported> as perf stat -d) for SECONDS, while COMMAND "
		"runs (like perf "
		"stat --\n"
		"  CMD: counting starts before it and ends when it exits), or, "
		"with\n"
		"  neither, until Ctrl-C (said on stderr). SECONDS must be "
		"positive.\n"
		"  Counts are per VM (summed over vCPUs), per vCPU with -A, "
		"with\n"
		"  thousands separators on a terminal. With more than 8 events "
		"they\n"
		"  are multiplexed in sets switched every --switch-ms of vCPU "
		"run\n"
		"  time and scaled (the share of time counted is shown); when "
		"switching\n"
		"  costs more than the overhead budget (--max-overhead, the "
		"VM's\n"
		"  'vpmu run --max-overhead'), they switch less often, and a "
		"last\n"
		"  line says at which interval. With several\n"
		"  VMs a last row per event, VM 'all', sums them. -I prints "
		"the\n"
		"  header once, then every interval, then '# total' and the "
		"totals.\n"
		"  -x SEP prints perf stat's CSV, -j its JSON (perf's order "
		"and keys):\n"
		"    [interval,][CPU<n>,]counter-value,unit,event,[vm,]"
		"[variance,]\n"
		"    event-runtime,pcnt-running,metric-value,metric-unit\n"
		"  (interval with -I, CPU<n> the vCPU with -A, the VM where "
		"perf -G\n"
		"  puts the cgroup when counting several VMs, variance with "
		"-r).\n"
		"  --vpmu-fields prints vpmu's fields instead:\n"
		"    time_s,vm,uuid,vcpu,event,count,raw,enabled_ns,running_ns,"
		"stale,kind\n"
		"  where kind is 'interval' or 'total'; with -j one object per "
		"line with\n"
		"  the same fields. -r N repeats COMMAND (or SECONDS) N times "
		"and\n"
		"  prints the mean of each count and, as perf, +- the "
		"standard\n"
		"  deviation of the mean in % (--vpmu-fields: kind 'mean', "
		"columns\n"
		"  runs,stddev,rel_stddev_pct).\n"
		"  EVENTS take modifiers NAME:MOD (u, k, G for guest hardware "
		"events,\n"
		"  h for hypervisor and host ones; see 'vpmu events').\n"
		"  hv_run_ns is wall time inside KVM_RUN; "
		"hv_cpu_ns\n"
		"  the CPU time the vCPU thread actually received. A count the "
		"VMM\n"
		"  could not bring up to date in time (a vCPU that did not "
		"account\n"
		"  its run time within 50 ms) is marked: a trailing '*' and a\n"
		"  footnote in text, stale 1 / true in CSV and JSON.\n",
};

static int parse(int argc, char **argv, struct stat_state *st)
{
	struct cli_rest rest;
	int r;

	r = cli_parse(&stat_cmd, st, argc, argv, &rest);
	if (r)
		return r;
	/* One number: SECONDS; anything else: a COMMAND (keeps rest.argv). */
	if (rest.argc == 1 &&
	    strspn(rest.argv[0], "0123456789.") == strlen(rest.argv[0]))
		r = cli_parse_num(&stat_cmd, "--", rest.argv[0], 1,
				  &st->o.duration);
	else if (rest.argc)
		st->cmd = rest.argv;
	if (!st->cmd)
		cli_rest_free(&rest);
	if (!r && st->o.max_overhead > 100)
		r = cli_error(&stat_cmd,
			      "--max-overhead %llu: a percentage from 1 to 100",
			      (unsigned long long)st->o.max_overhead);
	st->s.max_overhead = (unsigned int)st->o.max_overhead;
	if (!r && st->o.repeat && st->o.interval_ms)
		r = cli_error(&stat_cmd, "-r and -I do not go together");
	else if (!r && st->o.repeat && !st->cmd && !st->o.duration)
		r = cli_error(&stat_cmd,
			      "-r needs -- SECONDS or a COMMAND to repeat");
	if (!r && !st->s.nr_ev)
		r = add_optional(&st->s, STAT_DEFAULT);
	if (!r && st->o.detailed)
		r = add_optional(&st->s, STAT_DETAILED);
	return r;
}

static int open_output(struct stat_state *st)
{
	st->out = stdout;
	if (st->o.output) {
		st->out = fopen(st->o.output, "we");
		if (!st->out) {
			fprintf(stderr, "vpmu stat: -o %s: %s\n", st->o.output,
				strerror(errno));
			return -errno;
		}
	}
	st->group = !st->o.json && !st->o.sep && isatty(fileno(st->out));
	return 0;
}

static int stat_main(struct stat_state *st, int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	int ret;

	ret = parse(argc, argv, st);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	if (open_output(st) || ops_open(&st->s, &st->o.sel))
		return 1;
	st->prev = calloc((size_t)st->s.nr_vms * VMM_CTL_SESSION_VCPUS,
			  sizeof(*st->prev));
	ret      = st->prev
			   ? ops_start_counting(&st->s, st->o.switch_ms * 1000000ULL)
			   : -ENOMEM;
	if (ret) {
		fprintf(stderr, "vpmu stat: no VM could be counted\n");
		ops_close(&st->s);
		free(st->prev);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!st->cmd && !st->o.duration)
		fprintf(stderr, "vpmu stat: counting until Ctrl-C (give -- "
				"SECONDS or a COMMAND to stop by itself)\n");
	st->t0 = vpmu_monotonic_ns();
	if (st->o.repeat) {
		ret = run_repeated(st);
	} else {
		ret = st->cmd ? start_child(st) : 0;
		if (!ret)
			run(st);
		end_child(st);
	}
	report(st, true);
	if (st->cmd && !ret && !st->o.json && !st->o.sep && st->o.repeat)
		fprintf(st->out, "# '%s' ran %u times; last exit status %d\n",
			st->cmd[0], st->runs, st->child_status);
	else if (st->cmd && !ret && !st->o.json && !st->o.sep)
		fprintf(st->out, "# '%s' exited with status %d\n", st->cmd[0],
			st->child_status);
	ret = ret || !st->s.nr_live || (st->cmd && st->child_status == 127);
	ops_close(&st->s);
	free(st->prev);
	free(st->rep);
	return ret ? 1 : 0;
}

int ops_cmd_stat(int argc, char **argv)
{
	struct stat_state *st = calloc(1, sizeof(*st));
	int ret;

	if (!st) {
		fprintf(stderr, "vpmu stat: out of memory\n");
		return 1;
	}
	st->s.prog      = "vpmu stat";
	st->o.switch_ms = 10;
	ret             = stat_main(st, argc, argv);
	free(st->cmd);
	if (st->out && st->out != stdout && fclose(st->out) && !ret) {
		fprintf(stderr, "vpmu stat: %s: %s\n", st->o.output,
			strerror(errno));
		ret = 1;
	}
	free(st);
	return ret;
}
