// SPDX-License-Identifier: MIT
/*
 * pfrecord.c: sample a ring-3 workload with the default sampling format and
 * print a flat profile by function and by IP.
 *
 * PMD0 counts hv_guest_cycles with a sampling period of REC_PERIOD cycles
 * (written as -period, spec 3.4.1); each sample records PMD1 (hv_exits,
 * reset at every sample through reg_reset_pmds, so the body is the exits
 * since the previous sample). When the buffer is full the VMM masks
 * monitoring and queues an overflow message; pfrecord learns it from the
 * notification vector (counted by the kernel's default handler,
 * user_notify_count()) or by polling
 * pfm_read_msg(), parses the buffer, and issues PFM_RESTART (one per
 * message). IPs are symbolized with the image's own symbol table, which
 * the build generates from `nm` and links in (tool_syms).
 */
#include "tool.h"

#include "pvpmu_core.h"

#define REC_PERIOD   1000000ULL /* hv_guest_cycles per sample */
#define REC_BUF_SIZE 8192
#define REC_ROUNDS   30
#define REC_UNIT     400000 /* work_hot does 6 units, warm 3, cold 1 */
#define REC_SLICES   8      /* guard() between slices */
#define MAX_FUNCS    64
#define MAX_IPS      256
#define TOP_IPS      8

struct hist {
	uint64_t key; /* symbol pointer or IP */
	uint64_t n;
};

struct prof {
	struct hist funcs[MAX_FUNCS], ips[MAX_IPS];
	unsigned int nr_funcs, nr_ips;
	uint64_t nr_samples, nr_lost, exits, nr_msgs, nr_fills, nr_bad;
	uint64_t nr_rearms, nr_irqs;
	int fd;
	unsigned int vcpu;
};

static void bump(struct hist *h, unsigned int *nr, unsigned int max,
		 uint64_t key, uint64_t *lost)
{
	unsigned int i;

	for (i = 0; i < *nr; i++) {
		if (h[i].key == key) {
			h[i].n++;
			return;
		}
	}
	if (*nr == max) {
		(*lost)++;
		return;
	}
	h[*nr] = (struct hist){.key = key, .n = 1};
	(*nr)++;
}

/* Every sample of PMD0 in set 0 carries PMD1. */
static pvpmu_u64 body_of(void *opaque, pvpmu_u16 set, pvpmu_u16 pmd)
{
	(void)opaque;
	return set == 0 && pmd == 0 ? 1ULL << 1 : 0;
}

/* Add the samples of the (stable) buffer to the profile. */
static int parse(struct prof *p, const void *buf, uint64_t size)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	uint64_t ignored = 0;
	int ret;

	ret = pvpmu_smpl_iter_init(&it, buf, size, body_of, 0);
	if (ret)
		return tool_err("pfrecord", "sample buffer", ret);
	p->nr_fills = it.hdr.hdr_overflows;
	while ((ret = pvpmu_smpl_iter_next(&it, &s)) == 1) {
		const struct pvpmu_sym *sym;

		p->nr_samples++;
		/* The first sample follows the initial value, not a reset. */
		if (s.entry.ovfl_pmd != 0 || s.entry.set != 0 ||
		    s.entry.cpu != p->vcpu ||
		    (s.entry.last_reset_val != (uint64_t)-REC_PERIOD &&
		     s.entry.last_reset_val != 0)) {
			if (!p->nr_bad++)
				uprintf("pfrecord: unexpected sample: pmd %u "
					"set %u cpu %u last_reset 0x%llx\n",
					s.entry.ovfl_pmd, s.entry.set,
					s.entry.cpu,
					(unsigned long long)
						s.entry.last_reset_val);
		}
		if (s.nr_body == 1)
			p->exits += s.body[0];
		sym = pvpmu_sym_lookup(tool_syms, tool_nr_syms, s.entry.ip);
		bump(p->funcs, &p->nr_funcs, MAX_FUNCS, (uintptr_t)sym,
		     &p->nr_lost);
		bump(p->ips, &p->nr_ips, MAX_IPS, s.entry.ip, &ignored);
	}
	return ret ? tool_err("pfrecord", "sample buffer", ret) : 0;
}

