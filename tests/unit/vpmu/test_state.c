// SPDX-License-Identifier: MIT
/*
 * test_state.c: every context command in every state (spec 3.1.1-3.1.15,
 * digest 4 and 4.1), table driven, plus the state transitions themselves.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <errno.h>

#include "harness.h"
#include "vpmu_priv.h"

enum state { S_UNLOADED, S_STOPPED, S_ACTIVE, S_MASKED };

enum cmd {
	C_WRITE_PMCS,
	C_WRITE_PMDS,
	C_READ_PMDS,
	C_START,
	C_STOP,
	C_LOAD,
	C_UNLOAD,
	C_RESTART,
	C_CREATE_SETS,
	C_DELETE_SETS,
	C_GETINFO_SETS,
	C_READ_MSGS,
	C_DESTROY,
	C_SCHED_IN,
	C_GETINFO_PMCS,
	C_GET_CONFIG,
};

struct row {
	int line;
	enum state st;
	enum cmd cmd;
	int want;
};

#define ROW(s, c, w)                                                           \
	{                                                                      \
		.line = __LINE__, .st = s, .cmd = c, .want = w                 \
	}
/* One command in the four states: UNLOADED, STOPPED, ACTIVE, MASKED. */
#define ALL4(c, u, s, a, m)                                                    \
	ROW(S_UNLOADED, c, u), ROW(S_STOPPED, c, s), ROW(S_ACTIVE, c, a),      \
		ROW(S_MASKED, c, m)

/* Bring a fresh vCPU-wide context into (st); returns its fd. */
static int enter(enum state st)
{
	uint64_t step = 16;
	int fd        = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_set(fd, 5, 0, 0, 0);
	h_pmc(fd, 0, 0, H_EVSEL(0), PFM_REGFL_OVFL_NOTIFY);
	h_pmd(fd, 0, 0, (uint64_t)-16, 0, 0);
	h_steps(0, &step, 1);
	if (st == S_UNLOADED)
		return fd;
	h_load(fd, 0);
	if (st == S_STOPPED)
		return fd;
	h_start(fd);
	if (st == S_MASKED)
		h_run(1000); /* PMD0 wraps: notify + mask (3.4.3) */
	return fd;
}

static int run_cmd(int fd, enum cmd cmd)
{
	struct pfarg_pmc pmc    = {.reg_num = 1, .reg_value = H_EVSEL(1)};
	struct pfarg_pmd pmd    = {.reg_num = 1, .reg_value = 5};
	struct pfarg_load load  = {.load_pid = 0};
	struct pfarg_setdesc sd = {.set_id = 5};
	struct pfarg_setinfo si = {.set_id = 0};
	struct pfarg_pmcinfo pi = {.reg_num = 0};
	struct pfarg_config cf;
	union pfm_msg m;
	unsigned int nr;

	switch (cmd) {
	case C_WRITE_PMCS:
		return vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &pmc, 1);
	case C_WRITE_PMDS:
		return vpmu_ctx_write_pmds(H.d, &H.guest, fd, &pmd, 1);
	case C_READ_PMDS:
		return vpmu_ctx_read_pmds(H.d, &H.guest, fd, &pmd, 1);
	case C_START:
		return vpmu_ctx_start(H.d, &H.guest, fd, NULL, 0);
	case C_STOP:
		return vpmu_ctx_stop(H.d, &H.guest, fd);
	case C_LOAD:
		return vpmu_ctx_load(H.d, &H.guest, fd, &load, 1);
	case C_UNLOAD:
		return vpmu_ctx_unload(H.d, &H.guest, fd);
	case C_RESTART:
		return vpmu_ctx_restart(H.d, &H.guest, fd, 0);
	case C_CREATE_SETS:
		return vpmu_ctx_create_evtsets(H.d, &H.guest, fd, &sd, 1);
	case C_DELETE_SETS:
		return vpmu_ctx_delete_evtsets(H.d, &H.guest, fd, &sd, 1);
	case C_GETINFO_SETS:
		return vpmu_ctx_getinfo_evtsets(H.d, &H.guest, fd, &si, 1);
	case C_READ_MSGS:
		return vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr);
	case C_DESTROY:
		return vpmu_ctx_destroy(H.d, &H.guest, fd);
	case C_SCHED_IN:
		return vpmu_ctx_sched_in(H.d, &H.guest, fd);
	case C_GETINFO_PMCS:
		return vpmu_getinfo_pmcs(H.d, &H.guest, &pi, 1);
	case C_GET_CONFIG:
		return vpmu_get_config(H.d, &H.guest, &cf, 1);
	}
	return -ENOSYS;
}

