// SPDX-License-Identifier: MIT
/*
 * profile.c: /debug/pprof/profile. An HTTP thread posts a request and
 * waits; the collector thread runs it: each chosen VM's counting session
 * is read, banked and closed, and a sampling session opened in its place
 * (hv_run_ns sampled at the requested rate, the first metric events
 * counted and recorded in every sample, so metrics keep counting), its
 * samples drained every 100 ms into a pprof builder; when the time is up
 * the counting sessions come back and the gzipped profile is handed over.
 * Borrowing the daemon's own sessions keeps it at one host context per
 * vCPU: the others a vCPU takes (VPMU_CPU_MAX_HOST) are the local
 * operators' (`vpmu stat`, `record`, `top`).
 */
#include "serve_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROFILE_BUF_BYTES (256 << 10) /* sampling buffer per vCPU */
#define PROFILE_EVENT     "hv_run_ns"

static int64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t period_of(const struct serve_profile *p)
{
	return 1000000000ULL / p->hz;
}

/*
 * Hand the result to the waiting HTTP thread, unless it gave up (then
 * sv->prof is NULL and (data) is dropped). The collector reads only its
 * copy sv->cur: a request abandoned is freed by its HTTP thread.
 */
static void finish(struct serve *sv, int status, const char *err, uint8_t *data,
		   size_t len)
{
	struct serve_profile *p;

	pthread_mutex_lock(&sv->lock);
	p = sv->prof;
	if (p) {
		p->status = status;
		if (err)
			snprintf(p->err, sizeof(p->err), "%s", err);
		p->data  = data;
		p->len   = len;
		p->done  = true;
		data     = NULL;
		sv->prof = NULL;
		pthread_cond_broadcast(&sv->cond);
	}
	pthread_mutex_unlock(&sv->lock);
	free(data);
}

/* Sampling session: hv_run_ns, then metric events up to the counters. */
static int start_sampling(struct serve *sv, struct serve_vm *v,
			  const struct serve_profile *p)
{
	unsigned int k;
	int ret;

	(void)sv;
	serve_read_and_bank(v);
	if (v->s.vms[0].session >= 0) {
		struct json_object *r = ops_client_req("session_close");

		json_object_object_add(
			r, "session", json_object_new_int(v->s.vms[0].session));
		ops_client_call(&v->s.vms[0].cl, r, NULL);
		v->s.vms[0].session = -1;
	}
	v->s.nr_ev = 0;
	ops_parse_events(&v->s, PROFILE_EVENT);
	v->map[0] = -1; /* reset to -period at each sample: not a count */
	for (k = 0; k < v->nr_metric && v->s.nr_ev < OPS_COUNTERS; k++) {
		v->map[v->s.nr_ev]    = (int)k;
		v->s.ev[v->s.nr_ev++] = v->metric[k];
	}
	memset(v->last_vals, 0,
	       v->s.vms[0].e.nr_vcpus * OPS_COUNTERS * sizeof(uint64_t));
	v->sampling    = true;
	v->s.callchain = VMM_CTL_CHAIN_MAX; /* as `vpmu record -g` */
	ret = ops_start_sampling(&v->s, period_of(p), PROFILE_BUF_BYTES);
	v->s.callchain = 0;
	if (ret) {
		v->sampling = false;
		serve_start_counting(v);
	}
	return ret;
}

static void stop_sampling(struct serve_vm *v)
{
	struct json_object *r;

	if (!v->sampling)
		return;
	serve_read_and_bank(v);
	if (!v->s.vms[0].gone && v->s.vms[0].session >= 0) {
		r = ops_client_req("session_close");
		json_object_object_add(
			r, "session", json_object_new_int(v->s.vms[0].session));
		ops_client_call(&v->s.vms[0].cl, r, NULL);
		v->s.vms[0].session = -1;
	}
	v->sampling = false;
	if (!v->s.vms[0].gone && serve_start_counting(v))
		fprintf(stderr,
			"vpmu serve: VM '%s': cannot count again after the "
			"profile\n",
			v->s.vms[0].e.name);
}

struct drain_ctx {
	struct serve *sv;
	struct serve_vm *v;
	uint64_t period;
};

