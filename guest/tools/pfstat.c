// SPDX-License-Identifier: MIT
/*
 * pfstat: count events perf-stat style, of PROGRAM (Linux) or of the
 * tool's own workload (bare, where there are no programs).
 *
 *   pfstat [-e EVENT[,EVENT...]] [-v] [--] [PROGRAM [ARGS...]]
 *
 * Events are chosen by name (catalogue names with modifiers, see
 * pvpmu_event_encode()). Events the host cannot count are reported as
 * "<not supported>" (refused with PFM_REG_RETFL_NOTAVAIL, never counted as
 * zeros). With more events than the 8 counting PMCs, they are spread over
 * several event sets switched every PFSTAT_SWITCH_NS of run time
 * (PFM_SETFL_TIME_SWITCH); each count is then scaled by the time monitoring
 * was enabled over the time its set was running (set_act_duration), and
 * both times are printed.
 *
 * PROGRAM runs in a child that waits until its per-thread context is
 * loaded and started (spec 3.1.7: the context follows the thread across
 * context switches and exec), so only PROGRAM is counted. The hv_* events
 * also count the driver's own hypercalls in the thread's time: its
 * PVPMU_SCHED_OUT at each switch-out, and the process records of the
 * thread's exec and exit (for host profiles); -v prints that number
 * (PVPMU_IOC_INFO.sched_outs).
 *
 * Without PROGRAM, the bare tool measures its own workload on its vCPU,
 * which makes a known number of hypercalls, so pfstat checks its own
 * figures: in an exact pass (one set) hv_hypercalls must be the workload's
 * count plus the PFM_STOP call itself, and in the multiplexed pass (the
 * events of -e, or 18 by default) the scaled estimate must be within
 * PFSTAT_TOLERANCE_PCT of it. Linux has no such workload: PROGRAM is
 * needed there.
 */
#include "tool.h"

#define NR_COUNTERS          8
#define MAX_EVENTS           32
#define MAX_SETS             (MAX_EVENTS / NR_COUNTERS)
#define NAME_LEN             64
#define PFSTAT_SWITCH_NS     5000000ULL
#define PFSTAT_ROUNDS        300
#define PFSTAT_SPIN          200000
#define PFSTAT_CALLS         10
#define PFSTAT_TOLERANCE_PCT 25
#define END_WAIT_NS          2000000000ULL
#define DEFAULT_EV           "hv_exits,hv_hypercalls,hv_run_ns"

static const char usage[] =
	"Usage: pfstat [-e EVENT[,EVENT...]] [-v] -- PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM and print the counts of EVENTs (default " DEFAULT_EV ")\n"
	"measured by the vpmu virtual PMU for its thread, through the\n"
	"paravirtual perfmon2 interface (/dev/pvpmu, module pvpmu.ko).\n"
	"More than 8 events are multiplexed over event sets and scaled.\n"
	"\n"
	"  -e LIST   events: catalogue names with modifiers (name:u, :k,\n"
	"            umask=N) or raw codes rXXXX; `pfinfo` lists them\n"
	"  -v        also print the driver's own sched-out hypercalls\n"
	"  -h        this help\n"
	"\n"
	"In the bare guest there is no PROGRAM: pfstat measures its own\n"
	"workload, exactly and then multiplexed (the events of -e, given in\n"
	"the VM name), and checks its counts.\n"
	"\n"
	"Exit status: PROGRAM's, or 1 when measuring (or a check) failed.\n";

struct ev {
	const char *spec;
	uint64_t pmc;
	int err;      /* encode or availability error, 0 if countable */
	int notavail; /* refused with PFM_REG_RETFL_NOTAVAIL */
	uint16_t set; /* event set */
	uint16_t idx; /* counter (PMC/PMD index) */
	uint64_t raw; /* PMD value */
	uint64_t run; /* running time of its set, ns */
	uint64_t sc;  /* scaled */
	int sc_kind;  /* PVPMU_SCALE_* */
};

