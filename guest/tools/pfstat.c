// SPDX-License-Identifier: MIT
/*
 * pfstat.c: count events of a ring-3 workload, perf-stat style.
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
 * The workload makes a known number of hypercalls, so pfstat checks its
 * own figures: in an exact pass (one set) hv_hypercalls must be the
 * workload's count plus the PFM_STOP call itself, and in the multiplexed
 * pass the scaled estimate must be within PFSTAT_TOLERANCE_PCT of it.
 */
#include "tool.h"

#define NR_COUNTERS          8
#define MAX_EVENTS           32
#define MAX_SETS             (MAX_EVENTS / NR_COUNTERS)
#define PFSTAT_SWITCH_NS     5000000ULL
#define PFSTAT_ROUNDS        300
#define PFSTAT_SPIN          200000
#define PFSTAT_CALLS         10
#define PFSTAT_TOLERANCE_PCT 25

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

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Encode every event and probe it in PMC0 of a scratch context. */
static int probe(struct run *r, const char *const *names, unsigned int n)
{
	pfarg_ctx_t ctx = {0};
	unsigned int i, k = 0;
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("pfstat", "PFM_CREATE_CONTEXT", ret);
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

/* Create the sets (time switching when there are several) and the PMCs. */
static int program(int fd, struct run *r)
{
	pfarg_setdesc_t sd[MAX_SETS] = {0};
	pfarg_pmc_t pmc[MAX_EVENTS]  = {0};
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
		n++;
	}
	ret = pfm_write_pmcs(fd, pmc, (int)n);
	return ret ? tool_err("pfstat", "PFM_WRITE_PMCS", ret) : 0;
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
		e->raw     = pmd[n++].reg_value;
		e->run     = run[e->set];
		e->sc_kind = pvpmu_scale(e->raw, r->enabled, e->run, &e->sc);
	}
	return 0;
}

/* One measurement of the workload with the events of (r). */
static int measure(unsigned int vcpu, struct run *r)
{
	pfarg_ctx_t ctx   = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	pfarg_load_t load = {.load_pid = vcpu};
	int ret, fd;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return tool_err("pfstat", "PFM_CREATE_CONTEXT", ret);
	fd  = ctx.ctx_fd;
	ret = program(fd, r);
	if (!ret && (ret = pfm_load_context(fd, &load)))
		tool_err("pfstat", "PFM_LOAD_CONTEXT", ret);
	if (!ret && (ret = pfm_start(fd, 0)))
		tool_err("pfstat", "PFM_START", ret);
	if (!ret) {
		/* Nothing but the workload between START and STOP. */
		tool_mixed(PFSTAT_ROUNDS, PFSTAT_SPIN, PFSTAT_CALLS);
		ret = pfm_stop(fd);
		if (ret)
			tool_err("pfstat", "PFM_STOP", ret);
	}
	if (!ret)
		ret = collect(fd, r);
	pfm_close(fd);
	return ret;
}

/*
 * perf-stat style: the scaled count, the event, then the raw count and
 * the time its set was running out of the time monitoring was enabled.
 */
static void report(const struct run *r)
{
	char v[32], raw[32], p[16], run[24], en[24];
	unsigned int i;

	uprintf("pfstat: %18s  %-22s %14s  %-23s  %7s  set\n", "count", "event",
		"raw", "running / enabled", "running");
	for (i = 0; i < r->nr; i++) {
		const struct ev *e = &r->ev[i];

		if (e->err) {
			uprintf("pfstat: %18s  %-22s (%s)\n",
				e->notavail               ? "<not supported>"
				: e->err == -PVPMU_ENOENT ? "<unknown event>"
							  : "<error>",
				e->spec,
				e->notavail ? "the host cannot count it"
					    : pvpmu_strerror(e->err));
		} else if (e->sc_kind == PVPMU_SCALE_NOT_COUNTED) {
			uprintf("pfstat: %18s  %-22s (set %u never ran)\n",
				"<not counted>", e->spec, e->set);
		} else {
			tool_ns(run, sizeof(run), e->run);
			tool_ns(en, sizeof(en), r->enabled);
			usnprintf(v, sizeof(v), "%s / %s", run, en);
			uprintf("pfstat: %18s  %-22s %14s  %-23s  %6s%%  %u\n",
				tool_u64(raw, sizeof(raw), e->sc), e->spec,
				tool_u64(en, sizeof(en), e->raw), v,
				tool_fix2(p, sizeof(p), e->run * 100,
					  r->enabled),
				e->set);
		}
	}
	for (i = 0; i < r->nr_sets; i++)
		uprintf("pfstat: set %u: %llu runs\n", i,
			(unsigned long long)r->runs[i]);
}

