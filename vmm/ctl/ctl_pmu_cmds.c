// SPDX-License-Identifier: MIT
/*
 * ctl_pmu_cmds.c: the handlers of the per-context commands of the control
 * socket (ctl_proto.h) and of hello/info/resolve, run on the control
 * thread for one client (ctl_cmd_table.c dispatches to them): host
 * contexts through libvpmu as owner VPMU_OWNER_HOST, and the draining of
 * their default-format sampling buffers.
 *
 * Draining without losing samples: the default format writes a sample,
 * then hdr_cur_offs, then hdr_count, and on the last sample that fits
 * bumps hdr_overflows and masks the context. So hdr_overflows is read
 * first: unchanged, the bytes up to hdr_cur_offs are complete samples and
 * more may follow (copied next time); changed, the context is masked and
 * the buffer stable: copy the rest, then PFM_RESTART (which resets the
 * header, long-resets the sampling PMD and unmasks).
 */
#include "ctl_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pvpmu/catalog.h"
#include "vmm_pv.h"

static const struct vpmu_caller host = {.owner = VPMU_OWNER_HOST};

static struct vpmu_domain *dom(const struct vmm_ctl_call *x)
{
	return vmm_pv(x->ctl->vm)->domain;
}

struct vmm_ctl_hctx *vmm_ctl_hctx_find(struct vmm_ctl_client *c, int handle)
{
	unsigned int i;

	for (i = 0; i < VMM_CTL_CTX_MAX; i++) {
		if (c->ctx[i].handle == handle)
			return &c->ctx[i];
	}
	return NULL;
}

static void add_int(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static unsigned int guest_contexts(struct vmm_vm *vm)
{
	struct vpmu_snapshot *snap = malloc(sizeof(*snap));
	int seen[VMM_VCPUS_MAX];
	unsigned int i, j, n = 0;

	if (!snap)
		return 0;
	for (i = 0; i < vm->nr_vcpus && i < VMM_VCPUS_MAX; i++) {
		if (vpmu_cpu_snapshot(vmm_pv_vcpu(&vm->vcpus[i])->cpu, snap))
			continue;
		for (j = 0; j < n && seen[j] != snap->fd; j++)
			;
		if (j == n)
			seen[n++] = snap->fd;
	}
	free(snap);
	return n;
}

/* Kicks of every vCPU (timer deadlines, operator reads): the host's cost. */
static uint64_t total_kicks(struct vmm_vm *vm)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < vm->nr_vcpus; i++)
		n += __atomic_load_n(&vm->vcpus[i].stats.kicks,
				     __ATOMIC_RELAXED);
	return n;
}

static unsigned int host_contexts(struct vmm_control *ctl)
{
	unsigned int i, j, n = 0;

	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		for (j = 0; ctl->clients[i].fd >= 0 && j < VMM_CTL_CTX_MAX; j++)
			n += ctl->clients[i].ctx[j].handle >= 0;
	}
	return n;
}

int vmm_ctl_do_hello(struct vmm_ctl_call *x)
{
	const struct vmm_reg_entry *e = &x->ctl->entry;
	struct json_object *r         = x->rep;

	json_object_object_add(r, "server", json_object_new_string("vpmu"));
	add_int(r, "proto", VMM_CTL_PROTO);
	json_object_object_add(r, "uuid", json_object_new_string(e->uuid));
	json_object_object_add(r, "name", json_object_new_string(e->name));
	add_int(r, "pid", e->pid);
	add_int(r, "nr_vcpus", e->nr_vcpus);
	json_object_object_add(r, "pmu", json_object_new_string(e->pmu));
	json_object_object_add(r, "image", json_object_new_string(e->image));
	add_u64(r, "tsc_khz", e->tsc_khz);
	add_int(r, "started", e->started);
	add_int(r, "nr_counters", 8);
	return 0;
}