struct run {
	struct ev ev[MAX_EVENTS];
	unsigned int nr, nr_sets;
	uint64_t enabled; /* ns, all sets */
	uint64_t timeout; /* effective switch timeout, ns */
	uint64_t runs[MAX_SETS];
	int64_t driver_calls; /* the driver's own hypercalls, -1 unknown */
};

static const char *const exact_events[] = {
	"hv_hypercalls", "hv_pio", "hv_exits", "hv_run_ns", "hv_guest_cycles",
};

static const char *const all_events[] = {
	"hv_run_ns",        "hv_guest_cycles", "hv_exits",
	"hv_hypercalls",    "hv_pio",          "hv_exit_reason:umask=2",
	"hv_irqs",          "hv_halts",        "hv_halted_ns",
	"hv_mmio",          "hv_msr_reads",    "hv_msr_writes",
	"hv_exits:u",       "task-clock",      "page-faults",
	"context-switches", "cycles",          "instructions",
};

/* Encode every event and probe it in PMC0 of a scratch context. */
static int probe(struct run *r, const char *const *names, unsigned int n)
{
	pfarg_ctx_t ctx = {0};
	unsigned int i, k = 0;
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("pfstat",
				"PFM_CREATE_CONTEXT (is pvpmu.ko "
				"loaded?)",
				ret);
	r->nr = n;
	for (i = 0; i < n; i++) {
		struct ev *e   = &r->ev[i];
		pfarg_pmc_t pc = {0};

		*e     = (struct ev){.spec = names[i]};
		e->err = pvpmu_event_encode(e->spec, &e->pmc, 0);
		if (!e->err) {
			pc.reg_value = e->pmc;
			e->err       = pfm_write_pmcs(ctx.ctx_fd, &pc, 1);
			e->notavail = !!(pc.reg_flags & PFM_REG_RETFL_NOTAVAIL);
		}
		if (e->err)
			continue;
		e->set = (uint16_t)(k / NR_COUNTERS);
		e->idx = (uint16_t)(k % NR_COUNTERS);
		k++;
	}
	r->nr_sets = k ? (k + NR_COUNTERS - 1) / NR_COUNTERS : 1;
	return pfm_close(ctx.ctx_fd);
}

/* Create the sets (time switching when there are several), PMCs, PMDs. */
static int program(int fd, struct run *r)
{
	pfarg_setdesc_t sd[MAX_SETS] = {0};
	pfarg_pmc_t pmc[MAX_EVENTS]  = {0};
	pfarg_pmd_t pmd[MAX_EVENTS]  = {0};
	unsigned int i, n = 0;
	int ret;

	r->timeout = 0;
	if (r->nr_sets > 1) {
		for (i = 0; i < r->nr_sets; i++) {
			sd[i].set_id              = (uint16_t)i;
			sd[i].set_flags           = PFM_SETFL_TIME_SWITCH;
			sd[i].set_timeout.tv_nsec = PFSTAT_SWITCH_NS;
		}
		ret = pfm_create_evtsets(fd, sd, (int)r->nr_sets);
		if (ret)
			return tool_err("pfstat", "PFM_CREATE_EVTSETS", ret);
		r->timeout = sd[0].set_timeout.tv_sec * 1000000000ULL +
			     sd[0].set_timeout.tv_nsec;
	}
	for (i = 0; i < r->nr; i++) {
		if (r->ev[i].err)
			continue;
		pmc[n].reg_num   = r->ev[i].idx;
		pmc[n].reg_set   = r->ev[i].set;
		pmc[n].reg_value = r->ev[i].pmc;
		pmd[n].reg_num   = r->ev[i].idx;
		pmd[n].reg_set   = r->ev[i].set;
		n++;
	}
	ret = pfm_write_pmcs(fd, pmc, (int)n);
	if (ret)
		return tool_err("pfstat", "PFM_WRITE_PMCS", ret);
	ret = pfm_write_pmds(fd, pmd, (int)n);
	return ret ? tool_err("pfstat", "PFM_WRITE_PMDS", ret) : 0;
}

