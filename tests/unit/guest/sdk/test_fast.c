// SPDX-License-Identifier: MIT
/*
 * test_fast.c: the shared-page fast read of the driver core (seqlock,
 * publication checks, TSC extension of time-based PMDs) and CPUID
 * detection parsing.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <pthread.h>
#include <stdint.h>

#include <pvpmu/pvpmu.h>

#include "pvpmu_core.h"

static struct pvpmu_shared_page page __attribute__((aligned(4096)));

static void setup(void)
{
	page = (struct pvpmu_shared_page){
		.seq        = 2,
		.abi        = PVPMU_ABI_VERSION,
		.fd         = 5,
		.active_set = 1,
		.active     = 1,
		.nr_sets    = 2,
		.pmd_mask   = 0x3 | (1ULL << 16),
		.tsc        = 1000,
		.run_ns     = 777,
	};
	page.pmds[0].value     = 100;
	page.pmds[1].value     = 5000;
	page.pmds[1].tsc_mult  = 3U << 30; /* 1.5 units per tick */
	page.pmds[1].tsc_shift = 31;
	page.pmds[16].value    = 9;
	page.sets[1]           = (struct pvpmu_shared_set){
			  .id = 1, .runs = 4, .enabled_ns = 800, .running_ns = 400};
}

TestSuite(sdk_fast, .init = setup);

static int rd(struct pfarg_pmd *p, int n, uint64_t tsc)
{
	return pvpmu_shared_read(&page, 5, p, n, tsc, NULL);
}

Test(sdk_fast, reads_published_pmds)
{
	struct pfarg_pmd p[3] = {{.reg_num = 0, .reg_set = 1},
				 {.reg_num = 1, .reg_set = 1},
				 {.reg_num = 16, .reg_set = 1}};
	struct pvpmu_shared_times t;

	cr_assert(eq(int, pvpmu_shared_read(&page, 5, p, 3, 1200, &t), 0));
	cr_assert(eq(u64, p[0].reg_value, 100));
	/* 200 ticks * 1.5 */
	cr_assert(eq(u64, p[1].reg_value, 5300));
	cr_assert(eq(u64, p[2].reg_value, 9));
	cr_assert(eq(u32, t.active_set, 1));
	cr_assert(eq(u32, t.nr_sets, 2));
	cr_assert(eq(u64, t.run_ns, 777));
	cr_assert(eq(u64, t.sets[1].running_ns, 400));
	cr_assert(eq(u64, t.sets[1].enabled_ns, 800));
}

Test(sdk_fast, no_extension_while_stopped_or_masked)
{
	struct pfarg_pmd p = {.reg_num = 1, .reg_set = 1};

	page.active = 0;
	cr_assert(eq(int, rd(&p, 1, 1200), 0));
	cr_assert(eq(u64, p.reg_value, 5000));
}

Test(sdk_fast, cannot_answer)
{
	struct pfarg_pmd p = {.reg_num = 0, .reg_set = 1};

	cr_assert(eq(int, pvpmu_shared_read(&page, 6, &p, 1, 0, NULL),
		     -PVPMU_EAGAIN));
	p.reg_set = 0;
	cr_assert(eq(int, rd(&p, 1, 0), -PVPMU_EAGAIN));
	p = (struct pfarg_pmd){.reg_num = 2, .reg_set = 1};
	cr_assert(eq(int, rd(&p, 1, 0), -PVPMU_EAGAIN));
	p.reg_num = 0;
	page.abi  = PVPMU_ABI_VERSION + 1;
	cr_assert(eq(int, rd(&p, 1, 0), -PVPMU_EAGAIN));
	page.abi = PVPMU_ABI_VERSION;
	page.seq = 3; /* the VMM never finishes writing */
	cr_assert(eq(int, rd(&p, 1, 0), -PVPMU_EAGAIN));
}

Test(sdk_fast, bad_arguments)
{
	struct pfarg_pmd p = {.reg_num = 64};

	cr_assert(eq(int, rd(&p, 1, 0), -PVPMU_EINVAL));
	p.reg_num = 0;
	cr_assert(eq(int, rd(&p, 0, 0), -PVPMU_EINVAL));
	cr_assert(eq(int, rd(NULL, 1, 0), -PVPMU_EFAULT));
	cr_assert(eq(int, pvpmu_shared_read(NULL, 5, &p, 1, 0, NULL),
		     -PVPMU_EFAULT));
	/* the SDK's fast read with no page at all */
	cr_assert(eq(int, pvpmu_read_fast(NULL, 5, &p, 1), -PVPMU_EFAULT));
}

