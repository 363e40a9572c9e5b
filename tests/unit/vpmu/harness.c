// SPDX-License-Identifier: MIT
/* harness.c: shared fixtures of the libvpmu unit tests (see harness.h). */
#include "harness.h"

#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

struct harness H;

static void note(void *opaque, const struct vpmu_notify *n)
{
	struct harness *h = opaque;

	if (h->nr_notes < H_MAX_NOTES)
		h->notes[h->nr_notes] = *n;
	h->nr_notes++;
}

static uint64_t vpmd(void *opaque, uint32_t cpu, unsigned int id)
{
	struct harness *h = opaque;

	(void)cpu;
	return id == VPMU_VPMD_EXITS ? h->vpmd_exits : 0;
}

void h_init(const struct vpmu_limits *limits)
{
	struct vpmu_domain_config cfg = {0};
	unsigned int i;

	/* A test may rebuild the suite's fixture with other limits. */
	if (H.d)
		h_teardown();
	memset(&H, 0, sizeof(H));
	cr_assert(eq(int, vpmu_replay_create(&H.rp), 0));
	for (i = 0; i < 8; i++)
		cr_assert(
			eq(int, vpmu_replay_add_event(H.rp, H_EV(i), "ev"), 0));
	vpmu_replay_instance(H.rp, &H.be);
	if (limits) {
		cfg.limits = *limits;
	} else {
		vpmu_limits_default(&cfg.limits);
	}
	cfg.backends      = &H.be;
	cfg.nr_backends   = 1;
	cfg.notify        = note;
	cfg.notify_opaque = &H;
	cfg.vpmd_read     = vpmd;
	cfg.vpmd_opaque   = &H;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &H.d), 0));
	cr_assert(eq(int, vpmu_cpu_create(H.d, 0, &H.cpu0), 0));
	cr_assert(eq(int, vpmu_cpu_create(H.d, 1, &H.cpu1), 0));
	H.guest = (struct vpmu_caller){
		.owner = VPMU_OWNER_GUEST, .cpu = H.cpu0, .tid = 100};
	H.host = (struct vpmu_caller){.owner = VPMU_OWNER_HOST};
	H.gs   = (struct vpmu_guest_state){.ip = 0x401000, .pid = 7, .tid = 8};
}

void h_setup(void)
{
	h_init(NULL);
}

void h_teardown(void)
{
	vpmu_domain_destroy(H.d);
	vpmu_replay_destroy(H.rp);
	H.d  = NULL;
	H.rp = NULL;
}

int h_ctx_raw(const struct vpmu_caller *who, uint32_t flags, int *fd)
{
	struct pfarg_ctx c = {.ctx_flags = flags};
	int ret            = vpmu_ctx_create(H.d, who, &c, 1, NULL, 0);

	*fd = c.ctx_fd;
	return ret;
}

int h_ctx(uint32_t flags)
{
	int fd = -1;

	cr_assert(eq(int, h_ctx_raw(&H.guest, flags, &fd), 0));
	return fd;
}

void h_pmc_full(int fd, const struct pfarg_pmc *pmc)
{
	struct pfarg_pmc p = *pmc;

	cr_assert(eq(int, vpmu_ctx_write_pmcs(H.d, &H.guest, fd, &p, 1), 0),
		  "write_pmcs PMC%u", pmc->reg_num);
}

void h_pmc(int fd, uint16_t set, uint16_t num, uint64_t evsel, uint32_t flags)
{
	struct pfarg_pmc p = {.reg_num   = num,
			      .reg_set   = set,
			      .reg_flags = flags,
			      .reg_value = evsel};

	h_pmc_full(fd, &p);
}

void h_pmd_full(int fd, const struct pfarg_pmd *pmd)
{
	struct pfarg_pmd p = *pmd;

	cr_assert(eq(int, vpmu_ctx_write_pmds(H.d, &H.guest, fd, &p, 1), 0),
		  "write_pmds PMD%u", pmd->reg_num);
}

void h_pmd(int fd, uint16_t set, uint16_t num, uint64_t value,
	   uint64_t short_reset, uint64_t long_reset)
{
	struct pfarg_pmd p = {.reg_num         = num,
			      .reg_set         = set,
			      .reg_value       = value,
			      .reg_short_reset = short_reset,
			      .reg_long_reset  = long_reset};

	h_pmd_full(fd, &p);
}

struct pfarg_pmd h_read(int fd, uint16_t set, uint16_t num)
{
	struct pfarg_pmd p = {.reg_num = num, .reg_set = set};

	cr_assert(eq(int, vpmu_ctx_read_pmds(H.d, &H.guest, fd, &p, 1), 0),
		  "read_pmds PMD%u", num);
	return p;
}

uint64_t h_val(int fd, uint16_t set, uint16_t num)
{
	return h_read(fd, set, num).reg_value;
}

void h_load(int fd, uint16_t set)
{
	struct pfarg_load l = {.load_pid = 0, .load_set = set};

	cr_assert(eq(int, vpmu_ctx_load(H.d, &H.guest, fd, &l, 1), 0));
}

void h_start(int fd)
{
	cr_assert(eq(int, vpmu_ctx_start(H.d, &H.guest, fd, NULL, 0), 0));
}

void h_set(int fd, uint16_t id, uint32_t flags, uint16_t next,
	   uint64_t timeout_ns)
{
	struct pfarg_setdesc sd = {
		.set_id      = id,
		.set_id_next = next,
		.set_flags   = flags,
		.set_timeout = {.tv_sec  = timeout_ns / 1000000000ULL,
				.tv_nsec = timeout_ns % 1000000000ULL},
	};

	cr_assert(
		eq(int, vpmu_ctx_create_evtsets(H.d, &H.guest, fd, &sd, 1), 0),
		"create set %u", id);
}

struct pfarg_setinfo h_setinfo(int fd, uint16_t id)
{
	struct pfarg_setinfo si = {.set_id = id};

	cr_assert(
		eq(int, vpmu_ctx_getinfo_evtsets(H.d, &H.guest, fd, &si, 1), 0),
		"getinfo set %u", id);
	return si;
}

void h_run(uint64_t ns)
{
	cr_assert(eq(int, vpmu_cpu_account(H.cpu0, ns, &H.gs), 0));
}

void h_rate(unsigned int ev, uint64_t per_sec)
{
	cr_assert(eq(int, vpmu_replay_set_rate(H.rp, 0, H_EV(ev), per_sec), 0));
}

void h_steps(unsigned int ev, const uint64_t *deltas, size_t n)
{
	cr_assert(eq(int, vpmu_replay_set_steps(H.rp, 0, H_EV(ev), deltas, n),
		     0));
}

union pfm_msg h_msg(int fd)
{
	union pfm_msg m;
	unsigned int nr = 0;

	cr_assert(
		eq(int, vpmu_ctx_read_msgs(H.d, &H.guest, fd, &m, 1, &nr), 0));
	cr_assert(eq(u32, nr, 1));
	return m;
}