ParameterizedTestParameters(vpmu_state, command_by_state)
{
	static struct row rows[] = {
		/* 3.1.2-3.1.4: register access is allowed in every state. */
		ALL4(C_WRITE_PMCS, 0, 0, 0, 0),
		ALL4(C_WRITE_PMDS, 0, 0, 0, 0),
		ALL4(C_READ_PMDS, 0, 0, 0, 0),
		/* 3.1.5, 3.1.6: only valid for an attached context. */
		ALL4(C_START, -EBUSY, 0, 0, 0),
		ALL4(C_STOP, -EBUSY, 0, 0, 0),
		/* 3.1.7: load once; 3.1.8: "must already be attached". */
		ALL4(C_LOAD, 0, -EBUSY, -EBUSY, -EBUSY),
		ALL4(C_UNLOAD, -EBUSY, 0, 0, 0),
		/* 3.1.9: attached, and (no format) after a notification. */
		ALL4(C_RESTART, -EBUSY, -EBUSY, -EBUSY, 0),
		/* 3.1.10, 3.1.11: only when detached; 3.1.12: any time. */
		ALL4(C_CREATE_SETS, 0, -EBUSY, -EBUSY, -EBUSY),
		ALL4(C_DELETE_SETS, 0, -EBUSY, -EBUSY, -EBUSY),
		ALL4(C_GETINFO_SETS, 0, 0, 0, 0),
		/* 3.3.3: a message is there only after the notification. */
		ALL4(C_READ_MSGS, -EAGAIN, -EAGAIN, -EAGAIN, 0),
		/* 3.1.15: close() works in any state. */
		ALL4(C_DESTROY, 0, 0, 0, 0),
		/* vpmu: scheduling hooks are for per-thread contexts only. */
		ALL4(C_SCHED_IN, -EINVAL, -EINVAL, -EINVAL, -EINVAL),
		/* 4.2: commands without a context work at any time. */
		ALL4(C_GETINFO_PMCS, 0, 0, 0, 0),
		ALL4(C_GET_CONFIG, 0, 0, 0, 0),
	};

	return cr_make_param_array(struct row, rows,
				   sizeof(rows) / sizeof(rows[0]));
}

/* Digest 4.1: the result of each command in each state. */
ParameterizedTest(struct row *r, vpmu_state, command_by_state, .init = h_setup,
		  .fini = h_teardown)
{
	int fd = enter(r->st);

	cr_assert(eq(int, run_cmd(fd, r->cmd), r->want), "row at line %d",
		  r->line);
}

TestSuite(vpmu_ctx, .init = h_setup, .fini = h_teardown);

/* 3.1.1: a new context is unloaded, counters 0, set0 exists. */
Test(vpmu_ctx, create_gives_unloaded_context_with_set0)
{
	int fd                  = h_ctx(0);
	struct pfarg_setinfo si = h_setinfo(fd, 0);

	cr_assert(eq(u64, h_val(fd, 0, 0), 0));
	cr_assert(eq(u64, si.set_runs, 0));
	cr_assert(eq(int, vpmu_ctx_start(H.d, &H.guest, fd, NULL, 0), -EBUSY));
}

/* 3.1.5, 3.1.6: counts only between START and STOP. */
Test(vpmu_ctx, counts_only_between_start_and_stop)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_rate(0, 1000000000ULL); /* 1 event per ns */
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_load(fd, 0);
	h_run(100);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0), "loaded is not active");
	h_start(fd);
	h_run(200);
	cr_assert(eq(u64, h_val(fd, 0, 0), 200));
	cr_assert(eq(int, vpmu_ctx_stop(H.d, &H.guest, fd), 0));
	h_run(300);
	cr_assert(eq(u64, h_val(fd, 0, 0), 200), "stopped counters frozen");
}

/* 3.1.8: unload stops; values read after it are those at the detach. */
Test(vpmu_ctx, unload_saves_state_and_stops)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_rate(0, 1000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_load(fd, 0);
	h_start(fd);
	h_run(50);
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	h_run(50);
	cr_assert(eq(u64, h_val(fd, 0, 0), 50));
	/* Re-attach: the PMD resumes from its saved value (3.1.7). */
	h_load(fd, 0);
	h_start(fd);
	h_run(25);
	cr_assert(eq(u64, h_val(fd, 0, 0), 75));
}

