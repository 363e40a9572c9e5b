// SPDX-License-Identifier: MIT
/*
 * test_smpl.c: the core's side of sampling formats (spec 3.5, 3.6): the
 * default format's buffer full -> masked -> notification -> RESTART cycle,
 * saturation without OVFL_NOTIFY, simultaneous overflows giving
 * consecutive samples in increasing PMD order, the n-way format going on
 * while regions fill, and the per-VM sampling-memory budget (4.4.3).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "harness.h"

TestSuite(vpmu_smpl, .init = h_setup, .fini = h_teardown);

static const uint8_t dfl_uuid[16]  = PFM_DEFAULT_SMPL_UUID;
static const uint8_t nway_uuid[16] = PVPMU_NWAY_SMPL_UUID;

static int fmt_ctx_raw(const uint8_t *uuid, const void *arg, size_t size,
		       int *fd)
{
	struct pfarg_ctx c = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	int ret;

	memcpy(c.ctx_smpl_buf_id, uuid, 16);
	ret = vpmu_ctx_create(H.d, &H.guest, &c, 1, arg, size);
	*fd = c.ctx_fd;
	return ret;
}

static int dfl_ctx(uint64_t buf_size)
{
	struct pfm_default_smpl_arg a = {.buf_size = buf_size};
	int fd                        = -1;

	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd), 0));
	return fd;
}

static struct pfm_default_smpl_hdr *hdr_of(int fd)
{
	void *base  = NULL;
	size_t size = 0;

	cr_assert(
		eq(int, vpmu_ctx_smpl_buf(H.d, &H.guest, fd, &base, &size), 0));
	cr_assert(not(eq(ptr, base, NULL)));
	return base;
}

static const struct pfm_default_smpl_entry *entry_at(int fd, size_t offs)
{
	return (const void *)((const char *)hdr_of(fd) + offs);
}

/* A sampling PMC (num) with period (p), started by the caller. */
static void sampler(int fd, uint16_t num, uint32_t flags, uint64_t p,
		    uint64_t smpl_pmds)
{
	struct pfarg_pmc c = {.reg_num       = num,
			      .reg_flags     = flags,
			      .reg_value     = H_EVSEL(num),
			      .reg_smpl_pmds = {smpl_pmds}};

	h_pmc_full(fd, &c);
	h_pmd(fd, 0, num, 0 - p, 0 - p, 0 - p);
}

/* Run to the next predicted overflow. */
static void to_overflow(void)
{
	uint64_t dl = vpmu_cpu_next_deadline(H.cpu0);

	cr_assert(ne(u64, dl, VPMU_NO_DEADLINE));
	h_run(dl - vpmu_cpu_run_ns(H.cpu0));
}

/*
 * 3.6.5: samples are recorded and short-reset without notification until
 * the space left is below the maximal sample size; then the buffer is
 * full: hdr_overflows++, masked, one PFM_MSG_OVFL. RESTART empties it,
 * long-resets and resumes.
 */
Test(vpmu_smpl, default_buffer_full_masks_notifies_and_restarts)
{
	const uint64_t p = 1000;
	struct pfm_default_smpl_hdr *h;
	size_t max_sample = sizeof(struct pfm_default_smpl_entry) + 8 * 12;
	uint64_t n = 0, last_ts = 0;
	int fd = dfl_ctx(4096);
	union pfm_msg m;

	sampler(fd, 0, PFM_REGFL_OVFL_NOTIFY, p, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h = hdr_of(fd);
	cr_assert(eq(u64, h->hdr_cur_offs, sizeof(*h)));
	while (H.nr_notes == 0) {
		const struct pfm_default_smpl_entry *e;

		to_overflow();
		n++;
		cr_assert(eq(u64, h->hdr_count, n), "one sample per overflow");
		e = entry_at(fd, h->hdr_cur_offs - sizeof(*e));
		cr_assert(eq(u16, e->ovfl_pmd, 0));
		cr_assert(eq(u64, e->ip, H.gs.ip));
		cr_assert(eq(int, e->tid, H.gs.tid));
		/* No reset before the first overflow: 0 (vpmu.h). */
		cr_assert(eq(u64, e->last_reset_val, n == 1 ? 0 : 0 - p));
		cr_assert(lt(u64, last_ts, e->tstamp), "increasing tstamp");
		last_ts = e->tstamp;
		cr_assert(le(u64, n, 4096 / sizeof(*e)), "must fill up");
	}
	/* Full means: less than one maximal sample left (3.6.5 step 2). */
	cr_assert(lt(u64, h->hdr_buf_size - h->hdr_cur_offs, max_sample));
	cr_assert(ge(u64,
		     h->hdr_buf_size - h->hdr_cur_offs +
			     sizeof(struct pfm_default_smpl_entry),
		     max_sample));
	cr_assert(eq(u64, h->hdr_overflows, 1));
	m = h_msg(fd);
	cr_assert(eq(u32, m.msg_type, PFM_MSG_OVFL));
	cr_assert(eq(u64, m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1));
	cr_assert(eq(u64, vpmu_cpu_next_deadline(H.cpu0), VPMU_NO_DEADLINE),
		  "masked");
	h_run(5 * p);
	cr_assert(eq(u64, h->hdr_count, n), "nothing recorded while masked");
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(eq(u64, h->hdr_count, 0));
	cr_assert(eq(u64, h->hdr_cur_offs, sizeof(*h)));
	cr_assert(eq(u64, h_val(fd, 0, 0), 0 - p), "long reset");
	to_overflow();
	cr_assert(eq(u64, h->hdr_count, 1), "sampling resumed");
	cr_assert(eq(u64, h->hdr_overflows, 1), "never reset");
}

/* 3.6.5: without OVFL_NOTIFY a full buffer saturates: masked, no msg. */
Test(vpmu_smpl, default_buffer_saturates_without_notify)
{
	int fd = dfl_ctx(4096);
	struct pfm_default_smpl_hdr *h;
	union pfm_msg m;
	unsigned int nr, i;

	sampler(fd, 0, 0, 100, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h = hdr_of(fd);
	for (i = 0; i < 1000 && h->hdr_overflows == 0; i++)
		to_overflow();
	cr_assert(eq(u64, h->hdr_overflows, 1));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN));
	cr_assert(eq(u32, H.nr_notes, 0));
	cr_assert(eq(u64, vpmu_cpu_next_deadline(H.cpu0), VPMU_NO_DEADLINE));
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(ne(u64, vpmu_cpu_next_deadline(H.cpu0), VPMU_NO_DEADLINE));
}

