// SPDX-License-Identifier: MIT
/*
 * collect.c: the collector thread of `vpmu serve`. It watches the runtime
 * directory (inotify, and a rescan every 10 s for VMs that died
 * without removing their entry), keeps one operator session per VM
 * (op_session.c: one host context per vCPU, counting the metric events),
 * reads every VM once per interval into monotonic counters (VMs are
 * attached by a few attach threads, so one whose VMM never answers holds
 * only a thread, never the collection of the others; the attached are
 * read together, each within a deadline: collect()), renders the
 * /metrics and /debug/vpmu/vms snapshots HTTP threads answer from, and
 * runs profile requests (profile.c). Only this thread talks to VMs, so a
 * stalled HTTP client never delays collection, and a stalled VM (bounded
 * by the round's deadline) never blocks an HTTP thread.
 */
#include "serve_priv.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "pvpmu/catalog.h"

#define SWITCH_NS 10000000ULL    /* event sets switch every 10 ms of run time */
#define RESCAN_NS 10000000000ULL /* scan without an inotify event: 10 s */

void serve_wake(struct serve *sv)
{
	uint64_t one = 1;

	if (write(sv->wake_fd, &one, sizeof(one)) < 0)
		return; /* saturated: a wake is pending anyway */
}

/* The metric events for VM (e), from the --events list. */
static int metric_events(struct serve *sv, struct serve_vm *v,
			 const struct vmm_reg_entry *e)
{
	struct ops_session tmp = {.prog = "vpmu serve"};
	unsigned int i;
	int ret;

	ret = ops_parse_events(&tmp, sv->o.events);
	if (ret)
		return ret;
	for (i = 0; i < tmp.nr_ev; i++) {
		/*
		 * Without a known TSC rate a VM refuses hv_guest_cycles: the
		 * default list leaves it out there rather than the whole VM.
		 */
		if (sv->o.default_events && !e->tsc_khz &&
		    !strcmp(tmp.ev[i].name, "hv_guest_cycles"))
			continue;
		v->metric[v->nr_metric++] = tmp.ev[i];
	}
	return 0;
}

static int connect_vm(struct serve_vm *v)
{
	struct ops_vm *ov = &v->s.vms[0];
	unsigned int i;

	ov->session = -1;
	for (i = 0; i < VMM_CTL_SESSION_VCPUS; i++)
		ov->ctx[i] = -1;
	if (ops_client_connect(&ov->cl, ov->e.socket) ||
	    ops_client_call(&ov->cl, ops_client_req("hello"), NULL)) {
		fprintf(stderr, "vpmu serve: VM '%s' (%s): %s: skipped\n",
			ov->e.name, ov->e.uuid, ov->cl.err);
		ops_client_close(&ov->cl);
		return -ENOTCONN;
	}
	if (ov->e.nr_vcpus > VMM_CTL_SESSION_VCPUS)
		ov->e.nr_vcpus = VMM_CTL_SESSION_VCPUS;
	v->s.nr_live = 1;
	return 0;
}

int serve_start_counting(struct serve_vm *v)
{
	memcpy(v->s.ev, v->metric, v->nr_metric * sizeof(v->metric[0]));
	v->s.nr_ev  = v->nr_metric;
	v->sampling = false;
	return ops_start_counting(&v->s, SWITCH_NS);
}

static void vm_free(struct serve_vm *v)
{
	if (!v)
		return;
	ops_close(&v->s);
	free(v->ctr);
	free(v->stale);
	free(v->pmis);
	free(v->last_vals);
	if (v->has_syms)
		symtab_free(&v->syms);
	pprof_guest_free(&v->pg);
	guest_procs_free(&v->procs);
	free(v);
}

void serve_free_left(struct serve *sv)
{
	struct serve_vm *v;

	while ((v = sv->left)) {
		sv->left = v->left_next;
		vm_free(v);
	}
}

