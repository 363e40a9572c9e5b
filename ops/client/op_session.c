// SPDX-License-Identifier: MIT
/*
 * op_session.c: operator sessions (see ctl_client.h): host contexts on every
 * vCPU of the chosen VMs, programmed for counting (with event sets when there
 * are more events than counters) or for sampling, and read or drained. Each
 * VM is set up with one session_open request and read with one
 * session_read per interval, whatever its number of vCPUs. A VM that stops
 * answering is reported once and left out; the others go on.
 */
#include "ctl_client.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "pvpmu/abi.h"
#include "pvpmu/catalog.h"

#include "event_spec.h"

static int add_event(struct ops_session *s, const char *name,
		     unsigned int group)
{
	struct ops_event *ev;
	struct ev_spec sp;
	char err[320];

	if (s->nr_ev == OPS_EVENTS_MAX) {
		fprintf(stderr, "%s: at most %d events\n", s->prog,
			OPS_EVENTS_MAX);
		return -EINVAL;
	}
	if (ev_spec_parse(name, &sp, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", s->prog, err);
		return -EINVAL;
	}
	ev = &s->ev[s->nr_ev];
	if (strlen(name) >= sizeof(ev->name)) {
		fprintf(stderr,
			"%s: %.32s...: an event's name is at most %zu "
			"characters\n",
			s->prog, name, sizeof(ev->name) - 1);
		return -EINVAL;
	}
	ev->code    = sp.code;
	ev->is_time = sp.is_time;
	ev->evsel   = sp.evsel;
	ev->group   = group;
	memcpy(ev->name, name, strlen(name) + 1);
	s->nr_ev++;
	return 0;
}

/*
 * Before the group of (n) members at (it): it must fit one set of
 * counters; if the current set has too few left, holes end it.
 */
static int place_group(struct ops_session *s, const struct ev_list_item *it,
		       unsigned int n)
{
	unsigned int used = s->nr_ev % OPS_COUNTERS, i;
	char names[256];
	size_t o = 0;

	if (n <= OPS_COUNTERS && used + n <= OPS_COUNTERS)
		return 0;
	for (i = 0; i < n && o < sizeof(names); i++)
		o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s",
				      i ? "," : "", it[i].spec);
	if (n > OPS_COUNTERS) {
		fprintf(stderr,
			"%s: group {%s}: %u events cannot count at the same "
			"time (a set has %d counters)\n",
			s->prog, names, n, OPS_COUNTERS);
		return -EINVAL;
	}
	if (s->nr_ev + (OPS_COUNTERS - used) + n > OPS_EVENTS_MAX) {
		fprintf(stderr, "%s: group {%s}: at most %d events\n", s->prog,
			names, OPS_EVENTS_MAX);
		return -EINVAL;
	}
	while (s->nr_ev % OPS_COUNTERS) {
		memset(&s->ev[s->nr_ev], 0, sizeof(s->ev[0]));
		s->ev[s->nr_ev++].hole = true;
	}
	return 0;
}

int ops_parse_events(struct ops_session *s, const char *list)
{
	struct ev_list_item it[OPS_EVENTS_MAX];
	unsigned int nr, i, n, group = 0;
	char err[320];
	int ret;

	if (ev_list_split(list, it, OPS_EVENTS_MAX, &nr, err, sizeof(err))) {
		fprintf(stderr, "%s: -e %s: %s\n", s->prog, list, err);
		return -EINVAL;
	}
	for (i = 0, ret = 0; i < nr && !ret; i++) {
		if (it[i].group && it[i].group != group) {
			group = it[i].group;
			for (n = 1; i + n < nr && it[i + n].group == group;)
				n++;
			ret = place_group(s, &it[i], n);
			s->nr_groups++;
		}
		if (!ret)
			ret = add_event(s, it[i].spec,
					it[i].group ? s->nr_groups : 0);
	}
	return ret;
}

static bool chosen(const struct vmm_reg_entry *e, const char *const *sel,
		   unsigned int nr_sel, bool *used)
{
	unsigned int i;
	bool hit = nr_sel == 0;

	for (i = 0; i < nr_sel; i++) {
		if (ops_client_match(e, sel[i])) {
			used[i] = true;
			hit     = true;
		}
	}
	return hit;
}

static bool has_chosen_vcpu(struct ops_session *s,
			    const struct vmm_reg_entry *e)
{
	unsigned int i;

	for (i = 0; i < e->nr_vcpus && i < VMM_CTL_SESSION_VCPUS; i++) {
		if (ops_vcpu_chosen(s->sel, i))
			return true;
	}
	fprintf(stderr,
		"%s: VM '%s' (%s) has none of the vCPUs of -C (it "
		"has %u): skipped\n",
		s->prog, e->name, e->uuid, e->nr_vcpus);
	return false;
}