/* 3.1.7: PMD values written while detached are loaded at attach. */
Test(vpmu_ctx, value_written_detached_is_initial_value)
{
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_rate(0, 1000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_pmd(fd, 0, 0, 1000, 0, 0);
	h_load(fd, 0);
	h_start(fd);
	h_run(10);
	cr_assert(eq(u64, h_val(fd, 0, 0), 1010));
}

/* 3.1.15: a destroyed handle is dead; stale handles never alias. */
Test(vpmu_ctx, destroyed_handle_is_ebadf_even_if_slot_reused)
{
	int fd = h_ctx(0), fd2;

	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.guest, fd), 0));
	fd2 = h_ctx(0);
	cr_assert(ne(int, fd, fd2));
	cr_assert(eq(int, vpmu_ctx_stop(H.d, &H.guest, fd), -EBADF));
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.guest, fd), -EBADF));
}

/* 4.3: a context is reachable only by its owner (guest vs host). */
Test(vpmu_ctx, other_owner_cannot_use_context)
{
	int fd             = h_ctx(0);
	struct pfarg_pmd p = {.reg_num = 0};

	cr_assert(eq(int, vpmu_ctx_read_pmds(H.d, &H.host, fd, &p, 1), -EBADF));
	cr_assert(eq(int, vpmu_ctx_destroy(H.d, &H.host, fd), -EBADF));
}

/* One VM can never use another VM's context. */
Test(vpmu_ctx, other_domain_cannot_use_context)
{
	struct vpmu_domain_config cfg = {0};
	struct vpmu_domain *d2;
	struct pfarg_pmd p = {.reg_num = 0};
	int fd             = h_ctx(0);

	vpmu_limits_default(&cfg.limits);
	cr_assert(eq(int, vpmu_domain_create(&cfg, &d2), 0));
	cr_assert(eq(int, vpmu_ctx_read_pmds(d2, &H.guest, fd, &p, 1), -EBADF));
	vpmu_domain_destroy(d2);
}

/* 3.1.7: a per-thread context counts only while its thread runs. */
Test(vpmu_ctx, per_thread_counts_while_scheduled_in)
{
	struct pfarg_load l = {.load_pid = 200};
	int fd              = h_ctx(0);

	h_rate(0, 1000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	h_start(fd);
	h_run(100);
	cr_assert(eq(u64, h_val(fd, 0, 0), 0), "thread not running");
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), -EBUSY));
	h_run(40);
	cr_assert(eq(int, vpmu_ctx_sched_out(H.d, &H.guest, fd, NULL), 0));
	cr_assert(eq(int, vpmu_ctx_sched_out(H.d, &H.guest, fd, NULL), -EBUSY));
	h_run(100);
	cr_assert(eq(u64, h_val(fd, 0, 0), 40));
}

/*
 * A switch-out says whether the context was counting (the exit carrying
 * it is then in the counts): started yes, loaded but stopped no.
 */
Test(vpmu_ctx, sched_out_says_whether_it_was_counted)
{
	struct pfarg_load l = {.load_pid = 201};
	int fd              = h_ctx(0);
	bool counting       = false;

	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_sched_out(H.d, &H.guest, fd, &counting), 0));
	cr_assert(not(counting), "loaded, not started");
	h_start(fd);
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_sched_out(H.d, &H.guest, fd, &counting), 0));
	cr_assert(counting, "started");
	cr_assert(eq(int, vpmu_ctx_stop(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	cr_assert(eq(int, vpmu_ctx_sched_out(H.d, &H.guest, fd, &counting), 0));
	cr_assert(not(counting), "stopped");
}

/* 3.1.7: a thread has at most one context; a vCPU one vCPU-wide one. */
Test(vpmu_ctx, second_context_for_same_target_is_ebusy)
{
	struct pfarg_load t = {.load_pid = 300}, c = {.load_pid = 0};
	int a = h_ctx(0), b = h_ctx(0);
	int s1 = h_ctx(PFM_FL_SYSTEM_WIDE), s2 = h_ctx(PFM_FL_SYSTEM_WIDE);

	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, a, &t, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, b, &t, 1), -EBUSY));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, s1, &c, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, s2, &c, 1), -EBUSY));
	/* The host's contexts are independent of the guest's. */
	{
		int h = -1;

		cr_assert(
			eq(int, h_ctx_raw(&H.host, PFM_FL_SYSTEM_WIDE, &h), 0));
		cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, h, &c, 1), 0));
	}
}

/*
 * Host operators stack up to VPMU_CPU_MAX_HOST vCPU-wide
 * contexts on one vCPU (a fleet daemon beside `vpmu stat`), each with its
 * own counts; the next one is EBUSY, and an unload frees a place. The
 * guest keeps its one vCPU-wide context (3.1.7) beside them.
 */