int vmm_ctl_do_info(struct vmm_ctl_call *x)
{
	vmm_ctl_do_hello(x);
	add_int(x->rep, "guest_contexts", guest_contexts(x->ctl->vm));
	add_int(x->rep, "host_contexts", host_contexts(x->ctl));
	add_u64(x->rep, "smpl_mem", vpmu_domain_smpl_mem(dom(x)));
	add_u64(x->rep, "kicks", total_kicks(x->ctl->vm));
	/* The control plane's own cost: frames served, times it woke up. */
	add_u64(x->rep, "ctl_frames", x->ctl->nr_frames);
	add_u64(x->rep, "ctl_wakeups", x->ctl->nr_wakeups);
	add_u64(x->rep, "ctl_tid", (uint64_t)atomic_load(&x->ctl->tid));
	return 0;
}

int vmm_ctl_do_resolve(struct vmm_ctl_call *x)
{
	const struct pvpmu_event_desc *d;
	struct json_object *jn;
	const char *name;
	int code;

	json_object_object_get_ex(x->req, "name", &jn);
	name = json_object_get_string(jn);
	d    = pvpmu_catalog_find(name);
	/*
	 * Catalogue names only: KVM statistics are discovered with an ioctl
	 * on the vCPU fd, which blocks while that vCPU is in KVM_RUN, so the
	 * control thread cannot look them up (nor count them) safely.
	 */
	code = d && d->source != PVPMU_SRC_KVMSTAT ? d->code : -1;
	if (code < 0) {
		snprintf(x->err, sizeof(x->err),
			 "unknown event '%.*s' for host contexts (catalogue "
			 "names, see 'vpmu events'; kvmstat statistics are "
			 "not available to operators)",
			 vmm_ctl_utf8_prefix(name, 64), name);
		return -ENOENT;
	}
	add_int(x->rep, "code", code);
	add_int(x->rep, "is_time", d ? d->is_time : 0);
	return 0;
}

int vmm_ctl_hctx_create(struct vmm_ctl_call *x, unsigned int vcpu,
			uint64_t buf_size, struct vmm_ctl_hctx **out)
{
	uint8_t uuid[16]              = PFM_DEFAULT_SMPL_UUID;
	struct pfm_default_smpl_arg a = {.buf_size = buf_size};
	struct pfarg_ctx pc           = {.ctx_flags =
						 PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG};
	struct vmm_ctl_hctx *hc       = vmm_ctl_hctx_find(x->c, -1);
	size_t size;
	int ret;

	if (vcpu >= x->ctl->vm->nr_vcpus) {
		snprintf(x->err, sizeof(x->err), "no vCPU %u (the VM has %u)",
			 vcpu, x->ctl->vm->nr_vcpus);
		return -EINVAL;
	}
	if (!hc) {
		snprintf(x->err, sizeof(x->err),
			 "too many host contexts on this connection (max %d)",
			 VMM_CTL_CTX_MAX);
		return -ENOMEM;
	}
	if (buf_size)
		memcpy(pc.ctx_smpl_buf_id, uuid, sizeof(uuid));
	ret = vpmu_ctx_create(dom(x), &host, &pc, 1, buf_size ? &a : NULL,
			      buf_size ? sizeof(a) : 0);
	if (ret)
		return ret;
	memset(hc, 0, sizeof(*hc));
	hc->handle         = pc.ctx_fd;
	hc->vcpu           = vcpu;
	hc->snap_pauses0   = x->ctl->snap_pauses;
	hc->snap_pause_ns0 = x->ctl->snap_pause_ns;
	if (buf_size) {
		vpmu_ctx_smpl_buf(dom(x), &host, hc->handle, &hc->buf, &size);
		hc->buf_size = size;
		hc->consumed = sizeof(struct pfm_default_smpl_hdr);
	}
	*out = hc;
	return 0;
}

int vmm_ctl_do_create(struct vmm_ctl_call *x)
{
	int64_t vcpu = vmm_ctl_get_int(x->req, "vcpu", 0);
	int64_t bsz  = vmm_ctl_get_int(x->req, "smpl_buf_size", 0);
	struct vmm_ctl_hctx *hc;
	int ret;

	ret = vmm_ctl_hctx_create(x, (unsigned int)vcpu, (uint64_t)bsz, &hc);
	if (ret)
		return ret;
	ret = vmm_ctl_hctx_chains(
		x, hc, (unsigned int)vmm_ctl_get_int(x->req, "callchain", 0));
	if (ret) {
		vmm_ctl_hctx_free(x->ctl, hc);
		return ret;
	}
	add_int(x->rep, "ctx", hc->handle);
	add_u64(x->rep, "buf_size", hc->buf_size);
	return 0;
}

