// SPDX-License-Identifier: MIT
/*
 * backends.c: building a VM's backend list and listing its events with
 * availability (see backends.h).
 */
#include "backends.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <pvpmu/catalog.h>

int vpmu_backends_build(struct vpmu_backend_list *l, struct vpmu_hv_source *hv,
			const struct vpmu_kvmstat_source *ks,
			const struct vpmu_perf_source *ps)
{
	int ret;

	memset(l, 0, sizeof(*l));
	if (hv)
		vpmu_hv_instance(hv, &l->be[l->nr++]);
	if (ks) {
		ret = vpmu_kvmstat_create(ks, &l->kvmstat);
		if (ret)
			goto out_release;
		vpmu_kvmstat_instance(l->kvmstat, &l->be[l->nr++]);
	}
	if (ps) {
		ret = vpmu_perf_create(ps, &l->perf);
		if (ret)
			goto out_release;
		vpmu_perf_instance(l->perf, &l->be[l->nr++]);
	}
	return 0;

out_release:
	vpmu_backends_release(l);
	return ret;
}

void vpmu_backends_release(struct vpmu_backend_list *l)
{
	vpmu_perf_destroy(l->perf);
	vpmu_kvmstat_destroy(l->kvmstat);
	memset(l, 0, sizeof(*l));
}

/* Name of the backend that serves catalogue source (src). */
static const char *source_backend(unsigned int src)
{
	switch (src) {
	case PVPMU_SRC_HV:
		return "hv";
	case PVPMU_SRC_KVMSTAT:
		return "kvmstat";
	default:
		return "perf";
	}
}

/* Why backend instance (b) refuses (code). */
static const char *reason_of(const struct vpmu_backend *b, uint16_t code)
{
	const char *r = NULL;

	if (b->ops == &vpmu_perf_backend)
		r = vpmu_perf_unavailable_reason(b->priv, code);
	else if (b->ops == &vpmu_kvmstat_backend)
		r = vpmu_kvmstat_unavailable_reason(b->priv, code);
	else if (b->ops == &vpmu_hv_backend && code == PVPMU_EV_HV_GUEST_CYCLES)
		r = "the host TSC frequency is unknown (KVM_GET_TSC_KHZ)";
	return r ? r : "refused by the backend";
}

static const struct vpmu_backend *find_ops(const struct vpmu_backend *bes,
					   unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(bes[i].ops->name, name))
			return &bes[i];
	}
	return NULL;
}

/*
 * Fill (*ev) for (code): the first backend that counts it, else the one
 * that serves (src) and its reason.
 */
static void resolve(const struct vpmu_backend *bes, unsigned int n,
		    uint16_t code, unsigned int src,
		    struct vpmu_event_avail *ev)
{
	const struct vpmu_backend *b;
	struct vpmu_event_info info;
	unsigned int i;

	ev->code = code;
	for (i = 0; i < n; i++) {
		if (bes[i].ops->describe(&bes[i], code, &info))
			continue;
		ev->backend   = bes[i].ops->name;
		ev->available = true;
		ev->reason    = NULL;
		if (info.name)
			ev->name = info.name;
		if (info.desc)
			ev->desc = info.desc;
		return;
	}
	ev->backend   = source_backend(src);
	ev->available = false;
	b             = find_ops(bes, n, ev->backend);
	ev->reason    = b ? reason_of(b, code) : "no such backend in this list";
}

/* Every discovered KVM statistic, or the family entry if none. */
static int list_kvmstat(const struct vpmu_backend *bes, unsigned int n,
			const struct pvpmu_event_desc *d,
			vpmu_event_avail_fn_t fn, void *opaque)
{
	const struct vpmu_backend *k = find_ops(bes, n, "kvmstat");
	struct vpmu_event_avail ev;
	struct vpmu_event_info info;
	unsigned int i;
	int ret;

	for (i = 0; k && !k->ops->enumerate(k, i, &info); i++) {
		ev = (struct vpmu_event_avail){.name = info.name,
					       .desc = info.desc};
		resolve(bes, n, info.code, d->source, &ev);
		ret = fn(opaque, &ev);
		if (ret)
			return ret;
	}
	if (i)
		return 0;
	ev = (struct vpmu_event_avail){.name = d->name, .desc = d->desc};
	resolve(bes, n, d->code, d->source, &ev);
	return fn(opaque, &ev);
}

int vpmu_backends_list_events(const struct vpmu_backend *bes, unsigned int n,
			      vpmu_event_avail_fn_t fn, void *opaque)
{
	struct vpmu_event_avail ev;
	unsigned int i;
	int ret;

	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);

		if (d->source == PVPMU_SRC_KVMSTAT) {
			ret = list_kvmstat(bes, n, d, fn, opaque);
		} else {
			ev = (struct vpmu_event_avail){.name = d->name,
						       .desc = d->desc};
			resolve(bes, n, d->code, d->source, &ev);
			ret = fn(opaque, &ev);
		}
		if (ret)
			return ret;
	}
	return 0;
}

const char *vpmu_backends_event_refusal(const struct vpmu_backend *bes,
					unsigned int n,
					const struct vpmu_event *ev)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (bes[i].ops->describe(&bes[i], ev->code, NULL))
			continue;
		return bes[i].ops->refusal ? bes[i].ops->refusal(&bes[i], ev)
					   : NULL;
	}
	return vpmu_backends_unavailable_reason(bes, n, ev->code);
}

const char *vpmu_backends_unavailable_reason(const struct vpmu_backend *bes,
					     unsigned int n, uint16_t code)
{
	const struct pvpmu_event_desc *d = pvpmu_catalog_by_code(code);
	struct vpmu_event_avail ev       = {0};

	resolve(bes, n, code, d ? d->source : PVPMU_SRC_PERF_HW, &ev);
	return ev.available ? NULL : ev.reason;
}