/*
 * 3.5.14, 3.6.4: simultaneous overflows call the handler once per PMD in
 * increasing index with one tstamp: consecutive samples, bodies holding
 * the smpl_pmds values in increasing PMD order.
 */
Test(vpmu_smpl, simultaneous_overflows_consecutive_samples)
{
	const uint16_t order[] = {1, 3, 6};
	const uint64_t run_pmd = VPMU_PMD_VIRT_BASE + VPMU_VPMD_RUN_NS;
	uint64_t step          = 50;
	const struct pfm_default_smpl_entry *e;
	const uint64_t *body;
	struct pfm_default_smpl_hdr *h;
	size_t offs;
	unsigned int i;
	int fd = dfl_ctx(8192);

	/* Written out of order on purpose; PMD1 records PMD2 and run ns. */
	sampler(fd, 6, 0, 50, 0);
	sampler(fd, 1, 0, 50, (1ULL << 2) | (1ULL << run_pmd));
	sampler(fd, 3, 0, 50, 0);
	h_pmd(fd, 0, 2, 0xabcdef, 0, 0);
	for (i = 0; i < 3; i++)
		h_steps(order[i], &step, 1);
	h_load(fd, 0);
	h_start(fd);
	h_run(777);
	h = hdr_of(fd);
	cr_assert(eq(u64, h->hdr_count, 3));
	offs = sizeof(*h);
	for (i = 0; i < 3; i++) {
		e = entry_at(fd, offs);
		cr_assert(eq(u16, e->ovfl_pmd, order[i]), "sample %u", i);
		cr_assert(eq(u64, e->tstamp, 777), "one tstamp");
		cr_assert(eq(u16, e->set, 0));
		offs += sizeof(*e);
		if (order[i] == 1) {
			body = (const uint64_t *)(e + 1);
			cr_assert(eq(u64, body[0], 0xabcdef), "PMD2 first");
			cr_assert(eq(u64, body[1], 777), "then PMD16");
			offs += 2 * sizeof(uint64_t);
		}
	}
	cr_assert(eq(u64, h->hdr_cur_offs, offs), "no gaps");
	cr_assert(eq(u64, h_val(fd, 0, 1), (uint64_t)-50), "short reset");
}

/* The n-way format hands over full regions and keeps monitoring. */
Test(vpmu_smpl, nway_notifies_without_masking)
{
	struct pvpmu_nway_smpl_arg a = {.buf_size = 3 * 4096, .nr_regions = 2};
	uint64_t before;
	unsigned int i;
	int fd = -1;

	cr_assert(eq(int, fmt_ctx_raw(nway_uuid, &a, sizeof(a), &fd), 0));
	sampler(fd, 0, PFM_REGFL_OVFL_NOTIFY, 100, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	for (i = 0; i < 10000 && H.nr_notes == 0; i++)
		to_overflow();
	cr_assert(eq(u32, H.nr_notes, 1), "first region full");
	cr_assert(eq(u32, h_msg(fd).msg_type, PFM_MSG_OVFL));
	before = h_val(fd, 0, 0);
	h_run(30);
	cr_assert(eq(u64, h_val(fd, 0, 0), before + 30), "not masked");
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0),
		  "active restart releases the region");
}

