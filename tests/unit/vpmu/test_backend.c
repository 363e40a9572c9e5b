// SPDX-License-Identifier: MIT
/*
 * test_backend.c: backend selection and failures (DESIGN.md 5): the first
 * backend of the domain's list that can count an event is used; open()
 * and read() failures surface as errors, never as silent zeros.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>

#include "fake_backend.h"
#include "harness.h"

static struct vpmu_domain *d;
static struct vpmu_cpu *cpu;
static struct vpmu_caller g;
static struct vpmu_replay *rp;

/* Backends in preference order: fake first, then replay. */
static void setup(void)
{
	static struct vpmu_backend be[2];
	struct vpmu_domain_config cfg = {0};

	fake_backend_next_count = 0;
	fake_backend_open_ret   = 0;
	fake_backend_read_ret   = 0;
	cr_assert(eq(int, vpmu_replay_create(&rp), 0));
	cr_assert(eq(int, vpmu_replay_add_event(rp, 0x3c, "cycles"), 0));
	cr_assert(eq(int, vpmu_replay_add_event(rp, FAKE_EV_CODE, "dup"), 0));
	be[0] = (struct vpmu_backend){.ops = &fake_backend};
	vpmu_replay_instance(rp, &be[1]);
	vpmu_limits_default(&cfg.limits);
	cfg.backends    = be;
	cfg.nr_backends = 2;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &d), 0));
	cr_assert(eq(int, vpmu_cpu_create(d, 0, &cpu), 0));
	g = (struct vpmu_caller){.owner = VPMU_OWNER_GUEST, .cpu = cpu};
}

static void teardown(void)
{
	vpmu_domain_destroy(d);
	vpmu_replay_destroy(rp);
}

TestSuite(vpmu_backend, .init = setup, .fini = teardown);

static int ctx_pmc(uint16_t code, int *fd)
{
	struct pfarg_ctx c = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_pmc p = {.reg_value = VPMU_EVSEL(code & 0xff, code >> 8)};

	cr_assert(eq(int, vpmu_ctx_create(d, &g, &c, 1, NULL, 0), 0));
	*fd = c.ctx_fd;
	return vpmu_ctx_write_pmcs(d, &g, c.ctx_fd, &p, 1);
}

static int load_start(int fd)
{
	int ret = vpmu_ctx_load(d, &g, fd, &(struct pfarg_load){0}, 1);

	return ret ? ret : vpmu_ctx_start(d, &g, fd, NULL, 0);
}

static uint64_t val(int fd)
{
	struct pfarg_pmd p = {.reg_num = 0};

	cr_assert(eq(int, vpmu_ctx_read_pmds(d, &g, fd, &p, 1), 0));
	return p.reg_value;
}

/* The first backend able to count a code counts it. */
Test(vpmu_backend, first_capable_backend_wins)
{
	int fd;

	cr_assert(eq(int,
		     vpmu_replay_set_rate(rp, 0, FAKE_EV_CODE, 1000000000ULL),
		     0));
	fake_backend_next_count = 3;
	cr_assert(eq(int, ctx_pmc(FAKE_EV_CODE, &fd), 0));
	cr_assert(eq(int, load_start(fd), 0));
	cr_assert(eq(u32, fake_backend_nr_open, 1));
	cr_assert(eq(int, vpmu_cpu_account(cpu, 100, NULL), 0));
	fake_backend_next_count = 0; /* READ_PMDS collects once more */
	cr_assert(eq(u64, val(fd), 3), "counted by fake, not replay");
	cr_assert(eq(int, vpmu_ctx_unload(d, &g, fd), 0));
	cr_assert(eq(u32, fake_backend_nr_open, 0), "closed at UNLOAD");
}

/* Falls through to the next backend for codes the first refuses. */
Test(vpmu_backend, falls_back_to_next_backend)
{
	int fd;

	cr_assert(eq(int, vpmu_replay_set_rate(rp, 0, 0x3c, 1000000000ULL), 0));
	cr_assert(eq(int, ctx_pmc(0x3c, &fd), 0));
	cr_assert(eq(int, load_start(fd), 0));
	cr_assert(eq(int, vpmu_cpu_account(cpu, 100, NULL), 0));
	cr_assert(eq(u64, val(fd), 100));
}

