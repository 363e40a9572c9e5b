// SPDX-License-Identifier: MIT
/*
 * pfrecord: sample PROGRAM (Linux) or the tool's own workload (bare) with
 * the default sampling format (spec 3.6) and print a flat profile by
 * function, and the hottest IPs.
 *
 *   pfrecord [-p] [-o FILE] [-c PERIOD | -F HZ] [-e EVENT] [--]
 *            [PROGRAM [ARGS...]]
 *
 * PMD0 counts EVENT (hv_guest_cycles) and overflows every PERIOD events
 * (written as -PERIOD, spec 3.4.1) with overflow notification; each sample
 * records PMD1 (hv_exits, reset at every sample through reg_reset_pmds, so
 * the body is the exits since the previous sample). When the buffer is
 * full the VMM masks monitoring and queues an overflow message; pfrecord
 * learns it (bare: from the notification vector, counted by the kernel's
 * default handler; Linux: by blocking in pfm_read_msg(); -p: by polling
 * pfm_read_msg()), parses the buffer, and issues PFM_RESTART (one per
 * message).
 *
 * PROGRAM runs in a child that waits until its per-thread context (spec
 * 3.1.7) is started; its IPs are resolved against the .symtab of its ELF
 * file (a non-PIE executable; others are [kernel] or [unknown]). Without
 * PROGRAM, the bare tool samples its own work_hot/work_warm/work_cold
 * (weights 6:3:1) on its vCPU, resolves IPs with the image's own symbol
 * table, and checks the profile. Linux has no such workload.
 */
#include "tool.h"

#define DEFAULT_EV     "hv_guest_cycles"
#define DEFAULT_PERIOD 1000000ULL
#define BUF_SIZE       65536
#define SELF_BUF_SIZE  8192         /* small: the self-check wants refills */
#define POLL_NS        100000000ULL /* between looks at PROGRAM */
#define END_TRIES      20           /* of POLL_NS for PFM_MSG_END */
#define REC_ROUNDS     30
#define REC_UNIT       400000 /* work_hot does 6 units, warm 3, cold 1 */
#define REC_SLICES     8      /* guard() between slices */
#define MAX_FUNCS      256
#define MAX_IPS        256
#define TOP_IPS        8

static const char usage[] =
	"Usage: pfrecord [-p] [-o FILE] [-c PERIOD | -F HZ] [-e EVENT] -- "
	"PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM, sample it with the vpmu virtual PMU through the\n"
	"paravirtual perfmon2 interface (/dev/pvpmu, module pvpmu.ko), and\n"
	"print a flat profile by function (PROGRAM's ELF .symtab).\n"
	"\n"
	"  -e EVENT  sampling event (default " DEFAULT_EV "); `pfinfo`\n"
	"            lists them\n"
	"  -c PERIOD one sample every PERIOD events (default 1000000)\n"
	"  -F HZ     about HZ samples a second of guest cycles (PERIOD from\n"
	"            the cpu MHz of /proc/cpuinfo)\n"
	"  -o FILE   also write the raw samples, one line each:\n"
	"            ip pid tid cpu weight\n"
	"  -p        poll for overflow messages instead of waiting for them\n"
	"  -h        this help\n"
	"\n"
	"In the bare guest there is no PROGRAM and no file (-o): pfrecord\n"
	"samples its own workload and checks the profile; -p comes from a\n"
	"VM name ending in -poll.\n"
	"\n"
	"Exit status: PROGRAM's, or 1 when recording (or a check) failed.\n";

struct hist {
	uint64_t key;     /* symbol pointer or IP */
	uint64_t n;       /* periods: a sample, and the ones it missed */
	uint64_t samples; /* samples alone: one each, however late */
};

struct rec {
	struct hist funcs[MAX_FUNCS], ips[MAX_IPS];
	unsigned int nr_funcs, nr_ips;
	uint64_t nr_samples, nr_periods, nr_lost, exits, nr_msgs, nr_fills;
	uint64_t nr_bad, nr_rearms, nr_irqs;
	uint64_t max_weight, max_weight_ip; /* most periods in one sample */
	const char *event;
	uint64_t period;
	int poll;
	int fd;
	int ended; /* PFM_MSG_END read: the thread's last switch is done */
	const void *buf;
	pvpmu_u64 size;
	const struct tool_target *t;
};

