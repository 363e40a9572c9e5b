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

#include "ctl_client.h"

static const char stat_usage[] =
	"usage: vpmu stat [-a | -m VM...] [-e EVENTS] [-I MS] [--per-vcpu]\n"
	"                 [-x SEP | --json] [--switch-ms MS] [-- SECONDS]\n"
	"\n"
	"  Count EVENTS (comma-separated names from 'vpmu events', or codes\n"
	"  0xNNNN; default hv_run_ns,hv_guest_cycles,hv_exits,hv_hypercalls)\n"
	"  on every vCPU of all VMs (-a, the default) or of the VMs named by\n"
	"  -m (name, uuid or uuid prefix; repeatable). Runs for SECONDS, or\n"
	"  until Ctrl-C. Counts are per VM (summed over vCPUs), per vCPU with\n"
	"  --per-vcpu. With more than 8 events the events are multiplexed in\n"
	"  sets switched every --switch-ms of vCPU run time (default 10) and\n"
	"  scaled; enabled and running times are shown. -I MS prints the\n"
	"  counts of every interval; with several VMs a last row per event,\n"
	"  VM 'all', sums them. -x SEP prints CSV:\n"
	"    time_s,vm,uuid,vcpu,event,count,raw,enabled_ns,running_ns,stale\n"
	"  --json prints one JSON object per line with the same fields.\n"
	"  A count the VMM could not bring up to date in time (a vCPU that "
	"did\n"
	"  not account its run time within 50 ms) is marked: a trailing '*'\n"
	"  and a footnote in text, stale 1 / true in CSV and JSON.\n";

struct stat_opts {
	struct ops_select sel;
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
	struct ops_session s;
	struct stat_opts o;
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

static int parse_num(const char *prog, const char *opt, const char *v,
		     double *out)
{
	char *end;

	errno = 0;
	*out  = strtod(v ? v : "", &end);
	if (!v || !*v || *end || errno || *out < 0) {
		fprintf(stderr, "%s: %s needs a non-negative number\n", prog,
			opt);
		return -EINVAL;
	}
	return 0;
}

/* One option at argv[*i]: 0, 1 for --help, or -EINVAL. */
static int parse_one(struct stat_state *st, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
	struct stat_opts *o = &st->o;
	double x;
	int r;

	r = ops_select_arg(&o->sel, argc, argv, i, "vpmu stat");
	if (r)
		return r < 0 ? r : 0;
	if (!strcmp(a, "--json") || !strcmp(a, "--per-vcpu")) {
		o->json |= a[2] == 'j';
		o->per_vcpu |= a[2] == 'p';
		return 0;
	}
	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		fputs(stat_usage, stdout);
		return 1;
	}
	if (!strncmp(a, "-x", 2) && a[2]) { /* -x, as in perf stat */
		o->sep = a + 2;
		return 0;
	}
	if (!v || (strcmp(a, "-e") && strcmp(a, "-I") && strcmp(a, "-x") &&
		   strcmp(a, "--switch-ms") && strcmp(a, "--"))) {
		fprintf(stderr,
			"vpmu stat: unknown or incomplete argument '%s' (try "
			"'vpmu stat --help')\n",
			a);
		return -EINVAL;
	}
	++*i;
	if (!strcmp(a, "-e"))
		return ops_parse_events(&st->s, v);
	if (!strcmp(a, "-x")) {
		o->sep = v;
		return 0;
	}
	r = parse_num("vpmu stat", a, v, &x);
	if (r)
		return r;
	if (!strcmp(a, "-I"))
		o->interval_ms = (uint64_t)x;
	else if (!strcmp(a, "--switch-ms"))
		o->switch_ms = x < 1 ? 1 : (uint64_t)x;
	else
		o->duration = x;
	return 0;
}

static int parse(int argc, char **argv, struct stat_state *st)
{
	int i, r = 0;

	for (i = 0; i < argc && !r; i++)
		r = parse_one(st, argc, argv, &i);
	if (r)
		return r;
	if (!st->s.nr_ev)
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
		return ret > 0 ? 0 : 1;
	if (ops_open(&st.s, st.o.sel.names, st.o.sel.nr))
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
