// SPDX-License-Identifier: MIT
/*
 * test_arch.c: the architectural PMU models' MSR layouts (vpmu/arch/)
 * without KVM: a domain whose count source is a replay backend, one vCPU,
 * the model driven by rdmsr/wrmsr calls as the VMM's MSR exits would, and
 * notifications fed back to vpmu_arch_overflow() as the VMM does.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "arch/arch_priv.h"
#include "backends/replay.h"
#include "fake_backend.h"
#include "vpmu_core.h"

#define EV_A     PVPMU_EV_HV_MSR_READS /* scripted by replay here */
#define EV_INSNS 0x00c0
#define EV_TSC   PVPMU_EV_HV_GUEST_CYCLES /* reference cycles */
#define EN_OS    ((1ULL << 22) | (1ULL << 17))
#define INT      (1ULL << 20)
#define MASK48   ((1ULL << 48) - 1)
#define I_PMC0   0xc1U
#define I_SEL0   0x186U
#define I_FIXED0 0x309U
#define I_CAPS   0x345U
#define I_FCTRL  0x38dU
#define I_STATUS 0x38eU
#define I_GCTRL  0x38fU
#define I_OVF    0x390U
#define I_APMC0  0x4c1U
#define A_SEL(i) (0xc0010200U + 2 * (i))
#define A_CTR(i) (0xc0010201U + 2 * (i))
#define A_K7SEL0 0xc0010000U
#define A_K7CTR0 0xc0010004U
#define A_STATUS 0xc0000300U
#define A_CTL    0xc0000301U
#define A_CLR    0xc0000302U
#define A_SET    0xc0000303U

static struct vpmu_replay *rp;
static struct vpmu_backend be;
static struct vpmu_domain *dom;
static struct vpmu_cpu *cpu;
static struct vpmu_arch_pmu *pmu;
static unsigned int pmis, nr_notes;

static void note(void *opaque, const struct vpmu_notify *n)
{
	(void)opaque;
	nr_notes++;
	if (pmu && n->owner == VPMU_OWNER_ARCH &&
	    n->handle == vpmu_arch_handle(pmu) &&
	    (vpmu_arch_overflow(pmu, n->ovfl_pmds) & VPMU_ARCH_PMI))
		pmis++;
}

static void build(const char *model, const uint16_t *codes, unsigned int n)
{
	struct vpmu_domain_config cfg = {0};
	unsigned int i;

	cr_assert(eq(int, vpmu_replay_create(&rp), 0));
	for (i = 0; i < n; i++)
		cr_assert(
			eq(int, vpmu_replay_add_event(rp, codes[i], "ev"), 0));
	vpmu_replay_instance(rp, &be);
	vpmu_limits_default(&cfg.limits);
	cfg.limits.max_contexts  = 2;
	cfg.limits.arch_contexts = 1;
	cfg.backends             = &be;
	cfg.nr_backends          = 1;
	cfg.notify               = note;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &dom), 0));
	cr_assert(eq(int, vpmu_cpu_create(dom, 0, &cpu), 0));
	cr_assert(eq(int,
		     vpmu_arch_create(dom, cpu, vpmu_arch_find(model), &pmu),
		     0));
	pmis = nr_notes = 0;
}

static void build_intel(void)
{
	static const uint16_t codes[] = {EV_A, EV_INSNS, EV_TSC};

	build("intel-v2", codes, 3);
}

static void build_amd_v2(void)
{
	static const uint16_t codes[] = {EV_A};

	build("amd-v2", codes, 1);
}

static void build_amd_core(void)
{
	static const uint16_t codes[] = {EV_A};

	build("amd-core", codes, 1);
}

static void teardown(void)
{
	vpmu_arch_destroy(pmu);
	vpmu_domain_destroy(dom);
	vpmu_replay_destroy(rp);
	pmu = NULL;
}

static uint64_t rd(uint32_t msr)
{
	uint64_t v = 0xdead;

	cr_assert(eq(int, vpmu_arch_rdmsr(pmu, msr, &v), 0), "rdmsr 0x%x", msr);
	return v;
}

static void wr(uint32_t msr, uint64_t v)
{
	cr_assert(eq(int, vpmu_arch_wrmsr(pmu, msr, v), 0), "wrmsr 0x%x", msr);
}

