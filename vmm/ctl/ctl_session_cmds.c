// SPDX-License-Identifier: MIT
/*
 * ctl_session_cmds.c: sessions, one request per VM for what the
 * per-context commands do per vCPU. session_open creates a host context on
 * each chosen vCPU, gives it the request's event sets, PMCs and PMDs, and
 * loads and starts it; session_read brings every vCPU's accounting up to
 * date with one wait (ctl_vcpu_sync.c) and answers each vCPU's PMDs and
 * set times with a freshness flag; session_close destroys the contexts.
 */
#include "ctl_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm_pv.h"

static const struct vpmu_caller host = {.owner = VPMU_OWNER_HOST};

/* What session_open applies to every vCPU, copied from the request once. */
struct session_setup {
	struct pfarg_pmc pmcs[VMM_CTL_REGS_MAX];
	struct pfarg_pmd pmds[VMM_CTL_REGS_MAX];
	struct pfarg_setdesc sets[VMM_CTL_SETS_MAX];
	size_t nr_pmcs, nr_pmds, nr_sets;
	uint64_t buf_size;
	unsigned int chain;        /* callers per sample */
	unsigned int max_overhead; /* operator budget, 0 none */
	bool freq_mode;            /* stretch the period */
	uint16_t set;              /* loaded and started */
	bool has_set;
};

static struct vpmu_domain *dom(const struct vmm_ctl_call *x)
{
	return vmm_pv(x->ctl->vm)->domain;
}

int vmm_ctl_session_vcpus(struct json_object *req, unsigned int nr_vcpus,
			  unsigned int *vcpus, unsigned int *n, char *err,
			  size_t errlen)
{
	bool seen[VMM_CTL_VCPU_ID_MAX + 1] = {false};
	struct json_object *arr;
	unsigned int i, v;
	size_t len;

	if (!json_object_object_get_ex(req, "vcpus", &arr)) {
		if (nr_vcpus > VMM_CTL_SESSION_VCPUS) {
			snprintf(err, errlen,
				 "the VM has %u vCPUs, a session at most %d: "
				 "name them in 'vcpus'",
				 nr_vcpus, VMM_CTL_SESSION_VCPUS);
			return -E2BIG;
		}
		for (i = 0; i < nr_vcpus; i++)
			vcpus[i] = i;
		*n = nr_vcpus;
		return 0;
	}
	len = json_object_array_length(arr);
	for (i = 0; i < len && i < VMM_CTL_SESSION_VCPUS; i++) {
		v = (unsigned int)json_object_get_int(
			json_object_array_get_idx(arr, i));
		if (v >= nr_vcpus || v > VMM_CTL_VCPU_ID_MAX) {
			snprintf(err, errlen,
				 "vcpus[%u]: no vCPU %u (the VM has %u)", i, v,
				 nr_vcpus);
			return -EINVAL;
		}
		if (seen[v]) {
			snprintf(err, errlen, "vcpus[%u]: vCPU %u named twice",
				 i, v);
			return -EINVAL;
		}
		seen[v]  = true;
		vcpus[i] = v;
	}
	*n = i;
	return 0;
}

static void read_setup(struct vmm_ctl_call *x, struct session_setup *su)
{
	struct json_object *arr;

	memset(su, 0, sizeof(*su));
	json_object_object_get_ex(x->req, "pmcs", &arr);
	su->nr_pmcs = vmm_ctl_fill_pmcs(arr, su->pmcs);
	if (json_object_object_get_ex(x->req, "pmds", &arr))
		su->nr_pmds = vmm_ctl_fill_pmds(arr, su->pmds);
	if (json_object_object_get_ex(x->req, "sets", &arr))
		su->nr_sets = vmm_ctl_fill_sets(arr, su->sets);
	su->buf_size = (uint64_t)vmm_ctl_get_int(x->req, "smpl_buf_size", 0);
	su->chain    = (unsigned int)vmm_ctl_get_int(x->req, "callchain", 0);
	su->max_overhead =
		(unsigned int)vmm_ctl_get_int(x->req, "max_overhead", 0);
	su->freq_mode = vmm_ctl_get_int(x->req, "freq_mode", 0) != 0;
	su->has_set   = json_object_object_get_ex(x->req, "set", NULL);
	su->set       = (uint16_t)vmm_ctl_get_int(x->req, "set", 0);
}

/*
 * One vCPU's context, programmed (not loaded). The libvpmu calls write
 * their results into the arrays, so each vCPU gets fresh copies.
 */