static int connect_vm(struct ops_session *s, struct ops_vm *v)
{
	unsigned int i;

	v->session = -1;
	for (i = 0; i < VMM_CTL_SESSION_VCPUS; i++)
		v->ctx[i] = -1;
	if (ops_client_connect(&v->cl, v->e.socket) ||
	    ops_client_call(&v->cl, ops_client_req("hello"), NULL)) {
		fprintf(stderr, "%s: VM '%s' (%s): %s: skipped\n", s->prog,
			v->e.name, v->e.uuid, v->cl.err);
		ops_client_close(&v->cl);
		v->gone = true;
		return -ENOTCONN;
	}
	if (v->e.nr_vcpus > VMM_CTL_SESSION_VCPUS)
		v->e.nr_vcpus = VMM_CTL_SESSION_VCPUS;
	return 0;
}

int ops_open(struct ops_session *s, const struct ops_select *osel)
{
	const char *const *sel = osel->names;
	unsigned int nr_sel    = osel->nr;
	bool used[64]          = {false};
	struct vmm_reg_entry *all;
	char dir[PATH_MAX] = "";
	unsigned int i, n;
	int ret;

	s->sel = osel;
	/* Other users' VMs only when asked for: -a, or by name. */
	ret = ops_client_discover_all(dir, sizeof(dir), &all, &n, stderr,
				      osel->all || nr_sel);
	if (ret) {
		fprintf(stderr, "%s: %s%s%s%s\n", s->prog,
			dir[0] ? "runtime directory " : "", dir,
			dir[0] ? ": " : "", vmm_runtime_strerror(ret));
		return ret;
	}
	s->vms = calloc(n ? n : 1, sizeof(*s->vms));
	for (i = 0; s->vms && i < n; i++) {
		if (!chosen(&all[i], sel, nr_sel, used) ||
		    !has_chosen_vcpu(s, &all[i]))
			continue;
		s->vms[s->nr_vms].e = all[i];
		if (!connect_vm(s, &s->vms[s->nr_vms]))
			s->nr_live++;
		s->nr_vms++;
	}
	free(all);
	for (i = 0, n = 0; i < nr_sel; i++) {
		if (!used[i] && ++n)
			fprintf(stderr, "%s: no running VM matches '%s'\n",
				s->prog, sel[i]);
	}
	if (!s->nr_live && !n)
		fprintf(stderr,
			"%s: no running VM to monitor (runtime "
			"directory %s)\n",
			s->prog, dir);
	if (!s->nr_live) {
		ops_close(s); /* nothing to monitor: nothing kept either */
		return -ENOENT;
	}
	return 0;
}

void ops_vm_gone(struct ops_session *s, unsigned int vm, const char *why)
{
	struct ops_vm *v = &s->vms[vm];

	if (v->gone)
		return;
	v->gone = true;
	s->nr_live--;
	ops_client_close(&v->cl);
	fprintf(stderr,
		"%s: VM '%s' (%s) disappeared: %s; continuing with %u other "
		"VM%s\n",
		s->prog, v->e.name, v->e.uuid, why, s->nr_live,
		s->nr_live == 1 ? "" : "s");
}

void ops_name_pmcs(const struct ops_session *s, const char *err, char *out,
		   size_t len)
{
	const char *p = err;
	unsigned int num, set, idx;
	size_t o = 0;
	int used;

	while (*p && o + 1 < len) {
		used = 0;
		set  = 0;
		/* "PMC<n> (set <s>)" or "PMC<n>": register <n> of set <s>. */
		if (sscanf(p, "PMC%u (set %u)%n", &num, &set, &used) != 2)
			used = sscanf(p, "PMC%u%n", &num, &used) == 1 ? used
								      : 0;
		idx = set * OPS_COUNTERS + num;
		if (used && num < OPS_COUNTERS && idx < s->nr_ev) {
			if (s->nr_sets > 1)
				o += (size_t)snprintf(out + o, len - o,
						      "event '%s' (set %u)",
						      s->ev[idx].name, set);
			else
				o += (size_t)snprintf(out + o, len - o,
						      "event '%s'",
						      s->ev[idx].name);
			p += used;
			continue;
		}
		out[o++] = *p++;
	}
	if (o >= len)
		o = len - 1;
	out[o] = '\0';
}

