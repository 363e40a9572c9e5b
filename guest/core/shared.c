// SPDX-License-Identifier: MIT
/*
 * shared.c: the exit-free read of the per-vCPU shared page (pvpmu/abi.h,
 * struct pvpmu_shared_page), TSC extension of time-based PMDs, and the
 * small x86 helpers the fast path needs (RDTSC, vCPU index).
 *
 * The VMM writes the page while the vCPU is out of guest mode, bracketed by
 * seq going odd then even (release ordering). A reader on the same vCPU
 * can therefore only see an odd seq if it reads another vCPU's page; the
 * retry loop is bounded so that a reader never spins forever on a page the
 * VMM abandoned mid-write.
 */
#include "pvpmu_core.h"

#define SHARED_MAX_RETRIES 64

pvpmu_u64 pvpmu_rdtsc(void)
{
	pvpmu_u32 lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((pvpmu_u64)hi << 32) | lo;
}

pvpmu_u32 pvpmu_cpu_index(void)
{
	pvpmu_u32 a = 1, b, c = 0, d;

	__asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	return b >> 24;
}

pvpmu_u64 pvpmu_tsc_extend(pvpmu_u64 value, pvpmu_u64 tsc, pvpmu_u64 now,
			   pvpmu_u32 mult, pvpmu_u32 shift)
{
	unsigned __int128 d;

	if (!mult || now <= tsc)
		return value;
	d = (unsigned __int128)(now - tsc) * mult;
	/* A shift of 128 or more leaves nothing. */
	d = shift < 128 ? d >> shift : 0;
	return value + (pvpmu_u64)d;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Check the request against the page header; copy the PMD values. */
static int copy_pmds(const struct pvpmu_shared_page *sp, int fd,
		     struct pfarg_pmd *pmds, int n, pvpmu_u64 tsc_now)
{
	pvpmu_u64 mask = LOAD(sp->pmd_mask), tsc = LOAD(sp->tsc);
	pvpmu_u16 set = LOAD(sp->active_set);
	int active    = LOAD(sp->active), i;

	if (LOAD(sp->abi) != PVPMU_ABI_VERSION || LOAD(sp->fd) != fd)
		return -PVPMU_EAGAIN;
	for (i = 0; i < n; i++) {
		const struct pvpmu_shared_pmd *p = &sp->pmds[pmds[i].reg_num];
		pvpmu_u64 v;

		if (!(mask & (1ULL << pmds[i].reg_num)) ||
		    pmds[i].reg_set != set)
			return -PVPMU_EAGAIN;
		v = LOAD(p->value);
		/* Time stands still while stopped or masked (abi.h). */
		if (active)
			v = pvpmu_tsc_extend(v, tsc, tsc_now, LOAD(p->tsc_mult),
					     LOAD(p->tsc_shift));
		pmds[i].reg_value = v;
	}
	return 0;
}

static void copy_times(const struct pvpmu_shared_page *sp,
		       struct pvpmu_shared_times *t)
{
	unsigned int i;

	t->active_set = LOAD(sp->active_set);
	t->active     = LOAD(sp->active);
	t->nr_sets    = LOAD(sp->nr_sets);
	t->run_ns     = LOAD(sp->run_ns);
	if (t->nr_sets > PVPMU_SHARED_MAX_SETS)
		t->nr_sets = PVPMU_SHARED_MAX_SETS;
	for (i = 0; i < t->nr_sets; i++) {
		t->sets[i].id         = LOAD(sp->sets[i].id);
		t->sets[i].runs       = LOAD(sp->sets[i].runs);
		t->sets[i].enabled_ns = LOAD(sp->sets[i].enabled_ns);
		t->sets[i].running_ns = LOAD(sp->sets[i].running_ns);
	}
}

int pvpmu_shared_read(const struct pvpmu_shared_page *sp, int fd,
		      struct pfarg_pmd *pmds, int n, pvpmu_u64 tsc_now,
		      struct pvpmu_shared_times *times)
{
	unsigned int tries;
	pvpmu_u32 seq;
	int i, ret;

	if (!sp || !pmds)
		return -PVPMU_EFAULT;
	if (n <= 0)
		return -PVPMU_EINVAL;
	for (i = 0; i < n; i++) {
		if (pmds[i].reg_num >= PFM_MAX_PMDS)
			return -PVPMU_EINVAL;
	}
	for (tries = 0; tries < SHARED_MAX_RETRIES; tries++) {
		seq = __atomic_load_n(&sp->seq, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			__asm__ __volatile__("pause" ::: "memory");
			continue;
		}
		ret = copy_pmds(sp, fd, pmds, n, tsc_now);
		if (!ret && times)
			copy_times(sp, times);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&sp->seq, __ATOMIC_RELAXED) == seq)
			return ret;
	}
	return -PVPMU_EAGAIN;
}