static int program_one(struct vmm_ctl_call *x, const struct session_setup *su,
		       unsigned int vcpu, struct vmm_ctl_hctx **out)
{
	struct pfarg_pmc pmcs[VMM_CTL_REGS_MAX];
	struct pfarg_pmd pmds[VMM_CTL_REGS_MAX];
	struct pfarg_setdesc sets[VMM_CTL_SETS_MAX];
	struct vmm_ctl_hctx *hc;
	int ret;

	ret = vmm_ctl_hctx_create(x, vcpu, su->buf_size, &hc);
	if (ret)
		return ret;
	ret = vmm_ctl_hctx_chains(x, hc, su->chain);
	if (!ret && (su->max_overhead || su->freq_mode))
		ret = vpmu_ctx_set_budget(dom(x), &host, hc->handle,
					  su->max_overhead, su->freq_mode);
	memcpy(sets, su->sets, su->nr_sets * sizeof(sets[0]));
	if (!ret && su->nr_sets)
		ret = vpmu_ctx_create_evtsets(dom(x), &host, hc->handle, sets,
					      (int)su->nr_sets);
	memcpy(pmcs, su->pmcs, su->nr_pmcs * sizeof(pmcs[0]));
	if (!ret)
		ret = vmm_ctl_write_pmcs(x, hc, pmcs, su->nr_pmcs);
	memcpy(pmds, su->pmds, su->nr_pmds * sizeof(pmds[0]));
	if (!ret && su->nr_pmds)
		ret = vpmu_ctx_write_pmds(dom(x), &host, hc->handle, pmds,
					  (int)su->nr_pmds);
	if (ret) {
		vmm_ctl_hctx_free(x->ctl, hc);
		return ret;
	}
	*out = hc;
	return 0;
}

static int load_start(struct vmm_ctl_call *x, const struct session_setup *su,
		      struct vmm_ctl_hctx *hc)
{
	struct pfarg_load ld  = {.load_pid = hc->vcpu, .load_set = su->set};
	struct pfarg_start st = {.start_set = su->set};
	int ret;

	ret = vpmu_ctx_load(dom(x), &host, hc->handle, &ld, 1);
	if (!ret)
		ret = vpmu_ctx_start(dom(x), &host, hc->handle,
				     su->has_set ? &st : NULL,
				     su->has_set ? 1 : 0);
	return ret;
}

/* Say which vCPU failed, keeping the handler's own message. */
static void name_vcpu(struct vmm_ctl_call *x, unsigned int vcpu, int ret)
{
	char msg[sizeof(x->err)];

	snprintf(msg, sizeof(msg), "%s", x->err[0] ? x->err : strerror(-ret));
	snprintf(x->err, sizeof(x->err), "vCPU %u: %.*s", vcpu,
		 vmm_ctl_utf8_prefix(msg, 200), msg);
}

static void remember(struct vmm_ctl_session *s, const struct session_setup *su)
{
	size_t i;

	s->nr_pmds = (unsigned int)su->nr_pmcs;
	for (i = 0; i < su->nr_pmcs; i++) {
		s->pmd[i].num = su->pmcs[i].reg_num;
		s->pmd[i].set = su->pmcs[i].reg_set;
	}
	s->nr_sets   = su->nr_sets ? (unsigned int)su->nr_sets : 1;
	s->set_id[0] = 0; /* set 0 always exists */
	for (i = 0; i < su->nr_sets; i++)
		s->set_id[i] = su->sets[i].set_id;
}

static void reply_open(struct vmm_ctl_call *x, unsigned int handle,
		       const struct vmm_ctl_session *s)
{
	struct json_object *vcpus = json_object_new_array();
	struct json_object *ctx   = json_object_new_array();
	unsigned int i;

	for (i = 0; i < s->nr_vcpus; i++) {
		json_object_array_add(vcpus,
				      json_object_new_int((int)s->vcpu[i]));
		json_object_array_add(ctx, json_object_new_int(s->ctx[i]));
	}
	json_object_object_add(x->rep, "session",
			       json_object_new_int((int)handle));
	json_object_object_add(x->rep, "vcpus", vcpus);
	json_object_object_add(x->rep, "ctx", ctx);
}

static struct vmm_ctl_session *free_session(struct vmm_ctl_client *c,
					    unsigned int *handle)
{
	unsigned int i;

	for (i = 0; i < VMM_CTL_SESSIONS_MAX; i++) {
		if (!c->sessions[i].used) {
			*handle = i;
			return &c->sessions[i];
		}
	}
	return NULL;
}

