// SPDX-License-Identifier: MIT
/*
 * test_snapshot.c: the whole logical PMU saved and restored into a fresh
 * domain (vpmu_domain_save / vpmu_domain_restore). Each test
 * drives the harness domain A to a state, saves it, lets A go on, then
 * restores the blob into a twin domain B (its own replay source scripted
 * the same way) and runs B for the same run time: everything a guest can
 * observe must be identical. perfmon2 behaviour kept across the snapshot
 * is cited by spec section.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MS 1000000ULL

TestSuite(vpmu_snapshot, .init = h_setup, .fini = h_teardown);

static uint64_t ts_ns(struct pfarg_timespec ts)
{
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Domain B: same limits and events as the harness, its own replay. */
static struct {
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_domain *d;
	struct vpmu_cpu *cpu0, *cpu1;
	struct vpmu_caller guest;
	unsigned int nr_notes;
} B;

static void b_note(void *opaque, const struct vpmu_notify *n)
{
	(void)opaque;
	(void)n;
	B.nr_notes++;
}

static void b_make(const struct vpmu_limits *limits)
{
	struct vpmu_domain_config cfg = {0};
	unsigned int i;

	memset(&B, 0, sizeof(B));
	cr_assert(eq(int, vpmu_replay_create(&B.rp), 0));
	for (i = 0; i < 8; i++)
		cr_assert(
			eq(int, vpmu_replay_add_event(B.rp, H_EV(i), "ev"), 0));
	vpmu_replay_instance(B.rp, &B.be);
	if (limits)
		cfg.limits = *limits;
	else
		vpmu_limits_default(&cfg.limits);
	cfg.backends    = &B.be;
	cfg.nr_backends = 1;
	cfg.notify      = b_note;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &B.d), 0));
	cr_assert(eq(int, vpmu_cpu_create(B.d, 0, &B.cpu0), 0));
	cr_assert(eq(int, vpmu_cpu_create(B.d, 1, &B.cpu1), 0));
	B.guest = (struct vpmu_caller){
		.owner = VPMU_OWNER_GUEST, .cpu = B.cpu0, .tid = 100};
}

static void b_free(void)
{
	vpmu_domain_destroy(B.d);
	vpmu_replay_destroy(B.rp);
	B.d = NULL;
}

static void b_rate(unsigned int ev, uint64_t per_sec)
{
	cr_assert(eq(int, vpmu_replay_set_rate(B.rp, 0, H_EV(ev), per_sec), 0));
}

static void b_run(uint64_t ns)
{
	cr_assert(eq(int, vpmu_cpu_account(B.cpu0, ns, &H.gs), 0));
}

static uint64_t b_val(int fd, uint16_t set, uint16_t num)
{
	struct pfarg_pmd p = {.reg_num = num, .reg_set = set};

	cr_assert(eq(int, vpmu_ctx_read_pmds(B.d, &B.guest, fd, &p, 1), 0));
	return p.reg_value;
}

static struct pfarg_setinfo b_setinfo(int fd, uint16_t id)
{
	struct pfarg_setinfo si = {.set_id = id};

	cr_assert(eq(int, vpmu_ctx_getinfo_evtsets(B.d, &B.guest, fd, &si, 1),
		     0));
	return si;
}

/* Save A into a blob, restore it into a fresh B. */
static void save_restore(void)
{
	void *blob      = NULL;
	size_t len      = 0;
	char err[160]   = "";
	unsigned int dr = 99;

	cr_assert(eq(int, vpmu_domain_save(H.d, &blob, &len, &dr), 0));
	cr_assert(eq(u32, dr, 0));
	b_make(NULL);
	cr_assert(eq(int, vpmu_domain_restore(B.d, blob, len, err, sizeof(err)),
		     0),
		  "%s", err);
	free(blob);
}

/*
 * 3.2 (64-bit virtual counters over narrow hardware): a counter running
 * past its emulated width keeps counting from its saved 64-bit value.
 */
Test(vpmu_snapshot, counts_continue_exactly)
{
	struct vpmu_limits l;
	int fd;

	vpmu_limits_default(&l);
	l.counter_width = 16; /* many narrow wraps on the way */
	h_init(&l);
	fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd(fd, 0, 0, 0x123456789ULL, 0, 0);
	h_rate(0, 1000000000ULL); /* one event per ns */
	h_load(fd, 0);
	h_start(fd);
	h_run(5 * MS);
	vpmu_limits_default(&l);
	l.counter_width = 16;
	{
		void *blob    = NULL;
		size_t len    = 0;
		char err[160] = "";

		cr_assert(eq(int, vpmu_domain_save(H.d, &blob, &len, NULL), 0));
		b_make(&l);
		cr_assert(eq(int,
			     vpmu_domain_restore(B.d, blob, len, err,
						 sizeof(err)),
			     0),
			  "%s", err);
		free(blob);
	}
	b_rate(0, 1000000000ULL);
	cr_assert(eq(u64, b_val(fd, 0, 0), 0x123456789ULL + 5 * MS));
	cr_assert(eq(u64, vpmu_cpu_run_ns(B.cpu0), 5 * MS), "run time kept");
	h_run(7 * MS);
	b_run(7 * MS);
	cr_assert(eq(u64, b_val(fd, 0, 0), h_val(fd, 0, 0)));
	cr_assert(eq(u64, b_val(fd, 0, 0), 0x123456789ULL + 12 * MS));
	b_free();
}