/* (n) events of EV_A on the next accounting slice, then account it. */
static void count(uint64_t n)
{
	cr_assert(eq(int, vpmu_replay_set_steps(rp, 0, EV_A, &n, 1), 0));
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
}

TestSuite(vpmu_arch_model);

Test(vpmu_arch_model, names_and_auto)
{
	cr_assert(eq(str, (char *)vpmu_arch_name(vpmu_arch_find("intel-v2")),
		     "intel-v2"));
	cr_assert(eq(ptr, (void *)vpmu_arch_find("amd-core"),
		     (void *)&vpmu_amd_core_ops));
	cr_assert(eq(ptr, (void *)vpmu_arch_find("none"), NULL));
	cr_assert(eq(ptr, (void *)vpmu_arch_find("auto"), NULL));
	cr_assert(eq(ptr, (void *)vpmu_arch_auto("GenuineIntel"),
		     (void *)&vpmu_intel_v2_ops));
	cr_assert(eq(ptr, (void *)vpmu_arch_auto("AuthenticAMD"),
		     (void *)&vpmu_amd_v2_ops));
	cr_assert(eq(ptr, (void *)vpmu_arch_auto("HygonGenuine"),
		     (void *)&vpmu_amd_v2_ops));
	cr_assert(eq(ptr, (void *)vpmu_arch_auto("CentaurHauls"), NULL));
	cr_assert(vpmu_arch_masks_lvtpc(&vpmu_intel_v2_ops));
	cr_assert(not(vpmu_arch_masks_lvtpc(&vpmu_amd_v2_ops)));
}

/* Every range a model claims is one vmm/core/msr_dispatch.c traps, exactly. */
Test(vpmu_arch_model, ranges_are_the_trapped_ranges)
{
	static const struct vpmu_arch_range trapped[] = {
		{0xc1, 8},       {0x186, 8},       {0x309, 3},
		{0x345, 1},      {0x38d, 4},       {0x4c1, 8},
		{0xc0010000, 8}, {0xc0010200, 12}, {0xc0000300, 4},
	};
	const struct vpmu_arch_ops *m[] = {
		&vpmu_intel_v2_ops, &vpmu_amd_core_ops, &vpmu_amd_v2_ops};
	const struct vpmu_arch_range *r;
	unsigned int i, j, k, n;

	for (i = 0; i < 3; i++) {
		n = vpmu_arch_ranges(m[i], &r);
		cr_assert(gt(u32, n, 0));
		for (j = 0; j < n; j++) {
			for (k = 0; k < 9; k++) {
				if (trapped[k].base == r[j].base &&
				    trapped[k].count == r[j].count)
					break;
			}
			cr_assert(lt(u32, k, 9), "%s range 0x%x", m[i]->name,
				  r[j].base);
		}
	}
}

/* One MSR access and its outcome, libpfm4 validate style. */
struct msr_case {
	int line;
	uint32_t msr;
	bool is_write;
	uint64_t val; /* written, or expected when read */
	int ret;      /* 0 or -EPERM (#GP) */
};

#define R(m, v)                                                                \
	{                                                                      \
		__LINE__, m, false, v, 0                                       \
	}
#define W(m, v)                                                                \
	{                                                                      \
		__LINE__, m, true, v, 0                                        \
	}
#define RGP(m)                                                                 \
	{                                                                      \
		__LINE__, m, false, 0, -EPERM                                  \
	}
#define WGP(m, v)                                                              \
	{                                                                      \
		__LINE__, m, true, v, -EPERM                                   \
	}

static void run_cases(const struct msr_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = 0;
		int ret;

		if (c[i].is_write) {
			ret = vpmu_arch_wrmsr(pmu, c[i].msr, c[i].val);
		} else {
			ret = vpmu_arch_rdmsr(pmu, c[i].msr, &v);
			if (!c[i].ret)
				cr_assert(eq(u64, v, c[i].val),
					  "row at line %d", c[i].line);
		}
		cr_assert(eq(int, ret, c[i].ret), "row at line %d", c[i].line);
	}
}