static void bump(struct hist *h, unsigned int *nr, unsigned int max,
		 uint64_t key, uint64_t n, uint64_t *lost)
{
	unsigned int i;

	for (i = 0; i < *nr; i++) {
		if (h[i].key == key) {
			h[i].n += n;
			h[i].samples++;
			return;
		}
	}
	if (*nr == max) {
		*lost += n;
		return;
	}
	h[*nr] = (struct hist){.key = key, .n = n, .samples = 1};
	(*nr)++;
}

/* Every sample of PMD0 in set 0 carries PMD1. */
static pvpmu_u64 body_of(void *opaque, pvpmu_u16 set, pvpmu_u16 pmd)
{
	(void)opaque;
	return set == 0 && pmd == 0 ? 1ULL << 1 : 0;
}

static void add(struct rec *p, const struct pvpmu_smpl *s)
{
	const struct pfm_default_smpl_entry *e = &s->entry;
	uint64_t w = 1 + (uint64_t)e->nr_missed, ignored = 0;

	p->nr_samples++;
	p->nr_periods += w;
	if (w > p->max_weight) {
		p->max_weight    = w;
		p->max_weight_ip = e->ip;
	}
	/* The first sample follows the initial value, not a reset. */
	if (e->ovfl_pmd != 0 || e->set != 0 ||
	    (!p->t->argv && e->cpu != p->t->vcpu) ||
	    (e->last_reset_val != (uint64_t)-p->period &&
	     e->last_reset_val != 0)) {
		if (!p->nr_bad++)
			tool_eprintf("pfrecord: unexpected sample: pmd %u set "
				     "%u cpu %u last_reset 0x%llx\n",
				     e->ovfl_pmd, e->set, e->cpu,
				     (unsigned long long)e->last_reset_val);
	}
	if (s->nr_body == 1)
		p->exits += s->body[0];
	tool_raw_sample(e);
	bump(p->funcs, &p->nr_funcs, MAX_FUNCS,
	     (uintptr_t)tool_syms_lookup(e->ip), w, &p->nr_lost);
	bump(p->ips, &p->nr_ips, MAX_IPS, e->ip, w, &ignored);
}

/* Add the samples of the (stable) buffer to the profile. */
static int parse(struct rec *p)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	int ret;

	ret = pvpmu_smpl_iter_init(&it, p->buf, p->size, body_of, 0);
	if (ret)
		return tool_err("pfrecord", "sample buffer", ret);
	p->nr_fills = it.hdr.hdr_overflows;
	while ((ret = pvpmu_smpl_iter_next(&it, &s)) == 1)
		add(p, &s);
	return ret ? tool_err("pfrecord", "sample buffer", ret) : 0;
}

/*
 * Consume the queued messages, the first waited for up to (timeout_ns):
 * parse each full buffer, restart.
 */
static int drain(struct rec *p, uint64_t timeout_ns)
{
	pfm_msg_t msg;
	int ret;

	while ((ret = pfm_read_msg(p->fd, &msg, timeout_ns)) == 0) {
		timeout_ns = 0;
		p->nr_msgs++;
		if (msg.msg_type == PFM_MSG_END)
			p->ended = 1;
		if (msg.msg_type != PFM_MSG_OVFL)
			continue;
		ret = parse(p);
		if (ret)
			return ret;
		/*
		 * EBUSY: the monitored thread exited after this notification
		 * and the context is unloaded (spec 3.3.6); nothing is left
		 * to restart, and PFM_MSG_END follows.
		 */
		ret = pfm_restart(p->fd);
		if (ret && ret != -PVPMU_EBUSY)
			return tool_err("pfrecord", "PFM_RESTART", ret);
	}
	if (ret == -PVPMU_EAGAIN || ret == -PVPMU_ETIMEDOUT)
		return 0;
	return tool_err("pfrecord", "read", ret);
}