static int setup(struct prof *p, const void **buf, uint64_t *size)
{
	struct {
		pfarg_ctx_t ctx;
		pfm_default_smpl_arg_t arg;
	} c = {
		.ctx = {.ctx_flags       = PFM_FL_SYSTEM_WIDE,
			.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID},
		.arg = {.buf_size = REC_BUF_SIZE},
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
		 .reg_value       = -REC_PERIOD,
		 .reg_short_reset = -REC_PERIOD,
		 .reg_long_reset  = -REC_PERIOD},
		{.reg_num = 1},
	};
	int ret;

	ret = pfm_create_context(&c.ctx, &c.arg, sizeof(c.arg));
	if (ret)
		return tool_err("pfrecord", "PFM_CREATE_CONTEXT", ret);
	p->fd = c.ctx.ctx_fd;
	ret   = pvpmu_event_encode("hv_guest_cycles", &pmc[0].reg_value, 0);
	if (!ret)
		ret = pvpmu_event_encode("hv_exits", &pmc[1].reg_value, 0);
	if (!ret && (ret = pfm_write_pmcs(p->fd, pmc, 2)))
		return tool_err("pfrecord", "PFM_WRITE_PMCS", ret);
	if (!ret && (ret = pfm_write_pmds(p->fd, pmd, 2)))
		return tool_err("pfrecord", "PFM_WRITE_PMDS", ret);
	if (!ret && (ret = pfm_smpl_buf(p->fd, buf, size)))
		return tool_err("pfrecord", "sampling buffer", ret);
	uprintf("pfrecord: context %d, %llu-byte sampling buffer at %p, "
		"period %llu hv_guest_cycles\n",
		p->fd, (unsigned long long)*size, *buf,
		(unsigned long long)REC_PERIOD);
	return ret;
}

static struct pvpmu_shared_page rec_page __attribute__((aligned(4096)));

/*
 * Guard against a late overflow: a VMM that accounts an overflow more than
 * a period late and keeps all of the skid on top of the short reset leaves
 * the counter past 0 again, never to overflow (libvpmu before cb4e501;
 * it now keeps the skid modulo the period). Seen through the shared page
 * without an exit: while active, a sampling counter reads below 0 unless
 * that happened; then write the period again. Counted and printed, so it
 * never hides.
 */
static int guard(struct prof *p)
{
	pfarg_pmd_t d = {.reg_num = 0};
	struct pvpmu_shared_times t;

	if (pvpmu_shared_read(&rec_page, p->fd, &d, 1, pvpmu_rdtsc(), &t) ||
	    !t.active || (int64_t)d.reg_value < (int64_t)REC_PERIOD)
		return 0;
	d = (pfarg_pmd_t){.reg_num         = 0,
			  .reg_value       = -REC_PERIOD,
			  .reg_short_reset = -REC_PERIOD,
			  .reg_long_reset  = -REC_PERIOD};
	p->nr_rearms++;
	return pfm_write_pmds(p->fd, &d, 1);
}

/* Consume every queued message: parse the full buffer, restart. */
static int drain(struct prof *p, const void *buf, uint64_t size)
{
	pfm_msg_t msg;
	int ret;

	while ((ret = pfm_read_msg(p->fd, &msg, 0)) == 0) {
		p->nr_msgs++;
		if (msg.msg_type != PFM_MSG_OVFL)
			continue;
		ret = parse(p, buf, size);
		if (!ret)
			ret = pfm_restart(p->fd);
		if (ret)
			return tool_err("pfrecord", "PFM_RESTART", ret);
	}
	return ret == -PVPMU_EAGAIN ? 0 : tool_err("pfrecord", "read", ret);
}