Test(vpmu_arch_model, intel_reset_values_and_gp_rules, .init = build_intel,
     .fini = teardown)
{
	static const struct msr_case cases[] = {
		R(I_GCTRL, 0xf),
		R(I_STATUS, 0),
		R(I_FCTRL, 0),
		R(I_CAPS, 1ULL << 13),
		R(I_SEL0, 0),
		R(I_PMC0 + 3, 0),
		/* Counters that do not exist, except dropped PERFCTR0/1. */
		RGP(I_PMC0 + 4),
		WGP(I_PMC0 + 7, 0),
		RGP(I_SEL0 + 4),
		WGP(I_APMC0 + 4, 0),
		RGP(I_FIXED0 + 3),
		RGP(0xc0010000),
		/* Reserved bits. */
		WGP(I_SEL0, 1ULL << 32),
		WGP(I_SEL0, 1ULL << 21),
		W(I_SEL0, 1ULL << 19),
		R(I_SEL0, 1ULL << 19),
		W(I_SEL0, 0),
		WGP(I_FCTRL, 0x4),
		WGP(I_FCTRL, 0x1000),
		W(I_FCTRL, 0xb0b),
		R(I_FCTRL, 0xb0b),
		W(I_FCTRL, 0),
		WGP(I_GCTRL, 0x10),
		WGP(I_GCTRL, 1ULL << 35),
		W(I_GCTRL, 0x70000000fULL),
		R(I_GCTRL, 0x70000000fULL),
		WGP(I_OVF, 0x10),
		W(I_OVF, 3ULL << 62),
		R(I_OVF, 0),
		WGP(I_STATUS, 0),
		WGP(I_CAPS, 0),
		/* Full width, sign extension, fixed counters. */
		WGP(I_APMC0, 1ULL << 48),
		W(I_APMC0, MASK48),
		R(I_PMC0, MASK48),
		W(I_PMC0, 0x80000000),
		R(I_APMC0, 0xffff80000000ULL),
		W(I_PMC0, 0x17fffffffULL),
		R(I_PMC0, 0x7fffffff),
		W(I_FIXED0, ~0ULL),
		R(I_FIXED0, MASK48),
		/* Enabling what no backend counts: #GP (0x3c: cycles). */
		WGP(I_SEL0, 0x3c | EN_OS),
		W(I_SEL0, 0x3c | (1ULL << 17)),
		W(I_SEL0, EV_INSNS | EN_OS),
		W(I_SEL0, 0x013c | EN_OS),
		WGP(I_FCTRL, 0x10),
		W(I_FCTRL, 0x301),
	};

	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* pmu_counters_test: KVM drops writes to PERFCTR0/1 it does not have. */
Test(vpmu_arch_model, intel_perfctr0_1_are_dropped_not_gp, .init = build_intel,
     .fini = teardown)
{
	static const struct msr_case cases[] = {
		W(I_PMC0 + 1, 0xffff), R(I_PMC0 + 1, 0),   RGP(I_APMC0 + 1),
		RGP(I_SEL0 + 1),       WGP(I_PMC0 + 2, 0), RGP(I_PMC0 + 2),
		W(I_PMC0, 0xffff),     R(I_PMC0, 0xffff),
	};

	pmu->nr_gp = 1;
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(vpmu_arch_model, intel_counts_wrap_at_48_bits_and_interrupt,
     .init = build_intel, .fini = teardown)
{
	wr(I_SEL0, EV_A | EN_OS | INT);
	count(100);
	cr_assert(eq(u64, rd(I_PMC0), 100));
	/* GLOBAL_CTRL gates; EVTSEL keeps the guest's value. */
	wr(I_GCTRL, 0);
	count(50);
	cr_assert(eq(u64, rd(I_PMC0), 100));
	cr_assert(eq(u64, rd(I_SEL0), EV_A | EN_OS | INT));
	wr(I_GCTRL, 1);
	wr(I_APMC0, MASK48 - 4);
	count(10);
	cr_assert(eq(u64, rd(I_PMC0), 5), "wrapped to the skid");
	cr_assert(eq(u64, rd(I_STATUS), 1));
	cr_assert(eq(u32, pmis, 1));
	wr(I_OVF, 1);
	cr_assert(eq(u64, rd(I_STATUS), 0));
	/* INT clear: status only. */
	wr(I_SEL0, EV_A | EN_OS);
	wr(I_APMC0, MASK48);
	count(1);
	cr_assert(eq(u64, rd(I_STATUS), 1));
	cr_assert(eq(u32, pmis, 1));
	cr_assert(eq(u64, rd(I_PMC0), 0));
}

Test(vpmu_arch_model, intel_fixed_ctr2_counts_reference_cycles,
     .init = build_intel, .fini = teardown)
{
	uint64_t n = 777;

	cr_assert(eq(int, vpmu_replay_set_steps(rp, 0, EV_TSC, &n, 1), 0));
	wr(I_FCTRL, 0xb00); /* ctr2: OS, USR, PMI */
	wr(I_GCTRL, 1ULL << 34);
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
	cr_assert(eq(u64, rd(I_FIXED0 + 2), 777));
	wr(I_FIXED0 + 2, MASK48);
	n = 2;
	cr_assert(eq(int, vpmu_replay_set_steps(rp, 0, EV_TSC, &n, 1), 0));
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
	cr_assert(eq(u64, rd(I_STATUS), 1ULL << 34));
	cr_assert(eq(u32, pmis, 1));
}

Test(vpmu_arch_model, intel_cpuid_matches_what_the_host_counts,
     .init = build_intel, .fini = teardown)
{
	struct vpmu_arch_cpuid r = {0};

	cr_assert(vpmu_arch_cpuid(pmu, 0xa, &r));
	cr_assert(eq(u32, r.eax, 0x07300402));
	/* Instructions (bit 1) and reference cycles (bit 2) count here. */
	cr_assert(eq(u32, r.ebx, 0x7f & ~0x6U));
	cr_assert(eq(u32, r.edx, 0x603));
	r = (struct vpmu_arch_cpuid){0};
	cr_assert(vpmu_arch_cpuid(pmu, 1, &r));
	cr_assert(eq(u32, r.ecx, 1U << 15));
	r = (struct vpmu_arch_cpuid){.ecx = ~0U};
	cr_assert(vpmu_arch_cpuid(pmu, 0x80000001, &r));
	cr_assert(eq(u32, r.ecx, ~(1U << 23)));
	r = (struct vpmu_arch_cpuid){.eax = 5};
	cr_assert(not(vpmu_arch_cpuid(pmu, 0xb, &r)));
	cr_assert(eq(u32, r.eax, 5));
}

/* The ARCH context is invisible to the guest and costs it no slot. */
Test(vpmu_arch_model, arch_context_is_separate, .init = build_intel,
     .fini = teardown)
{
	struct vpmu_caller guest = {.owner = VPMU_OWNER_GUEST, .cpu = cpu};
	struct pfarg_pmd pmd     = {.reg_num = 0};
	struct pfarg_ctx c       = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_load load   = {.load_pid = 0};

	cr_assert(eq(
		int,
		vpmu_ctx_read_pmds(dom, &guest, vpmu_arch_handle(pmu), &pmd, 1),
		-EBADF));
	/* max_contexts is 2: both are the guest's. */
	cr_assert(eq(int, vpmu_ctx_create(dom, &guest, &c, 1, NULL, 0), 0));
	cr_assert(eq(int, vpmu_ctx_load(dom, &guest, c.ctx_fd, &load, 1), 0));
	cr_assert(eq(int, vpmu_ctx_create(dom, &guest, &c, 1, NULL, 0), 0));
	cr_assert(
		eq(int, vpmu_ctx_create(dom, &guest, &c, 1, NULL, 0), -ENOMEM));
	wr(I_SEL0, EV_A | EN_OS);
	count(3);
	cr_assert(eq(u64, rd(I_PMC0), 3));
}

Test(vpmu_arch_model, amd_v2_layout_and_global_registers, .init = build_amd_v2,
     .fini = teardown)
{
	static const struct msr_case cases[] = {
		R(A_CTL, 0x3f),
		R(A_STATUS, 0),
		R(A_SEL(5), 0),
		RGP(A_SEL(6)),
		RGP(I_PMC0),
		WGP(I_SEL0, 0),
		RGP(I_GCTRL),
		/* K7 aliases of counters 0-3. */
		W(A_K7CTR0 + 3, 0x1234),
		R(A_CTR(3), 0x1234),
		W(A_SEL(2), 0x76 | (1ULL << 17)),
		R(A_K7SEL0 + 2, 0x76 | (1ULL << 17)),
		W(A_CTR(0), ~0ULL),
		R(A_K7CTR0, MASK48),
		/* Reserved bits, extended events. */
		WGP(A_SEL(0), 1ULL << 21),
		WGP(A_SEL(0), 1ULL << 19),
		WGP(A_SEL(0), 1ULL << 41),
		WGP(A_SEL(0), 1ULL << 36),
		W(A_SEL(0), 1ULL << 35),
		WGP(A_SEL(0), (1ULL << 35) | EN_OS),
		WGP(A_SEL(0), 0x76 | EN_OS),
		W(A_SEL(0), EV_A | EN_OS),
		/* PerfMonV2 globals. */
		WGP(A_CTL, 0x40),
		WGP(A_STATUS, 0),
		W(A_CLR, 0x40), /* any value, as KVM (Linux writes ~0) */
		WGP(A_SET, 0x40),
		W(A_SET, 0x21),
		R(A_STATUS, 0x21),
		R(A_SET, 0),
		R(A_CLR, 0),
		W(A_CLR, 0x1),
		R(A_STATUS, 0x20),
		/* LbrFreeze (58): Linux 6.1 clears it with the counters. */
		W(A_CLR, (1ULL << 58) | 0x3f),
		R(A_STATUS, 0),
		W(A_SET, 0x3),
		W(A_CLR, ~0ULL),
		R(A_STATUS, 0),
		W(A_SET, 1ULL << 58),
		R(A_STATUS, 0),
	};

	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(vpmu_arch_model, amd_v2_overflow_sets_status, .init = build_amd_v2,
     .fini = teardown)
{
	wr(A_SEL(4), EV_A | EN_OS | INT);
	wr(A_CTR(4), MASK48 - 1);
	count(3);
	cr_assert(eq(u64, rd(A_CTR(4)), 1));
	cr_assert(eq(u64, rd(A_STATUS), 1ULL << 4));
	cr_assert(eq(u32, pmis, 1));
	wr(A_CTL, 0x2f); /* counter 4 off globally */
	count(3);
	cr_assert(eq(u64, rd(A_CTR(4)), 1));
}

Test(vpmu_arch_model, amd_core_has_no_global_registers, .init = build_amd_core,
     .fini = teardown)
{
	struct vpmu_arch_cpuid r             = {0};
	static const struct msr_case cases[] = {
		RGP(A_STATUS),
		WGP(A_CTL, 0),
		RGP(A_SET),
		W(A_SEL(5), 0),
	};

	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
	wr(A_SEL(0), EV_A | EN_OS | INT);
	wr(A_CTR(0), MASK48);
	count(2);
	cr_assert(eq(u64, rd(A_CTR(0)), 1));
	cr_assert(eq(u32, pmis, 1));
	cr_assert(vpmu_arch_cpuid(pmu, 0x80000001, &r));
	cr_assert(eq(u32, r.ecx, 1U << 23));
	r = (struct vpmu_arch_cpuid){.eax = 1, .ebx = 6};
	cr_assert(vpmu_arch_cpuid(pmu, 0x80000022, &r));
	cr_assert(eq(u32, r.eax, 0));
	cr_assert(eq(u32, r.ebx, 0));
	r = (struct vpmu_arch_cpuid){.eax = 0x07300402};
	vpmu_arch_cpuid_none(0xa, &r);
	cr_assert(eq(u32, r.eax, 0));
}

/*
 * A backend that cannot open the event when the counter is enabled (the
 * perf backend out of counters, say): the WRMSR #GPs and changes nothing.
 */
Test(vpmu_arch_model, refused_enable_leaves_the_register_unchanged)
{
	struct vpmu_domain_config cfg = {0};
	struct vpmu_backend fb        = {.ops = &fake_backend};

	vpmu_limits_default(&cfg.limits);
	cfg.limits.arch_contexts = 1;
	cfg.backends             = &fb;
	cfg.nr_backends          = 1;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &dom), 0));
	cr_assert(eq(int, vpmu_cpu_create(dom, 0, &cpu), 0));
	cr_assert(eq(int, vpmu_arch_create(dom, cpu, &vpmu_intel_v2_ops, &pmu),
		     0));
	wr(I_SEL0, FAKE_EV_CODE | (1ULL << 17));
	fake_backend_open_ret = -EBUSY;
	cr_assert(eq(int, vpmu_arch_wrmsr(pmu, I_SEL0, FAKE_EV_CODE | EN_OS),
		     -EPERM));
	cr_assert(eq(u64, rd(I_SEL0), FAKE_EV_CODE | (1ULL << 17)));
	cr_assert(eq(u64, pmu->prog[0], 0), "libvpmu's PMC0 rolled back too");
	cr_assert(eq(int, vpmu_arch_wrmsr(pmu, I_GCTRL, 0), 0));
	fake_backend_open_ret = 0;
	wr(I_SEL0, FAKE_EV_CODE | EN_OS);
	/* GLOBAL_CTRL 0 holds it off: enabling globally opens it now. */
	fake_backend_open_ret = -EBUSY;
	cr_assert(eq(int, vpmu_arch_wrmsr(pmu, I_GCTRL, 1), -EPERM));
	cr_assert(eq(u64, rd(I_GCTRL), 0));
	fake_backend_open_ret = 0;
	wr(I_GCTRL, 1);
	fake_backend_next_count = 9;
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
	fake_backend_next_count = 0; /* every read adds it */
	cr_assert(eq(u64, rd(I_PMC0), 9));
	vpmu_arch_destroy(pmu);
	vpmu_domain_destroy(dom);
	pmu = NULL;
}