/*
 * 3.7.6, 3.1.12: time-based multiplexing goes on with the remaining
 * timeout of the active set; set_runs and set_act_duration continue.
 */
Test(vpmu_snapshot, set_rotation_and_run_counts_kept)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	struct vpmu_snapshot snap;
	unsigned int s;

	h_set(fd, 0, PFM_SETFL_TIME_SWITCH, 0, 1 * MS);
	h_set(fd, 1, PFM_SETFL_TIME_SWITCH, 0, 1 * MS);
	h_set(fd, 2, PFM_SETFL_TIME_SWITCH, 0, 1 * MS);
	for (s = 0; s < 3; s++)
		h_pmc(fd, (uint16_t)s, 0, H_EVSEL(s), 0);
	h_rate(0, 1000000ULL);
	h_rate(1, 2000000ULL);
	h_rate(2, 3000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(MS / 2);
	h_run(MS);
	h_run(MS); /* mid-way through set 1's second... timeout */
	save_restore();
	/* The guest's shared page shows the interval at once. */
	cr_assert(eq(int, vpmu_cpu_snapshot(B.cpu0, &snap), 0));
	cr_assert(eq(u64, snap.switch_ns, 1 * MS));
	b_rate(0, 1000000ULL);
	b_rate(1, 2000000ULL);
	b_rate(2, 3000000ULL);
	for (s = 0; s < 7; s++) {
		h_run(MS / 3);
		b_run(MS / 3);
	}
	for (s = 0; s < 3; s++) {
		struct pfarg_setinfo a = h_setinfo(fd, (uint16_t)s);
		struct pfarg_setinfo b = b_setinfo(fd, (uint16_t)s);

		cr_assert(eq(u64, b.set_runs, a.set_runs), "set %u runs", s);
		cr_assert(lt(u64, 0, b.set_runs));
		cr_assert(eq(u64, ts_ns(b.set_act_duration),
			     ts_ns(a.set_act_duration)),
			  "set %u act", s);
		cr_assert(lt(u64, 0, ts_ns(b.set_act_duration)));
		cr_assert(eq(u64, b_val(fd, (uint16_t)s, 0),
			     h_val(fd, (uint16_t)s, 0)),
			  "set %u PMD0", s);
	}
	b_free();
}

/*
 * 3.3.3, 3.4.3: a pending overflow message is read after restore, the
 * context stays masked until PFM_RESTART and then counts on.
 */
Test(vpmu_snapshot, pending_overflow_message_delivered)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	union pfm_msg m;
	unsigned int nr = 0;

	h_pmc(fd, 0, 0, H_EVSEL(0), PFM_REGFL_OVFL_NOTIFY);
	h_pmd(fd, 0, 0, 0 - 100ULL, 0, 0 - 100ULL);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(150); /* overflow: message queued, context masked */
	save_restore();
	b_rate(0, 1000000000ULL);
	cr_assert(
		eq(int, vpmu_ctx_read_msgs(B.d, &B.guest, fd, &m, 1, &nr), 0));
	cr_assert(eq(u32, nr, 1));
	cr_assert(eq(u32, m.msg_type, PFM_MSG_OVFL));
	cr_assert(eq(u64, m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1));
	cr_assert(eq(int, vpmu_ctx_read_msgs(B.d, &B.guest, fd, &m, 1, &nr),
		     -EAGAIN),
		  "exactly one message");
	b_run(1000); /* masked: nothing counts */
	cr_assert(eq(u64, b_val(fd, 0, 0), h_val(fd, 0, 0)));
	cr_assert(eq(int, vpmu_ctx_restart(B.d, &B.guest, fd, 0), 0));
	b_run(1000);
	cr_assert(eq(u64, b_val(fd, 0, 0), 0 - 100ULL + 1000));
	b_free();
}

static const uint8_t dfl_uuid[16] = PFM_DEFAULT_SMPL_UUID;