/* Report the failure (ret) of a request to VM (vm); returns (ret). */
static int call_failed(struct ops_session *s, unsigned int vm, int ret)
{
	struct ops_vm *v = &s->vms[vm];
	char msg[sizeof(v->cl.err) + 256];

	if (ret == -ECONNRESET || ret == -EPIPE || ret == -ETIMEDOUT ||
	    ret == -ENOTCONN)
		ops_vm_gone(s, vm, v->cl.err);
	else if (ret) {
		/* Registers named as the user named them: by event. */
		ops_name_pmcs(s, v->cl.err, msg, sizeof(msg));
		fprintf(stderr, "%s: VM '%s': %s\n", s->prog, v->e.name, msg);
	}
	return ret;
}

/* Call (req) on VM (vm); on failure report it gone. */
static int call(struct ops_session *s, unsigned int vm, struct json_object *req,
		struct json_object **rep)
{
	int ret = ops_client_call(&s->vms[vm].cl, req, rep);

	return ret ? call_failed(s, vm, ret) : 0;
}

static struct json_object *ctx_req(const char *cmd, int ctx)
{
	struct json_object *r = ops_client_req(cmd);

	json_object_object_add(r, "ctx", json_object_new_int(ctx));
	return r;
}

static struct json_object *pmc(unsigned int num, unsigned int set,
			       uint64_t value)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "num", json_object_new_int((int)num));
	json_object_object_add(o, "set", json_object_new_int((int)set));
	json_object_object_add(o, "value", json_object_new_uint64(value));
	return o;
}

/* Event select of (ev): enabled, interrupt, its modifiers' rings. */
static uint64_t evsel(const struct ops_event *ev)
{
	return ev->evsel;
}

static struct json_object *new_set(unsigned int id, uint64_t switch_ns)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int((int)id));
	json_object_object_add(o, "flags",
			       json_object_new_int(PFM_SETFL_TIME_SWITCH));
	json_object_object_add(o, "timeout_ns",
			       json_object_new_int64((int64_t)switch_ns));
	return o;
}

/* session_open for counting: events spread over sets of 8 counters. */
static struct json_object *counting_request(struct ops_session *s,
					    uint64_t switch_ns)
{
	struct json_object *r = ops_client_req("session_open"), *sets, *pmcs;
	unsigned int i;

	if (s->nr_sets > 1) {
		sets = json_object_new_array();
		for (i = 0; i < s->nr_sets; i++)
			json_object_array_add(sets, new_set(i, switch_ns));
		json_object_object_add(r, "sets", sets);
	}
	pmcs = json_object_new_array();
	for (i = 0; i < s->nr_ev; i++)
		if (!s->ev[i].hole) /* a group's padding: nothing to count */
			json_object_array_add(pmcs, pmc(i % OPS_COUNTERS,
							i / OPS_COUNTERS,
							evsel(&s->ev[i])));
	json_object_object_add(r, "pmcs", pmcs);
	if (s->max_overhead) /* bounds the set switching */
		json_object_object_add(
			r, "max_overhead",
			json_object_new_int((int)s->max_overhead));
	return r;
}

/*
 * session_open for sampling. PMC0 samples: OVFL_NOTIFY so that a full
 * buffer notifies the VMM (the context has OVFL_NO_MSG: no message queue
 * fills up), PMD0 reset to -period at each overflow and at restart, every
 * programmed PMD recorded in each sample. The other PMCs only count.
 */
