// SPDX-License-Identifier: MIT
/*
 * hv.c: the hv backend (see hv.h).
 */
#include "hv.h"
#include "vpmu_common.h"

#include <errno.h>
#include <stddef.h>

#include <pvpmu/catalog.h>

#define NS_PER_MS 1000000ULL

/* Event byte of the two hv families (abi.h section 9). */
#define HV_EVENT_FIXED       PVPMU_EV_EVENT(PVPMU_EV_HV_EXITS)
#define HV_EVENT_EXIT_REASON PVPMU_EV_EVENT(PVPMU_EV_HV_EXIT_REASON(0))

/*
 * What each hv event of the fixed family counts, indexed by umask: the one
 * place an hv code gets its meaning. The time events (hv_run_ns,
 * hv_guest_cycles) are computed from the run time, not read. Exit reason
 * r (the other family) is statistic VPMU_HV_STAT_EXIT_REASON + r.
 */
#define STAT(code, st) [PVPMU_EV_UMASK(code)] = {.is_read = true, .stat = (st)}

static const struct {
	bool is_read;
	uint8_t stat; /* enum vpmu_hv_stat */
} fixed_stats[] = {
	STAT(PVPMU_EV_HV_EXITS, VPMU_HV_STAT_EXITS),
	STAT(PVPMU_EV_HV_HYPERCALLS, VPMU_HV_STAT_HYPERCALLS),
	STAT(PVPMU_EV_HV_MSR_READS, VPMU_HV_STAT_MSR_READS),
	STAT(PVPMU_EV_HV_MSR_WRITES, VPMU_HV_STAT_MSR_WRITES),
	STAT(PVPMU_EV_HV_PIO, VPMU_HV_STAT_PIO),
	STAT(PVPMU_EV_HV_MMIO, VPMU_HV_STAT_MMIO),
	STAT(PVPMU_EV_HV_IRQS, VPMU_HV_STAT_IRQS),
	STAT(PVPMU_EV_HV_HALTS, VPMU_HV_STAT_HALTS),
	STAT(PVPMU_EV_HV_HALTED_NS, VPMU_HV_STAT_HALTED_NS),
	STAT(PVPMU_EV_HV_CPU_NS, VPMU_HV_STAT_CPU_NS),
};

int vpmu_hv_stat_of(uint16_t code)
{
	unsigned int umask = PVPMU_EV_UMASK(code);

	switch (PVPMU_EV_EVENT(code)) {
	case HV_EVENT_FIXED:
		if (umask < ARRAY_SIZE(fixed_stats) &&
		    fixed_stats[umask].is_read)
			return fixed_stats[umask].stat;
		return -ENOENT;
	case HV_EVENT_EXIT_REASON:
		if (umask < VPMU_HV_EXIT_REASONS)
			return VPMU_HV_STAT_EXIT_REASON + umask;
		return -ENOENT;
	default:
		return -ENOENT;
	}
}

static bool is_time(uint16_t code)
{
	return code == PVPMU_EV_HV_RUN_NS || code == PVPMU_EV_HV_GUEST_CYCLES;
}

static int hv_describe(const struct vpmu_backend *b, uint16_t code,
		       struct vpmu_event_info *info)
{
	const struct vpmu_hv_source *src = b->priv;
	const struct pvpmu_event_desc *d = pvpmu_catalog_by_code(code);

	if (!d || d->source != PVPMU_SRC_HV)
		return -ENOENT;
	if (!is_time(code) && vpmu_hv_stat_of(code) < 0)
		return -ENOENT;
	if (code == PVPMU_EV_HV_GUEST_CYCLES && !src->tsc_khz)
		return -ENOENT;
	if (info) {
		info->code = code;
		info->name = d->name;
		info->desc = d->desc;
	}
	return 0;
}

static int hv_enumerate(const struct vpmu_backend *b, unsigned int idx,
			struct vpmu_event_info *info)
{
	unsigned int i, n = 0;

	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);

		if (hv_describe(b, d->code, NULL))
			continue;
		if (n++ == idx)
			return hv_describe(b, d->code, info);
	}
	return -ENOENT;
}

/* Cumulative value of (e) at run time (now_ns). */
static uint64_t value(const struct vpmu_bevent *e, uint64_t now_ns)
{
	const struct vpmu_hv_source *src = e->be->priv;

	switch (e->ev.code) {
	case PVPMU_EV_HV_RUN_NS:
		return now_ns;
	case PVPMU_EV_HV_GUEST_CYCLES:
		return (uint64_t)((unsigned __int128)now_ns * src->tsc_khz /
				  NS_PER_MS);
	default:
		return src->read(src->opaque, e->ev.cpu_index, e->ev.code);
	}
}

static int hv_open(struct vpmu_bevent *e, uint64_t now_ns)
{
	if (hv_describe(e->be, e->ev.code, NULL))
		return -ENOENT;
	e->scratch[0] = value(e, now_ns);
	return 0;
}

static void hv_close(struct vpmu_bevent *e)
{
	e->scratch[0] = 0;
}

static int hv_read(struct vpmu_bevent *e, uint64_t now_ns, uint64_t *delta)
{
	uint64_t cur = value(e, now_ns);

	*delta        = cur - e->scratch[0];
	e->scratch[0] = cur;
	return 0;
}

static int hv_arm(struct vpmu_bevent *e, uint64_t nevents, uint64_t *in_ns)
{
	const struct vpmu_hv_source *src = e->be->priv;
	unsigned __int128 ns;

	if (!is_time(e->ev.code)) {
		/* Counted at the exit that causes it: no timer needed. */
		*in_ns = VPMU_NO_DEADLINE;
		return 0;
	}
	if (e->ev.code == PVPMU_EV_HV_RUN_NS) {
		*in_ns = nevents;
		return 0;
	}
	ns = ((unsigned __int128)nevents * NS_PER_MS + src->tsc_khz - 1) /
	     src->tsc_khz;
	*in_ns =
		ns > VPMU_NO_DEADLINE - 1 ? VPMU_NO_DEADLINE - 1 : (uint64_t)ns;
	return 0;
}

void vpmu_hv_instance(struct vpmu_hv_source *src, struct vpmu_backend *out)
{
	out->ops  = &vpmu_hv_backend;
	out->priv = src;
}

const struct vpmu_backend_ops vpmu_hv_backend = {
	.name      = "hv",
	.describe  = hv_describe,
	.enumerate = hv_enumerate,
	.open      = hv_open,
	.close     = hv_close,
	.read      = hv_read,
	.arm       = hv_arm,
};