/* A context on (p->t) sampling (p->event), loaded, not started. */
static int setup(struct rec *p)
{
	struct {
		pfarg_ctx_t ctx;
		pfm_default_smpl_arg_t arg;
	} c = {
		.ctx = {.ctx_flags       = p->t->ctx_flags,
			.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID},
		.arg = {.buf_size = p->t->argv ? BUF_SIZE : SELF_BUF_SIZE},
	};
	pfarg_pmc_t pmc[2] = {
		{.reg_num           = 0,
		 .reg_flags         = PFM_REGFL_OVFL_NOTIFY,
		 .reg_smpl_pmds[0]  = 1ULL << 1,
		 .reg_reset_pmds[0] = 1ULL << 1},
		{.reg_num = 1},
	};
	pfarg_pmd_t pmd[2] = {
		{.reg_num         = 0,
		 .reg_value       = -p->period,
		 .reg_short_reset = -p->period,
		 .reg_long_reset  = -p->period},
		{.reg_num = 1},
	};
	int ret;

	ret = pvpmu_event_encode(p->event, &pmc[0].reg_value, 0);
	if (ret)
		return tool_err("pfrecord", p->event, ret);
	ret = pvpmu_event_encode("hv_exits", &pmc[1].reg_value, 0);
	if (ret)
		return tool_err("pfrecord", "hv_exits", ret);
	ret = pfm_create_context(&c.ctx, &c.arg, sizeof(c.arg));
	if (ret)
		return tool_err("pfrecord",
				"PFM_CREATE_CONTEXT (is pvpmu.ko "
				"loaded?)",
				ret);
	p->fd = c.ctx.ctx_fd;
	ret   = pfm_write_pmcs(p->fd, pmc, 2);
	if (ret)
		return tool_err("pfrecord", "PFM_WRITE_PMCS", ret);
	ret = pfm_write_pmds(p->fd, pmd, 2);
	if (ret)
		return tool_err("pfrecord", "PFM_WRITE_PMDS", ret);
	ret = pfm_smpl_buf(p->fd, &p->buf, &p->size);
	if (ret)
		return tool_err("pfrecord", "sampling buffer", ret);
	return 0;
}

/*
 * Guard against a late overflow: a VMM that accounts an overflow more than
 * a period late and keeps all of the skid on top of the short reset leaves
 * the counter past 0 again, never to overflow (libvpmu before cb4e501;
 * it now keeps the skid modulo the period). Seen without an exit where
 * the platform can (bare's shared page): while active, a sampling counter
 * reads below 0 unless that happened; then write the period again.
 * Counted and printed, so it never hides.
 */
static int guard(struct rec *p)
{
	pfarg_pmd_t d;
	uint64_t v;

	if (!tool_pmd_live(p->fd, 0, &v) || (int64_t)v < (int64_t)p->period)
		return 0;
	d = (pfarg_pmd_t){.reg_num         = 0,
			  .reg_value       = -p->period,
			  .reg_short_reset = -p->period,
			  .reg_long_reset  = -p->period};
	p->nr_rearms++;
	return pfm_write_pmds(p->fd, &d, 1);
}

/* The built-in workload: rounds of hot, warm, cold, each in slices. */
static int run_self(struct rec *p)
{
	uint64_t irqs = tool_notify_count(), x = 0;
	unsigned int r;
	int ret = 0;

	for (r = 0; !ret && r < REC_ROUNDS * 3 * REC_SLICES; r++) {
		unsigned int f = r / REC_SLICES % 3;

		x ^= f == 0   ? work_hot(REC_UNIT / REC_SLICES)
		     : f == 1 ? work_warm(REC_UNIT / REC_SLICES)
			      : work_cold(REC_UNIT / REC_SLICES);
		/* Only ask the VMM when told, or poll (one exit a slice). */
		if ((p->poll && r % REC_SLICES == 0) ||
		    (!p->poll && tool_notify_count() != irqs)) {
			irqs = tool_notify_count();
			ret  = drain(p, 0);
		}
		if (!ret)
			ret = guard(p);
	}
	tool_sink = x;
	if (!ret && (ret = pfm_stop(p->fd)))
		tool_err("pfrecord", "PFM_STOP", ret);
	/* A last full buffer (the partial one is stable once stopped). */
	return ret ? ret : drain(p, 0);
}

/*
 * PROGRAM until it ends. Its context is unloaded at the thread's last
 * switch, which may follow the wait (spec 3.3.6): then the last messages
 * up to PFM_MSG_END (END_TRIES * POLL_NS at most).
 */
static int run_program(struct rec *p, struct tool_target *t)
{
	unsigned int tries;
	int ret = 0, done = 0;

	while (!ret && !done) {
		ret = drain(p, p->poll ? 0 : POLL_NS);
		if (p->poll)
			tool_sleep_ns(POLL_NS);
		done = tool_target_wait("pfrecord", t, 0);
		if (done < 0)
			return 1;
	}
	if (!done && tool_target_wait("pfrecord", t, 1) < 0)
		return 1;
	for (tries = 0; !ret && !p->ended && tries < END_TRIES; tries++)
		ret = drain(p, POLL_NS);
	return ret;
}