static struct json_object *sampling_request(struct ops_session *s,
					    uint64_t period, uint64_t buf_size)
{
	struct json_object *r = ops_client_req("session_open"), *arr, *o;
	uint64_t minus        = (uint64_t)0 - period;
	unsigned int i;

	arr = json_object_new_array();
	for (i = 0; i < s->nr_ev; i++) {
		o = pmc(i, 0, evsel(&s->ev[i]));
		if (i == 0) {
			json_object_object_add(
				o, "flags",
				json_object_new_int(PFM_REGFL_OVFL_NOTIFY));
			json_object_object_add(o, "reset_pmds",
					       json_object_new_uint64(1));
			json_object_object_add(
				o, "smpl_pmds",
				json_object_new_uint64((1ULL << s->nr_ev) - 1));
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(r, "pmcs", arr);
	arr = json_object_new_array();
	o   = json_object_new_object();
	json_object_object_add(o, "num", json_object_new_int(0));
	json_object_object_add(o, "value", json_object_new_uint64(minus));
	json_object_object_add(o, "short_reset", json_object_new_uint64(minus));
	json_object_object_add(o, "long_reset", json_object_new_uint64(minus));
	json_object_array_add(arr, o);
	json_object_object_add(r, "pmds", arr);
	json_object_object_add(r, "smpl_buf_size",
			       json_object_new_int64((int64_t)buf_size));
	if (s->callchain)
		json_object_object_add(r, "callchain",
				       json_object_new_int((int)s->callchain));
	if (s->max_overhead)
		json_object_object_add(
			r, "max_overhead",
			json_object_new_int((int)s->max_overhead));
	if (s->freq_mode)
		json_object_object_add(r, "freq_mode", json_object_new_int(1));
	return r;
}

/* Keep the session handle and the context of every vCPU from (rep). */
static void keep_session(struct ops_vm *v, struct json_object *rep)
{
	struct json_object *jv, *vcpus, *ctx;
	size_t i, n;
	int cpu;

	json_object_object_get_ex(rep, "session", &jv);
	json_object_object_get_ex(rep, "vcpus", &vcpus);
	json_object_object_get_ex(rep, "ctx", &ctx);
	v->session = json_object_get_int(jv);
	n          = json_object_array_length(vcpus);
	for (i = 0; i < n; i++) {
		cpu = json_object_get_int(json_object_array_get_idx(vcpus, i));
		if (cpu >= 0 && cpu < VMM_CTL_SESSION_VCPUS)
			v->ctx[cpu] = json_object_get_int(
				json_object_array_get_idx(ctx, i));
	}
}

/* With -C: the "vcpus" of (v)'s session_open request (a copy of req). */
static struct json_object *vm_request(struct ops_session *s,
				      const struct ops_vm *v,
				      struct json_object *req)
{
	struct json_object *r, *arr;
	unsigned int i;

	if (!s->sel || !s->sel->has_vcpus)
		return json_object_get(req);
	r = NULL;
	if (json_object_deep_copy(req, &r, NULL) || !r)
		return json_object_get(req);
	arr = json_object_new_array();
	for (i = 0; i < v->e.nr_vcpus; i++) {
		if (ops_vcpu_chosen(s->sel, i))
			json_object_array_add(arr, json_object_new_int((int)i));
	}
	json_object_object_add(r, "vcpus", arr);
	return r;
}

/*
 * (err) refuses an optional event as not available on this host: drop it
 * from (s) into (s->refused). The VMM names it by register, "PMC<n> (set
 * <s>)" (vmm_ctl_write_pmcs()).
 */
static bool drop_refused(struct ops_session *s, const char *err)
{
	const char *p = strstr(err, "PMC");
	unsigned int num, set = 0, idx;

	if (!p || !strstr(err, "not available") ||
	    sscanf(p, "PMC%u (set %u)", &num, &set) < 1)
		return false;
	idx = set * OPS_COUNTERS + num;
	if (num >= OPS_COUNTERS || idx >= s->nr_ev || !s->ev[idx].optional)
		return false;
	_Static_assert(sizeof(s->refused[0]) == sizeof(s->ev[0].name),
		       "a refused event keeps its whole name");
	memcpy(s->refused[s->nr_refused++], s->ev[idx].name,
	       sizeof(s->refused[0]));
	memmove(&s->ev[idx], &s->ev[idx + 1],
		(s->nr_ev - idx - 1) * sizeof(s->ev[0]));
	s->nr_ev--;
	return true;
}

/*
 * One session_open (req) per live VM: every chosen vCPU programmed, loaded
 * and started by the VMM in one round trip. Takes (req). -EAGAIN when the
 * first VM refused an optional event, now dropped: ask again. The VMs
 * share the host, so a later VM refuses what the first one counts only if
 * its configuration differs; it is then dropped as for any other error.
 */
static int open_all(struct ops_session *s, struct json_object *req)
{
	struct json_object *rep;
	unsigned int vm;
	bool opened = false;
	int ret;

	for (vm = 0; vm < s->nr_vms; vm++) {
		struct ops_vm *v = &s->vms[vm];

		if (v->gone)
			continue;
		ret = ops_client_call(&v->cl, vm_request(s, v, req), &rep);
		if (ret && !opened && drop_refused(s, v->cl.err)) {
			json_object_put(req);
			return -EAGAIN;
		}
		ret    = ret ? call_failed(s, vm, ret) : 0;
		opened = opened || !ret;
		if (!ret) {
			keep_session(v, rep);
			json_object_put(rep);
		} else if (!v->gone) {
			/* Its error was printed by call(): just drop it. */
			fprintf(stderr, "%s: VM '%s' skipped\n", s->prog,
				v->e.name);
			v->gone = true;
			s->nr_live--;
			ops_client_close(&v->cl);
		}
	}
	json_object_put(req);
	return s->nr_live ? 0 : -ENOENT;
}

int ops_start_counting(struct ops_session *s, uint64_t switch_ns)
{
	int ret;

	do {
		s->nr_sets = (s->nr_ev + OPS_COUNTERS - 1) / OPS_COUNTERS;
		ret        = open_all(s, counting_request(s, switch_ns));
	} while (ret == -EAGAIN);
	return ret;
}

int ops_start_sampling(struct ops_session *s, uint64_t period,
		       uint64_t buf_size)
{
	s->nr_sets = 1;
	if (s->nr_ev > OPS_COUNTERS) {
		fprintf(stderr, "%s: at most %d events when sampling\n",
			s->prog, OPS_COUNTERS);
		return -EINVAL;
	}
	return open_all(s, sampling_request(s, period, buf_size));
}

/*
 * One vCPU of a session_read reply. Exactly one set is active while
 * monitoring is on, so the enabled time is the sum of the sets' active
 * durations, and an event's running time is its own set's.
 */
static void parse_vcpu(struct ops_session *s, struct json_object *o,
		       struct ops_counts *out)
{
	struct json_object *vals, *sets, *e, *jv;
	uint64_t act[OPS_EVENTS_MAX] = {0};
	unsigned int i, id;

	json_object_object_get_ex(o, "values", &vals);
	json_object_object_get_ex(o, "sets", &sets);
	for (i = 0; i < s->nr_ev; i++)
		out->raw[i] = json_object_get_uint64(
			json_object_array_get_idx(vals, i));
	out->enabled = 0;
	for (i = 0; i < json_object_array_length(sets); i++) {
		e = json_object_array_get_idx(sets, i);
		json_object_object_get_ex(e, "id", &jv);
		id = (unsigned int)json_object_get_int(jv);
		json_object_object_get_ex(e, "act_ns", &jv);
		if (id < OPS_EVENTS_MAX)
			act[id] = json_object_get_uint64(jv);
		out->enabled += json_object_get_uint64(jv);
	}
	for (i = 0; i < s->nr_ev; i++)
		out->running[i] = act[i / OPS_COUNTERS];
	out->throttled = 0;
	if (json_object_object_get_ex(o, "throttled", &jv))
		out->throttled += json_object_get_uint64(jv);
	if (json_object_object_get_ex(o, "guest_throttled", &jv))
		out->throttled += json_object_get_uint64(jv);
	out->stale = json_object_object_get_ex(o, "stale", &jv) &&
		     json_object_get_boolean(jv);
	out->age_ns = json_object_object_get_ex(o, "age_ns", &jv)
			      ? json_object_get_uint64(jv)
			      : 0;
	out->pmis   = json_object_object_get_ex(o, "pmis", &jv)
			      ? json_object_get_uint64(jv)
			      : 0;
	/* Absent from an older VMM: 0. */
	out->switch_ns = json_object_object_get_ex(o, "switch_ns", &jv)
				 ? json_object_get_uint64(jv)
				 : 0;
	out->switch_stretched =
		json_object_object_get_ex(o, "switch_stretched", &jv)
			? json_object_get_uint64(jv)
			: 0;
}

int ops_read_send(struct ops_session *s, unsigned int vm, int timeout_ms)
{
	struct ops_vm *v      = &s->vms[vm];
	struct json_object *r = ops_client_req("session_read");
	int ret;

	if (v->gone) {
		json_object_put(r);
		return -ENOTCONN;
	}
	json_object_object_add(r, "session", json_object_new_int(v->session));
	ret = ops_client_send(&v->cl, r, timeout_ms, &v->read_id);
	return ret ? call_failed(s, vm, ret) : 0;
}

int ops_read_reply(struct ops_session *s, unsigned int vm, int timeout_ms,
		   struct ops_counts *out)
{
	struct ops_vm *v = &s->vms[vm];
	struct json_object *rep, *arr, *o, *jv;
	size_t i;
	int ret, cpu;

	if (v->gone)
		return -ENOTCONN;
	ret = ops_client_reply(&v->cl, v->read_id, timeout_ms, &rep);
	if (ret == -ETIMEDOUT)
		return ret; /* the caller's call: late is not gone */
	if (ret)
		return call_failed(s, vm, ret);
	memset(out, 0, v->e.nr_vcpus * sizeof(*out));
	json_object_object_get_ex(rep, "vcpus", &arr);
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		json_object_object_get_ex(o, "vcpu", &jv);
		cpu = json_object_get_int(jv);
		if (cpu >= 0 && (unsigned int)cpu < v->e.nr_vcpus)
			parse_vcpu(s, o, &out[cpu]);
	}
	json_object_put(rep);
	return 0;
}

int ops_read_vm(struct ops_session *s, unsigned int vm, struct ops_counts *out)
{
	struct ops_vm *v = &s->vms[vm];
	int tmo =
		v->cl.timeout_ms > 0 ? v->cl.timeout_ms : OPS_CLIENT_TIMEOUT_MS;
	int ret = ops_read_send(s, vm, tmo);

	if (!ret)
		ret = ops_read_reply(s, vm, tmo, out);
	return ret == -ETIMEDOUT ? call_failed(s, vm, ret) : ret;
}

/* [nr_missed, period] of sample (i), from "weights". */
static void weight_of(struct json_object *w, size_t i, struct ops_sample *smp)
{
	struct json_object *a = w ? json_object_array_get_idx(w, i) : NULL;

	if (!a || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) != 2)
		return;
	smp->missed = json_object_get_uint64(json_object_array_get_idx(a, 0));
	smp->period = json_object_get_uint64(json_object_array_get_idx(a, 1));
}