static struct serve_vm *attach(struct serve *sv, const struct vmm_reg_entry *e)
{
	struct serve_vm *v = calloc(1, sizeof(*v));
	unsigned int n;

	if (!v)
		return NULL;
	v->s.prog = "vpmu serve";
	v->s.vms  = calloc(1, sizeof(*v->s.vms));
	if (!v->s.vms)
		goto out_free;
	v->s.nr_vms   = 1;
	v->s.vms[0].e = *e;
	if (metric_events(sv, v, e) || connect_vm(v))
		goto out_free;
	n            = v->s.vms[0].e.nr_vcpus;
	v->ctr       = calloc((size_t)n * v->nr_metric + 1, sizeof(*v->ctr));
	v->stale     = calloc(n + 1, sizeof(*v->stale));
	v->pmis      = calloc(n + 1, sizeof(*v->pmis));
	v->last_vals = calloc((size_t)n * OPS_COUNTERS + 1, sizeof(uint64_t));
	if (!v->ctr || !v->stale || !v->pmis || !v->last_vals)
		goto out_free;
	if (serve_start_counting(v)) {
		fprintf(stderr,
			"vpmu serve: VM '%s' (%s): cannot count: "
			"skipped\n",
			e->name, e->uuid);
		goto out_free;
	}
	v->created = (int64_t)time(NULL);
	fprintf(stderr,
		"vpmu serve: attached VM '%s' (%s), pid %d, %u vCPU%s, %u "
		"event%s\n",
		e->name, e->uuid, (int)e->pid, n, n == 1 ? "" : "s",
		v->nr_metric, v->nr_metric == 1 ? "" : "s");
	return v;

out_free:
	vm_free(v);
	return NULL;
}

static void detach(struct serve *sv, unsigned int i, const char *why)
{
	struct serve_vm *v = sv->vms[i];

	fprintf(stderr, "vpmu serve: detached VM '%s' (%s): %s\n",
		v->s.vms[0].e.name, v->s.vms[0].e.uuid, why);
	serve_profile_stop(sv, v);
	if (sv->pb) { /* its symbols are in the profile: freed after it */
		ops_close(&v->s);
		v->left_next = sv->left;
		sv->left     = v;
	} else {
		vm_free(v);
	}
	sv->vms[i] = sv->vms[--sv->nr_vms];
}

static struct serve_vm *find(struct serve *sv, const struct vmm_reg_entry *e)
{
	unsigned int i;

	for (i = 0; i < sv->nr_vms; i++) {
		const struct vmm_reg_entry *o = &sv->vms[i]->s.vms[0].e;

		/* A VM restarted with the same uuid is another process. */
		if (!strcmp(o->uuid, e->uuid) && o->pid == e->pid)
			return sv->vms[i];
	}
	return NULL;
}

static struct serve_attach_job *job_of(struct serve *sv,
				       const struct vmm_reg_entry *e)
{
	struct serve_attach_job *j;

	for (j = sv->jobs; j; j = j->next) {
		if (!strcmp(j->e.uuid, e->uuid) && j->e.pid == e->pid)
			return j;
	}
	return NULL;
}

/* The attach threads: one job at a time, never touching sv->vms. */
static void *attacher(void *arg)
{
	struct serve *sv = arg;
	struct serve_attach_job *j;
	struct serve_vm *v;

	pthread_mutex_lock(&sv->alock);
	while (!atomic_load(&sv->stop)) {
		for (j = sv->jobs; j && j->state != JOB_QUEUED; j = j->next)
			;
		if (!j) {
			pthread_cond_wait(&sv->acond, &sv->alock);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&sv->alock);
		v = attach(sv, &j->e);
		pthread_mutex_lock(&sv->alock);
		j->v        = v;
		j->state    = v ? JOB_DONE : JOB_FAILED;
		j->retry_at = vpmu_monotonic_ns() + SERVE_ATTACH_RETRY_NS;
		serve_wake(sv);
	}
	pthread_mutex_unlock(&sv->alock);
	return NULL;
}