/* libvpmu's overflow throttle never masks an ARCH context. */
Test(vpmu_arch_model, throttle_does_not_apply, .fini = teardown)
{
	struct vpmu_domain_config cfg = {0};

	cr_assert(eq(int, vpmu_replay_create(&rp), 0));
	cr_assert(eq(int, vpmu_replay_add_event(rp, EV_A, "ev"), 0));
	vpmu_replay_instance(rp, &be);
	vpmu_limits_default(&cfg.limits);
	cfg.limits.arch_contexts    = 1;
	cfg.limits.max_ovfl_per_sec = 1;
	cfg.backends                = &be;
	cfg.nr_backends             = 1;
	cfg.notify                  = note;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &dom), 0));
	cr_assert(eq(int, vpmu_cpu_create(dom, 0, &cpu), 0));
	cr_assert(eq(int, vpmu_arch_create(dom, cpu, &vpmu_amd_core_ops, &pmu),
		     0));
	pmis = 0;
	wr(A_SEL(0), EV_A | EN_OS | INT);
	wr(A_CTR(0), MASK48);
	count(1);
	wr(A_CTR(0), MASK48);
	count(1);
	wr(A_CTR(0), MASK48);
	count(5);
	cr_assert(eq(u32, pmis, 3));
	cr_assert(eq(u64, rd(A_CTR(0)), 4));
}

