// SPDX-License-Identifier: MIT
/*
 * host_domain.c: libvpmu's top layer (target vpmu), what the VMM calls to
 * get a domain: it turns the VMM's struct vpmu_host_ops into the
 * standard backend list (hv, kvmstat, perf; backends/backends.h), reads
 * the VMM's statistics for the hv events and the virtual PMDs, hands the
 * list to the core with a release hook, and answers the event listing.
 * The core calls the backends only through their ops tables; this file
 * is the only place that knows both.
 */
#include <vpmu/vpmu.h>

#include <errno.h>
#include <stdlib.h>

#include "backends/backends.h"
#include "vpmu_core.h"
#include "vpmu_mech.h"
#include "vpmu_pmu.h"

/* What a hosted domain owns besides the core's state. */
struct host_domain {
	struct vpmu_host_config host;
	struct vpmu_hv_source hv;    /* kept by pointer by the hv backend */
	struct vpmu_backend_list bl; /* hv, kvmstat, perf */
};

/* hv backend source: the statistic hv.c says (code) counts. */
static uint64_t hv_read(void *opaque, uint32_t cpu, uint16_t code)
{
	const struct host_domain *h = opaque;
	int stat                    = vpmu_hv_stat_of(code);

	if (stat < 0)
		return 0;
	return h->host.ops->hv_stat(h->host.opaque, cpu, (unsigned int)stat);
}

/* Virtual PMDs other than the run time are VMM statistics too. */
static uint64_t vpmd_read(void *opaque, uint32_t cpu, unsigned int vpmd)
{
	const struct host_domain *h = opaque;
	unsigned int stat;

	switch (vpmd) {
	case VPMU_VPMD_EXITS:
		stat = VPMU_HV_STAT_EXITS;
		break;
	case VPMU_VPMD_IRQS:
		stat = VPMU_HV_STAT_IRQS;
		break;
	case VPMU_VPMD_STEAL:
		stat = VPMU_HV_STAT_STEAL_NS;
		break;
	default:
		return 0;
	}
	return h->host.ops->hv_stat(h->host.opaque, cpu, stat);
}

static void release(void *owner)
{
	struct host_domain *h = owner;

	vpmu_backends_release(&h->bl);
	free(h);
}

/* hv (exact) first, then KVM statistics, then host perf_event. */
static int build_backends(struct host_domain *h)
{
	const struct vpmu_host_config *c = &h->host;
	struct vpmu_kvmstat_source ks    = {.vcpu_fd = c->ops->vcpu_fd,
					    .opaque  = c->opaque};
	struct vpmu_perf_source ps       = {.vcpu_tid = c->ops->vcpu_tid,
					    .opaque   = c->opaque,
					    .signo    = c->kick_signo,
					    .tsc_khz  = c->tsc_khz};

	h->hv = (struct vpmu_hv_source){
		.read = hv_read, .opaque = h, .tsc_khz = c->tsc_khz};
	return vpmu_backends_build(&h->bl, &h->hv, &ks, &ps);
}

int vpmu_domain_create_hosted(const struct vpmu_host_config *cfg,
			      struct vpmu_domain **out)
{
	struct vpmu_domain_config dc = {0};
	struct host_domain *h;
	int ret;

	if (!cfg->ops || !cfg->ops->vcpu_fd || !cfg->ops->vcpu_tid ||
	    !cfg->ops->hv_stat)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->host = *cfg;
	ret     = build_backends(h);
	if (ret)
		goto out_free;

	dc.limits        = cfg->limits;
	dc.backends      = h->bl.be;
	dc.nr_backends   = h->bl.nr;
	dc.notify        = cfg->ops->notify;
	dc.notify_opaque = cfg->opaque;
	dc.vpmd_read     = vpmd_read;
	dc.vpmd_opaque   = h;
	dc.release       = release;
	dc.owner         = h;
	dc.tsc_khz       = cfg->tsc_khz;
	ret              = vpmu_domain_create(&dc, out);
	if (ret)
		goto out_release_backends;
	return 0;

out_release_backends:
	vpmu_backends_release(&h->bl);
out_free:
	free(h);
	return ret;
}

struct listing {
	vpmu_event_avail_fn_t fn;
	void *opaque;
	uint16_t code;        /* vpmu_domain_event_unavailable() */
	struct vpmu_event ev; /* vpmu_domain_evsel_refusal() */
	const char *reason;   /* their answer */
};

static int list_locked(void *opaque, const struct vpmu_backend *bes,
		       unsigned int nr)
{
	struct listing *l = opaque;

	return vpmu_backends_list_events(bes, nr, l->fn, l->opaque);
}

int vpmu_domain_list_events(struct vpmu_domain *d, vpmu_event_avail_fn_t fn,
			    void *opaque)
{
	struct listing l = {.fn = fn, .opaque = opaque};

	return vpmu_domain_backends_run(d, list_locked, &l);
}

static int reason_locked(void *opaque, const struct vpmu_backend *bes,
			 unsigned int nr)
{
	struct listing *l = opaque;

	l->reason = vpmu_backends_unavailable_reason(bes, nr, l->code);
	return 0;
}

static int refusal_locked(void *opaque, const struct vpmu_backend *bes,
			  unsigned int nr)
{
	struct listing *l = opaque;

	l->reason = vpmu_backends_event_refusal(bes, nr, &l->ev);
	return 0;
}

const char *vpmu_domain_evsel_refusal(struct vpmu_domain *d, uint64_t evsel)
{
	struct listing l = {.ev = vpmu_evsel_event(evsel)};

	vpmu_domain_backends_run(d, refusal_locked, &l);
	return l.reason;
}

const char *vpmu_domain_event_unavailable(struct vpmu_domain *d, uint16_t code)
{
	struct listing l = {.code = code};

	vpmu_domain_backends_run(d, reason_locked, &l);
	return l.reason;
}