/* The VMs the attach threads attached join the collection. */
static void adopt(struct serve *sv)
{
	struct serve_attach_job **q = &sv->jobs, *j;
	struct serve_vm **n;

	pthread_mutex_lock(&sv->alock);
	while ((j = *q)) {
		if (j->state != JOB_DONE) {
			q = &j->next;
			continue;
		}
		*q = j->next;
		n  = realloc(sv->vms, (sv->nr_vms + 1) * sizeof(*n));
		if (n) {
			sv->vms               = n;
			j->v->seen            = true;
			sv->vms[sv->nr_vms++] = j->v;
		} else {
			vm_free(j->v);
		}
		free(j);
	}
	pthread_mutex_unlock(&sv->alock);
}

/* Queue the VMs that appeared for attaching, detach those gone. */
static void rescan(struct serve *sv)
{
	struct serve_attach_job **q, *j;
	struct vmm_reg_entry *all = NULL;
	uint64_t now              = vpmu_monotonic_ns();
	char dir[PATH_MAX];
	unsigned int nr = 0, i;
	struct serve_vm *v;

	if (ops_client_discover_all(dir, sizeof(dir), &all, &nr, stderr, true))
		return;
	for (i = 0; i < sv->nr_vms; i++)
		sv->vms[i]->seen = false;
	pthread_mutex_lock(&sv->alock);
	for (j = sv->jobs; j; j = j->next)
		j->seen = false;
	for (i = 0; i < nr; i++) {
		v = find(sv, &all[i]);
		if (v) {
			v->seen = true;
			continue;
		}
		j = job_of(sv, &all[i]);
		if (!j) {
			j = calloc(1, sizeof(*j));
			if (!j)
				continue;
			j->e     = all[i];
			j->state = JOB_QUEUED;
			j->next  = sv->jobs;
			sv->jobs = j;
		} else if (j->state == JOB_FAILED && now >= j->retry_at) {
			j->state = JOB_QUEUED; /* try again */
		}
		j->seen = true;
	}
	/* Failed VMs whose entry went away are forgotten. */
	for (q = &sv->jobs; (j = *q);) {
		if (j->state == JOB_FAILED && !j->seen) {
			*q = j->next;
			free(j);
		} else {
			q = &j->next;
		}
	}
	pthread_cond_broadcast(&sv->acond);
	pthread_mutex_unlock(&sv->alock);
	free(all);
	for (i = sv->nr_vms; i-- > 0;) {
		if (!sv->vms[i]->seen)
			detach(sv, i, "its registry entry is gone");
	}
}

/* What a read of VM (v) returned (c) goes into its counters. */
static void take_counts(struct serve_vm *v, const struct ops_counts *c)
{
	unsigned int n = v->s.vms[0].e.nr_vcpus, cpu, k;
	int m;

	for (cpu = 0; cpu < n; cpu++) {
		v->stale[cpu] = c[cpu].stale;
		if (c[cpu].pmis > v->pmis[cpu]) /* never published lower */
			v->pmis[cpu] = c[cpu].pmis;
		for (k = 0; k < v->s.nr_ev; k++) {
			m = v->sampling ? v->map[k] : (int)k;
			if (m < 0)
				continue;
			serve_counter_update(
				&v->ctr[cpu * v->nr_metric + (unsigned int)m],
				serve_scale(c[cpu].raw[k], c[cpu].enabled,
					    c[cpu].running[k]));
		}
	}
}

/* Read one VM into its counters, waiting for it (its session ends). */
static void read_vm(struct serve_vm *v)
{
	struct ops_counts *c;

	if (v->s.vms[0].gone)
		return;
	c = calloc(v->s.vms[0].e.nr_vcpus, sizeof(*c));
	if (c && !ops_read_vm(&v->s, 0, c))
		take_counts(v, c);
	free(c);
}