/*
 * A source that counts host time, as the vCPU thread's task-clock does:
 * opening and closing an event cost host time (perf_event_open(2),
 * close(2)), which the events already open count. It can rebase.
 */
#define EV_CLOCK  0x0042
#define HOST_COST 1000ULL /* host ns per open or close */

static uint64_t host_ns;

static int clock_describe(const struct vpmu_backend *b, uint16_t code,
			  struct vpmu_event_info *info)
{
	(void)b;
	if (code != EV_CLOCK)
		return -ENOENT;
	if (info)
		*info = (struct vpmu_event_info){.code = code, .name = "clk"};
	return 0;
}

static int clock_enumerate(const struct vpmu_backend *b, unsigned int idx,
			   struct vpmu_event_info *info)
{
	return idx ? -ENOENT : clock_describe(b, EV_CLOCK, info);
}

static int clock_open(struct vpmu_bevent *e, uint64_t now_ns)
{
	(void)now_ns;
	host_ns += HOST_COST;
	e->scratch[0] = host_ns;
	return 0;
}

static void clock_close(struct vpmu_bevent *e)
{
	(void)e;
	host_ns += HOST_COST;
}

static int clock_read(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta)
{
	(void)now_ns;
	*delta        = host_ns - e->scratch[0];
	e->scratch[0] = host_ns;
	return 0;
}

