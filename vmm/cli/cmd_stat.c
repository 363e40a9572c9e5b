// SPDX-License-Identifier: MIT
/*
 * cmd_stat.c: `vpmu stat`, counting events on every vCPU of the chosen VMs
 * through host contexts. More events than the 8 counters are spread over
 * event sets switched on vCPU run time (PFM_SETFL_TIME_SWITCH); counts are
 * then scaled by enabled / running time, and both times are shown.
 */
#include "vpmu_commands.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_parse.h"
#include "ctl_client.h"

struct stat_opts {
	struct ops_select sel; /* first: OPS_SELECT_ROWS */
	const char *sep;
	bool json, per_vcpu;
	uint64_t interval_ms, switch_ms;
	double duration;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* Per VM, per vCPU: counts at the start of the interval. */
struct stat_state {
	struct stat_opts o; /* first: the parser's ctx is the state */
	struct ops_session s;
	struct ops_counts *prev; /* [vm * VMM_CTL_SESSION_VCPUS + vcpu] */
	struct ops_counts now[VMM_CTL_SESSION_VCPUS]; /* one VM's read */
	uint64_t t0;
	uint64_t stale_age_ns; /* oldest stale count of this report */
	bool has_stale;
};

/* One output row: counts of one event for a VM (or all VMs), one vCPU
 * (or all). */
struct stat_row {
	const char *vm, *uuid;
	int vcpu; /* -1: all vCPUs */
	unsigned int ev;
	uint64_t raw, enabled, running;
	uint64_t count; /* scaled */
	bool stale;     /* some of it could not be brought up to date */
};

static uint64_t scaled(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (running && running < enabled)
		return (uint64_t)((double)raw * (double)enabled /
				  (double)running);
	return raw;
}

static void row(struct stat_state *st, double t, const struct stat_row *r)
{
	const char *sep = st->o.sep, *ev = st->s.ev[r->ev].name;
	char cpu[16];
	double pct;

	snprintf(cpu, sizeof(cpu), r->vcpu < 0 ? "all" : "%d", r->vcpu);
	if (st->o.json) {
		printf("{\"time_s\": %.3f, \"vm\": \"%s\", \"uuid\": \"%s\", "
		       "\"vcpu\": \"%s\", \"event\": \"%s\", \"count\": %llu, "
		       "\"raw\": %llu, \"enabled_ns\": %llu, \"running_ns\": "
		       "%llu, \"stale\": %s}\n",
		       t, r->vm, r->uuid, cpu, ev, (unsigned long long)r->count,
		       (unsigned long long)r->raw,
		       (unsigned long long)r->enabled,
		       (unsigned long long)r->running,
		       r->stale ? "true" : "false");
		return;
	}
	if (sep) {
		printf("%.3f%s%s%s%s%s%s%s%s%s%llu%s%llu%s%llu%s%llu%s%d\n", t,
		       sep, r->vm, sep, r->uuid, sep, cpu, sep, ev, sep,
		       (unsigned long long)r->count, sep,
		       (unsigned long long)r->raw, sep,
		       (unsigned long long)r->enabled, sep,
		       (unsigned long long)r->running, sep, r->stale);
		return;
	}
	pct = r->enabled ? 100.0 * (double)r->running / (double)r->enabled
			 : 0.0;
	printf("%10.3f  %-16s %-4s %20llu%s %-24s enabled %llu ns, running "
	       "%llu "
	       "ns (%.2f%%)%s\n",
	       t, r->vm, cpu, (unsigned long long)r->count,
	       r->stale ? "*" : " ", ev, (unsigned long long)r->enabled,
	       (unsigned long long)r->running, pct,
	       r->running == 0 ? " <not counted>" : "");
}

/* The footnote of the '*' marks of a text report. */
static void stale_note(struct stat_state *st)
{
	if (!st->has_stale || st->o.json || st->o.sep)
		return;
	printf("  * not up to date: a vCPU did not account its run time in "
	       "time; its counts are up to %.1f ms old\n",
	       (double)st->stale_age_ns / 1e6);
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
		if (now->stale) {
			st->has_stale = true;
			if (now->age_ns > st->stale_age_ns)
				st->stale_age_ns = now->age_ns;
		}
		for (e = 0; e < st->s.nr_ev; e++) {
			r = (struct stat_row){
				.vm   = m->e.name,
				.uuid = m->e.uuid,
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
				row(st, t, &r);
			add_row(&sum[e], &r);
		}
		*p = *now;
	}
	for (e = 0; e < st->s.nr_ev; e++) {
		sum[e] = (struct stat_row){.vm      = m->e.name,
					   .uuid    = m->e.uuid,
					   .vcpu    = -1,
					   .ev      = e,
					   .raw     = sum[e].raw,
					   .enabled = sum[e].enabled,
					   .running = sum[e].running,
					   .count   = sum[e].count,
					   .stale   = sum[e].stale};
		if (!st->o.per_vcpu)
			row(st, t, &sum[e]);
		add_row(&all[e], &sum[e]);
	}
}

static void report(struct stat_state *st, bool final)
{
	double t = (double)(vpmu_monotonic_ns() - st->t0) / 1e9;
	struct stat_row all[OPS_EVENTS_MAX];
	unsigned int vm, e, n = 0;

	memset(all, 0, sizeof(all));
	st->has_stale    = false;
	st->stale_age_ns = 0;
	if (!st->o.json && !st->o.sep && (final || st->o.interval_ms))
		printf("%s%10s  %-16s %-4s %20s  %-24s\n",
		       final && st->o.interval_ms ? "# total\n" : "", "TIME(s)",
		       "VM", "VCPU", "COUNT", "EVENT");
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
		all[e].vcpu = -1;
		all[e].ev   = e;
		row(st, t, &all[e]);
	}
	stale_note(st);
	fflush(stdout);
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

static void run(struct stat_state *st)
{
	uint64_t end  = st->o.duration > 0
				? st->t0 + (uint64_t)(st->o.duration * 1e9)
				: UINT64_MAX;
	uint64_t next = st->o.interval_ms
				? st->t0 + st->o.interval_ms * 1000000ULL
				: UINT64_MAX;
	uint64_t last = st->t0, now;

	while (!stop_flag && st->s.nr_live) {
		now = vpmu_monotonic_ns();
		if (now >= end)
			break;
		if (now >= next) {
			report(st, false);
			next += st->o.interval_ms * 1000000ULL;
		}
		progress(st, &last);
		ops_check_alive(&st->s);
		usleep(5000);
	}
	if (isatty(STDERR_FILENO) && !st->o.interval_ms)
		fputc('\n', stderr);
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
	       "'vpmu events', or codes 0xNNNN); repeatable"),
	CLI_UINT('I', "interval-print", "MS", struct stat_opts, interval_ms, 1,
		 "print the counts of every MS milliseconds"),
	CLI_STR('x', "field-separator", "SEP", struct stat_opts, sep,
		"CSV with separator SEP"),
	CLI_FLAG('j', "json", struct stat_opts, json,
		 "one JSON object per line"),
	CLI_FLAG('A', "no-aggr", struct stat_opts, per_vcpu,
		 "a row per vCPU (not summed per VM)"),
	CLI_FLAG(0, "per-vcpu", struct stat_opts, per_vcpu, "same as -A"),
	CLI_UINT(0, "switch-ms", "MS", struct stat_opts, switch_ms, 1,
		 "event-set switch period in vCPU run time\n(default 10)"),
	{0},
};