void vmm_ctl_hctx_free(struct vmm_control *ctl, struct vmm_ctl_hctx *hc)
{
	vpmu_ctx_destroy(vmm_pv(ctl->vm)->domain, &host, hc->handle);
	vmm_ctl_hctx_chains_off(ctl, hc);
	free(hc->spill);
	memset(hc, 0, sizeof(*hc));
	hc->handle = -1;
}

int vmm_ctl_do_destroy(struct vmm_ctl_call *x)
{
	vmm_ctl_hctx_free(x->ctl, x->hc);
	return 0;
}

void vmm_ctl_client_release(struct vmm_control *ctl, struct vmm_ctl_client *c)
{
	unsigned int i;

	vmm_ctl_sessions_release(c);
	for (i = 0; i < VMM_CTL_CTX_MAX; i++) {
		if (c->ctx[i].handle >= 0)
			vmm_ctl_hctx_free(ctl, &c->ctx[i]);
	}
}

/* Remember how many values samples of (set, pmd) carry. */
static void note_nvals(struct vmm_ctl_hctx *hc, uint16_t set, uint16_t pmd,
		       uint64_t smpl_pmds)
{
	unsigned int i, n = (unsigned int)__builtin_popcountll(smpl_pmds);

	for (i = 0; i < hc->nr_nvals; i++) {
		if (hc->nvals[i].set == set && hc->nvals[i].pmd == pmd)
			break;
	}
	if (i == VMM_CTL_NVALS_MAX)
		return;
	hc->nvals[i].set   = set;
	hc->nvals[i].pmd   = pmd;
	hc->nvals[i].nvals = (uint16_t)n;
	if (i == hc->nr_nvals)
		hc->nr_nvals++;
}

size_t vmm_ctl_fill_pmcs(struct json_object *arr, struct pfarg_pmc *pmcs)
{
	size_t i, n = json_object_array_length(arr);

	memset(pmcs, 0, n * sizeof(*pmcs));
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		pmcs[i].reg_num   = (uint16_t)vmm_ctl_get_int(e, "num", 0);
		pmcs[i].reg_set   = (uint16_t)vmm_ctl_get_int(e, "set", 0);
		pmcs[i].reg_value = vmm_ctl_get_u64(e, "value", 0);
		pmcs[i].reg_flags = (uint32_t)vmm_ctl_get_int(e, "flags", 0);
		pmcs[i].reg_reset_pmds[0] = vmm_ctl_get_u64(e, "reset_pmds", 0);
		pmcs[i].reg_smpl_pmds[0]  = vmm_ctl_get_u64(e, "smpl_pmds", 0);
		pmcs[i].reg_smpl_eventid  = vmm_ctl_get_u64(e, "eventid", 0);
	}
	return n;
}

int vmm_ctl_write_pmcs(struct vmm_ctl_call *x, struct vmm_ctl_hctx *hc,
		       struct pfarg_pmc *pmcs, size_t n)
{
	const char *why;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		/*
		 * A KVM statistic is opened with an ioctl on the vCPU fd,
		 * which blocks while the vCPU runs: it would hang this
		 * thread (see do_resolve). Counting PMCs only (0..7).
		 */
		if (pmcs[i].reg_num < 8 &&
		    PVPMU_EV_EVENT(pmcs[i].reg_value) == PVPMU_EVSEL_KVMSTAT) {
			snprintf(x->err, sizeof(x->err),
				 "PMC%u: KVM statistics (event 0xe2) are not "
				 "available to host contexts",
				 pmcs[i].reg_num);
			return -EINVAL;
		}
	}
	ret = vpmu_ctx_write_pmcs(dom(x), &host, hc->handle, pmcs, (int)n);
	for (i = 0; i < n; i++) {
		if (PFM_REG_HAS_ERROR(pmcs[i].reg_flags)) {
			why = pmcs[i].reg_flags & PFM_REG_RETFL_NOTAVAIL
				      ? vpmu_domain_evsel_refusal(
						dom(x), pmcs[i].reg_value)
				      : NULL;
			snprintf(x->err, sizeof(x->err),
				 "PMC%u (set %u): %s%s%s", pmcs[i].reg_num,
				 pmcs[i].reg_set,
				 pmcs[i].reg_flags & PFM_REG_RETFL_NOTAVAIL
					 ? "event not available on this host"
					 : "invalid value",
				 why ? ": " : "", why ? why : "");
			break;
		}
		note_nvals(hc, pmcs[i].reg_set, pmcs[i].reg_num,
			   pmcs[i].reg_smpl_pmds[0]);
	}
	return ret;
}