static int record(struct rec *p, struct tool_target *t)
{
	pfarg_load_t load = {0};
	uint64_t irqs;
	int ret;

	ret = setup(p);
	if (ret)
		goto out_close;
	if (t->argv && tool_target_spawn("pfrecord", t, p->fd)) {
		ret = 1;
		goto out_close;
	}
	load.load_pid = t->load_pid;
	irqs          = tool_notify_count();
	if (!p->poll && (ret = tool_notify_open()))
		tool_err("pfrecord", "notification vector", ret);
	if (!ret && (ret = pfm_load_context(p->fd, &load)))
		tool_err("pfrecord", "PFM_LOAD_CONTEXT", ret);
	if (!ret && (ret = pfm_start(p->fd, 0)))
		tool_err("pfrecord", "PFM_START", ret);
	if (ret && t->argv)
		tool_target_kill(t);
	else if (t->argv)
		ret = tool_target_go("pfrecord", t) ? 1 : run_program(p, t);
	else if (!ret)
		ret = run_self(p);
	if (!ret)
		ret = parse(p);
	p->nr_irqs = tool_notify_count() - irqs;
	if (!p->poll)
		tool_notify_close();
out_close:
	if (p->fd >= 0)
		pfm_close(p->fd);
	return ret;
}

static void sort(struct hist *h, unsigned int n)
{
	unsigned int i, j;
	struct hist t;

	for (i = 1; i < n; i++) {
		t = h[i];
		for (j = i; j > 0 && h[j - 1].n < t.n; j--)
			h[j] = h[j - 1];
		h[j] = t;
	}
}

static const char *func_name(uint64_t key)
{
	const struct pvpmu_sym *s = (const struct pvpmu_sym *)(uintptr_t)key;

	return s ? s->name : "[unknown]";
}

/* The samples (not periods) that fell in function (name). */
static uint64_t samples_of(const struct rec *p, const char *name)
{
	unsigned int i;

	for (i = 0; i < p->nr_funcs; i++) {
		if (p->funcs[i].key &&
		    tool_streq(func_name(p->funcs[i].key), name))
			return p->funcs[i].samples;
	}
	return 0;
}

/*
 * The summary first (its sample count right after "pfrecord: "), then the
 * profile rows, unprefixed "periods share function" so that scripts read
 * them up to the next "pfrecord:" line.
 */
static void report(struct rec *p, int nr_syms, const char *file)
{
	char pc[16], a[32];
	unsigned int i;

	sort(p->funcs, p->nr_funcs);
	sort(p->ips, p->nr_ips);
	tool_printf(
		"pfrecord: %llu samples (%llu periods) of %s every %llu "
		"events, %llu buffer fills, %llu messages, %llu "
		"notifications (%s), %s exits recorded in samples, %d "
		"functions in %s\n",
		(unsigned long long)p->nr_samples,
		(unsigned long long)p->nr_periods, p->event,
		(unsigned long long)p->period, (unsigned long long)p->nr_fills,
		(unsigned long long)p->nr_msgs, (unsigned long long)p->nr_irqs,
		p->poll ? "polling" : tool_notify_how,
		tool_u64(a, sizeof(a), p->exits), nr_syms, file);
	if (p->nr_rearms)
		tool_printf("pfrecord: the sampling counter was re-armed %llu "
			    "times (overflow accounted more than a period "
			    "late)\n",
			    (unsigned long long)p->nr_rearms);
	if (p->max_weight > 1)
		tool_printf("pfrecord: the most periods one sample carried: "
			    "%llu (at 0x%llx)\n",
			    (unsigned long long)p->max_weight,
			    (unsigned long long)p->max_weight_ip);
	tool_printf("pfrecord: flat profile by function:\n");
	tool_printf(" %10s %8s  %s\n", "periods", "percent", "function");
	for (i = 0; i < p->nr_funcs; i++)
		tool_printf(" %10llu %7s%%  %s\n",
			    (unsigned long long)p->funcs[i].n,
			    tool_fix2(pc, sizeof(pc), p->funcs[i].n * 100,
				      p->nr_periods),
			    func_name(p->funcs[i].key));
	tool_printf("pfrecord: hottest IPs:\n");
	for (i = 0; i < p->nr_ips && i < TOP_IPS; i++) {
		uint64_t ip               = p->ips[i].key;
		const struct pvpmu_sym *s = tool_syms_lookup(ip);

		tool_printf("pfrecord: %8llu %7s%%  0x%llx %s+0x%llx\n",
			    (unsigned long long)p->ips[i].n,
			    tool_fix2(pc, sizeof(pc), p->ips[i].n * 100,
				      p->nr_periods),
			    (unsigned long long)ip, s ? s->name : "[unknown]",
			    (unsigned long long)(s ? ip - s->addr : 0));
	}
}