static void put_sample(void *opaque, const struct ops_sample *smp)
{
	struct drain_ctx *d    = opaque;
	struct serve_vm *v     = d->v;
	struct pprof_sample ps = {.vm = v->pprof_vm, .vcpu = smp->vcpu};
	uint64_t *last;
	unsigned int k;

	if (smp->vcpu >= v->s.vms[0].e.nr_vcpus)
		return;
	/* The guest's callers, walked by the VMM as for `record -g`. */
	pprof_sample_stack(&ps, smp->ip, smp->chain, smp->nr_chain);
	if (pprof_guest_frames(d->sv->pb, &v->pg, &v->procs, 0, &ps, smp->pid,
			       smp->tid, v->nr_samples++, &v->syms,
			       v->s.vms[0].e.image))
		return;
	last = &v->last_vals[smp->vcpu * OPS_COUNTERS];
	/* Its period (the limits may stretch it) and the ones it missed. */
	ps.values[0] = 1;
	ps.values[1] = (int64_t)((smp->missed + 1) *
				 (smp->period ? smp->period : d->period));
	/* The other events: what they counted since the previous sample. */
	for (k = 1; k < v->s.nr_ev && k < smp->nr_vals; k++) {
		if (v->tmap[k] >= 0)
			ps.values[v->tmap[k]] =
				(int64_t)(smp->vals[k] - last[k]);
		last[k] = smp->vals[k];
	}
	pprof_add(d->sv->pb, &ps);
}

static int put_task(void *opaque, const struct rec_task *t)
{
	struct serve_vm *v = opaque;

	return guest_procs_add(&v->procs, t, v->nr_samples);
}

/* The process records the guest sent since the last fetch. */
static void fetch_tasks(struct serve_vm *v)
{
	struct ops_task_stats st;

	if (v->tasks_gone || v->s.vms[0].gone)
		return;
	if (ops_guest_tasks(&v->s, 0, &v->task_gen, put_task, v, &st) ==
	    -ENOSYS)
		v->tasks_gone = true;
}

static void drain(struct serve *sv, struct serve_vm *v)
{
	struct drain_ctx d = {.sv = sv, .v = v, .period = 0};
	uint64_t lost;

	if (!v->profiled || v->s.vms[0].gone || !sv->pb)
		return;
	d.period = period_of(&sv->cur);
	fetch_tasks(v); /* before the samples they name */
	ops_drain(&v->s, 0, put_sample, &d, &lost);
}

static bool chosen(const struct serve_vm *v, const struct serve_profile *p)
{
	return !p->vm[0] || ops_client_match(&v->s.vms[0].e, p->vm);
}

static bool samples(const struct serve *sv, const struct serve_vm *v)
{
	(void)sv;
	return v->sampling && !v->s.vms[0].gone;
}

/*
 * In the running profile. A VM silent when a profile ended may still
 * sample (until count_again()), for none: its samples are not drained.
 */
static bool profiled(const struct serve *sv, const struct serve_vm *v)
{
	return samples(sv, v) && v->profiled;
}

/*
 * Which of the VMs (want) picks answer now (serve_ping: their (ping)).
 * Every step of a profile talks to those only: a VMM that stopped
 * answering costs one round's deadline, and its samples wait in its
 * buffer for the next step it answers.
 */
static void ping_if(struct serve *sv,
		    bool (*want)(const struct serve *, const struct serve_vm *))
{
	unsigned int i;

	for (i = 0; i < sv->nr_vms; i++)
		sv->vms[i]->ping = want(sv, sv->vms[i]);
	serve_ping(sv);
}

/*
 * The sample type of event (name), added if there is room; or -1, also
 * for the sampled event: its type is the periods the samples stand for,
 * and a second type of the same name is one pprof cannot pick.
 */
static int type_of(struct pprof_type *t, unsigned int *n, const char *name)
{
	unsigned int i;

	if (!strcmp(name, PROFILE_EVENT))
		return -1;
	for (i = 2; i < *n; i++) {
		if (!strcmp(t[i].type, name))
			return (int)i;
	}
	if (*n == PPROF_TYPES_MAX)
		return -1;
	snprintf(t[*n].type, sizeof(t[*n].type), "%s", name);
	t[*n].unit = pprof_unit_of(name);
	return (int)(*n)++;
}

/*
 * Sample types: samples, the sampled event, then every event the chosen
 * VMs record in their samples (VMs may count different lists).
 */
