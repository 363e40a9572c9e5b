// SPDX-License-Identifier: MIT
/*
 * cpu.c: the vCPU entry points: creating and finding a vCPU's PMU object,
 * and what the VMM calls around each KVM_RUN (accounting an exit, the
 * next deadline, the guest context's snapshot), each under the domain
 * lock over its mechanism in mech/account.c. No handle is looked up here:
 * the VMM holds the cpu.
 */
#include "cmd_priv.h"

#include <errno.h>
#include <stdlib.h>

#include "vpmu_mech.h"

int vpmu_cpu_create(struct vpmu_domain *d, uint32_t index,
		    struct vpmu_cpu **out)
{
	struct vpmu_cpu *cpu;
	int ret = 0;

	if (index >= VPMU_MAX_CPUS)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	if (d->cpus[index]) {
		ret = -EEXIST;
		goto out_unlock;
	}
	cpu = calloc(1, sizeof(*cpu));
	if (!cpu) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	cpu->dom       = d;
	cpu->index     = index;
	d->cpus[index] = cpu;
	if (index >= d->cpus_end)
		d->cpus_end = index + 1;
	*out = cpu;
out_unlock:
	pthread_mutex_unlock(&d->lock);
	return ret;
}

/* The cpu table only grows; the pointer stays valid with the domain. */
struct vpmu_cpu *vpmu_cpu_get(struct vpmu_domain *d, uint32_t index)
{
	struct vpmu_cpu *cpu = NULL;

	if (index >= VPMU_MAX_CPUS)
		return NULL;
	pthread_mutex_lock(&d->lock);
	cpu = d->cpus[index];
	pthread_mutex_unlock(&d->lock);
	return cpu;
}

uint64_t vpmu_cpu_run_ns(struct vpmu_cpu *cpu)
{
	uint64_t ns;

	pthread_mutex_lock(&cpu->dom->lock);
	ns = cpu->run_ns;
	pthread_mutex_unlock(&cpu->dom->lock);
	return ns;
}

void vpmu_cpu_set_idle(struct vpmu_cpu *cpu, bool idle)
{
	pthread_mutex_lock(&cpu->dom->lock);
	cpu->is_idle = idle;
	pthread_mutex_unlock(&cpu->dom->lock);
}

int vpmu_cpu_account(struct vpmu_cpu *cpu, uint64_t run_ns_delta,
		     const struct vpmu_guest_state *gs)
{
	struct vpmu_domain *d = cpu->dom;
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = vpmu_cpu_fold(cpu, run_ns_delta, gs);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

uint64_t vpmu_cpu_next_deadline(struct vpmu_cpu *cpu)
{
	uint64_t when;

	pthread_mutex_lock(&cpu->dom->lock);
	when = vpmu_cpu_deadline(cpu);
	pthread_mutex_unlock(&cpu->dom->lock);
	return when;
}

int vpmu_cpu_snapshot(struct vpmu_cpu *cpu, struct vpmu_snapshot *snap)
{
	int ret;

	pthread_mutex_lock(&cpu->dom->lock);
	ret = vpmu_cpu_fill_snapshot(cpu, snap);
	pthread_mutex_unlock(&cpu->dom->lock);
	return ret;
}
