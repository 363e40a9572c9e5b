// SPDX-License-Identifier: MIT
/*
 * test_host_domain.c: libvpmu as the VMM sees it, through <vpmu/vpmu.h>
 * and the library `vpmu` alone. A fake VMM provides struct vpmu_host_ops
 * (no vCPU fd, no vCPU thread, scripted statistics); libvpmu builds its
 * own backends from them. Only hv events are used, so neither KVM nor
 * perf_event is touched (hv is first in the list and answers them).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include <vpmu/vpmu.h>

#include "vpmu_pmu.h" /* header only: event-select layout, virtual PMDs */

struct fake_vmm {
	uint64_t stats[VPMU_HV_NR_STATS]; /* of vCPU 0 */
	unsigned int nr_reads_other_cpu;
	unsigned int nr_notes;
};

static struct fake_vmm vmm;
static struct vpmu_domain *dom;
static struct vpmu_cpu *cpu0;
static struct vpmu_caller guest;

static int no_fd(void *opaque, uint32_t cpu)
{
	(void)opaque;
	(void)cpu;
	return -1;
}

static pid_t no_thread(void *opaque, uint32_t cpu)
{
	(void)opaque;
	(void)cpu;
	return 0;
}

static uint64_t stat_of(void *opaque, uint32_t cpu, unsigned int stat)
{
	struct fake_vmm *v = opaque;

	cr_assert(lt(uint, stat, VPMU_HV_NR_STATS));
	if (cpu != 0) {
		v->nr_reads_other_cpu++;
		return 0;
	}
	return v->stats[stat];
}

static void note(void *opaque, const struct vpmu_notify *n)
{
	struct fake_vmm *v = opaque;

	(void)n;
	v->nr_notes++;
}

static const struct vpmu_host_ops fake_ops = {
	.vcpu_fd  = no_fd,
	.vcpu_tid = no_thread,
	.hv_stat  = stat_of,
	.notify   = note,
};

static void create(uint64_t tsc_khz)
{
	struct vpmu_host_config c = {
		.ops = &fake_ops, .opaque = &vmm, .tsc_khz = tsc_khz};

	vpmu_limits_default(&c.limits);
	cr_assert(eq(int, vpmu_domain_create_hosted(&c, &dom), 0));
	cr_assert(eq(int, vpmu_cpu_create(dom, 0, &cpu0), 0));
	guest = (struct vpmu_caller){
		.owner = VPMU_OWNER_GUEST, .cpu = cpu0, .tid = 1};
}

static void setup(void)
{
	memset(&vmm, 0, sizeof(vmm));
	create(0);
}

static void teardown(void)
{
	vpmu_domain_destroy(dom);
	dom = NULL;
}

TestSuite(vpmu_host_domain, .init = setup, .fini = teardown);

