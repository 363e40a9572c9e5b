// SPDX-License-Identifier: MIT
/*
 * test_msg.c: overflow notifications and the message queue (spec 3.3,
 * 3.4.3; digest 8): one message per overflow event, simultaneous overflows
 * in one message, OVFL_NO_MSG, the queue reset at LOAD and kept at UNLOAD,
 * the full-queue policy, and the notification callback.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>

#include "harness.h"

TestSuite(vpmu_msg, .init = h_setup, .fini = h_teardown);

/* PMC (i) counts H_EV(i) with OVFL_NOTIFY; PMD (i) is (events) from 0. */
static void notify_counter(int fd, unsigned int i, uint64_t events)
{
	h_pmc(fd, 0, (uint16_t)i, H_EVSEL(i), PFM_REGFL_OVFL_NOTIFY);
	h_pmd(fd, 0, (uint16_t)i, 0 - events, 0, 0 - events);
}

static int ctx_with(uint32_t flags, uint64_t events)
{
	int fd = h_ctx(flags | PFM_FL_SYSTEM_WIDE);

	notify_counter(fd, 0, events);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	return fd;
}

/* 3.4.3: an overflow of a notifying PMC queues PFM_MSG_OVFL and masks. */
Test(vpmu_msg, overflow_queues_message_and_masks)
{
	int fd = ctx_with(0, 100);
	union pfm_msg m;

	h_run(100);
	m = h_msg(fd);
	cr_assert(eq(u32, m.msg_type, PFM_MSG_OVFL));
	cr_assert(eq(u64, m.pfm_ovfl_msg.msg_ovfl_pmds[0], 1));
	cr_assert(eq(u16, m.pfm_ovfl_msg.msg_active_set, 0));
	cr_assert(eq(u64, m.pfm_ovfl_msg.msg_tstamp, 100));
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(eq(u32, H.notes[0].flags, VPMU_NOTIFY_MSG));
	cr_assert(eq(int, H.notes[0].handle, fd));
	h_run(1000);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0), "masked: nothing collected");
	cr_assert(eq(u64, vpmu_cpu_next_deadline(H.cpu0), VPMU_NO_DEADLINE));
}

/* 3.4.3: "The notification is never automatic". */
Test(vpmu_msg, no_message_without_ovfl_notify)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	union pfm_msg m;
	unsigned int nr;

	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd(fd, 0, 0, (uint64_t)-5, 0, 0);
	h_rate(0, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(50);
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN));
	cr_assert(eq(u32, H.nr_notes, 0));
	cr_assert(eq(u64, h_val(fd, 0, 0), 45),
		  "skid kept on top of the reset");
}

/* 3.4.3: simultaneous overflows give one notification, several bits. */
Test(vpmu_msg, simultaneous_overflows_one_message)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);
	union pfm_msg m;
	unsigned int nr;

	notify_counter(fd, 0, 10);
	notify_counter(fd, 3, 10);
	h_pmc(fd, 0, 5, H_EVSEL(5), 0); /* overflows too, no notify */
	h_pmd(fd, 0, 5, (uint64_t)-10, 0, 0);
	h_rate(0, 1000000000ULL);
	h_rate(3, 1000000000ULL);
	h_rate(5, 1000000000ULL);
	h_load(fd, 0);
	h_start(fd);
	h_run(10);
	m = h_msg(fd);
	cr_assert(eq(u64, m.pfm_ovfl_msg.msg_ovfl_pmds[0],
		     (1ULL << 0) | (1ULL << 3) | (1ULL << 5)));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN),
		  "only one message");
}

/* 3.3.7, 8.4: OVFL_NO_MSG: no message, still notified and masked. */
Test(vpmu_msg, ovfl_no_msg_notifies_without_message)
{
	int fd = ctx_with(PFM_FL_OVFL_NO_MSG, 10);
	union pfm_msg m;
	unsigned int nr;

	h_run(10);
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN));
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(eq(u32, H.notes[0].flags, 0));
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0),
		  "a RESTART is still required");
}

/* 3.3.5: LOAD deletes pending messages; UNLOAD keeps them. */
Test(vpmu_msg, load_resets_queue_unload_keeps_it)
{
	int fd = ctx_with(0, 10);
	union pfm_msg m;
	unsigned int nr;

	h_run(10);
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr), 0),
		  "still readable after UNLOAD");
	h_run(1);
	h_pmd(fd, 0, 0, (uint64_t)-10, 0, 0);
	cr_assert(
		eq(int,
		   vpmu_ctx_load(H.d, &H.guest, fd, &(struct pfarg_load){0}, 1),
		   0));
	h_start(fd);
	h_run(10);
	cr_assert(eq(u32, H.nr_notes, 2));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(
		eq(int,
		   vpmu_ctx_load(H.d, &H.guest, fd, &(struct pfarg_load){0}, 1),
		   0));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN),
		  "stale message dropped at LOAD");
}

/*
 * 3.4.3 "Current issue" (vpmu.h): a notification that finds the queue
 * full drops its message, counts it, and still masks and notifies.
 */
Test(vpmu_msg, full_queue_drops_and_counts)
{
	struct vpmu_limits l;
	struct vpmu_ctx_stats st;
	union pfm_msg m[4];
	unsigned int nr, i;
	int fd;

	vpmu_limits_default(&l);
	l.msgq_depth = 2;
	h_init(&l);
	fd = ctx_with(0, 10);
	for (i = 0; i < 3; i++) {
		h_run(10);
		cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	}
	cr_assert(eq(u32, H.nr_notes, 3));
	cr_assert(eq(u32, H.notes[2].flags, VPMU_NOTIFY_LOST));
	cr_assert(eq(int, vpmu_ctx_stats(H.d, &H.guest, fd, &st), 0));
	cr_assert(eq(u64, st.nr_msg_lost, 1));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, m, 4, &nr), 0));
	cr_assert(eq(u32, nr, 2), "several messages per read (3.1.9)");
	cr_assert(eq(u64, m[0].pfm_ovfl_msg.msg_tstamp, 10));
	cr_assert(eq(u64, m[1].pfm_ovfl_msg.msg_tstamp, 20), "FIFO order");
}

/* 3.1.9: RESTART unmasks without START; messages are not consumed. */
Test(vpmu_msg, restart_resumes_and_keeps_messages)
{
	int fd = ctx_with(0, 10);
	union pfm_msg m[2];
	unsigned int nr;

	h_run(10);
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	h_run(4);
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-6), "counting again");
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, m, 2, &nr), 0));
	cr_assert(eq(u32, nr, 1));
}

/* Digest 4 [GAP]: STOP does not clear the mask; START does not unmask. */
Test(vpmu_msg, stop_start_keep_mask)
{
	int fd = ctx_with(0, 10);

	h_run(10);
	cr_assert(eq(int, vpmu_ctx_stop(H.d, &H.guest, fd), 0));
	h_start(fd);
	h_run(5);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0), "still masked");
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	h_run(5);
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-5));
}

/* Table 3.2, 3.4.3: NOTIFY_BLOCK asks the guest to block the thread. */
Test(vpmu_msg, notify_block_flag_for_non_self_thread)
{
	struct pfarg_load l = {.load_pid = 555};
	int fd              = h_ctx(PFM_FL_NOTIFY_BLOCK);

	notify_counter(fd, 0, 10);
	h_rate(0, 1000000000ULL);
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	h_start(fd);
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	h_run(10);
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(
		eq(u32, H.notes[0].flags, VPMU_NOTIFY_MSG | VPMU_NOTIFY_BLOCK));
	cr_assert(eq(u32, H.notes[0].load_pid, 555));
}