static int clock_rebase(struct vpmu_bevent *e, uint64_t now_ns)
{
	(void)now_ns;
	e->scratch[0] = host_ns;
	return 0;
}

static const struct vpmu_backend_ops clock_ops = {
	.name      = "clock",
	.describe  = clock_describe,
	.enumerate = clock_enumerate,
	.open      = clock_open,
	.close     = clock_close,
	.read      = clock_read,
	.rebase    = clock_rebase,
};

static struct vpmu_backend clock_be = {.ops = &clock_ops};

static void build_clock(const struct vpmu_arch_ops *ops)
{
	struct vpmu_domain_config cfg = {0};

	vpmu_limits_default(&cfg.limits);
	cfg.limits.max_contexts  = 2;
	cfg.limits.arch_contexts = 1;
	cfg.backends             = &clock_be;
	cfg.nr_backends          = 1;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &dom), 0));
	cr_assert(eq(int, vpmu_cpu_create(dom, 0, &cpu), 0));
	if (ops)
		cr_assert(eq(int, vpmu_arch_create(dom, cpu, ops, &pmu), 0));
	host_ns = 0;
}

static void teardown_clock(void)
{
	if (pmu)
		vpmu_arch_destroy(pmu);
	vpmu_domain_destroy(dom);
	pmu = NULL;
}