/* Units of a time event per second (0: not a time event). */
static uint64_t units_per_s(const struct vmm_ctl_call *x, uint16_t code)
{
	if (code == PVPMU_EV_HV_RUN_NS)
		return 1000000000ULL;
	if (code == PVPMU_EV_HV_GUEST_CYCLES)
		return vmm_pv(x->ctl->vm)->tsc_khz * 1000ULL;
	return 0;
}

/*
 * A sampling period of a time event above the VM's maximum
 * sample rate is refused with one message naming the maximum (libvpmu
 * refuses it too, without saying why). Compared in the event's own units,
 * exactly: a period converted to ns first would round down, and a rate at
 * the maximum would read as above it.
 */
static int check_rate(struct vmm_ctl_call *x, const struct session_setup *su)
{
	uint64_t max = vmm_pv(x->ctl->vm)->max_smpl_rate, ups, period, v;
	size_t i, j;
	uint16_t code;

	for (i = 0; max && i < su->nr_pmds; i++) {
		v = su->pmds[i].reg_short_reset ? su->pmds[i].reg_short_reset
						: su->pmds[i].reg_value;
		for (j = 0; v && j < su->nr_pmcs; j++) {
			if (su->pmcs[j].reg_num != su->pmds[i].reg_num ||
			    su->pmcs[j].reg_set != su->pmds[i].reg_set)
				continue;
			code = (uint16_t)PVPMU_EV_CODE(su->pmcs[j].reg_value >>
							       8,
						       su->pmcs[j].reg_value);
			ups  = units_per_s(x, code);
			period = 0 - v;
			if (!ups || (unsigned __int128)period * max >=
					    (unsigned __int128)ups)
				continue;
			snprintf(x->err, sizeof(x->err),
				 "sampling period %llu of PMD %u is %llu "
				 "samples/s, above this VM's maximum sample "
				 "rate of %llu/s",
				 (unsigned long long)period,
				 su->pmds[i].reg_num,
				 (unsigned long long)(ups / period),
				 (unsigned long long)max);
			return -EINVAL;
		}
	}
	return 0;
}

int vmm_ctl_do_session_open(struct vmm_ctl_call *x)
{
	struct vmm_ctl_hctx *hc[VMM_CTL_SESSION_VCPUS];
	unsigned int i, n = 0, nr_made, failed = 0, handle;
	struct session_setup su;
	struct vmm_ctl_session *s;
	int ret;

	s = free_session(x->c, &handle);
	if (!s) {
		snprintf(x->err, sizeof(x->err),
			 "too many sessions on this connection (max %d)",
			 VMM_CTL_SESSIONS_MAX);
		return -ENOSPC;
	}
	memset(s, 0, sizeof(*s));
	ret = vmm_ctl_session_vcpus(x->req, x->ctl->vm->nr_vcpus, s->vcpu, &n,
				    x->err, sizeof(x->err));
	if (ret)
		return ret;
	read_setup(x, &su);
	ret = check_rate(x, &su);
	if (ret)
		return ret;
	for (nr_made = 0; nr_made < n; nr_made++) {
		failed = s->vcpu[nr_made];
		ret    = program_one(x, &su, failed, &hc[nr_made]);
		if (ret)
			goto out_destroy;
	}
	/* One wait for all: each vCPU's run so far is charged before LOAD. */
	vmm_ctl_sync(x->ctl, s->vcpu, n, NULL);
	for (i = 0; i < n; i++) {
		failed = s->vcpu[i];
		ret    = load_start(x, &su, hc[i]);
		if (ret)
			goto out_destroy;
	}
	/* Their deadline timers are armed before KVM_RUN: re-arm them. */
	for (i = 0; i < n; i++) {
		vmm_ctl_kick(x->ctl, s->vcpu[i]);
		s->ctx[i] = hc[i]->handle;
	}
	s->used     = true;
	s->nr_vcpus = n;
	remember(s, &su);
	reply_open(x, handle, s);
	return 0;

out_destroy:
	name_vcpu(x, failed, ret);
	for (i = 0; i < nr_made; i++)
		vmm_ctl_hctx_free(x->ctl, hc[i]);
	return ret;
}

/* The request's session, or NULL with x->err set. */
static struct vmm_ctl_session *req_session(struct vmm_ctl_call *x)
{
	int64_t h = vmm_ctl_get_int(x->req, "session", -1);

	if (h >= 0 && h < VMM_CTL_SESSIONS_MAX && x->c->sessions[h].used)
		return &x->c->sessions[h];
	snprintf(x->err, sizeof(x->err), "no session %lld on this connection",
		 (long long)h);
	return NULL;
}