/* The throttle counts of a smpl_drain reply. */
static void keep_thr(struct ops_thr *t, struct json_object *rep)
{
	struct json_object *v;

	if (!json_object_object_get_ex(rep, "samples", &v))
		return; /* an older VMM */
	/* A JSON drain's "samples" is the array, not the count. */
	if (json_object_is_type(v, json_type_int))
		t->samples = json_object_get_uint64(v);
#define THR_FIELD(name, field)                                                 \
	if (json_object_object_get_ex(rep, name, &v))                          \
		t->field = json_object_get_uint64(v);
	THR_FIELD("throttled", throttled)
	THR_FIELD("missed", missed)
	THR_FIELD("run_ns", run_ns)
	THR_FIELD("cost_ns", cost_ns)
	THR_FIELD("cpu_ns", cpu_ns)
#undef THR_FIELD
	if (json_object_object_get_ex(rep, "scale", &v))
		t->scale = (uint32_t)json_object_get_int64(v);
	if (!t->seen) {
		t->run0  = t->run_ns;
		t->cost0 = t->cost_ns;
		t->cpu0  = t->cpu_ns;
	}
	t->seen = true;
}

/* Snapshot pauses since the session opened (absent: none). */
static void keep_snap(struct ops_vm *v, struct json_object *rep)
{
	struct json_object *jv;

	if (json_object_object_get_ex(rep, "snap_pauses", &jv))
		v->snap_pauses = json_object_get_uint64(jv);
	if (json_object_object_get_ex(rep, "snap_pause_ns", &jv))
		v->snap_pause_ns = json_object_get_uint64(jv);
}