static int new_builder(struct serve *sv, const struct serve_profile *p)
{
	struct pprof_type t[PPROF_TYPES_MAX] = {{"samples", "count"},
						{PROFILE_EVENT, "nanoseconds"}};
	unsigned int n                       = 2, i, k;
	struct serve_vm *v;

	for (i = 0; i < sv->nr_vms; i++) {
		v = sv->vms[i];
		if (!chosen(v, p))
			continue;
		v->tmap[0] = -1;
		for (k = 0; k < v->nr_metric && k + 1 < OPS_COUNTERS; k++)
			v->tmap[k + 1] = type_of(t, &n, v->metric[k].name);
	}
	return pprof_new(&sv->pb, t, n, 1, (int64_t)period_of(p));
}

/* VM (v), chosen and answering, joins the running profile. */
static void join(struct serve *sv, struct serve_vm *v)
{
	v->joining = false;
	if (!v->has_syms) {
		v->has_syms = true;
		if (symtab_load(&v->syms, v->s.vms[0].e.image))
			fprintf(stderr,
				"vpmu serve: VM '%s': no symbols from %s: "
				"addresses only\n",
				v->s.vms[0].e.name, v->s.vms[0].e.image);
	}
	v->pprof_vm    = sv->prof_nr_vms++;
	v->procs.symfs = sv->o.symfs;
	pprof_guest_free(&v->pg); /* spaces of an earlier profile */
	fetch_tasks(v);
	pprof_add_vm(sv->pb, v->pprof_vm, v->s.vms[0].e.name,
		     v->s.vms[0].e.uuid, v->s.vms[0].e.image, &v->syms);
	v->profiled = !start_sampling(sv, v, &sv->cur);
	if (!v->profiled)
		fprintf(stderr,
			"vpmu serve: VM '%s': cannot sample: left out of the "
			"profile\n",
			v->s.vms[0].e.name);
}

static bool in_profile(const struct serve *sv, const struct serve_vm *v)
{
	return profiled(sv, v) || (v->joining && !v->s.vms[0].gone);
}

/*
 * One step of the running profile, with the VMs that answer now: the
 * chosen ones that had not answered yet join it, the others are drained.
 */
static void step(struct serve *sv)
{
	unsigned int i;

	ping_if(sv, in_profile);
	for (i = 0; i < sv->nr_vms; i++) {
		if (!sv->vms[i]->ping)
			continue;
		if (sv->vms[i]->joining)
			join(sv, sv->vms[i]);
		else
			drain(sv, sv->vms[i]);
	}
}

void serve_profile_start(struct serve *sv)
{
	const struct serve_profile *p = &sv->cur;
	unsigned int i, nr = 0;
	struct serve_vm *v;

	for (i = 0; i < sv->nr_vms; i++)
		nr += chosen(sv->vms[i], p);
	if (p->vm[0] && !nr) {
		finish(sv, 404, "no running VM matches 'vm'", NULL, 0);
		return;
	}
	if (new_builder(sv, p)) {
		finish(sv, 500, "out of memory", NULL, 0);
		return;
	}
	sv->prof_nr_vms = 0;
	for (i = 0; i < sv->nr_vms; i++) {
		v           = sv->vms[i];
		v->profiled = false;
		v->joining  = chosen(v, p);
	}
	/* A VM that does not answer now joins at the step it does. */
	step(sv);
	for (i = 0; i < sv->nr_vms; i++) {
		if (sv->vms[i]->joining)
			fprintf(stderr,
				"vpmu serve: VM '%s' does not answer: it joins "
				"the profile when it does\n",
				sv->vms[i]->s.vms[0].e.name);
	}
	sv->prof_t0    = unix_ns();
	sv->prof_mono0 = vpmu_monotonic_ns();
	sv->prof_end   = sv->prof_mono0 + p->seconds * 1000000000ULL;
}

void serve_profile_stop(struct serve *sv, struct serve_vm *only)
{
	unsigned int i;
	uint8_t *data = NULL;
	size_t len    = 0;
	int ret;

	if (!sv->pb)
		return;
	if (only) { /* one VM leaves during the profile */
		for (i = 0; i < sv->nr_vms; i++)
			sv->vms[i]->ping =
				sv->vms[i] == only && profiled(sv, only);
		serve_ping(sv);
		if (only->ping)
			drain(sv, only);
		only->sampling = only->profiled = only->joining = false;
		return;
	}
	/* A VM silent now is put back to counting once it answers. */
	ping_if(sv, profiled);
	for (i = 0; i < sv->nr_vms; i++) {
		if (sv->vms[i]->ping) {
			drain(sv, sv->vms[i]);
			stop_sampling(sv->vms[i]);
		}
		sv->vms[i]->profiled = sv->vms[i]->joining = false;
	}
	ret = pprof_finish(sv->pb, sv->prof_t0,
			   (int64_t)(vpmu_monotonic_ns() - sv->prof_mono0),
			   &data, &len);
	fprintf(stderr, "vpmu serve: profile of %u s: %llu samples\n",
		sv->cur.seconds, (unsigned long long)pprof_nr_samples(sv->pb));
	pprof_free(sv->pb);
	sv->pb = NULL;
	serve_free_left(sv);
	finish(sv, ret ? 500 : 200, ret ? strerror(-ret) : NULL,
	       ret ? NULL : data, ret ? 0 : len);
}