static int record(struct prof *p, int use_vector)
{
	pfarg_load_t load = {.load_pid = p->vcpu};
	uint64_t irqs     = user_notify_count(p->vcpu);
	unsigned int r;
	const void *buf;
	uint64_t size, x = 0;
	int ret;

	p->nr_irqs = irqs;
	ret        = setup(p, &buf, &size);
	if (!ret && (ret = pvpmu_shared_attach(&rec_page)))
		tool_err("pfrecord", "shared page", ret);
	if (!ret && use_vector)
		ret = pvpmu_set_vector(TOOL_NOTIFY_VECTOR);
	if (!ret && (ret = pfm_load_context(p->fd, &load)))
		tool_err("pfrecord", "PFM_LOAD_CONTEXT", ret);
	if (!ret && (ret = pfm_start(p->fd, 0)))
		tool_err("pfrecord", "PFM_START", ret);
	/* Rounds of hot, warm, cold, each in REC_SLICES slices. */
	for (r = 0; !ret && r < REC_ROUNDS * 3 * REC_SLICES; r++) {
		unsigned int f = r / REC_SLICES % 3;

		x ^= f == 0   ? work_hot(REC_UNIT / REC_SLICES)
		     : f == 1 ? work_warm(REC_UNIT / REC_SLICES)
			      : work_cold(REC_UNIT / REC_SLICES);
		/* Only ask the VMM when told, or poll (one exit a slice). */
		if ((!use_vector && r % REC_SLICES == 0) ||
		    (use_vector && user_notify_count(p->vcpu) != irqs)) {
			irqs = user_notify_count(p->vcpu);
			ret  = drain(p, buf, size);
		}
		if (!ret)
			ret = guard(p);
	}
	if (!ret && (ret = pfm_stop(p->fd)))
		tool_err("pfrecord", "PFM_STOP", ret);
	/* A last full buffer, then the partial one (stable once stopped). */
	if (!ret)
		ret = drain(p, buf, size);
	if (!ret)
		ret = parse(p, buf, size);
	p->nr_irqs = user_notify_count(p->vcpu) - p->nr_irqs;
	pvpmu_set_vector(0);
	pvpmu_shared_attach(0);
	pfm_close(p->fd);
	tool_sink = x;
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

static uint64_t count_of(const struct prof *p, const char *name)
{
	const struct pvpmu_sym *s;
	unsigned int i;
	const char *a, *b;

	for (i = 0; i < p->nr_funcs; i++) {
		s = (const struct pvpmu_sym *)(uintptr_t)p->funcs[i].key;
		if (!s)
			continue;
		for (a = s->name, b = name; *a && *a == *b; a++, b++)
			;
		if (!*a && !*b)
			return p->funcs[i].n;
	}
	return 0;
}

static void report(struct prof *p, int use_vector)
{
	char pc[16], a[32];
	unsigned int i;

	sort(p->funcs, p->nr_funcs);
	sort(p->ips, p->nr_ips);
	uprintf("pfrecord: %s samples, %llu buffer fills, %llu messages, "
		"%llu notifications (%s), %s exits recorded in samples\n",
		tool_u64(a, sizeof(a), p->nr_samples),
		(unsigned long long)p->nr_fills, (unsigned long long)p->nr_msgs,
		(unsigned long long)p->nr_irqs,
		use_vector ? "vector" : "polling",
		tool_u64(pc, sizeof(pc), p->exits));
	if (p->nr_rearms)
		uprintf("pfrecord: the sampling counter was re-armed %llu "
			"times (overflow accounted more than a period late)\n",
			(unsigned long long)p->nr_rearms);
	uprintf("pfrecord: flat profile by function:\n");
	uprintf("pfrecord: %8s %8s  %s\n", "samples", "share", "function");
	for (i = 0; i < p->nr_funcs; i++) {
		const struct pvpmu_sym *s =
			(const struct pvpmu_sym *)(uintptr_t)p->funcs[i].key;

		uprintf("pfrecord: %8llu %7s%%  %s\n",
			(unsigned long long)p->funcs[i].n,
			tool_fix2(pc, sizeof(pc), p->funcs[i].n * 100,
				  p->nr_samples),
			s ? s->name : "[unknown]");
	}
	uprintf("pfrecord: hottest IPs:\n");
	for (i = 0; i < p->nr_ips && i < TOP_IPS; i++) {
		uint64_t ip = p->ips[i].key;
		const struct pvpmu_sym *s =
			pvpmu_sym_lookup(tool_syms, tool_nr_syms, ip);

		uprintf("pfrecord: %8llu %7s%%  0x%llx %s+0x%llx\n",
			(unsigned long long)p->ips[i].n,
			tool_fix2(pc, sizeof(pc), p->ips[i].n * 100,
				  p->nr_samples),
			(unsigned long long)ip, s ? s->name : "[unknown]",
			(unsigned long long)(s ? ip - s->addr : 0));
	}
}

static struct prof prof;

int pfrecord_run(unsigned int vcpu, int use_vector)
{
	uint64_t hot, warm, cold;

	prof = (struct prof){.vcpu = vcpu};
	uprintf("pfrecord: workload: work_hot/work_warm/work_cold, weights "
		"6:3:1, %u rounds (ring %u, vcpu %u)\n",
		REC_ROUNDS, user_cpl(), vcpu);
	if (record(&prof, use_vector))
		return 1;
	report(&prof, use_vector);
	hot  = count_of(&prof, "work_hot");
	warm = count_of(&prof, "work_warm");
	cold = count_of(&prof, "work_cold");
	if (prof.nr_bad || !prof.nr_fills || hot <= warm || warm <= cold ||
	    hot * 100 < (hot + warm + cold) * 45) {
		uprintf("pfrecord: check FAILED: hot %llu warm %llu cold %llu, "
			"%llu bad samples, %llu fills\n",
			(unsigned long long)hot, (unsigned long long)warm,
			(unsigned long long)cold,
			(unsigned long long)prof.nr_bad,
			(unsigned long long)prof.nr_fills);
		return 1;
	}
	uprintf("pfrecord: check ok: work_hot > work_warm > work_cold, "
		"every sample from PMD0 on vcpu %u, buffer refilled %llu "
		"times\n",
		vcpu, (unsigned long long)prof.nr_fills);
	return 0;
}