/* Read every PMD and its set's running time; scale. */
static int collect(int fd, struct run *r)
{
	pfarg_setinfo_t si[MAX_SETS] = {0};
	pfarg_pmd_t pmd[MAX_EVENTS]  = {0};
	unsigned int i, n = 0;
	uint64_t run[MAX_SETS];
	int ret;

	for (i = 0; i < r->nr_sets; i++)
		si[i].set_id = (uint16_t)i;
	ret = pfm_getinfo_evtsets(fd, si, (int)r->nr_sets);
	if (ret)
		return tool_err("pfstat", "PFM_GETINFO_EVTSETS", ret);
	r->enabled = 0;
	for (i = 0; i < r->nr_sets; i++) {
		run[i] = si[i].set_act_duration.tv_sec * 1000000000ULL +
			 si[i].set_act_duration.tv_nsec;
		r->runs[i] = si[i].set_runs;
		r->enabled += run[i];
	}
	for (i = 0; i < r->nr; i++) {
		if (r->ev[i].err)
			continue;
		pmd[n].reg_num = r->ev[i].idx;
		pmd[n].reg_set = r->ev[i].set;
		n++;
	}
	ret = pfm_read_pmds(fd, pmd, (int)n);
	if (ret)
		return tool_err("pfstat", "PFM_READ_PMDS", ret);
	for (i = 0, n = 0; i < r->nr; i++) {
		struct ev *e = &r->ev[i];

		if (e->err)
			continue;
		e->raw = pmd[n++].reg_value;
		e->run = run[e->set];
		/* One set runs whenever monitoring does: nothing to scale. */
		if (r->nr_sets == 1) {
			e->sc      = e->raw;
			e->sc_kind = PVPMU_SCALE_EXACT;
		} else {
			e->sc_kind =
				pvpmu_scale(e->raw, r->enabled, e->run, &e->sc);
		}
	}
	r->driver_calls = tool_driver_hypercalls(fd);
	return 0;
}

/*
 * PROGRAM's exit unloads the context at its last context switch (spec
 * 3.3.6), which can come after the wait for it returned; its PFM_MSG_END
 * says the counts are final. Wait for it (END_WAIT_NS at most).
 */
static void wait_end(int fd)
{
	pfm_msg_t msg;

	while (pfm_read_msg(fd, &msg, END_WAIT_NS) == 0)
		if (msg.msg_type == PFM_MSG_END)
			return;
	tool_eprintf("pfstat: no PFM_MSG_END from the program's exit within "
		     "2 s; counts may miss its last switch-out\n");
}

/*
 * One measurement with the events of (r): of PROGRAM until it ends, or of
 * the built-in workload, with nothing else between PFM_START and PFM_STOP.
 */
static int measure(struct tool_target *t, struct run *r)
{
	pfarg_ctx_t ctx   = {.ctx_flags = t->ctx_flags};
	pfarg_load_t load = {0};
	int ret, fd;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("pfstat", "PFM_CREATE_CONTEXT", ret);
	fd = ctx.ctx_fd;
	if (t->argv && tool_target_spawn("pfstat", t, fd)) {
		ret = 1;
		goto out_close;
	}
	load.load_pid = t->load_pid;
	ret           = program(fd, r);
	if (!ret && (ret = pfm_load_context(fd, &load)))
		tool_err("pfstat", "PFM_LOAD_CONTEXT", ret);
	if (!ret && (ret = pfm_start(fd, 0)))
		tool_err("pfstat", "PFM_START", ret);
	if (t->argv) {
		if (tool_target_go("pfstat", t))
			ret = 1;
		if (tool_target_wait("pfstat", t, 1) < 0)
			ret = 1;
		if (!ret)
			wait_end(fd);
	} else if (!ret) {
		tool_sink =
			tool_mixed(PFSTAT_ROUNDS, PFSTAT_SPIN, PFSTAT_CALLS);
		ret = pfm_stop(fd);
		if (ret)
			tool_err("pfstat", "PFM_STOP", ret);
	}
	if (!ret)
		ret = collect(fd, r);
out_close:
	pfm_close(fd);
	return ret;
}