static struct json_object *sets_json(const struct pfarg_setinfo *info,
				     unsigned int n)
{
	struct json_object *arr = json_object_new_array(), *e;
	unsigned int i;

	for (i = 0; i < n; i++) {
		e = json_object_new_object();
		json_object_object_add(e, "id",
				       json_object_new_int(info[i].set_id));
		json_object_object_add(
			e, "runs", json_object_new_uint64(info[i].set_runs));
		json_object_object_add(
			e, "act_ns",
			json_object_new_uint64(
				info[i].set_act_duration.tv_sec *
					1000000000ULL +
				info[i].set_act_duration.tv_nsec));
		json_object_array_add(arr, e);
	}
	return arr;
}

/* One vCPU of (s): {vcpu, ctx, values[], sets[], stale[, age_ns]}. */
static int read_vcpu(struct vmm_ctl_call *x, const struct vmm_ctl_session *s,
		     unsigned int i, const struct vmm_ctl_fresh *fresh,
		     struct json_object **out)
{
	struct pfarg_pmd pmds[VMM_CTL_REGS_MAX];
	struct pfarg_setinfo info[VMM_CTL_SETS_MAX];
	struct json_object *o, *vals;
	unsigned int j;
	int ret;

	memset(pmds, 0, sizeof(pmds));
	memset(info, 0, sizeof(info));
	for (j = 0; j < s->nr_pmds; j++) {
		pmds[j].reg_num = s->pmd[j].num;
		pmds[j].reg_set = s->pmd[j].set;
	}
	for (j = 0; j < s->nr_sets; j++)
		info[j].set_id = s->set_id[j];
	ret = vpmu_ctx_read_pmds(dom(x), &host, s->ctx[i], pmds,
				 (int)s->nr_pmds);
	if (!ret)
		ret = vpmu_ctx_getinfo_evtsets(dom(x), &host, s->ctx[i], info,
					       (int)s->nr_sets);
	if (ret)
		return ret;
	o    = json_object_new_object();
	vals = json_object_new_array();
	for (j = 0; j < s->nr_pmds; j++)
		json_object_array_add(
			vals, json_object_new_uint64(pmds[j].reg_value));
	json_object_object_add(o, "vcpu", json_object_new_int((int)s->vcpu[i]));
	json_object_object_add(o, "ctx", json_object_new_int(s->ctx[i]));
	json_object_object_add(o, "values", vals);
	json_object_object_add(o, "sets", sets_json(info, s->nr_sets));
	vmm_ctl_throttle_json(x, s->ctx[i], s->vcpu[i], o);
	/* PMIs injected into the guest on this vCPU, ever. */
	json_object_object_add(
		o, "pmis",
		json_object_new_uint64(atomic_load(
			&vmm_pv_vcpu(&x->ctl->vm->vcpus[s->vcpu[i]])->pmis)));
	json_object_object_add(o, "stale",
			       json_object_new_boolean(fresh->stale));
	if (fresh->stale)
		json_object_object_add(o, "age_ns",
				       json_object_new_uint64(fresh->age_ns));
	*out = o;
	return 0;
}

int vmm_ctl_do_session_read(struct vmm_ctl_call *x)
{
	struct vmm_ctl_fresh fresh[VMM_CTL_SESSION_VCPUS];
	struct vmm_ctl_session *s = req_session(x);
	struct json_object *arr, *o;
	unsigned int i;
	int ret;

	if (!s)
		return -EBADF;
	vmm_ctl_sync(x->ctl, s->vcpu, s->nr_vcpus, fresh);
	arr = json_object_new_array();
	for (i = 0; i < s->nr_vcpus; i++) {
		ret = read_vcpu(x, s, i, &fresh[i], &o);
		if (ret) {
			json_object_put(arr);
			name_vcpu(x, s->vcpu[i], ret);
			return ret;
		}
		json_object_array_add(arr, o);
	}
	json_object_object_add(x->rep, "vcpus", arr);
	return 0;
}

int vmm_ctl_do_session_close(struct vmm_ctl_call *x)
{
	struct vmm_ctl_session *s = req_session(x);
	struct vmm_ctl_hctx *hc;
	unsigned int i;

	if (!s)
		return -EBADF;
	/* A context the client destroyed by itself is already gone. */
	for (i = 0; i < s->nr_vcpus; i++) {
		hc = vmm_ctl_hctx_find(x->c, s->ctx[i]);
		if (hc && s->ctx[i] >= 0)
			vmm_ctl_hctx_free(x->ctl, hc);
	}
	memset(s, 0, sizeof(*s));
	return 0;
}

void vmm_ctl_sessions_release(struct vmm_ctl_client *c)
{
	memset(c->sessions, 0, sizeof(c->sessions));
}