void serve_read_and_bank(struct serve_vm *v)
{
	unsigned int i, n = v->s.vms[0].e.nr_vcpus * v->nr_metric;

	read_vm(v);
	for (i = 0; i < n; i++)
		serve_counter_bank(&v->ctr[i]);
}

/* Swap in fresh snapshots for the HTTP threads. */
static void publish(struct serve *sv, double took_s)
{
	char *text = serve_render_metrics(sv, OM_TEXT_004);
	char *om   = serve_render_metrics(sv, OM_OPENMETRICS_1);
	char *vms  = serve_render_vms(sv);

	pthread_mutex_lock(&sv->lock);
	if (text) {
		free(sv->snap[OM_TEXT_004]);
		sv->snap[OM_TEXT_004] = text;
	}
	if (om) {
		free(sv->snap[OM_OPENMETRICS_1]);
		sv->snap[OM_OPENMETRICS_1] = om;
	}
	if (vms) {
		free(sv->vms_json);
		sv->vms_json = vms;
	}
	sv->nr_collects++;
	sv->last_collect_s = took_s;
	pthread_mutex_unlock(&sv->lock);
}

/* Milliseconds from now to (end), monotonic ns; 0 once past. */
static int ms_left(uint64_t end)
{
	uint64_t now = vpmu_monotonic_ns();

	return end > now ? (int)((end - now + 999999) / 1000000) : 0;
}

/* A round that begins now ends in half the interval, at most the timeout. */
static uint64_t round_end(const struct serve *sv)
{
	uint64_t dl = sv->o.interval_ns / 2;

	if (dl > OPS_CLIENT_TIMEOUT_MS * 1000000ULL)
		dl = OPS_CLIENT_TIMEOUT_MS * 1000000ULL;
	return vpmu_monotonic_ns() + dl;
}

/* VM (v)'s reply came (its socket readable): take it. */
static void take_reply(struct serve_vm *v, uint64_t end)
{
	struct ops_counts *c = calloc(v->s.vms[0].e.nr_vcpus, sizeof(*c));
	int ret              = -ENOMEM;

	if (c)
		ret = ops_read_reply(&v->s, 0, ms_left(end), c);
	if (!ret) {
		take_counts(v, c);
		v->misses = 0;
	}
	v->waiting = ret != 0 && !v->s.vms[0].gone;
	free(c);
}

/* VM (v)'s hello came back (its socket readable): it answers. */
static void take_pong(struct serve_vm *v, uint64_t end)
{
	struct ops_vm *ov = &v->s.vms[0];
	int ret = ops_client_reply(&ov->cl, v->ping_id, ms_left(end), NULL);

	v->ping      = !ret;
	v->ping_wait = ret == -ETIMEDOUT;
	if (ret && ret != -ETIMEDOUT)
		ops_vm_gone(&v->s, 0, ov->cl.err);
}

/*
 * Wait until (end) for the replies of the VMs still waiting for their
 * read (waiting) or, with (pongs), their hello (ping_wait), taking each
 * as it comes: one poll() over all their sockets.
 */
static void take_replies(struct serve *sv, struct pollfd *p,
			 struct serve_vm **who, uint64_t end, bool pongs)
{
	unsigned int i, n;
	int tmo;

	for (;;) {
		for (i = n = 0; i < sv->nr_vms; i++) {
			if (!(pongs ? sv->vms[i]->ping_wait
				    : sv->vms[i]->waiting))
				continue;
			p[n] = (struct pollfd){.fd = sv->vms[i]->s.vms[0].cl.fd,
					       .events = POLLIN};
			who[n++] = sv->vms[i];
		}
		tmo = ms_left(end);
		if (!n || !tmo || poll(p, n, tmo) <= 0)
			return;
		for (i = 0; i < n; i++) {
			if (!p[i].revents)
				continue;
			if (pongs)
				take_pong(who[i], end);
			else
				take_reply(who[i], end);
		}
	}
}