/* A started vCPU-wide guest context on vCPU 0 counting (codes). */
static int counting(const uint16_t *codes, unsigned int n)
{
	struct pfarg_ctx c  = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_load l = {.load_pid = 0};
	struct pfarg_pmc pmc;
	unsigned int i;

	cr_assert(eq(int, vpmu_ctx_create(dom, &guest, &c, 1, NULL, 0), 0));
	for (i = 0; i < n; i++) {
		pmc = (struct pfarg_pmc){
			.reg_num   = (uint16_t)i,
			.reg_value = VPMU_EVSEL(PVPMU_EV_EVENT(codes[i]),
						PVPMU_EV_UMASK(codes[i]))};
		cr_assert(
			eq(int,
			   vpmu_ctx_write_pmcs(dom, &guest, c.ctx_fd, &pmc, 1),
			   0),
			"PMC%u = 0x%04x", i, codes[i]);
	}
	cr_assert(eq(int, vpmu_ctx_load(dom, &guest, c.ctx_fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(dom, &guest, c.ctx_fd, NULL, 0), 0));
	return c.ctx_fd;
}

static uint64_t pmd(int fd, uint16_t num)
{
	struct pfarg_pmd p = {.reg_num = num};

	cr_assert(eq(int, vpmu_ctx_read_pmds(dom, &guest, fd, &p, 1), 0));
	return p.reg_value;
}

Test(vpmu_host_domain, refuses_a_host_without_its_required_ops)
{
	struct vpmu_host_ops no_stats = fake_ops;
	struct vpmu_host_config c     = {.ops = &no_stats, .opaque = &vmm};
	struct vpmu_domain *d         = NULL;

	vpmu_limits_default(&c.limits);
	no_stats.hv_stat = NULL;
	cr_assert(eq(int, vpmu_domain_create_hosted(&c, &d), -EINVAL));
	c.ops = NULL;
	cr_assert(eq(int, vpmu_domain_create_hosted(&c, &d), -EINVAL));
	cr_assert(eq(ptr, d, NULL));
}

Test(vpmu_host_domain, counts_hv_events_from_the_vmm_statistics)
{
	const uint16_t codes[] = {PVPMU_EV_HV_EXITS, PVPMU_EV_HV_HALTED_NS,
				  PVPMU_EV_HV_EXIT_REASON(2)};
	int fd;

	vmm.stats[VPMU_HV_STAT_EXITS]           = 100; /* before LOAD */
	vmm.stats[VPMU_HV_STAT_EXIT_REASON + 2] = 40;
	fd                                      = counting(codes, 3);
	vmm.stats[VPMU_HV_STAT_EXITS] += 5;
	vmm.stats[VPMU_HV_STAT_HALTED_NS] += 7000;
	vmm.stats[VPMU_HV_STAT_EXIT_REASON + 2] += 3;
	vmm.stats[VPMU_HV_STAT_EXIT_REASON + 3] += 1000; /* not counted */
	cr_assert(eq(int, vpmu_cpu_account(cpu0, 1000, NULL), 0));
	cr_assert(eq(u64, pmd(fd, 0), 5));
	cr_assert(eq(u64, pmd(fd, 1), 7000));
	cr_assert(eq(u64, pmd(fd, 2), 3));
	cr_assert(eq(uint, vmm.nr_reads_other_cpu, 0));
}

/* hv_cpu_ns: the vCPU thread's CPU time, next to hv_run_ns (wall time). */
Test(vpmu_host_domain, hv_cpu_time_is_the_vmm_statistic_not_run_time)
{
	const uint16_t codes[] = {PVPMU_EV_HV_RUN_NS, PVPMU_EV_HV_CPU_NS};
	int fd;

	vmm.stats[VPMU_HV_STAT_CPU_NS] = 1000000; /* before LOAD */
	fd                             = counting(codes, 2);
	/* 2 ms in KVM_RUN of which the thread got 0.5 ms of CPU. */
	vmm.stats[VPMU_HV_STAT_CPU_NS] += 500000;
	cr_assert(eq(int, vpmu_cpu_account(cpu0, 2000000, NULL), 0));
	cr_assert(eq(u64, pmd(fd, 0), 2000000));
	cr_assert(eq(u64, pmd(fd, 1), 500000));
}

Test(vpmu_host_domain, hv_run_time_comes_from_libvpmu_not_the_vmm)
{
	const uint16_t codes[] = {PVPMU_EV_HV_RUN_NS};
	int fd                 = counting(codes, 1);

	vmm.stats[VPMU_HV_STAT_HALTED_NS] = 123456;
	cr_assert(eq(int, vpmu_cpu_account(cpu0, 2500, NULL), 0));
	cr_assert(eq(u64, pmd(fd, 0), 2500));
}

Test(vpmu_host_domain, virtual_pmds_read_the_vmm_statistics)
{
	const uint16_t codes[] = {PVPMU_EV_HV_EXITS};
	int fd                 = counting(codes, 1);

	vmm.stats[VPMU_HV_STAT_EXITS]    = 11;
	vmm.stats[VPMU_HV_STAT_STEAL_NS] = 22;
	vmm.stats[VPMU_HV_STAT_IRQS]     = 33;
	cr_assert(eq(int, vpmu_cpu_account(cpu0, 1000, NULL), 0));
	cr_assert(eq(u64, pmd(fd, VPMU_PMD_VIRT_BASE + VPMU_VPMD_EXITS), 11));
	cr_assert(eq(u64, pmd(fd, VPMU_PMD_VIRT_BASE + VPMU_VPMD_STEAL), 22));
	cr_assert(eq(u64, pmd(fd, VPMU_PMD_VIRT_BASE + VPMU_VPMD_IRQS), 33));
	cr_assert(
		eq(u64, pmd(fd, VPMU_PMD_VIRT_BASE + VPMU_VPMD_RUN_NS), 1000));
}

Test(vpmu_host_domain, guest_cycles_need_the_host_tsc_rate)
{
	const char *why =
		vpmu_domain_event_unavailable(dom, PVPMU_EV_HV_GUEST_CYCLES);

	cr_assert(not(eq(ptr, (void *)why, NULL)));
	cr_assert(not(eq(ptr, strstr(why, "TSC"), NULL)), "%s", why);
	cr_assert(eq(
		ptr,
		(void *)vpmu_domain_event_unavailable(dom, PVPMU_EV_HV_EXITS),
		NULL));

	teardown();
	create(2000000); /* 2 GHz */
	cr_assert(eq(ptr,
		     (void *)vpmu_domain_event_unavailable(
			     dom, PVPMU_EV_HV_GUEST_CYCLES),
		     NULL));
}

Test(vpmu_host_domain, guest_cycles_follow_run_time_at_the_tsc_rate)
{
	const uint16_t codes[] = {PVPMU_EV_HV_GUEST_CYCLES};
	int fd;

	teardown();
	create(2000000); /* 2 GHz: 2 cycles per ns */
	fd = counting(codes, 1);
	cr_assert(eq(int, vpmu_cpu_account(cpu0, 1000, NULL), 0));
	cr_assert(eq(u64, pmd(fd, 0), 2000));
}

Test(vpmu_host_domain, overflow_notifies_through_the_host_ops)
{
	const uint16_t codes[] = {PVPMU_EV_HV_EXITS};
	struct pfarg_ctx c     = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_load l    = {.load_pid = 0};
	struct pfarg_pmc pmc   = {.reg_num   = 0,
				  .reg_flags = PFM_REGFL_OVFL_NOTIFY,
				  .reg_value =
					  VPMU_EVSEL(PVPMU_EV_EVENT(codes[0]),
						     PVPMU_EV_UMASK(codes[0]))};
	struct pfarg_pmd pd    = {.reg_num = 0, .reg_value = ~0ULL - 1};

	cr_assert(eq(int, vpmu_ctx_create(dom, &guest, &c, 1, NULL, 0), 0));
	cr_assert(eq(int, vpmu_ctx_write_pmcs(dom, &guest, c.ctx_fd, &pmc, 1),
		     0));
	cr_assert(
		eq(int, vpmu_ctx_write_pmds(dom, &guest, c.ctx_fd, &pd, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(dom, &guest, c.ctx_fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(dom, &guest, c.ctx_fd, NULL, 0), 0));
	vmm.stats[VPMU_HV_STAT_EXITS] += 2;
	cr_assert(eq(int, vpmu_cpu_account(cpu0, 1000, NULL), 0));
	cr_assert(eq(uint, vmm.nr_notes, 1));
}