/* 4.4.3: sampling memory is charged per VM at CREATE; -ENOMEM beyond. */
Test(vpmu_smpl, sampling_memory_budget)
{
	struct vpmu_limits l;
	struct pfm_default_smpl_arg a = {.buf_size = 8192};
	int fd1 = -1, fd2 = -1;

	vpmu_limits_default(&l);
	l.smpl_mem_max = 12288;
	h_init(&l);
	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd1), 0));
	cr_assert(eq(u64, vpmu_domain_smpl_mem(H.d), 8192));
	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd2), -ENOMEM));
	cr_assert(eq(u64, vpmu_domain_smpl_mem(H.d), 8192), "nothing charged");
	a.buf_size = 4096;
	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd2), 0));
	cr_assert(eq(u64, vpmu_domain_smpl_mem(H.d), 12288));
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.guest, fd1), 0));
	cr_assert(eq(u64, vpmu_domain_smpl_mem(H.d), 4096), "uncharged");
}

/*
 * Host operators' buffers have a budget of their own: a guest
 * that spent all of its sampling memory leaves the operator's, and an
 * operator's buffer never counts against the guest.
 */
Test(vpmu_smpl, host_sampling_memory_is_separate)
{
	struct vpmu_limits l;
	struct pfm_default_smpl_arg a = {.buf_size = 8192};
	struct pfarg_ctx c = {.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};
	int fd             = -1;

	vpmu_limits_default(&l);
	l.smpl_mem_max      = 8192;
	l.host_smpl_mem_max = 16384;
	h_init(&l);
	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd), 0));
	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd), -ENOMEM),
		  "the guest's budget is spent");
	cr_assert(
		eq(int, vpmu_ctx_create(H.d, &H.host, &c, 1, &a, sizeof(a)), 0),
		"the operator's is not");
	cr_assert(eq(int, vpmu_ctx_create(H.d, &H.host, &c, 1, &a, sizeof(a)),
		     0));
	cr_assert(eq(u64, vpmu_domain_smpl_mem(H.d), 3 * 8192));
	cr_assert(eq(int, vpmu_ctx_create(H.d, &H.host, &c, 1, &a, sizeof(a)),
		     -ENOMEM),
		  "the operator's budget holds too");
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.host, c.ctx_fd), 0));
	cr_assert(eq(int, fmt_ctx_raw(dfl_uuid, &a, sizeof(a), &fd), -ENOMEM),
		  "freeing host memory gives the guest nothing");
	cr_assert(eq(u64, vpmu_domain_smpl_mem(H.d), 2 * 8192));
}

/* 3.1.1: ctx_smpl_buf_size reports the (page-rounded) buffer size. */
Test(vpmu_smpl, create_reports_buffer_size)
{
	struct pfm_default_smpl_arg a = {.buf_size = 5000};
	struct pfarg_ctx c = {.ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};

	cr_assert(eq(int, vpmu_ctx_create(H.d, &H.guest, &c, 1, &a, sizeof(a)),
		     0));
	cr_assert(eq(u64, c.ctx_smpl_buf_size, 8192));
}

/* 3.6.5 step 5: a RESTART while not masked only resets the header. */
Test(vpmu_smpl, active_restart_resets_header_only)
{
	struct pfm_default_smpl_hdr *h;
	uint64_t v;
	int fd = dfl_ctx(8192);

	sampler(fd, 0, PFM_REGFL_OVFL_NOTIFY, 100, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	to_overflow();
	to_overflow();
	h_run(30);
	h = hdr_of(fd);
	cr_assert(eq(u64, h->hdr_count, 2));
	v = h_val(fd, 0, 0);
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(eq(u64, h->hdr_count, 0));
	cr_assert(eq(u64, h->hdr_cur_offs, sizeof(*h)));
	cr_assert(eq(u64, h_val(fd, 0, 0), v), "counters untouched");
	cr_assert(eq(u32, H.nr_notes, 0));
}

/* 3.1.9, 3.5.14: a full buffer blocks a non-self NOTIFY_BLOCK thread. */
Test(vpmu_smpl, full_buffer_blocks_notify_block_thread)
{
	struct pfm_default_smpl_arg a = {.buf_size = 4096};
	struct pfarg_ctx c            = {.ctx_flags       = PFM_FL_NOTIFY_BLOCK,
					 .ctx_smpl_buf_id = PFM_DEFAULT_SMPL_UUID};
	struct pfarg_load l           = {.load_pid = 4242};
	unsigned int i;
	int fd;

	cr_assert(eq(int, vpmu_ctx_create(H.d, &H.guest, &c, 1, &a, sizeof(a)),
		     0));
	fd = c.ctx_fd;
	sampler(fd, 0, PFM_REGFL_OVFL_NOTIFY, 100, 0);
	h_rate(0, 1000000000ULL);
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	h_start(fd);
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	for (i = 0; i < 1000 && H.nr_notes == 0; i++)
		to_overflow();
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(
		eq(u32, H.notes[0].flags, VPMU_NOTIFY_MSG | VPMU_NOTIFY_BLOCK));
	cr_assert(eq(u32, H.notes[0].load_pid, 4242));
}