void serve_ping(struct serve *sv)
{
	struct serve_vm **who = calloc(sv->nr_vms + 1, sizeof(*who));
	struct pollfd *p      = calloc(sv->nr_vms + 1, sizeof(*p));
	uint64_t end          = round_end(sv);
	struct serve_vm *v;
	unsigned int i;
	int ret;

	for (i = 0; i < sv->nr_vms; i++) {
		v            = sv->vms[i];
		v->ping_wait = false;
		if (!v->ping)
			continue;
		v->ping = false;
		if (!who || !p || v->s.vms[0].gone)
			continue;
		ret = ops_client_send(&v->s.vms[0].cl, ops_client_req("hello"),
				      ms_left(end), &v->ping_id);
		v->ping_wait = !ret;
		if (ret && ret != -ETIMEDOUT)
			ops_vm_gone(&v->s, 0, v->s.vms[0].cl.err);
	}
	if (who && p)
		take_replies(sv, p, who, end, true);
	for (i = 0; i < sv->nr_vms; i++)
		sv->vms[i]->ping_wait = false;
	free(who);
	free(p);
}

/*
 * One round: every VM's session_read is sent first, then the replies are
 * taken together as they come, until the round's deadline (half the
 * interval, at most the client timeout), so a VM that stopped answering
 * delays nobody's metrics. A VM that misses it keeps its last values,
 * marked stale, and is detached after SERVE_READ_MISSES misses in a row
 * or at once when its socket closes.
 */
static void collect(struct serve *sv)
{
	uint64_t t0 = vpmu_monotonic_ns(), end = round_end(sv);
	struct serve_vm **who = calloc(sv->nr_vms + 1, sizeof(*who));
	struct pollfd *p      = calloc(sv->nr_vms + 1, sizeof(*p));
	struct serve_vm *v;
	unsigned int i, cpu;

	for (i = 0; i < sv->nr_vms; i++) {
		v          = sv->vms[i];
		v->waiting = who && p && !v->s.vms[0].gone &&
			     !ops_read_send(&v->s, 0, ms_left(end));
	}
	if (who && p)
		take_replies(sv, p, who, end, false);
	for (i = sv->nr_vms; i-- > 0;) {
		v = sv->vms[i];
		if (v->s.vms[0].gone) {
			detach(sv, i, "it stopped answering");
			continue;
		}
		if (!v->waiting)
			continue;
		v->waiting = false;
		for (cpu = 0; cpu < v->s.vms[0].e.nr_vcpus; cpu++)
			v->stale[cpu] = true;
		if (++v->misses >= SERVE_READ_MISSES)
			detach(sv, i, "its reads missed their deadline");
	}
	free(who);
	free(p);
	publish(sv, (double)(vpmu_monotonic_ns() - t0) / 1e9);
}

/* Drain inotify: any change of a registry entry means rescan. */
static bool dir_changed(struct serve *sv)
{
	char buf[4096] __attribute__((aligned(8)));
	bool changed = false;
	ssize_t n;

	while ((n = read(sv->inotify_fd, buf, sizeof(buf))) > 0)
		changed = true;
	return changed;
}

static bool attached_new(struct serve *sv)
{
	struct serve_attach_job *j;
	bool any = false;

	pthread_mutex_lock(&sv->alock);
	for (j = sv->jobs; j && !any; j = j->next)
		any = j->state == JOB_DONE;
	pthread_mutex_unlock(&sv->alock);
	return any;
}

/* sv->stop is set: the threads end after their attach in progress. */
static void stop_attachers(struct serve *sv)
{
	pthread_mutex_lock(&sv->alock);
	pthread_cond_broadcast(&sv->acond);
	pthread_mutex_unlock(&sv->alock);
	while (sv->nr_attachers)
		pthread_join(sv->attacher[--sv->nr_attachers], NULL);
}