static void emit_samples(struct json_object *arr, struct json_object *w,
			 unsigned int vm, ops_sample_fn_t fn, void *opaque)
{
	size_t i, n = json_object_array_length(arr), k, nv;
	struct ops_sample smp;
	struct json_object *a, *vals;

	for (i = 0; i < n; i++) {
		a = json_object_array_get_idx(arr, i);
		if (json_object_array_length(a) != 8 &&
		    json_object_array_length(a) != 9)
			continue;
		memset(&smp, 0, sizeof(smp));
		smp.vm   = vm;
		smp.vcpu = (unsigned int)json_object_get_int(
			json_object_array_get_idx(a, 0));
		smp.set = (unsigned int)json_object_get_int(
			json_object_array_get_idx(a, 1));
		smp.ovfl_pmd = (unsigned int)json_object_get_int(
			json_object_array_get_idx(a, 2));
		smp.tstamp =
			json_object_get_uint64(json_object_array_get_idx(a, 3));
		smp.ip =
			json_object_get_uint64(json_object_array_get_idx(a, 4));
		smp.pid = json_object_get_int(json_object_array_get_idx(a, 5));
		smp.tid = json_object_get_int(json_object_array_get_idx(a, 6));
		vals    = json_object_array_get_idx(a, 7);
		nv      = json_object_array_length(vals);
		if (nv > VMM_CTL_SAMPLE_VALS)
			nv = VMM_CTL_SAMPLE_VALS;
		for (k = 0; k < nv; k++)
			smp.vals[k] = json_object_get_uint64(
				json_object_array_get_idx(vals, k));
		smp.nr_vals = (unsigned int)nv;
		/* Callers (session_open with callchain). */
		vals = json_object_array_get_idx(a, 8);
		nv   = vals ? json_object_array_length(vals) : 0;
		if (nv > VMM_CTL_CHAIN_MAX)
			nv = VMM_CTL_CHAIN_MAX;
		for (k = 0; k < nv; k++)
			smp.chain[k] = json_object_get_uint64(
				json_object_array_get_idx(vals, k));
		smp.nr_chain = (unsigned int)nv;
		weight_of(w, i, &smp);
		fn(opaque, &smp);
	}
}