static const struct ev *find(const struct run *r, const char *spec)
{
	unsigned int i;
	const char *a, *b;

	for (i = 0; i < r->nr; i++) {
		for (a = r->ev[i].spec, b = spec; *a && *a == *b; a++, b++)
			;
		if (!*a && !*b)
			return r->ev[i].err ? 0 : &r->ev[i];
	}
	return 0;
}

static struct run exact, mux;

int pfstat_run(unsigned int vcpu, const char *const *events, unsigned int n)
{
	const uint64_t want = (uint64_t)PFSTAT_ROUNDS * PFSTAT_CALLS;
	const struct ev *e;
	char a[32], b[32], c[16], t[24];
	uint64_t diff;
	int ret, bad = 0;

	uprintf("pfstat: workload: %u rounds of a %u-step spin and %u NOP "
		"hypercalls (ring %u, vcpu %u)\n",
		PFSTAT_ROUNDS, PFSTAT_SPIN, PFSTAT_CALLS, user_cpl(), vcpu);

	ret = probe(&exact, exact_events, ARRAY_SIZE(exact_events));
	if (!ret)
		ret = measure(vcpu, &exact);
	if (ret)
		return 1;
	uprintf("pfstat: exact pass, %u events in one set:\n", exact.nr);
	report(&exact);
	e = find(&exact, "hv_hypercalls");
	/* The workload's calls and the PFM_STOP hypercall (counted). */
	if (!e || e->raw != want + 1) {
		uprintf("pfstat: check FAILED: hv_hypercalls %llu, want %llu\n",
			e ? (unsigned long long)e->raw : 0ULL,
			(unsigned long long)want + 1);
		bad++;
	} else {
		uprintf("pfstat: check ok: hv_hypercalls %llu == %llu "
			"workload calls + 1 (PFM_STOP)\n",
			(unsigned long long)e->raw, (unsigned long long)want);
	}

	if (!events || !n || n > MAX_EVENTS) {
		events = all_events;
		n      = ARRAY_SIZE(all_events);
	}
	ret = probe(&mux, events, n);
	if (!ret)
		ret = measure(vcpu, &mux);
	if (ret)
		return 1;
	if (mux.nr_sets > 1)
		uprintf("pfstat: multiplexed pass, %u events over %u sets, "
			"switch every %s:\n",
			mux.nr, mux.nr_sets,
			tool_ns(t, sizeof(t), mux.timeout));
	else
		uprintf("pfstat: second pass, %u events in one set:\n", mux.nr);
	report(&mux);
	e = find(&mux, "hv_hypercalls");
	if (!e) {
		uprintf("pfstat: hv_hypercalls not among the events: no "
			"multiplexing check\n");
		return bad ? 1 : 0;
	}
	diff = e->sc > want ? e->sc - want : want - e->sc;
	if (diff * 100 > want * PFSTAT_TOLERANCE_PCT) {
		uprintf("pfstat: check FAILED: scaled hv_hypercalls %s, "
			"want %s +- %u%%\n",
			tool_u64(a, sizeof(a), e->sc),
			tool_u64(b, sizeof(b), want), PFSTAT_TOLERANCE_PCT);
		bad++;
	} else {
		uprintf("pfstat: check ok: scaled hv_hypercalls %s vs %s "
			"made (%s%% off, from %s%% of the time)\n",
			tool_u64(a, sizeof(a), e->sc),
			tool_u64(b, sizeof(b), want),
			tool_fix2(t, sizeof(t), diff * 100, want),
			tool_fix2(c, sizeof(c), e->run * 100, mux.enabled));
	}
	return bad ? 1 : 0;
}