int serve_collect_init(struct serve *sv)
{
	int ret;

	pthread_mutex_init(&sv->alock, NULL);
	pthread_cond_init(&sv->acond, NULL);
	ret = vmm_runtime_dir(sv->dir, sizeof(sv->dir));
	if (ret)
		return ret;
	/* Watch it even before the first VM: create it as `vpmu run` would. */
	vmm_runtime_dir_create(sv->dir);
	sv->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	sv->wake_fd    = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sv->inotify_fd < 0 || sv->wake_fd < 0)
		return -errno;
	if (inotify_add_watch(sv->inotify_fd, sv->dir,
			      IN_CREATE | IN_MOVED_TO | IN_DELETE |
				      IN_MOVED_FROM | IN_CLOSE_WRITE) < 0)
		fprintf(stderr,
			"vpmu serve: cannot watch %s: %s (rescanning "
			"every interval only)\n",
			sv->dir, strerror(errno));
	while (sv->nr_attachers < SERVE_ATTACHERS &&
	       !pthread_create(&sv->attacher[sv->nr_attachers], NULL, attacher,
			       sv))
		sv->nr_attachers++;
	return sv->nr_attachers ? 0 : -EAGAIN;
}

void *serve_collect_thread(void *arg)
{
	struct serve *sv   = arg;
	uint64_t next      = vpmu_monotonic_ns(), now, wait;
	uint64_t last_scan = next;
	struct pollfd p[2];
	uint64_t junk;
	bool scan = true;

	while (!atomic_load(&sv->stop)) {
		if (scan)
			rescan(sv);
		adopt(sv);
		now = vpmu_monotonic_ns();
		if (scan || now >= next) {
			collect(sv);
			next = now + sv->o.interval_ns;
		}
		scan = false;
		serve_profile_tick(sv);
		now  = vpmu_monotonic_ns();
		wait = next > now ? next - now : 0;
		if (sv->pb && wait > 100000000ULL)
			wait = 100000000ULL; /* drain samples every 100 ms */
		p[0] = (struct pollfd){.fd = sv->inotify_fd, .events = POLLIN};
		p[1] = (struct pollfd){.fd = sv->wake_fd, .events = POLLIN};
		if (poll(p, 2, (int)(wait / 1000000ULL) + 1) > 0) {
			scan = dir_changed(sv);
			while (read(sv->wake_fd, &junk, sizeof(junk)) > 0)
				;
		}
		/* A VM attached: collect it at once, not an interval later. */
		if (attached_new(sv))
			next = 0;
		/*
		 * Now and then also without inotify's word: a VM killed
		 * uncleanly leaves its entry (removed as stale by the scan),
		 * and the watch may have failed. Not every interval: a scan
		 * connects to every VM to tell live from stale.
		 */
		if (vpmu_monotonic_ns() - last_scan >= RESCAN_NS)
			scan = true;
		if (scan)
			last_scan = vpmu_monotonic_ns();
	}
	serve_profile_stop(sv, NULL);
	stop_attachers(sv);
	return NULL;
}

void serve_collect_free(struct serve *sv)
{
	struct serve_attach_job *j;
	unsigned int i;

	atomic_store(&sv->stop, true);
	stop_attachers(sv);
	while ((j = sv->jobs)) {
		sv->jobs = j->next;
		vm_free(j->v);
		free(j);
	}

	for (i = 0; i < sv->nr_vms; i++)
		vm_free(sv->vms[i]);
	serve_free_left(sv);
	free(sv->vms);
	sv->vms    = NULL;
	sv->nr_vms = 0;
	if (sv->inotify_fd >= 0)
		close(sv->inotify_fd);
	if (sv->wake_fd >= 0)
		close(sv->wake_fd);
	sv->inotify_fd = sv->wake_fd = -1;
	pthread_cond_destroy(&sv->acond);
	pthread_mutex_destroy(&sv->alock);
}