/*
 * The samples of packed frame (buf, len) to (fn), decoded into
 * one ops_sample on the stack (no allocation). 0, or -EPROTO with a
 * message in (err) (the samples before the malformed one were given).
 */
static int emit_packed(const unsigned char *buf, size_t len, unsigned int vm,
		       ops_sample_fn_t fn, void *opaque, char *err,
		       size_t errlen)
{
	struct vmm_ctl_pk_reader rd;
	struct vmm_ctl_pk_rec r;
	struct ops_sample smp;
	int ret;

	ret = vmm_ctl_pk_open(&rd, buf, len, err, errlen);
	while (!ret) {
		memset(&smp, 0, sizeof(smp));
		ret = vmm_ctl_pk_next(&rd, &r, smp.vals, smp.chain, err,
				      errlen);
		if (ret <= 0)
			break;
		smp.vm       = vm;
		smp.vcpu     = r.cpu;
		smp.set      = r.set;
		smp.ovfl_pmd = r.ovfl_pmd;
		smp.tstamp   = r.tstamp;
		smp.ip       = r.ip;
		smp.pid      = r.pid;
		smp.tid      = r.tid;
		smp.nr_vals  = r.nr_vals;
		smp.nr_chain = r.nr_chain;
		smp.missed   = r.nr_missed;
		smp.period   = r.period;
		fn(opaque, &smp);
		ret = 0;
	}
	return ret;
}

/*
 * One packed smpl_drain of context (ctx) of VM (vm): the reply
 * (*rep, for the caller) and the frame it announces, decoded to (fn).
 * 0; 1 when the VMM does not know "packed" (drain it in JSON); -errno
 * (the VM is then reported, or gone).
 */
static int drain_packed(struct ops_session *s, unsigned int vm, int ctx,
			ops_sample_fn_t fn, void *opaque,
			struct json_object **rep)
{
	struct ops_vm *v        = &s->vms[vm];
	struct json_object *req = ctx_req("smpl_drain", ctx), *jn;
	int tmo =
		v->cl.timeout_ms > 0 ? v->cl.timeout_ms : OPS_CLIENT_TIMEOUT_MS;
	char err[160], why[200];
	unsigned char *nb;
	uint64_t want;
	int ret;

	json_object_object_add(req, "packed", json_object_new_int(1));
	ret = ops_client_call(&v->cl, req, rep);
	if (ret == -EINVAL && strstr(v->cl.err, "'packed'")) {
		v->drain_json = true; /* a VMM older than this client */
		return 1;
	}
	if (ret)
		return call_failed(s, vm, ret);
	want = json_object_object_get_ex(*rep, "packed_bytes", &jn)
		       ? json_object_get_uint64(jn)
		       : 0;
	ret  = -EMSGSIZE;
	if (want < VMM_CTL_PK_HDR || want > VMM_CTL_PK_MAX)
		goto fail;
	if (s->pk_cap < want) {
		ret = -ENOMEM;
		nb  = realloc(s->pk_buf, want);
		if (!nb)
			goto fail;
		s->pk_buf = nb;
		s->pk_cap = want;
	}
	ret = vmm_ctl_recv_packed(v->cl.fd, s->pk_buf, want, tmo);
	if (ret)
		goto fail;
	ret = emit_packed(s->pk_buf, want, vm, fn, opaque, err, sizeof(err));
	if (!ret)
		return 0;
	ops_vm_gone(s, vm, err);
	goto out;
fail:
	if (ret == -EPROTO)
		snprintf(why, sizeof(why),
			 "packed samples: a frame other than the %llu bytes "
			 "its reply announced",
			 (unsigned long long)want);
	else
		snprintf(why, sizeof(why), "packed samples: %s",
			 strerror(-ret));
	ops_vm_gone(s, vm,
		    ret == -ECONNRESET ? "connection closed by the VMM" : why);
out:
	json_object_put(*rep);
	*rep = NULL;
	return ret;
}