Test(sdk_fast, tsc_extend)
{
	cr_assert(eq(u64, pvpmu_tsc_extend(10, 100, 50, 1, 0), 10));
	cr_assert(eq(u64, pvpmu_tsc_extend(10, 100, 100, 1, 0), 10));
	cr_assert(eq(u64, pvpmu_tsc_extend(10, 100, 150, 0, 0), 10));
	cr_assert(eq(u64, pvpmu_tsc_extend(10, 100, 150, 1, 0), 60));
	/* ns from a 2 GHz TSC: mult = 2^32 / 2, shift 32 */
	cr_assert(eq(u64, pvpmu_tsc_extend(0, 0, 2000000000, 1U << 31, 32),
		     1000000000));
	/* the product needs more than 64 bits */
	cr_assert(eq(u64, pvpmu_tsc_extend(0, 0, 1ULL << 63, 1U << 31, 32),
		     1ULL << 62));
	cr_assert(eq(u64, pvpmu_tsc_extend(0, 0, ~0ULL, 0xffffffffU, 32),
		     0xfffffffeffffffffULL));
	cr_assert(eq(u64, pvpmu_tsc_extend(5, 0, ~0ULL, 1, 200), 5));
}

/* A writer flips two PMDs between equal values; readers never see a mix. */
static volatile int stop;

static void *writer(void *arg)
{
	uint64_t v = 0;

	(void)arg;
	while (!stop) {
		__atomic_store_n(&page.seq, page.seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		v++;
		__atomic_store_n(&page.pmds[0].value, v, __ATOMIC_RELAXED);
		__atomic_store_n(&page.pmds[16].value, v, __ATOMIC_RELAXED);
		__atomic_store_n(&page.seq, page.seq + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

Test(sdk_fast, seqlock_never_tears)
{
	struct pfarg_pmd p[2] = {{.reg_num = 0, .reg_set = 1},
				 {.reg_num = 16, .reg_set = 1}};
	unsigned int i, ok = 0;
	pthread_t t;

	page.pmds[16].value = page.pmds[0].value;
	cr_assert(eq(int, pthread_create(&t, NULL, writer, NULL), 0));
	for (i = 0; i < 200000; i++) {
		if (rd(p, 2, 0) == 0) {
			cr_assert(eq(u64, p[0].reg_value, p[1].reg_value));
			ok++;
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	cr_assert(lt(u32, 0, ok));
}

Test(sdk_fast, detect_parse)
{
	const pvpmu_u32 sig[4] = {PVPMU_CPUID_FEATURES, PVPMU_CPUID_SIG_EBX,
				  PVPMU_CPUID_SIG_ECX, PVPMU_CPUID_SIG_EDX};
	pvpmu_u32 feat[4]      = {PVPMU_ABI_VERSION, PVPMU_FEAT_PFM, 0x600, 64};
	const pvpmu_u32 kvm[4] = {0x40000001, 0x4b4d564b, 0x564b4d56, 0x4d};
	const pvpmu_u32 low[4] = {0x40000000, PVPMU_CPUID_SIG_EBX,
				  PVPMU_CPUID_SIG_ECX, PVPMU_CPUID_SIG_EDX};
	struct pvpmu_features f;

	cr_assert(eq(int, pvpmu_detect_parse(sig, feat, &f), 0));
	cr_assert(eq(u32, f.features, PVPMU_FEAT_PFM));
	cr_assert(eq(u32, f.port_base, 0x600));
	cr_assert(eq(u32, f.hc_max, 64));
	cr_assert(eq(int, pvpmu_detect_parse(kvm, feat, &f), -PVPMU_ENODEV));
	cr_assert(eq(int, pvpmu_detect_parse(low, feat, &f), -PVPMU_ENODEV));
	feat[0] = PVPMU_ABI_VERSION + 1;
	cr_assert(eq(int, pvpmu_detect_parse(sig, feat, &f), -PVPMU_ENOTSUP));
	cr_assert(eq(u32, f.abi, PVPMU_ABI_VERSION + 1));
}