/* 3.6: the default format's buffer and header are kept and filled on. */
Test(vpmu_snapshot, sampling_buffer_kept_and_continues)
{
	struct pfm_default_smpl_arg a = {.buf_size = 8192};
	struct pfarg_ctx c            = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_pmc pc           = {
			  .reg_num = 0, .reg_value = H_EVSEL(0), .reg_smpl_pmds = {1}};
	const struct pfm_default_smpl_hdr *ha, *hb;
	void *base_a, *base_b;
	size_t size_a, size_b;
	int fd;

	memcpy(c.ctx_smpl_buf_id, dfl_uuid, 16);
	cr_assert(eq(int, vpmu_ctx_create(H.d, &H.guest, &c, 1, &a, sizeof(a)),
		     0));
	fd = c.ctx_fd;
	h_pmc_full(fd, &pc);
	h_pmd(fd, 0, 0, 0 - 1000ULL, 0 - 1000ULL, 0 - 1000ULL);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(1000); /* three overflows, three samples */
	h_run(1000);
	h_run(1000);
	save_restore();
	b_rate(0, 1000000000ULL);
	cr_assert(eq(int,
		     vpmu_ctx_smpl_buf(H.d, &H.guest, fd, &base_a, &size_a),
		     0));
	cr_assert(eq(int,
		     vpmu_ctx_smpl_buf(B.d, &B.guest, fd, &base_b, &size_b),
		     0));
	cr_assert(eq(sz, size_b, size_a));
	ha = base_a;
	hb = base_b;
	cr_assert(eq(u64, hb->hdr_count, 3));
	cr_assert(eq(int, memcmp(base_a, base_b, size_a), 0), "same bytes");
	h_run(1000);
	b_run(1000);
	h_run(1000);
	b_run(1000);
	cr_assert(eq(u64, hb->hdr_count, 5), "continues filling");
	cr_assert(eq(u64, hb->hdr_count, ha->hdr_count));
	cr_assert(eq(int, memcmp(base_a, base_b, size_a), 0));
	cr_assert(eq(u64, vpmu_domain_smpl_mem(B.d), size_a), "charged");
	b_free();
}

/* Host (operator) contexts are left out and counted. */
Test(vpmu_snapshot, host_contexts_dropped_with_count)
{
	void *blob           = NULL;
	size_t len           = 0;
	unsigned int dropped = 0;
	int gfd = h_ctx(0), hfd = -1;
	char err[160] = "";

	cr_assert(eq(int, h_ctx_raw(&H.host, PFM_FL_SYSTEM_WIDE, &hfd), 0));
	cr_assert(eq(int, vpmu_domain_save(H.d, &blob, &len, &dropped), 0));
	cr_assert(eq(u32, dropped, 1));
	b_make(NULL);
	cr_assert(eq(int, vpmu_domain_restore(B.d, blob, len, err, sizeof(err)),
		     0));
	cr_assert(eq(u64, b_val(gfd, 0, 0), 0), "guest context is there");
	{
		struct vpmu_caller host = {.owner = VPMU_OWNER_HOST};
		struct pfarg_pmd p      = {.reg_num = 0};

		cr_assert(eq(int, vpmu_ctx_read_pmds(B.d, &host, hfd, &p, 1),
			     -EBADF),
			  "host context not restored");
	}
	free(blob);
	b_free();
}

/* A damaged or incompatible blob changes nothing and says why. */
Test(vpmu_snapshot, bad_blobs_refused_domain_unchanged)
{
	int fd     = h_ctx(PFM_FL_SYSTEM_WIDE);
	void *blob = NULL;
	unsigned char *bad;
	size_t len = 0, cut;
	char err[160];
	struct vpmu_limits l;

	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd(fd, 0, 0, 42, 0, 0);
	cr_assert(eq(int, vpmu_domain_save(H.d, &blob, &len, NULL), 0));
	b_make(NULL);
	{
		int bfd            = -1;
		struct pfarg_ctx c = {0};

		cr_assert(eq(int,
			     vpmu_ctx_create(B.d, &B.guest, &c, 1, NULL, 0),
			     0));
		bfd = c.ctx_fd;
		cr_assert(eq(int, bfd, fd), "same first handle");
	}
	for (cut = 0; cut < len; cut += 97) {
		err[0] = '\0';
		cr_assert(eq(int,
			     vpmu_domain_restore(B.d, blob, cut, err,
						 sizeof(err)),
			     -EINVAL),
			  "cut at %zu", cut);
		cr_assert(ne(int, err[0], '\0'));
	}
	cr_assert(eq(u64, b_val(fd, 0, 0), 0), "B's own context untouched");
	bad = malloc(len);
	memcpy(bad, blob, len);
	bad[4] = 99; /* version */
	cr_assert(eq(int, vpmu_domain_restore(B.d, bad, len, err, sizeof(err)),
		     -EINVAL));
	cr_assert(not(eq(ptr, strstr(err, "version"), NULL)), "%s", err);
	free(bad);
	b_free();
	vpmu_limits_default(&l);
	l.counter_width = 32;
	b_make(&l);
	cr_assert(eq(int, vpmu_domain_restore(B.d, blob, len, err, sizeof(err)),
		     -EINVAL));
	cr_assert(not(eq(ptr, strstr(err, "width"), NULL)), "%s", err);
	b_free();
	free(blob);
}