/*
 * perf-stat style: the scaled count (plain digits, for scripts), the
 * event, then the raw count and the time its set was running out of the
 * time monitoring was enabled.
 */
static void report(const struct run *r, int verbose)
{
	char v[56], raw[32], p[16], run[24], en[24];
	unsigned int i;

	tool_printf("pfstat: %18s  %-22s %14s  %-23s  %7s  set\n", "count",
		    "event", "raw", "running / enabled", "running");
	for (i = 0; i < r->nr; i++) {
		const struct ev *e = &r->ev[i];

		if (e->err) {
			tool_printf("pfstat: %18s  %-22s (%s)\n",
				    e->notavail ? "<not supported>"
				    : e->err == -PVPMU_ENOENT
					    ? "<unknown event>"
					    : "<error>",
				    e->spec,
				    e->notavail ? "the host cannot count it"
						: pvpmu_strerror(e->err));
		} else if (e->sc_kind == PVPMU_SCALE_NOT_COUNTED) {
			tool_printf("pfstat: %18s  %-22s (set %u never ran)\n",
				    "<not counted>", e->spec, e->set);
		} else {
			tool_ns(run, sizeof(run), e->run);
			tool_ns(en, sizeof(en), r->enabled);
			tool_snprintf(v, sizeof(v), "%s / %s", run, en);
			tool_printf("pfstat: %18llu  %-22s %14s  %-23s  %6s%%  "
				    "%u\n",
				    (unsigned long long)e->sc, e->spec,
				    tool_u64(raw, sizeof(raw), e->raw), v,
				    tool_fix2(p, sizeof(p), e->run * 100,
					      r->enabled),
				    e->set);
		}
	}
	for (i = 0; i < r->nr_sets; i++)
		tool_printf("pfstat: set %u: %llu runs\n", i,
			    (unsigned long long)r->runs[i]);
	if (verbose && r->driver_calls >= 0)
		tool_printf("pfstat: %18llu  driver hypercalls (sched-outs, "
			    "process records; in hv_*)\n",
			    (unsigned long long)r->driver_calls);
}

static const struct ev *find(const struct run *r, const char *spec)
{
	unsigned int i;

	for (i = 0; i < r->nr; i++) {
		if (tool_streq(r->ev[i].spec, spec))
			return r->ev[i].err ? 0 : &r->ev[i];
	}
	return 0;
}

/* Split the comma-separated (list) into (names); returns their number. */
static unsigned int split(const char *list, char names[][NAME_LEN],
			  const char **out)
{
	unsigned int n = 0, k = 0;

	for (;; list++) {
		if (*list == ',' || !*list) {
			if (k && n < MAX_EVENTS) {
				names[n][k] = '\0';
				out[n]      = names[n];
				n++;
			}
			k = 0;
			if (!*list)
				return n;
		} else if (k + 1 < NAME_LEN && n < MAX_EVENTS) {
			names[n][k++] = *list;
		}
	}
}

static struct run exact, mux;

