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
		/*
		 * The thread's CPU time: it cannot exceed the wall time and
		 * leaves out halts and preemptions (run_ns, from an older
		 * VMM, counts KVM_RUN whole when it returns).
		 */
		now.run_ns += v->thr[i].cpu_ns
				      ? v->thr[i].cpu_ns - v->thr[i].cpu0
				      : v->thr[i].run_ns - v->thr[i].run0;
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
 * Below 90 % of the request, the cause that accounts for most of the
 * samples missing, each by its own count: samples the VM's limits
 * dropped (throttled), periods the host let pass unsampled (missed), and
 * the samples the vCPUs' idle share would have taken (not running). The
 * limits' raised period (-F) has no count of its own: it is named only
 * when the counts leave most of the shortfall unexplained. Nothing
 * counted and no raised period: the host.
 */
void ops_rate_judge(const struct ops_rate_win *w, double wall_s, double want_hz,
		    struct ops_rate *out)
{
	double want_n, short_n, idle_n;

	*out = (struct ops_rate){.want_hz = want_hz, .why = OPS_RATE_OK};
	if (!w->nr_vcpus || wall_s <= 0) {
		out->why = OPS_RATE_NONE;
		return;
	}
	out->got_hz = (double)w->samples / wall_s / w->nr_vcpus;
	out->ran    = (double)w->run_ns / 1e9 / wall_s / w->nr_vcpus;
	/* The run time is read a moment after the wall time ends. */
	if (out->ran > 1)
		out->ran = 1;
	want_n = want_hz * wall_s * w->nr_vcpus;
	/* Less than a sample per vCPU due: none missing says nothing. */
	if (want_hz <= 0 || out->got_hz >= 0.9 * want_hz ||
	    want_n < w->nr_vcpus)
		return;
	short_n = want_n - (double)w->samples;
	idle_n  = want_n * (1 - out->ran);
	if ((double)(w->throttled + w->missed) + idle_n < short_n / 2 &&
	    w->scale > 1024)
		out->why = OPS_RATE_THROTTLED;
	else if (w->throttled && (double)w->throttled >= (double)w->missed &&
		 (double)w->throttled >= idle_n)
		out->why = OPS_RATE_THROTTLED;
	else if (out->ran < 0.9 && idle_n >= (double)w->missed)
		out->why = OPS_RATE_NOT_RUNNING;
	else
		out->why = OPS_RATE_HOST;
}

const char *ops_rate_reason(const struct ops_rate_win *w,
			    const struct ops_rate *r, char *buf, size_t len)
{
	switch (r->why) {
	case OPS_RATE_THROTTLED:
		if (w->throttled)
			snprintf(buf, len,
				 "throttled by its limits (%llu samples "
				 "dropped%s; see --max-overhead and 'vpmu run "
				 "--max-sample-rate')",
				 (unsigned long long)w->throttled,
				 w->scale > 1024 ? ", period raised" : "");
		else
			snprintf(buf, len,
				 "throttled by its limits (period raised "
				 "x%.2f; see --max-overhead)",
				 (double)w->scale / 1024);
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