/*
 * The counters one GLOBAL_CTL write starts (Linux enables a perf group
 * that way) count the same window: not from each one's own open, the
 * later opens being counted by the earlier events; and stop at one point,
 * not each after the previous one's close.
 */
Test(vpmu_arch_model, one_global_write_starts_and_stops_together,
     .fini = teardown_clock)
{
	build_clock(&vpmu_amd_v2_ops);
	wr(A_CTL, 0);
	wr(A_SEL(0), EV_CLOCK | EN_OS);
	wr(A_SEL(1), EV_CLOCK | EN_OS);
	wr(A_SEL(2), EV_CLOCK | EN_OS);
	wr(A_CTL, 0x7);
	host_ns += 5000; /* the guest runs */
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
	cr_assert(eq(u64, rd(A_CTR(0)), 5000));
	cr_assert(eq(u64, rd(A_CTR(1)), 5000));
	cr_assert(eq(u64, rd(A_CTR(2)), 5000));
	host_ns += 7000;
	wr(A_CTL, 0);
	host_ns += 3000; /* stopped */
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
	cr_assert(eq(u64, rd(A_CTR(0)), 12000));
	cr_assert(eq(u64, rd(A_CTR(1)), 12000));
	cr_assert(eq(u64, rd(A_CTR(2)), 12000));
}

/*
 * Spec 3.7.6: a time switch opens every counter of the next set while the
 * context counts: they count from one point too.
 */
Test(vpmu_arch_model, set_switch_opens_counters_from_one_point,
     .fini = teardown_clock)
{
	struct vpmu_caller host    = {.owner = VPMU_OWNER_HOST};
	struct pfarg_ctx pc        = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	struct pfarg_load load     = {.load_pid = 0};
	struct pfarg_setdesc sd[2] = {
		{.set_id      = 0,
		 .set_flags   = PFM_SETFL_TIME_SWITCH,
		 .set_timeout = {.tv_nsec = 1000000}},
		{.set_id      = 1,
		 .set_flags   = PFM_SETFL_TIME_SWITCH,
		 .set_timeout = {.tv_sec = 10}},
	};
	struct pfarg_pmc pmc[2] = {
		{.reg_num   = 0,
		 .reg_set   = 1,
		 .reg_value = PVPMU_EVSEL(EV_CLOCK, 0)},
		{.reg_num   = 1,
		 .reg_set   = 1,
		 .reg_value = PVPMU_EVSEL(EV_CLOCK, 0)},
	};
	struct pfarg_pmd pmd[2] = {{.reg_num = 0, .reg_set = 1},
				   {.reg_num = 1, .reg_set = 1}};

	build_clock(NULL);
	cr_assert(eq(int, vpmu_ctx_create(dom, &host, &pc, 1, NULL, 0), 0));
	cr_assert(eq(int, vpmu_ctx_create_evtsets(dom, &host, pc.ctx_fd, sd, 2),
		     0));
	cr_assert(
		eq(int, vpmu_ctx_write_pmcs(dom, &host, pc.ctx_fd, pmc, 2), 0));
	cr_assert(eq(int, vpmu_ctx_load(dom, &host, pc.ctx_fd, &load, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(dom, &host, pc.ctx_fd, NULL, 0), 0));
	cr_assert(eq(int, vpmu_cpu_account(cpu, 2000000, NULL), 0));
	host_ns += 5000; /* in set 1 */
	cr_assert(eq(int, vpmu_cpu_account(cpu, 1000, NULL), 0));
	cr_assert(
		eq(int, vpmu_ctx_read_pmds(dom, &host, pc.ctx_fd, pmd, 2), 0));
	cr_assert(eq(u64, pmd[0].reg_value, 5000));
	cr_assert(eq(u64, pmd[1].reg_value, 5000));
	cr_assert(eq(int, vpmu_ctx_destroy(dom, &host, pc.ctx_fd), 0));
}