int vmm_ctl_do_write_pmcs(struct vmm_ctl_call *x)
{
	struct pfarg_pmc pmcs[VMM_CTL_REGS_MAX];
	struct json_object *arr;
	size_t n;

	json_object_object_get_ex(x->req, "pmcs", &arr);
	n = vmm_ctl_fill_pmcs(arr, pmcs);
	return vmm_ctl_write_pmcs(x, x->hc, pmcs, n);
}

size_t vmm_ctl_fill_pmds(struct json_object *arr, struct pfarg_pmd *pmds)
{
	size_t i, n = json_object_array_length(arr);

	memset(pmds, 0, n * sizeof(*pmds));
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		pmds[i].reg_num        = (uint16_t)vmm_ctl_get_int(e, "num", 0);
		pmds[i].reg_set        = (uint16_t)vmm_ctl_get_int(e, "set", 0);
		pmds[i].reg_value      = vmm_ctl_get_u64(e, "value", 0);
		pmds[i].reg_long_reset = vmm_ctl_get_u64(e, "long_reset", 0);
		pmds[i].reg_short_reset = vmm_ctl_get_u64(e, "short_reset", 0);
	}
	return n;
}

int vmm_ctl_do_write_pmds(struct vmm_ctl_call *x)
{
	struct pfarg_pmd pmds[VMM_CTL_REGS_MAX];
	struct json_object *arr;
	size_t n;

	json_object_object_get_ex(x->req, "pmds", &arr);
	n = vmm_ctl_fill_pmds(arr, pmds);
	return vpmu_ctx_write_pmds(dom(x), &host, x->hc->handle, pmds, (int)n);
}

int vmm_ctl_do_read_pmds(struct vmm_ctl_call *x)
{
	struct pfarg_pmd pmds[VMM_CTL_REGS_MAX];
	struct json_object *arr, *vals;
	struct vmm_ctl_fresh fresh;
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "pmds", &arr);
	n = vmm_ctl_fill_pmds(arr, pmds);
	/* Fresh time counts: make the vCPU account its run so far. */
	vmm_ctl_sync(x->ctl, &x->hc->vcpu, 1, &fresh);
	ret = vpmu_ctx_read_pmds(dom(x), &host, x->hc->handle, pmds, (int)n);
	if (ret)
		return ret;
	vals = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(
			vals, json_object_new_uint64(pmds[i].reg_value));
	json_object_object_add(x->rep, "values", vals);
	json_object_object_add(x->rep, "stale",
			       json_object_new_boolean(fresh.stale));
	if (fresh.stale)
		add_u64(x->rep, "age_ns", fresh.age_ns);
	return 0;
}

size_t vmm_ctl_fill_sets(struct json_object *arr, struct pfarg_setdesc *sets)
{
	size_t i, n = json_object_array_length(arr);
	uint64_t ns;

	memset(sets, 0, n * sizeof(*sets));
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		ns             = (uint64_t)vmm_ctl_get_int(e, "timeout_ns", 0);
		sets[i].set_id = (uint16_t)vmm_ctl_get_int(e, "id", 0);
		sets[i].set_id_next = (uint16_t)vmm_ctl_get_int(e, "next", 0);
		sets[i].set_flags   = (uint32_t)vmm_ctl_get_int(e, "flags", 0);
		sets[i].set_timeout.tv_sec  = ns / 1000000000ULL;
		sets[i].set_timeout.tv_nsec = ns % 1000000000ULL;
	}
	return n;
}