/* A backend that cannot open the event makes LOAD fail (-EBUSY). */
Test(vpmu_backend, open_failure_fails_load)
{
	int fd;

	cr_assert(eq(int, ctx_pmc(FAKE_EV_CODE, &fd), 0));
	fake_backend_open_ret = -EACCES;
	cr_assert(eq(int, load_start(fd), -EBUSY));
	cr_assert(eq(int, vpmu_ctx_start(d, &g, fd, NULL, 0), -EBUSY),
		  "still unloaded");
	fake_backend_open_ret = 0;
	cr_assert(eq(int, load_start(fd), 0));
}

/*
 * A modifier the backend cannot honour (one ring of cycles from
 * task-clock): the perfmon2 write is refused (NOTAVAIL), not counted as
 * if unfiltered; both rings are fine.
 */
Test(vpmu_backend, refused_modifier_is_notavail)
{
	uint64_t both      = VPMU_EVSEL(FAKE_EV_CODE & 0xff, FAKE_EV_CODE >> 8);
	struct pfarg_pmc p = {.reg_value = both & ~VPMU_EVSEL_OS};
	int fd;

	cr_assert(eq(int, ctx_pmc(0x3c, &fd), 0));
	fake_backend_ring_refusal = "rings cannot be told apart";
	cr_expect(eq(int, vpmu_ctx_write_pmcs(d, &g, fd, &p, 1), -EINVAL));
	cr_expect(eq(u32, p.reg_flags, PFM_REG_RETFL_NOTAVAIL));
	p = (struct pfarg_pmc){.reg_value = both};
	cr_expect(eq(int, vpmu_ctx_write_pmcs(d, &g, fd, &p, 1), 0));
	fake_backend_ring_refusal = NULL;
}

/* Re-programming a live PMC whose event cannot open: NOTAVAIL. */
Test(vpmu_backend, open_failure_on_live_write_pmcs)
{
	struct pfarg_pmc p = {.reg_value = VPMU_EVSEL(FAKE_EV_CODE, 0)};
	int fd;

	cr_assert(eq(int, ctx_pmc(0x3c, &fd), 0));
	cr_assert(eq(int, load_start(fd), 0));
	fake_backend_open_ret = -EMFILE;
	cr_assert(eq(int, vpmu_ctx_write_pmcs(d, &g, fd, &p, 1), -EINVAL));
	cr_assert(eq(u32, p.reg_flags, PFM_REG_RETFL_NOTAVAIL));
}

/* A read failure is reported by vpmu_cpu_account() and counted. */
Test(vpmu_backend, read_failure_reported)
{
	struct vpmu_ctx_stats st;
	int fd;

	cr_assert(eq(int, ctx_pmc(FAKE_EV_CODE, &fd), 0));
	cr_assert(eq(int, load_start(fd), 0));
	fake_backend_read_ret   = -EIO;
	fake_backend_next_count = 5;
	cr_assert(eq(int, vpmu_cpu_account(cpu, 100, NULL), -EIO));
	cr_assert(eq(int, vpmu_ctx_stats(d, &g, fd, &st), 0));
	cr_assert(eq(u64, st.nr_backend_errors, 1));
	cr_assert(eq(u64, val(fd), 0), "nothing invented");
}

/* vCPU objects: one per index. */
Test(vpmu_backend, cpu_objects)
{
	struct vpmu_cpu *c2;

	cr_assert(eq(int, vpmu_cpu_create(d, 0, &c2), -EEXIST));
	cr_assert(eq(int, vpmu_cpu_create(d, 4096, &c2), -EINVAL));
	cr_assert(eq(ptr, vpmu_cpu_get(d, 0), cpu));
	cr_assert(eq(ptr, vpmu_cpu_get(d, 7), NULL));
}