/* The bare self-check: exact pass, then the multiplexed one. */
static int self_check(struct tool_target *t, const char *const *events,
		      unsigned int n, int verbose)
{
	const uint64_t want = (uint64_t)PFSTAT_ROUNDS * PFSTAT_CALLS;
	const struct ev *e;
	char a[32], b[32], c[16], d[24];
	uint64_t diff;
	int bad = 0;

	tool_printf("pfstat: workload: %u rounds of a %u-step spin and %u NOP "
		    "hypercalls (vcpu %u)\n",
		    PFSTAT_ROUNDS, PFSTAT_SPIN, PFSTAT_CALLS, t->vcpu);
	if (probe(&exact, exact_events, TOOL_ARRAY_SIZE(exact_events)) ||
	    measure(t, &exact))
		return 1;
	tool_printf("pfstat: exact pass, %u events in one set:\n", exact.nr);
	report(&exact, verbose);
	e = find(&exact, "hv_hypercalls");
	/* The workload's calls and the PFM_STOP hypercall (counted). */
	if (!e || e->raw != want + 1) {
		tool_printf("pfstat: check FAILED: hv_hypercalls %llu, want "
			    "%llu\n",
			    e ? (unsigned long long)e->raw : 0ULL,
			    (unsigned long long)want + 1);
		bad++;
	} else {
		tool_printf("pfstat: check ok: hv_hypercalls %llu == %llu "
			    "workload calls + 1 (PFM_STOP)\n",
			    (unsigned long long)e->raw,
			    (unsigned long long)want);
	}

	if (!n) {
		events = all_events;
		n      = TOOL_ARRAY_SIZE(all_events);
	}
	if (probe(&mux, events, n) || measure(t, &mux))
		return 1;
	if (mux.nr_sets > 1)
		tool_printf("pfstat: multiplexed pass, %u events over %u sets, "
			    "switch every %s:\n",
			    mux.nr, mux.nr_sets,
			    tool_ns(d, sizeof(d), mux.timeout));
	else
		tool_printf("pfstat: second pass, %u events in one set:\n",
			    mux.nr);
	report(&mux, verbose);
	e = find(&mux, "hv_hypercalls");
	if (!e) {
		tool_printf("pfstat: hv_hypercalls not among the events: no "
			    "multiplexing check\n");
		return bad ? 1 : 0;
	}
	diff = e->sc > want ? e->sc - want : want - e->sc;
	if (diff * 100 > want * PFSTAT_TOLERANCE_PCT) {
		tool_printf("pfstat: check FAILED: scaled hv_hypercalls %s, "
			    "want %s +- %u%%\n",
			    tool_u64(a, sizeof(a), e->sc),
			    tool_u64(b, sizeof(b), want), PFSTAT_TOLERANCE_PCT);
		bad++;
	} else {
		tool_printf("pfstat: check ok: scaled hv_hypercalls %s vs %s "
			    "made (%s%% off, from %s%% of the time)\n",
			    tool_u64(a, sizeof(a), e->sc),
			    tool_u64(b, sizeof(b), want),
			    tool_fix2(d, sizeof(d), diff * 100, want),
			    tool_fix2(c, sizeof(c), e->run * 100, mux.enabled));
	}
	return bad ? 1 : 0;
}

/* PROGRAM, counted once. */
static int count_program(struct tool_target *t, const char *const *events,
			 unsigned int n, int verbose)
{
	unsigned int i;

	if (probe(&mux, events, n) || measure(t, &mux))
		return 1;
	tool_printf("pfstat: Performance counter stats for '%s", t->argv[0]);
	for (i = 1; t->argv[i]; i++)
		tool_printf(" %s", t->argv[i]);
	tool_printf("' (vpmu, perfmon2), %u events in %u sets:\n", mux.nr,
		    mux.nr_sets);
	report(&mux, verbose);
	return tool_target_exit_status(t);
}

int pfstat_main(int argc, char **argv)
{
	static char names[MAX_EVENTS][NAME_LEN];
	const char *events[MAX_EVENTS], *list = 0;
	struct tool_opt o = {.ind = 1};
	struct tool_target t;
	unsigned int n;
	int opt, verbose = 0;

	while ((opt = tool_getopt(&o, "pfstat", argc, argv, "e:vh")) != -1) {
		switch (opt) {
		case 'e':
			list = o.arg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			return tool_usage(usage, opt == 'h');
		}
	}
	if (tool_target_args("pfstat", &t, argc, argv, o.ind))
		return 1;
	if (t.argv) {
		n = split(list ? list : DEFAULT_EV, names, events);
		return count_program(&t, events, n, verbose);
	}
	n = list ? split(list, names, events) : 0;
	return self_check(&t, events, n, verbose);
}
