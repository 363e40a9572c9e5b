// SPDX-License-Identifier: MIT
/*
 * domain.c: the per-VM object: limits, creation and teardown, and the
 * domain-wide commands PFM_GET_CONFIG/PFM_SET_CONFIG (spec 3.1.16,
 * 3.1.17).
 */
#include "vpmu_core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_priv.h"
#include "vpmu_mech.h"

void vpmu_limits_default(struct vpmu_limits *l)
{
	*l = (struct vpmu_limits){
		.max_contexts      = 64,
		.host_contexts     = 64,
		.max_sets          = 16,
		.msgq_depth        = 64,
		.counter_width     = 48,
		.arg_size_max      = VPMU_PAGE_SIZE,
		.smpl_mem_max      = 4ULL << 20,
		.host_smpl_mem_max = 4ULL << 20,
		.timer_gran_ns     = 1000000, /* 1 ms */
	};
}

/*
 * Limits the rest of the library relies on: at least one context, set and
 * message; a width the emulation supports; a vector of at least one page
 * (3.1.16: cf_arg_size_max "cannot be smaller than the smallest page").
 */
static int check_limits(const struct vpmu_limits *l)
{
	if (l->max_contexts == 0 ||
	    (uint64_t)l->max_contexts + l->host_contexts + l->arch_contexts >
		    65535)
		return -EINVAL;
	if (l->max_sets == 0 || l->msgq_depth == 0 || l->timer_gran_ns == 0)
		return -EINVAL;
	if (l->counter_width < 8 || l->counter_width > 64)
		return -EINVAL;
	if (l->arg_size_max < VPMU_PAGE_SIZE)
		return -EINVAL;
	return 0;
}

int vpmu_domain_create(const struct vpmu_domain_config *cfg,
		       struct vpmu_domain **out)
{
	struct vpmu_domain *d;
	int ret;

	ret = check_limits(&cfg->limits);
	if (ret)
		return ret;
	if (cfg->nr_backends && !cfg->backends)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->cfg = *cfg;
	d->pmu = cfg->pmu ? cfg->pmu : &vpmu_pmu_default;
	if (d->pmu->nr_counters > VPMU_MAX_COUNTERS) {
		ret = -EINVAL;
		goto out_free;
	}
	d->width_mask = cfg->limits.counter_width == 64
				? ~0ULL
				: VPMU_BIT(cfg->limits.counter_width) - 1;
	vpmu_set_blank_init(d);
	d->sys_gid    = PFM_GROUP_ANY;
	d->thread_gid = PFM_GROUP_ANY;
	d->ctx        = calloc(vpmu_nr_slots(d), sizeof(*d->ctx));
	d->cpus       = calloc(VPMU_MAX_CPUS, sizeof(*d->cpus));
	if (!d->ctx || !d->cpus) {
		ret = -ENOMEM;
		goto out_free_tables;
	}
	ret = -pthread_mutex_init(&d->lock, NULL);
	if (ret)
		goto out_free_tables;
	*out = d;
	return 0;

out_free_tables:
	free(d->cpus);
	free(d->ctx);
out_free:
	free(d);
	return ret;
}

/*
 * Contexts first (they reference cpus and free their sampling buffers),
 * then the cpus. No notification is sent while tearing down.
 */
void vpmu_domain_destroy(struct vpmu_domain *d)
{
	uint32_t i;

	if (!d)
		return;
	/*
	 * Up to the highest slot and vCPU used only: a VM has a few, and a
	 * scan of every slot or 4096 free(NULL) were most of a short-lived
	 * domain's cost under ASan and coverage tracing.
	 */
	for (i = 0; i < d->ctx_end; i++) {
		if (d->ctx[i])
			vpmu_ctx_free(d->ctx[i]);
	}
	for (i = 0; i < d->cpus_end; i++)
		free(d->cpus[i]);
	pthread_mutex_destroy(&d->lock);
	free(d->cpus);
	free(d->ctx);
	if (d->cfg.release)
		d->cfg.release(d->cfg.owner);
	free(d);
}

int vpmu_domain_backends_run(struct vpmu_domain *d, vpmu_backends_fn_t fn,
			     void *opaque)
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = fn(opaque, d->cfg.backends, d->cfg.nr_backends);
	pthread_mutex_unlock(&d->lock);
	return ret;
}

uint64_t vpmu_domain_smpl_mem(struct vpmu_domain *d)
{
	uint64_t used;

	pthread_mutex_lock(&d->lock);
	used = d->smpl_used[VPMU_OWNER_GUEST] + d->smpl_used[VPMU_OWNER_HOST];
	pthread_mutex_unlock(&d->lock);
	return used;
}

/* 3.1.17: any caller, any time; all fields are outputs. */
int vpmu_get_config(struct vpmu_domain *d, const struct vpmu_caller *who,
		    struct pfarg_config *cfg, int n)
{
	(void)who;
	if (!cfg || n != 1)
		return -EFAULT;
	pthread_mutex_lock(&d->lock);
	memset(cfg, 0, sizeof(*cfg));
	cfg->cf_version           = PFM_VERSION;
	cfg->cf_impl_pmcs[0]      = d->pmu->impl_pmcs;
	cfg->cf_impl_pmds[0]      = d->pmu->impl_pmds;
	cfg->cf_sys_gid           = d->sys_gid;
	cfg->cf_thread_gid        = d->thread_gid;
	cfg->cf_arg_size_max      = d->cfg.limits.arg_size_max;
	cfg->cf_smpl_buf_size_max = d->cfg.limits.smpl_mem_max;
	cfg->cf_counter_width     = (uint16_t)d->cfg.limits.counter_width;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/*
 * 3.1.16: not retroactive: existing contexts keep their buffers; later
 * commands see the new limits. The gids are not validated (3.1.16).
 */
int vpmu_set_config(struct vpmu_domain *d, const struct vpmu_caller *who,
		    struct pfarg_config *cfg, int n)
{
	if (!cfg || n != 1)
		return -EFAULT;
	/* 3.1.16: most privileged user only; the guest never is (vpmu.h). */
	if (!who || who->owner != VPMU_OWNER_HOST)
		return -EPERM;
	if (cfg->cf_flags != 0 || cfg->cf_arg_size_max < VPMU_PAGE_SIZE ||
	    cfg->cf_smpl_buf_size_max < VPMU_PAGE_SIZE)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	d->sys_gid                 = cfg->cf_sys_gid;
	d->thread_gid              = cfg->cf_thread_gid;
	d->cfg.limits.arg_size_max = cfg->cf_arg_size_max;
	d->cfg.limits.smpl_mem_max = cfg->cf_smpl_buf_size_max;
	pthread_mutex_unlock(&d->lock);
	return 0;
}