static const struct cli_cmd stat_cmd = {
	.name            = "stat",
	.args            = "[-- SECONDS]",
	.summary         = "count events on every vCPU of the chosen VMs",
	.opts            = stat_opts,
	.operands        = CLI_OPERANDS_ANY,
	.stop_at_operand = true,
	.help = "  Counts EVENTS (default hv_run_ns,hv_guest_cycles,hv_exits,\n"
		"  hv_hypercalls) for SECONDS, or until Ctrl-C. Counts are per "
		"VM\n"
		"  (summed over vCPUs), per vCPU with -A. With more than 8 "
		"events "
		"the\n"
		"  events are multiplexed in sets switched every --switch-ms "
		"of "
		"vCPU\n"
		"  run time and scaled; enabled and running times are shown. "
		"With\n"
		"  several VMs a last row per event, VM 'all', sums them. -x "
		"SEP "
		"prints\n"
		"  CSV: "
		"time_s,vm,uuid,vcpu,event,count,raw,enabled_ns,running_ns,"
		"stale\n"
		"  --json prints one JSON object per line with the same "
		"fields.\n"
		"  A count the VMM could not bring up to date in time (a vCPU "
		"that "
		"did\n"
		"  not account its run time within 50 ms) is marked: a "
		"trailing "
		"'*'\n"
		"  and a footnote in text, stale 1 / true in CSV and JSON.\n",
};

static int parse(int argc, char **argv, struct stat_state *st)
{
	struct cli_rest rest;
	int r;

	r = cli_parse(&stat_cmd, st, argc, argv, &rest);
	if (r)
		return r;
	if (rest.argc > 1 ||
	    (rest.argc == 1 &&
	     cli_parse_num(&stat_cmd, "--", rest.argv[0], 1, &st->o.duration)))
		r = rest.argc > 1
			    ? cli_error(&stat_cmd, "after --, one duration in "
						   "seconds")
			    : -EINVAL;
	cli_rest_free(&rest);
	if (!r && !st->s.nr_ev)
		r = ops_parse_events(&st->s, "hv_run_ns,hv_guest_cycles,"
					     "hv_exits,hv_hypercalls");
	return r;
}

int vmm_cmd_stat(int argc, char **argv)
{
	static struct stat_state st = {.s.prog      = "vpmu stat",
				       .o.switch_ms = 10};
	struct sigaction sa         = {.sa_handler = on_signal};
	int ret;

	ret = parse(argc, argv, &st);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	if (ops_open(&st.s, &st.o.sel))
		return 1;
	st.prev = calloc((size_t)st.s.nr_vms * VMM_CTL_SESSION_VCPUS,
			 sizeof(*st.prev));
	ret = st.prev ? ops_start_counting(&st.s, st.o.switch_ms * 1000000ULL)
		      : -ENOMEM;
	if (ret) {
		fprintf(stderr, "vpmu stat: no VM could be counted\n");
		ops_close(&st.s);
		free(st.prev);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	st.t0 = vpmu_monotonic_ns();
	run(&st);
	report(&st, true);
	ret = st.s.nr_live ? 0 : 1;
	ops_close(&st.s);
	free(st.prev);
	return ret;
}