/*
 * The built-in workload's profile must be 6:3:1 from PMD0 samples. Judged
 * by samples, not periods: a time event counts while the host has the
 * vCPU thread preempted, and the one sample taken when it runs again
 * carries every period of the wait at a single IP (337 of 1081 periods at
 * one instruction of work_warm, once, in a loaded CI run). The time at
 * which a sample is taken is what follows the workload's 6:3:1.
 */
static int check(const struct rec *p)
{
	uint64_t hot  = samples_of(p, "work_hot");
	uint64_t warm = samples_of(p, "work_warm");
	uint64_t cold = samples_of(p, "work_cold");

	if (p->nr_bad || !p->nr_fills || hot <= warm || warm <= cold ||
	    hot * 100 < (hot + warm + cold) * 45) {
		tool_printf("pfrecord: check FAILED: samples in hot %llu "
			    "warm %llu cold %llu, %llu bad samples, %llu "
			    "fills\n",
			    (unsigned long long)hot, (unsigned long long)warm,
			    (unsigned long long)cold,
			    (unsigned long long)p->nr_bad,
			    (unsigned long long)p->nr_fills);
		return 1;
	}
	tool_printf("pfrecord: check ok: work_hot > work_warm > work_cold "
		    "(samples %llu, %llu, %llu), every sample from PMD0 on "
		    "vcpu %u, buffer refilled %llu times\n",
		    (unsigned long long)hot, (unsigned long long)warm,
		    (unsigned long long)cold, p->t->vcpu,
		    (unsigned long long)p->nr_fills);
	return 0;
}

static struct rec rec;

int pfrecord_main(int argc, char **argv)
{
	const char *out   = 0, *file;
	struct tool_opt o = {.ind = 1};
	uint64_t hz       = 0;
	struct tool_target t;
	int opt, ret, close_ret, nr_syms;

	rec = (struct rec){.event  = DEFAULT_EV,
			   .period = DEFAULT_PERIOD,
			   .fd     = -1,
			   .t      = &t};
	while ((opt = tool_getopt(&o, "pfrecord", argc, argv, "o:c:F:e:ph")) !=
	       -1) {
		switch (opt) {
		case 'o':
			out = o.arg;
			break;
		case 'c':
		case 'F':
			if (tool_parse_u64(o.arg,
					   opt == 'c' ? &rec.period : &hz)) {
				tool_eprintf("pfrecord: -%c: not a positive "
					     "number: %s\n",
					     opt, o.arg);
				return 1;
			}
			break;
		case 'e':
			rec.event = o.arg;
			break;
		case 'p':
			rec.poll = 1;
			break;
		default:
			return tool_usage(usage, opt == 'h');
		}
	}
	if (tool_target_args("pfrecord", &t, argc, argv, o.ind))
		return 1;
	if (hz && !(rec.period = tool_cpu_khz() * 1000 / hz)) {
		tool_eprintf("pfrecord: -F: no CPU frequency known (use -c)\n");
		return 1;
	}
	if (out && (ret = tool_raw_open(out))) {
		tool_err("pfrecord", out, ret);
		return 1;
	}
	nr_syms = tool_syms_load(&t, &file);
	if (!t.argv)
		tool_printf("pfrecord: workload: work_hot/work_warm/work_cold, "
			    "weights 6:3:1, %u rounds (vcpu %u)\n",
			    REC_ROUNDS, t.vcpu);
	ret = record(&rec, &t);
	if (!ret)
		report(&rec, nr_syms, file);
	close_ret = tool_raw_close();
	if (close_ret && !ret)
		ret = tool_err("pfrecord", out, close_ret);
	if (!ret && !t.argv)
		ret = check(&rec);
	tool_syms_unload();
	if (ret)
		return 1;
	return t.argv ? tool_target_exit_status(&t) : 0;
}