Test(vpmu_ctx, host_contexts_stack_on_a_vcpu_up_to_the_limit)
{
	struct pfarg_load c  = {.load_pid = 0};
	struct pfarg_pmc pmc = {.reg_num = 0, .reg_value = H_EVSEL(0)};
	struct pfarg_pmd pmd = {.reg_num = 0};
	int h[VPMU_CPU_MAX_HOST + 1], g = h_ctx(PFM_FL_SYSTEM_WIDE), i;
	uint64_t want;

	h_rate(0, 1000000000ULL); /* one event per ns of run time */
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, g, &c, 1), 0));
	for (i = 0; i <= VPMU_CPU_MAX_HOST; i++)
		cr_assert(eq(int, h_ctx_raw(&H.host, PFM_FL_SYSTEM_WIDE, &h[i]),
			     0));
	for (i = 0; i < VPMU_CPU_MAX_HOST; i++) {
		cr_assert(eq(int,
			     vpmu_ctx_write_pmcs(H.d, &H.host, h[i], &pmc, 1),
			     0));
		cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, h[i], &c, 1), 0),
			  "host context %d on vCPU 0", i);
		cr_assert(eq(int, vpmu_ctx_start(H.d, &H.host, h[i], NULL, 0),
			     0));
		h_run(100); /* every context started so far counts this */
	}
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, h[i], &c, 1), -EBUSY),
		  "the limit holds");
	for (i = 0; i < VPMU_CPU_MAX_HOST; i++) {
		pmd.reg_value = 0;
		cr_assert(eq(int,
			     vpmu_ctx_read_pmds(H.d, &H.host, h[i], &pmd, 1),
			     0));
		want = 100ULL * (uint64_t)(VPMU_CPU_MAX_HOST - i);
		cr_assert(eq(u64, pmd.reg_value, want), "context %d", i);
	}
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.host, h[0]), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, h[i], &c, 1), 0),
		  "an unload frees a place");
}

/* 3.1.7: a vCPU-wide load by the guest must name its own vCPU. */
Test(vpmu_ctx, guest_system_wide_load_must_be_self)
{
	struct pfarg_load other = {.load_pid = 1}, bad = {.load_pid = 99};
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE), hfd = -1;

	cr_assert(
		eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &other, 1), -EINVAL));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &bad, 1), -EINVAL));
	cr_assert(eq(int, h_ctx_raw(&H.host, PFM_FL_SYSTEM_WIDE, &hfd), 0));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.host, hfd, &other, 1), 0));
}

/* Table 3.2: NOTIFY_BLOCK is rejected for self-monitoring at LOAD. */
Test(vpmu_ctx, notify_block_self_monitoring_rejected_at_load)
{
	struct pfarg_load self = {.load_pid = 100}, other = {.load_pid = 101};
	int fd = h_ctx(PFM_FL_NOTIFY_BLOCK);

	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &self, 1), -EINVAL));
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &other, 1), 0));
}

/* 3.3.6: the end message of a non-self per-thread context. */
Test(vpmu_ctx, thread_exit_unloads_and_queues_end_message)
{
	struct pfarg_load l = {.load_pid = 400};
	int fd              = h_ctx(0);
	union pfm_msg m;

	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_thread_exit(H.d, &H.guest, fd), 0));
	m = h_msg(fd);
	cr_assert(eq(u32, m.msg_type, PFM_MSG_END));
	cr_assert(eq(u32, H.nr_notes, 1));
	cr_assert(eq(u32, H.notes[0].msg_type, PFM_MSG_END));
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), -EBUSY));
}

/* vpmu.h: the shared-page snapshot of the guest context on a vCPU. */
Test(vpmu_ctx, snapshot_of_guest_context)
{
	struct vpmu_snapshot snap;
	int fd = h_ctx(PFM_FL_SYSTEM_WIDE);

	h_rate(0, 1000000000ULL);
	h_pmc(fd, 0, 0, H_EVSEL(0), 0);
	h_load(fd, 0);
	h_start(fd);
	h_run(100);
	H.vpmd_exits = 9;
	cr_assert(eq(int, vpmu_cpu_snapshot(H.cpu0, &snap), 0));
	cr_assert(eq(int, snap.fd, fd));
	cr_assert(snap.active);
	cr_assert(
		eq(u64, snap.pmd_mask, 1ULL | (0xfULL << VPMU_PMD_VIRT_BASE)));
	cr_assert(eq(u64, snap.pmds[0], 100));
	cr_assert(eq(u16, snap.pmd_code[0], H_EV(0)));
	cr_assert(
		eq(u64, snap.pmds[VPMU_PMD_VIRT_BASE + VPMU_VPMD_RUN_NS], 100));
	cr_assert(eq(u64, snap.pmds[VPMU_PMD_VIRT_BASE + VPMU_VPMD_EXITS], 9));
	cr_assert(eq(u32, snap.nr_sets, 1));
	cr_assert(eq(u64, snap.sets[0].runs, 1));
	cr_assert(eq(u64, snap.sets[0].enabled_ns, 100));
	cr_assert(eq(u64, snap.sets[0].running_ns, 100));
	cr_assert(eq(int, vpmu_cpu_snapshot(H.cpu1, &snap), -ENOENT));
	cr_assert(eq(int, snap.fd, -1));
}

