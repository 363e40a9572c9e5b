// SPDX-License-Identifier: MIT
/*
 * test_e2e.c: the n-way format driven by the real libvpmu core (contexts,
 * overflows from the replay backend, PFM_RESTART): monitoring goes on
 * while regions fill (spec §6.3.1), all regions full masks like the
 * default format (§3.6.5), the restart argument picks the regions to
 * release (§3.5.15), samples carry the guest state (§3.6.4).
 */
#include <errno.h>

#include "backends/replay.h"
#include "fmt_test.h"
#include "vpmu_core.h"
#include <vpmu/vpmu_cmd.h>
#include "vpmu_pmu.h"

#define EV     0x10
#define PERIOD 100

static struct {
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_domain *d;
	struct vpmu_cpu *cpu;
	struct vpmu_caller g;
	struct vpmu_guest_state gs;
	unsigned int notes;
	int fd;
} E;

static void note(void *opaque, const struct vpmu_notify *n)
{
	(void)opaque;
	if (n->flags & VPMU_NOTIFY_MSG)
		E.notes++;
}

static void setup(void)
{
	struct vpmu_domain_config cfg = {0};

	memset(&E, 0, sizeof(E));
	cr_assert(eq(int, vpmu_replay_create(&E.rp), 0));
	cr_assert(eq(int, vpmu_replay_add_event(E.rp, EV, "ev"), 0));
	vpmu_replay_instance(E.rp, &E.be);
	vpmu_limits_default(&cfg.limits);
	cfg.backends    = &E.be;
	cfg.nr_backends = 1;
	cfg.notify      = note;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &E.d), 0));
	cr_assert(eq(int, vpmu_cpu_create(E.d, 0, &E.cpu), 0));
	E.g  = (struct vpmu_caller){.owner = VPMU_OWNER_GUEST, .cpu = E.cpu};
	E.gs = (struct vpmu_guest_state){.ip = 0x401000, .pid = 7, .tid = 8};
	/* One event per ns of guest run time. */
	cr_assert(eq(int, vpmu_replay_set_rate(E.rp, 0, EV, 1000000000ULL), 0));
}

static void teardown(void)
{
	vpmu_domain_destroy(E.d);
	vpmu_replay_destroy(E.rp);
}

TestSuite(vpmu_smpl_e2e, .init = setup, .fini = teardown);

/* An n-way context sampling EV every PERIOD events, started. */
static struct pvpmu_nway_smpl_hdr *start_nway(uint32_t nr, uint32_t flags)
{
	static const uint8_t uuid[16] = PVPMU_NWAY_SMPL_UUID;
	struct pvpmu_nway_smpl_arg a  = {
		 .buf_size = 3 * 4096, .buf_flags = flags, .nr_regions = nr};
	struct pfarg_ctx c   = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_pmc pmc = {.reg_flags = PFM_REGFL_OVFL_NOTIFY,
				.reg_value = VPMU_EVSEL(EV, 0)};
	struct pfarg_pmd pmd = {.reg_value       = 0 - PERIOD,
				.reg_short_reset = 0 - PERIOD,
				.reg_long_reset  = 0 - PERIOD};
	struct pfarg_load l  = {.load_pid = 0};
	void *base           = NULL;
	size_t size          = 0;

