// SPDX-License-Identifier: MIT
/*
 * sample_rate.c: the sample rate a VM achieved next to the one
 * requested, and why it fell short, for `vpmu record` (over the whole
 * recording) and `vpmu top` (over each refresh). The judgement is a pure
 * function of counts (ops_rate_judge), tested on its own.
 */
#include "ctl_client.h"

#include <stdio.h>

#include "pvpmu/abi.h"

double ops_rate_requested(uint64_t freq, uint64_t period, uint16_t code,
			  uint64_t tsc_khz)
{
	if (freq)
		return (double)freq;
	if (!period)
		return 0;
	if (code == PVPMU_EV_HV_RUN_NS)
		return 1e9 / (double)period;
	if (code == PVPMU_EV_HV_GUEST_CYCLES && tsc_khz)
		return (double)tsc_khz * 1e3 / (double)period;
	return 0;
}

void ops_rate_window(const struct ops_vm *v, uint64_t samples,
		     struct ops_rate_win *base, struct ops_rate_win *out)
{
	struct ops_rate_win now = {.samples = samples};
	unsigned int i;

	for (i = 0; i < VMM_CTL_SESSION_VCPUS; i++) {
		if (!v->thr[i].seen)
			continue;
		now.nr_vcpus++;
		now.throttled += v->thr[i].throttled;
		now.missed += v->thr[i].missed;
		now.run_ns += v->thr[i].run_ns - v->thr[i].run0;
		if (v->thr[i].scale > now.scale)
			now.scale = v->thr[i].scale;
	}
	*out = now;
	if (!base)
		return;
	/* The counts are cumulative: the window is what grew since (base). */
	out->throttled -= now.throttled >= base->throttled ? base->throttled
							   : now.throttled;
	out->missed -= now.missed >= base->missed ? base->missed : now.missed;
	out->run_ns -= now.run_ns >= base->run_ns ? base->run_ns : now.run_ns;
	*base = now;
}

/*
 * Below 90 % of the request, the first reason that holds: the VM's limits
 * took samples (dropped, or the period raised above 1024/1024); its vCPUs
 * ran less than 90 % of the wall time (halted, not scheduled) and per
 * second they did run the rate was reached (so not running explains the
 * shortfall); or else the host did not kick them in time (overloaded:
 * periods elapsed unsampled).
 */
void ops_rate_judge(const struct ops_rate_win *w, double wall_s, double want_hz,
		    struct ops_rate *out)
{
	*out = (struct ops_rate){.want_hz = want_hz, .why = OPS_RATE_OK};
	if (!w->nr_vcpus || wall_s <= 0) {
		out->why = OPS_RATE_NONE;
		return;
	}
	out->got_hz = (double)w->samples / wall_s / w->nr_vcpus;
	out->ran    = (double)w->run_ns / 1e9 / wall_s / w->nr_vcpus;
	if (want_hz <= 0 || out->got_hz >= 0.9 * want_hz)
		return;
	if (w->throttled || w->scale > 1024)
		out->why = OPS_RATE_THROTTLED;
	else if (out->ran < 0.9 && out->got_hz >= 0.9 * want_hz * out->ran)
		out->why = OPS_RATE_NOT_RUNNING;
	else
		out->why = OPS_RATE_HOST;
}

const char *ops_rate_reason(const struct ops_rate_win *w,
			    const struct ops_rate *r, char *buf, size_t len)
{
	switch (r->why) {
	case OPS_RATE_THROTTLED:
		snprintf(buf, len,
			 "throttled by its limits (%llu samples dropped%s; "
			 "see --max-overhead and 'vpmu run "
			 "--max-sample-rate')",
			 (unsigned long long)w->throttled,
			 w->scale > 1024 ? ", period raised" : "");
		return buf;
	case OPS_RATE_NOT_RUNNING:
		snprintf(buf, len,
			 "its vCPUs were not running (%.0f %% of the time: "
			 "halted or not scheduled)",
			 100.0 * r->ran);
		return buf;
	case OPS_RATE_HOST:
		snprintf(buf, len,
			 "host overloaded (kicks late, %llu periods missed)",
			 (unsigned long long)w->missed);
		return buf;
	default:
		return NULL;
	}
}

void ops_rate_print(FILE *f, const char *lead, const char *warn_lead,
		    const struct ops_rate_win *w, const struct ops_rate *r)
{
	char why[256];

	if (r->why == OPS_RATE_NONE)
		return;
	fprintf(f, "%s%.0f samples/s per vCPU achieved", lead, r->got_hz);
	if (r->want_hz > 0)
		fprintf(f, " of %.0f requested (%.0f %%)", r->want_hz,
			100.0 * r->got_hz / r->want_hz);
	fprintf(f,
		"; vCPUs ran %.0f %% of the time; throttled %llu, missed "
		"%llu\n",
		100.0 * r->ran, (unsigned long long)w->throttled,
		(unsigned long long)w->missed);
	if (ops_rate_reason(w, r, why, sizeof(why)))
		fprintf(f, "%sbelow 90 %% of the requested rate: %s\n",
			warn_lead, why);
}