/* 3.2.2: virtual PMDs read the hypervisor resource, frozen off cpu. */
Test(vpmu_ctx, virtual_pmds_read_hypervisor_resources)
{
	int fd               = h_ctx(PFM_FL_SYSTEM_WIDE);
	const uint16_t exits = VPMU_PMD_VIRT_BASE + VPMU_VPMD_EXITS;

	h_load(fd, 0);
	H.vpmd_exits = 42;
	cr_assert(eq(u64, h_val(fd, 0, exits), 42));
	h_run(10);
	cr_assert(eq(u64, h_val(fd, 0, VPMU_PMD_VIRT_BASE), 10), "run ns");
	cr_assert(eq(int, vpmu_ctx_unload(H.d, &H.guest, fd), 0));
	H.vpmd_exits = 50;
	cr_assert(eq(u64, h_val(fd, 0, exits), 42), "value at detach");
}

/* Per-thread contexts: the scheduling hooks and thread exit by state. */
enum tstate { T_UNLOADED, T_OUT, T_IN };
enum tcmd { T_SCHED_IN, T_SCHED_OUT, T_EXIT, T_UNLOAD, T_START, T_READ };

struct trow {
	int line;
	enum tstate st;
	enum tcmd cmd;
	int want;
};

#define TROW(s, c, w)                                                          \
	{                                                                      \
		.line = __LINE__, .st = s, .cmd = c, .want = w                 \
	}
#define ALL3(c, u, o, i)                                                       \
	TROW(T_UNLOADED, c, u), TROW(T_OUT, c, o), TROW(T_IN, c, i)

static int tenter(enum tstate st)
{
	struct pfarg_load l = {.load_pid = 900};
	int fd              = h_ctx(0);

	if (st == T_UNLOADED)
		return fd;
	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
	if (st == T_IN)
		cr_assert(eq(int, vpmu_ctx_sched_in(H.d, &H.guest, fd), 0));
	return fd;
}

static int trun(int fd, enum tcmd c)
{
	struct pfarg_pmd p = {.reg_num = 0};

	switch (c) {
	case T_SCHED_IN:
		return vpmu_ctx_sched_in(H.d, &H.guest, fd);
	case T_SCHED_OUT:
		return vpmu_ctx_sched_out(H.d, &H.guest, fd, NULL);
	case T_EXIT:
		return vpmu_ctx_thread_exit(H.d, &H.guest, fd);
	case T_UNLOAD:
		return vpmu_ctx_unload(H.d, &H.guest, fd);
	case T_START:
		return vpmu_ctx_start(H.d, &H.guest, fd, NULL, 0);
	case T_READ:
		return vpmu_ctx_read_pmds(H.d, &H.guest, fd, &p, 1);
	}
	return -ENOSYS;
}

ParameterizedTestParameters(vpmu_state, thread_command_by_state)
{
	static struct trow rows[] = {
		/* vpmu.h: sched in/out only between LOAD and UNLOAD. */
		ALL3(T_SCHED_IN, -EBUSY, 0, -EBUSY),
		ALL3(T_SCHED_OUT, -EBUSY, -EBUSY, 0),
		/* 3.3.6: the monitored thread's exit detaches. */
		ALL3(T_EXIT, -EBUSY, 0, 0),
		/* 3.1.8: detach whether or not the thread runs now. */
		ALL3(T_UNLOAD, -EBUSY, 0, 0),
		/* 3.1.5: START is valid once attached, running or not. */
		ALL3(T_START, -EBUSY, 0, 0),
		ALL3(T_READ, 0, 0, 0),
	};

	return cr_make_param_array(struct trow, rows,
				   sizeof(rows) / sizeof(rows[0]));
}

/* 3.1.7, 3.1.8, 3.3.6: per-thread commands by scheduling state. */
ParameterizedTest(struct trow *r, vpmu_state, thread_command_by_state,
		  .init = h_setup, .fini = h_teardown)
{
	int fd = tenter(r->st);

	cr_assert(eq(int, trun(fd, r->cmd), r->want), "row at line %d",
		  r->line);
}