	memcpy(c.ctx_smpl_buf_id, uuid, 16);
	cr_assert(eq(int, vpmu_ctx_create(E.d, &E.g, &c, 1, &a, sizeof(a)), 0));
	E.fd = c.ctx_fd;
	cr_assert(eq(int, vpmu_ctx_write_pmcs(E.d, &E.g, E.fd, &pmc, 1), 0));
	cr_assert(eq(int, vpmu_ctx_write_pmds(E.d, &E.g, E.fd, &pmd, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(E.d, &E.g, E.fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(E.d, &E.g, E.fd, NULL, 0), 0));
	cr_assert(eq(int, vpmu_ctx_smpl_buf(E.d, &E.g, E.fd, &base, &size), 0));
	return base;
}

/* Guest run time until (notes) notifications have arrived. */
static void run_until_notes(unsigned int notes)
{
	unsigned int i;

	for (i = 0; i < 100000 && E.notes < notes; i++) {
		E.gs.ip++;
		cr_assert(
			eq(int, vpmu_cpu_account(E.cpu, PERIOD / 4, &E.gs), 0));
	}
	cr_assert(eq(u32, E.notes, notes));
}

static uint64_t pmd0(void)
{
	struct pfarg_pmd p = {.reg_num = 0};

	cr_assert(eq(int, vpmu_ctx_read_pmds(E.d, &E.g, E.fd, &p, 1), 0));
	return p.reg_value;
}

static bool counting(void)
{
	uint64_t before = pmd0();

	cr_assert(eq(int, vpmu_cpu_account(E.cpu, 10, &E.gs), 0));
	return pmd0() != before;
}

Test(vpmu_smpl_e2e, region_fill_notifies_and_keeps_counting)
{
	struct pvpmu_nway_smpl_hdr *h = start_nway(3, 0);

	run_until_notes(1);
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FULL));
	cr_assert(eq(u32, h->cur_region, 1));
	cr_assert(counting(), "not masked while a region is free");
	run_until_notes(2);
	cr_assert(counting());
	cr_assert(eq(u64, h->masked, 0));
}

Test(vpmu_smpl_e2e, all_full_masks_and_bitmask_release_resumes)
{
	struct pvpmu_nway_smpl_hdr *h = start_nway(2, 0);

	run_until_notes(2);
	cr_assert(eq(u32, h->cur_region, PVPMU_NWAY_NO_REGION));
	cr_assert(not(counting()), "masked when every region is full");
	/* Naming a region that is not FULL fails and changes nothing. */
	cr_assert(
		eq(int, vpmu_ctx_restart(E.d, &E.g, E.fd, 1ULL << 5), -EINVAL));
	cr_assert(not(counting()));
	/* Release region 1 only (the newer one): filling resumes there. */
	cr_assert(eq(int, vpmu_ctx_restart(E.d, &E.g, E.fd, 1ULL << 1), 0));
	cr_assert(eq(u32, h->cur_region, 1));
	cr_assert(eq(u32, h->regions[0].state, PVPMU_NWAY_REGION_FULL));
	cr_assert(counting(), "RESTART unmasked");
}

Test(vpmu_smpl_e2e, samples_carry_guest_state)
{
	struct pvpmu_nway_smpl_hdr *h = start_nway(2, 0);
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	unsigned int n = 0;
	uint64_t last  = 0;

	run_until_notes(1);
	cr_assert(eq(int,
		     pvpmu_nway_iter_init(&it, h, h->buf_size, 0, NULL, NULL),
		     0));
	while (pvpmu_smpl_iter_next(&it, &s) == 1) {
		cr_assert(eq(i32, s.entry.pid, 7));
		cr_assert(eq(i32, s.entry.tid, 8));
		cr_assert(eq(u16, s.entry.ovfl_pmd, 0));
		cr_assert(eq(u16, s.entry.cpu, 0));
		cr_assert(lt(u64, last, s.entry.tstamp), "increasing");
		cr_assert(ge(u64, s.entry.ip, 0x401000));
		last = s.entry.tstamp;
		n++;
	}
	cr_assert(eq(u64, n, h->regions[0].count));
	cr_assert(lt(u32, 1, n));
}

Test(vpmu_smpl_e2e, cycle_mode_never_masks)
{
	struct pvpmu_nway_smpl_hdr *h = start_nway(2, PVPMU_NWAY_SMPL_CYCLE);
	unsigned int i;

	run_until_notes(1);
	for (i = 0; i < 4000; i++)
		cr_assert(eq(int, vpmu_cpu_account(E.cpu, PERIOD, &E.gs), 0));
	cr_assert(lt(u64, 0, h->lost), "the format's own region recycled");
	cr_assert(eq(u64, h->masked, 0));
	cr_assert(counting());
}