int vmm_ctl_do_create_evtsets(struct vmm_ctl_call *x)
{
	struct pfarg_setdesc sets[VMM_CTL_SETS_MAX];
	struct json_object *arr, *out;
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "sets", &arr);
	n   = vmm_ctl_fill_sets(arr, sets);
	ret = vpmu_ctx_create_evtsets(dom(x), &host, x->hc->handle, sets,
				      (int)n);
	if (ret)
		return ret;
	out = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(
			out,
			json_object_new_uint64(sets[i].set_timeout.tv_sec *
						       1000000000ULL +
					       sets[i].set_timeout.tv_nsec));
	json_object_object_add(x->rep, "timeout_ns", out);
	return 0;
}

int vmm_ctl_do_getinfo_evtsets(struct vmm_ctl_call *x)
{
	struct pfarg_setinfo info[VMM_CTL_SETS_MAX];
	struct json_object *arr, *out;
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "sets", &arr);
	n = json_object_array_length(arr);
	memset(info, 0, sizeof(info));
	for (i = 0; i < n; i++)
		info[i].set_id = (uint16_t)json_object_get_int(
			json_object_array_get_idx(arr, i));
	ret = vpmu_ctx_getinfo_evtsets(dom(x), &host, x->hc->handle, info,
				       (int)n);
	if (ret)
		return ret;
	out = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_new_object();

		add_int(e, "id", info[i].set_id);
		add_u64(e, "runs", info[i].set_runs);
		add_u64(e, "act_ns",
			info[i].set_act_duration.tv_sec * 1000000000ULL +
				info[i].set_act_duration.tv_nsec);
		json_object_array_add(out, e);
	}
	json_object_object_add(x->rep, "sets", out);
	return 0;
}

int vmm_ctl_do_load(struct vmm_ctl_call *x)
{
	int ret;
	struct pfarg_load ld = {
		.load_pid = (uint32_t)vmm_ctl_get_int(x->req, "vcpu", 0),
		.load_set = (uint16_t)vmm_ctl_get_int(x->req, "set", 0),
	};

	if (ld.load_pid >= x->ctl->vm->nr_vcpus) {
		snprintf(x->err, sizeof(x->err), "no vCPU %u", ld.load_pid);
		return -EINVAL;
	}
	/*
	 * Run time is accounted at exits: bring the vCPU's up to now, or the
	 * first exit after LOAD would charge the whole run before it.
	 */
	vmm_ctl_sync(x->ctl, &ld.load_pid, 1, NULL);
	ret = vpmu_ctx_load(dom(x), &host, x->hc->handle, &ld, 1);
	if (!ret)
		x->hc->vcpu = ld.load_pid;
	return ret;
}

int vmm_ctl_do_unload(struct vmm_ctl_call *x)
{
	return vpmu_ctx_unload(dom(x), &host, x->hc->handle);
}

int vmm_ctl_do_start(struct vmm_ctl_call *x)
{
	struct pfarg_start st = {
		.start_set = (uint16_t)vmm_ctl_get_int(x->req, "set", 0)};
	bool has_set = json_object_object_get_ex(x->req, "set", NULL);
	int ret;

	ret = vpmu_ctx_start(dom(x), &host, x->hc->handle, has_set ? &st : NULL,
			     has_set ? 1 : 0);
	/* The deadline timer is armed before KVM_RUN: re-arm it now. */
	if (!ret)
		vmm_ctl_kick(x->ctl, x->hc->vcpu);
	return ret;
}

int vmm_ctl_do_stop(struct vmm_ctl_call *x)
{
	return vpmu_ctx_stop(dom(x), &host, x->hc->handle);
}

int vmm_ctl_do_smpl_drain(struct vmm_ctl_call *x)
{
	return vmm_ctl_drain(x->ctl, x->c, x->hc, x->req, x->rep);
}
