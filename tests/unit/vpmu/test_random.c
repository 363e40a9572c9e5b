// SPDX-License-Identifier: MIT
/*
 * test_random.c: guest input never breaks the library (DESIGN.md 8, spec
 * 4.4): a long, seeded random sequence of commands with random arguments
 * interleaved with run time. Every result must be 0 or an error the spec
 * lists, and the run-time accounting invariants must hold throughout.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "harness.h"

TestSuite(vpmu_robust, .init = h_setup, .fini = h_teardown);

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245U + 12345U;
	return rnd_state >> 8;
}

/* Mostly valid, sometimes wild values, so both paths are exercised. */
static uint64_t pick(uint64_t valid)
{
	switch (rnd() % 4) {
	case 0:
		return (uint64_t)rnd() << 32 | rnd();
	default:
		return valid;
	}
}

static bool allowed(int ret)
{
	static const int ok[] = {0,       -EINVAL, -EBUSY, -EFAULT, -EBADF,
				 -ENOMEM, -EAGAIN, -E2BIG, -EPERM};
	unsigned int i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (ret == ok[i])
			return true;
	}
	return false;
}

static int random_cmd(int *fds, unsigned int nr)
{
	int fd                  = rnd() % 8 ? fds[rnd() % nr] : (int)rnd();
	struct pfarg_pmc pmc    = {.reg_num        = (uint16_t)pick(rnd() % 9),
				   .reg_set        = (uint16_t)pick(rnd() % 3),
				   .reg_flags      = (uint32_t)pick(rnd() % 4),
				   .reg_value      = pick(H_EVSEL(rnd() % 8)),
				   .reg_reset_pmds = {pick(rnd() % 16)},
				   .reg_smpl_pmds  = {pick(1ULL << 16)}};
	struct pfarg_pmd pmd    = {.reg_num         = (uint16_t)pick(rnd() % 20),
				   .reg_set         = (uint16_t)pick(rnd() % 3),
				   .reg_value       = 0 - (uint64_t)(rnd() % 5000),
				   .reg_short_reset = 0 - (uint64_t)(rnd() % 3000),
				   .reg_long_reset  = pick(0),
				   .reg_ovflsw_thres = rnd() % 3,
				   .reg_random_mask  = pick(0xff),
				   .reg_random_seed  = rnd()};
	struct pfarg_setdesc sd = {.set_id      = (uint16_t)(rnd() % 3),
				   .set_id_next = (uint16_t)(rnd() % 4),
				   .set_flags   = (uint32_t)pick(rnd() % 8),
				   .set_timeout = {.tv_nsec = rnd() % 3000000}};
	struct pfarg_setinfo si = {.set_id = (uint16_t)(rnd() % 4)};
	struct pfarg_load ld    = {.load_pid = (uint32_t)pick(0),
				   .load_set = (uint16_t)(rnd() % 3)};
	struct pfarg_start st   = {.start_set = (uint16_t)(rnd() % 3)};
	union pfm_msg m[2];
	unsigned int n;

	switch (rnd() % 14) {
	case 0:
		return vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &pmc, 1);
	case 1:
		return vpmu_ctx_write_pmds(H.d, &H.guest, fd, &pmd, 1);
	case 2:
		return vpmu_ctx_read_pmds(H.d, &H.guest, fd, &pmd, 1);
	case 3:
		return vpmu_ctx_create_evtsets(H.d, &H.guest, fd, &sd, 1);
	case 4:
		return vpmu_ctx_delete_evtsets(H.d, &H.guest, fd, &sd, 1);
	case 5:
		return vpmu_ctx_getinfo_evtsets(H.d, &H.guest, fd, &si, 1);
	case 6:
		return vpmu_ctx_load(H.d, &H.guest, fd, &ld, 1);
	case 7:
		return vpmu_ctx_unload(H.d, &H.guest, fd);
	case 8:
		return vpmu_ctx_start(H.d, &H.guest, fd, rnd() % 2 ? &st : NULL,
				      rnd() % 2);
	case 9:
		return vpmu_ctx_stop(H.d, &H.guest, fd);
	case 10:
		return vpmu_ctx_restart(H.d, &H.guest, fd, 0);
	case 11:
		return vpmu_ctx_read_msgs(H.d, &H.guest, fd, m, 2, &n);
	case 12:
		return vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &pmc,
					   (int)pick(1));
	default:
		return vpmu_cpu_account(H.cpu0, rnd() % 5000, &H.gs);
	}
}

/* Active time never exceeds the run time the vCPU accounted. */
static void check_invariants(int fd)
{
	struct pfarg_setinfo si;
	uint64_t sum = 0;
	uint16_t id;

	for (id = 0; id < 3; id++) {
		si = (struct pfarg_setinfo){.set_id = id};
		if (vpmu_ctx_getinfo_evtsets(H.d, &H.guest, fd, &si, 1))
			continue;
		sum += si.set_act_duration.tv_sec * 1000000000ULL +
		       si.set_act_duration.tv_nsec;
	}
	cr_assert(le(u64, sum, vpmu_cpu_run_ns(H.cpu0)));
}

Test(vpmu_robust, random_commands_only_listed_errors)
{
	struct vpmu_ctx_stats st;
	uint64_t nr_ovfl = 0;
	unsigned int i, k, nr_ok = 0;
	int fds[4];

	for (i = 0; i < 8; i++)
		h_rate(i, (i + 1) * 300000000ULL);
	for (k = 0; k < 4; k++) {
		fds[k] = h_ctx(PFM_FL_SYSTEM_WIDE);
		/* A default-format context too: overflows reach a format. */
		if (k == 3) {
			struct pfm_default_smpl_arg a = {.buf_size = 4096};
			struct pfarg_ctx c = {.ctx_flags = PFM_FL_SYSTEM_WIDE,
					      .ctx_smpl_buf_id =
						      PFM_DEFAULT_SMPL_UUID};

			cr_assert(eq(int,
				     vpmu_ctx_create(H.d, &H.guest, &c, 1, &a,
						     sizeof(a)),
				     0));
			fds[k] = c.ctx_fd;
		}
	}
	for (i = 0; i < 30000; i++) {
		int ret = random_cmd(fds, 4);

		cr_assert(allowed(ret), "step %u: unexpected %d", i, ret);
		nr_ok += ret == 0;
		if (i % 1000 == 0)
			for (k = 0; k < 4; k++)
				check_invariants(fds[k]);
	}
	/* Not vacuous: many commands succeeded and counters overflowed. */
	for (k = 0; k < 4; k++) {
		cr_assert(
			eq(int, vpmu_ctx_stats(H.d, &H.guest, fds[k], &st), 0));
		nr_ovfl += st.nr_ovfl;
	}
	cr_assert(lt(u32, 3000, nr_ok), "%u successes", nr_ok);
	cr_assert(lt(u64, 10, nr_ovfl), "%lu overflows",
		  (unsigned long)nr_ovfl);
}