int ops_drain(struct ops_session *s, unsigned int vm, ops_sample_fn_t fn,
	      void *opaque, uint64_t *lost)
{
	struct ops_vm *v = &s->vms[vm];
	struct json_object *rep, *arr, *jl, *jm, *jw;
	const char *env = getenv("VPMU_DRAIN_JSON");
	bool force_json = env && !strcmp(env, "1");
	unsigned int i;
	bool more;
	int ret;

	*lost = 0;
	for (i = 0; !v->gone && i < v->e.nr_vcpus; i++) {
		if (v->ctx[i] < 0)
			continue; /* not chosen by -C */
		do {
			ret = 1;
			if (!force_json && !v->drain_json)
				ret = drain_packed(s, vm, v->ctx[i], fn, opaque,
						   &rep);
			if (ret == 1) {
				ret = call(s, vm,
					   ctx_req("smpl_drain", v->ctx[i]),
					   &rep);
				if (!ret && json_object_object_get_ex(
						    rep, "samples", &arr)) {
					if (!json_object_object_get_ex(
						    rep, "weights", &jw))
						jw = NULL;
					emit_samples(arr, jw, vm, fn, opaque);
				}
			}
			if (ret)
				return ret;
			json_object_object_get_ex(rep, "lost", &jl);
			json_object_object_get_ex(rep, "more", &jm);
			keep_thr(&v->thr[i], rep);
			keep_snap(v, rep);
			*lost += json_object_get_uint64(jl);
			more = json_object_get_boolean(jm);
			json_object_put(rep);
		} while (more);
	}
	return v->gone ? -ENOTCONN : 0;
}

void ops_check_alive(struct ops_session *s)
{
	struct pollfd p;
	unsigned int vm;
	char c;

	for (vm = 0; vm < s->nr_vms; vm++) {
		if (s->vms[vm].gone)
			continue;
		/* Between requests the VMM never writes: readable is EOF. */
		p = (struct pollfd){.fd = s->vms[vm].cl.fd, .events = POLLIN};
		if (poll(&p, 1, 0) == 1 &&
		    recv(p.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
			ops_vm_gone(s, vm, "connection closed by the VMM");
	}
}

void ops_close(struct ops_session *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_vms; i++)
		ops_client_close(&s->vms[i].cl);
	free(s->vms);
	s->vms    = NULL;
	s->nr_vms = s->nr_live = 0;
	free(s->pk_buf);
	s->pk_buf = NULL;
	s->pk_cap = 0;
}

int ops_select_all(const struct cli_cmd *cmd, void *ctx, const char *value)
{
	struct ops_select *sel = ctx;

	(void)cmd;
	(void)value;
	sel->all = true;
	return 0;
}

int ops_select_vm(const struct cli_cmd *cmd, void *ctx, const char *value)
{
	struct ops_select *sel = ctx;
	const char *p          = value;
	size_t n;

	/* -p a,b or -p a -p b: each name is cut out of (value) in place. */
	while (*p) {
		n = strcspn(p, ",");
		if (!n || sel->nr == ARRAY_SIZE(sel->names))
			return cli_error(cmd, "-p '%s': %s", value,
					 n ? "too many VMs"
					   : "an empty VM name");
		sel->names[sel->nr++] = p;
		if (!p[n])
			break;
		((char *)p)[n] = '\0';
		p += n + 1;
	}
	if (!*value)
		return cli_error(cmd, "-p needs a VM");
	return 0;
}

/* "0,2-3" into a bit mask of vCPUs below VMM_CTL_SESSION_VCPUS. */
int ops_select_vcpus(const struct cli_cmd *cmd, void *ctx, const char *value)
{
	struct ops_select *sel = ctx;
	unsigned long lo, hi;
	const char *p = value;
	char *end;

	do {
		errno = 0;
		lo    = strtoul(p, &end, 10);
		hi    = lo;
		if (end != p && *end == '-') {
			p  = end + 1;
			hi = strtoul(p, &end, 10);
		}
		if (end == p || errno || (*end && *end != ',') || hi < lo ||
		    hi >= VMM_CTL_SESSION_VCPUS || *p == '-' || *p == '+')
			return cli_error(cmd,
					 "-C '%s': not a vCPU list like 0,2-3 "
					 "(vCPUs 0..%d)",
					 value, VMM_CTL_SESSION_VCPUS - 1);
		for (; lo <= hi; lo++)
			sel->vcpus |= 1ULL << lo;
		p = end + (*end == ',');
	} while (*end);
	sel->has_vcpus = true;
	return 0;
}

bool ops_vcpu_chosen(const struct ops_select *sel, unsigned int cpu)
{
	if (!sel || !sel->has_vcpus)
		return true;
	return cpu < VMM_CTL_SESSION_VCPUS && (sel->vcpus >> cpu & 1);
}
