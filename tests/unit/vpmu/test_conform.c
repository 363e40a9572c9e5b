// SPDX-License-Identifier: MIT
/*
 * test_conform.c: perfmon2 behaviours found missing by a conformance
 * check, each from the spec's own sentences:
 *   3.1.8   a system-wide context is detached from the CPU it is bound to;
 *   3.3.7 / Table 3.2  PFM_FL_OVFL_NO_MSG omits the message, not the
 *           notification;
 *   3.1.9 / 3.4.3  PFM_FL_NOTIFY_BLOCK: the monitored thread is blocked
 *           from the overflow notification until PFM_RESTART;
 *   3.1.16  cf_arg_size_max defaults to the page size.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <unistd.h>

#include "harness.h"

TestSuite(vpmu_conform, .init = h_setup, .fini = h_teardown);

static void notify_counter(int fd, uint64_t events)
{
	h_pmc(fd, 0, 0, H_EVSEL(0), PFM_REGFL_OVFL_NOTIFY);
	h_pmd(fd, 0, 0, 0 - events, 0, 0 - events);
	h_rate(0, 1000000000ULL);
}

/*
 * 3.1.8: "To detach a system-wide context, the calling thread must be
 * running on the CPU core the context is bound to." From vCPU 1 the guest
 * gets EBUSY ("the command cannot be executed at this time") and the
 * context stays attached; from vCPU 0 it detaches.
 */
Test(vpmu_conform, unload_system_wide_only_from_its_vcpu)
{
	struct vpmu_caller other = H.guest;
	int fd                   = h_ctx(PFM_FL_SYSTEM_WIDE);

	other.cpu = H.cpu1;
	h_load(fd, 0);
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &other, fd), -EBUSY));
	/* Still attached: a second load is refused, START works. */
	cr_assert(eq(int, vpmu_ctx_start(H.d, &H.guest, fd, NULL, 0), 0));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), -EBUSY));
}

/* 3.1.8: "Once detached a system-wide context can be re-attached to any
 * CPU core": then it is unloaded from that one. */
Test(vpmu_conform, reattached_system_wide_unloads_from_new_vcpu)
{
	struct vpmu_caller on1 = H.guest;
	struct pfarg_load l    = {.load_pid = 1};
	int fd                 = h_ctx(PFM_FL_SYSTEM_WIDE);

	on1.cpu = H.cpu1;
	h_load(fd, 0);
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &on1, fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), -EBUSY));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &on1, fd), 0));
}

/* A host operator runs on no vCPU: its vCPU-wide contexts unload anyway. */
Test(vpmu_conform, host_unloads_vcpu_wide_from_anywhere)
{
	struct pfarg_load l = {.load_pid = 1};
	int fd              = -1;

	cr_assert(eq(int, h_ctx_raw(&H.host, PFM_FL_SYSTEM_WIDE, &fd), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.host, fd), 0));
}

/* A per-thread context has no CPU binding: any vCPU may detach it. */
Test(vpmu_conform, per_thread_unloads_from_any_vcpu)
{
	struct vpmu_caller other = H.guest;
	struct pfarg_load l      = {.load_pid = 555};
	int fd                   = h_ctx(0);

	other.cpu = H.cpu1;
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &other, fd), 0));
}

/*
 * 3.3.7, Table 3.2, digest 8.4: with PFM_FL_OVFL_NO_MSG "no overflow
 * message is queued, but the asynchronous notification is still
 * delivered", and a RESTART is still required.
 */
Test(vpmu_conform, ovfl_no_msg_notifies_without_message)
{
	union pfm_msg m;
	unsigned int nr = 0;
	int fd          = h_ctx(PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG);

	notify_counter(fd, 10);
	h_load(fd, 0);
	h_start(fd);
	h_run(10);
	cr_assert(eq(uint, H.nr_notes, 1), "the notification is sent");
	cr_assert(eq(u32, H.notes[0].msg_type, PFM_MSG_OVFL));
	cr_assert(eq(u64, H.notes[0].ovfl_pmds, 1));
	cr_assert(eq(u32, H.notes[0].flags & VPMU_NOTIFY_MSG, 0));
	cr_assert(eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr),
		     -EAGAIN),
		  "no message");
	/* Masked until RESTART, as with a message. */
	h_run(5);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0));
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	h_run(5);
	cr_assert(eq(u64, h_val(fd, 0, 0), (uint64_t)-5));
}

/* A non-self per-thread NOTIFY_BLOCK context on thread 555, on vCPU 0. */
static int blocking_ctx(uint32_t flags)
{
	struct vpmu_caller ctl = H.guest; /* controlling thread 100 */
	struct vpmu_caller mon = H.guest; /* the monitored thread */
	struct pfarg_load l    = {.load_pid = 555};
	int fd                 = h_ctx(flags);

	mon.tid = 555;
	notify_counter(fd, 10);
	cr_assert(eq(int, vpmu_ctx_load(H.d, &ctl, fd, &l, 1), 0));
	h_start(fd);
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &mon, fd), 0));
	return fd;
}

/*
 * 3.1.9: between the overflow and the restart, "if the PFM_FL_NOTIFY_BLOCK
 * flag is set for the context and the monitored thread is not
 * self-monitoring, then it is blocked"; at RESTART "it is awoken".
 */
Test(vpmu_conform, notify_block_blocks_thread_until_restart)
{
	int fd = blocking_ctx(PFM_FL_NOTIFY_BLOCK);

	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 0));
	h_run(10);
	cr_assert(eq(u32, H.notes[0].flags & VPMU_NOTIFY_BLOCK,
		     VPMU_NOTIFY_BLOCK));
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 1));
	/* tid 0: the thread scheduled in on the caller's vCPU. */
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 0), 1));
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 556), 0));
	/* Reading the message does not wake it (3.4.3: RESTART does). */
	(void)h_msg(fd);
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 1));
	cr_assert(eq(int, vpmu_ctx_restart(H.d, &H.guest, fd, 0), 0));
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 0));
}

/* Without NOTIFY_BLOCK "the monitored thread keeps running" (3.1.1). */
Test(vpmu_conform, no_block_without_flag)
{
	blocking_ctx(0);
	h_run(10);
	cr_assert(eq(uint, H.nr_notes, 1));
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 0));
}

/* 3.1.8: a detached context blocks nobody; neither does a closed one. */
Test(vpmu_conform, unload_and_close_unblock)
{
	int fd = blocking_ctx(PFM_FL_NOTIFY_BLOCK);

	h_run(10);
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 1));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 0));
	fd = blocking_ctx(PFM_FL_NOTIFY_BLOCK);
	h_run(10);
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 1));
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.guest, 555), 0));
}

/* Only the guest asks (the host blocks no guest thread). */
Test(vpmu_conform, thread_blocked_is_a_guest_question)
{
	cr_assert(eq(int, vpmu_thread_blocked(H.d, &H.host, 555), -EINVAL));
}

/* 3.1.16: "by default cf_arg_size_max is the page size". */
Test(vpmu_conform, arg_size_max_defaults_to_page_size)
{
	struct pfarg_config cf = {0};

	cr_assert(eq(int, vpmu_get_config(H.d, &H.guest, &cf, 1), 0));
	cr_assert(eq(u64, cf.cf_arg_size_max, (uint64_t)sysconf(_SC_PAGESIZE)));
}