/* VMs a profile left sampling (silent when it ended) count again. */
static void count_again(struct serve *sv)
{
	unsigned int i;

	for (i = 0; i < sv->nr_vms && !samples(sv, sv->vms[i]); i++)
		;
	if (i == sv->nr_vms)
		return;
	ping_if(sv, samples);
	for (i = 0; i < sv->nr_vms; i++) {
		if (!sv->vms[i]->ping)
			continue;
		stop_sampling(sv->vms[i]);
		fprintf(stderr,
			"vpmu serve: VM '%s' answers again: it counts as "
			"before the profile\n",
			sv->vms[i]->s.vms[0].e.name);
	}
}

void serve_profile_tick(struct serve *sv)
{
	struct serve_profile *p;
	bool abandoned;

	if (!sv->pb)
		count_again(sv);
	for (;;) {
		pthread_mutex_lock(&sv->lock);
		if (!sv->pb) { /* the next in the queue */
			p = sv->want;
			if (p) {
				sv->want = p->next;
				sv->cur  = *p;
			}
			sv->prof = p;
		}
		abandoned = !sv->prof;
		pthread_mutex_unlock(&sv->lock);
		if (!sv->pb) {
			if (abandoned)
				return; /* nothing queued */
			serve_profile_start(sv);
			if (sv->pb)
				return;
			continue; /* answered at once (404): the next */
		}
		step(sv);
		if (!abandoned && vpmu_monotonic_ns() < sv->prof_end)
			return;
		if (abandoned)
			fprintf(stderr,
				"vpmu serve: profile of %u s ended early: its "
				"client went away\n",
				sv->cur.seconds);
		serve_profile_stop(sv, NULL); /* then the next in the queue */
	}
}

/* Take (p) out of the queue, if it is there (under serve.lock). */
static void unqueue(struct serve *sv, struct serve_profile *p)
{
	struct serve_profile **q;

	for (q = &sv->want; *q; q = &(*q)->next) {
		if (*q == p) {
			*q = p->next;
			return;
		}
	}
}

void serve_profile_run(struct serve *sv, struct serve_profile *p)
{
	const char *why = "vpmu serve is stopping";
	struct serve_profile **q;
	struct timespec now, dl = {0};

	pthread_mutex_lock(&sv->lock);
	if (!atomic_load(&sv->stop)) {
		for (q = &sv->want; *q; q = &(*q)->next)
			;
		*q      = p;
		p->next = NULL;
		serve_wake(sv);
	}
	/* Wake now and then to see whether the client is still there. */
	while (!p->done && !atomic_load(&sv->stop)) {
		clock_gettime(CLOCK_REALTIME, &now);
		/* Taken: bounded from now (VMs' replies are bounded too). */
		if (sv->prof == p && !dl.tv_sec) {
			dl = now;
			dl.tv_sec += p->seconds + 30;
		}
		if (dl.tv_sec &&
		    (now.tv_sec > dl.tv_sec ||
		     (now.tv_sec == dl.tv_sec && now.tv_nsec >= dl.tv_nsec))) {
			why = "the profile timed out";
			break;
		}
		if (p->gone && p->gone(p->gone_ctx)) {
			why = "the client went away";
			break;
		}
		now.tv_nsec += 250000000L;
		if (now.tv_nsec >= 1000000000L) {
			now.tv_sec++;
			now.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&sv->cond, &sv->lock, &now);
	}
	if (!p->done) {
		/* Abandoned: the collector must no longer touch (p). */
		unqueue(sv, p);
		if (sv->prof == p) {
			sv->prof = NULL; /* the collector ends the profile */
			serve_wake(sv);
		}
		p->status = 503;
		snprintf(p->err, sizeof(p->err), "%s", why);
		p->done = true;
	}
	pthread_mutex_unlock(&sv->lock);
}
