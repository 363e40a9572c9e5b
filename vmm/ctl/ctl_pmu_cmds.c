// SPDX-License-Identifier: MIT
/*
 * ctl_pmu_cmds.c: the commands of the control socket (ctl_proto.h),
 * run on the control thread for one client: host contexts through
 * libvpmu as owner VPMU_OWNER_HOST, and the draining of their
 * default-format sampling buffers.
 *
 * Draining without losing samples: the default format writes a sample,
 * then hdr_cur_offs, then hdr_count, and on the last sample that fits
 * bumps hdr_overflows and masks the context. So hdr_overflows is read
 * first: unchanged, the bytes up to hdr_cur_offs are complete samples and
 * more may follow (copied next time); changed, the context is masked and
 * the buffer stable: copy the rest, then PFM_RESTART (which resets the
 * header, long-resets the sampling PMD and unmasks).
 */
#include "ctl_server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pvpmu/catalog.h"
#include "vmm_core_priv.h"

static const struct vpmu_caller host = {.owner = VPMU_OWNER_HOST};

struct cmd_ctx {
	struct vmm_control *ctl;
	struct vmm_ctl_client *c;
	struct json_object *req, *rep;
	char err[256];
};

static struct vpmu_domain *dom(struct cmd_ctx *x)
{
	return x->ctl->vm->pmu.domain;
}

static struct vmm_ctl_hctx *find_hctx(struct vmm_ctl_client *c, int handle)
{
	unsigned int i;

	/* (handle) -1 finds a free slot. */
	for (i = 0; i < VMM_CTL_CTX_MAX; i++) {
		if (c->ctx[i].handle == handle)
			return &c->ctx[i];
	}
	return NULL;
}

static struct vmm_ctl_hctx *req_hctx(struct cmd_ctx *x)
{
	int h                   = (int)vmm_ctl_get_int(x->req, "ctx", -1);
	struct vmm_ctl_hctx *hc = find_hctx(x->c, h);

	if (!hc)
		snprintf(x->err, sizeof(x->err),
			 "no host context %d on this connection", h);
	return hc;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void vmm_ctl_kick(struct vmm_control *ctl, unsigned int vcpu, uint64_t wait_ns)
{
	struct vmm_vcpu *v = vmm_vm_vcpu(ctl->vm, vcpu);
	uint64_t run, t0;

	if (!v || !v->has_thread)
		return;
	run = vpmu_cpu_run_ns(v->pmu.cpu);
	vmm_vcpu_kick(v, VMM_REQ_TIMER);
	/*
	 * A spinning guest never exits: wait until the kick's exit has been
	 * accounted (the vCPU's run time moved), or the vCPU is halted.
	 */
	for (t0 = now_ns(); wait_ns && now_ns() - t0 < wait_ns;) {
		if (vpmu_cpu_run_ns(v->pmu.cpu) != run ||
		    __atomic_load_n(&v->halted, __ATOMIC_RELAXED))
			break;
		usleep(20);
	}
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
		if (vpmu_cpu_snapshot(vm->vcpus[i].pmu.cpu, snap))
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

static int do_hello(struct cmd_ctx *x, bool info)
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
	if (!info)
		return 0;
	add_int(r, "guest_contexts", guest_contexts(x->ctl->vm));
	add_int(r, "host_contexts", host_contexts(x->ctl));
	add_u64(r, "smpl_mem", vpmu_domain_smpl_mem(dom(x)));
	add_u64(r, "kicks", total_kicks(x->ctl->vm));
	return 0;
}

static int do_resolve(struct cmd_ctx *x)
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
			 "unknown event '%.64s' for host contexts (catalogue "
			 "names, see 'vpmu events'; kvmstat statistics are "
			 "not available to operators)",
			 name);
		return -ENOENT;
	}
	add_int(x->rep, "code", code);
	add_int(x->rep, "is_time", d ? d->is_time : 0);
	return 0;
}

static int do_create(struct cmd_ctx *x)
{
	uint8_t uuid[16] = PFM_DEFAULT_SMPL_UUID;
	int64_t vcpu     = vmm_ctl_get_int(x->req, "vcpu", 0);
	int64_t bsz      = vmm_ctl_get_int(x->req, "smpl_buf_size", 0);
	struct pfm_default_smpl_arg a = {.buf_size = (uint64_t)bsz};
	struct pfarg_ctx pc           = {.ctx_flags =
						 PFM_FL_SYSTEM_WIDE | PFM_FL_OVFL_NO_MSG};
	struct vmm_ctl_hctx *hc       = find_hctx(x->c, -1);
	size_t size;
	int ret;

	if (vcpu >= x->ctl->vm->nr_vcpus) {
		snprintf(x->err, sizeof(x->err), "no vCPU %lld (the VM has %u)",
			 (long long)vcpu, x->ctl->vm->nr_vcpus);
		return -EINVAL;
	}
	if (!hc) {
		snprintf(x->err, sizeof(x->err),
			 "too many host contexts on this connection (max %d)",
			 VMM_CTL_CTX_MAX);
		return -ENOMEM;
	}
	if (bsz)
		memcpy(pc.ctx_smpl_buf_id, uuid, sizeof(uuid));
	ret = vpmu_ctx_create(dom(x), &host, &pc, 1, bsz ? &a : NULL,
			      bsz ? sizeof(a) : 0);
	if (ret)
		return ret;
	memset(hc, 0, sizeof(*hc));
	hc->handle = pc.ctx_fd;
	hc->vcpu   = (unsigned int)vcpu;
	if (bsz) {
		vpmu_ctx_smpl_buf(dom(x), &host, hc->handle, &hc->buf, &size);
		hc->buf_size = size;
		hc->consumed = sizeof(struct pfm_default_smpl_hdr);
	}
	add_int(x->rep, "ctx", hc->handle);
	add_u64(x->rep, "buf_size", hc->buf_size);
	return 0;
}

static void free_hctx(struct vmm_control *ctl, struct vmm_ctl_hctx *hc)
{
	vpmu_ctx_destroy(ctl->vm->pmu.domain, &host, hc->handle);
	free(hc->spill);
	memset(hc, 0, sizeof(*hc));
	hc->handle = -1;
}

void vmm_ctl_client_release(struct vmm_control *ctl, struct vmm_ctl_client *c)
{
	unsigned int i;

	for (i = 0; i < VMM_CTL_CTX_MAX; i++) {
		if (c->ctx[i].handle >= 0)
			free_hctx(ctl, &c->ctx[i]);
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

static int do_write_pmcs(struct cmd_ctx *x, struct vmm_ctl_hctx *hc)
{
	struct json_object *arr;
	struct pfarg_pmc pmcs[64];
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "pmcs", &arr);
	n = json_object_array_length(arr);
	memset(pmcs, 0, sizeof(pmcs));
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		pmcs[i].reg_num   = (uint16_t)vmm_ctl_get_int(e, "num", 0);
		pmcs[i].reg_set   = (uint16_t)vmm_ctl_get_int(e, "set", 0);
		pmcs[i].reg_value = vmm_ctl_get_u64(e, "value", 0);
		pmcs[i].reg_flags = (uint32_t)vmm_ctl_get_int(e, "flags", 0);
		pmcs[i].reg_reset_pmds[0] = vmm_ctl_get_u64(e, "reset_pmds", 0);
		pmcs[i].reg_smpl_pmds[0]  = vmm_ctl_get_u64(e, "smpl_pmds", 0);
		pmcs[i].reg_smpl_eventid  = vmm_ctl_get_u64(e, "eventid", 0);
		/*
		 * A KVM statistic is opened with an ioctl on the vCPU fd,
		 * which blocks while the vCPU runs: it would hang this
		 * thread (see do_resolve). Counting PMCs only (0..7).
		 */
		if (pmcs[i].reg_num < 8 &&
		    PVPMU_EV_EVENT(pmcs[i].reg_value) == 0xe2) {
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
			snprintf(x->err, sizeof(x->err), "PMC%u (set %u): %s",
				 pmcs[i].reg_num, pmcs[i].reg_set,
				 pmcs[i].reg_flags & PFM_REG_RETFL_NOTAVAIL
					 ? "event not available on this host"
					 : "invalid value");
			break;
		}
		note_nvals(hc, pmcs[i].reg_set, pmcs[i].reg_num,
			   pmcs[i].reg_smpl_pmds[0]);
	}
	return ret;
}

static void fill_pmds(struct json_object *arr, struct pfarg_pmd *pmds, size_t n)
{
	size_t i;

	memset(pmds, 0, n * sizeof(*pmds));
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		pmds[i].reg_num        = (uint16_t)vmm_ctl_get_int(e, "num", 0);
		pmds[i].reg_set        = (uint16_t)vmm_ctl_get_int(e, "set", 0);
		pmds[i].reg_value      = vmm_ctl_get_u64(e, "value", 0);
		pmds[i].reg_long_reset = vmm_ctl_get_u64(e, "long_reset", 0);
		pmds[i].reg_short_reset = vmm_ctl_get_u64(e, "short_reset", 0);
	}
}

static int do_pmds(struct cmd_ctx *x, struct vmm_ctl_hctx *hc, bool write)
{
	struct json_object *arr, *vals;
	struct pfarg_pmd pmds[64];
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "pmds", &arr);
	n = json_object_array_length(arr);
	fill_pmds(arr, pmds, n);
	if (write)
		return vpmu_ctx_write_pmds(dom(x), &host, hc->handle, pmds,
					   (int)n);
	/* Fresh time counts: make the vCPU account its run so far. */
	vmm_ctl_kick(x->ctl, hc->vcpu, 20000000ULL);
	ret = vpmu_ctx_read_pmds(dom(x), &host, hc->handle, pmds, (int)n);
	if (ret)
		return ret;
	vals = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(
			vals, json_object_new_uint64(pmds[i].reg_value));
	json_object_object_add(x->rep, "values", vals);
	return 0;
}

static int do_evtsets(struct cmd_ctx *x, struct vmm_ctl_hctx *hc)
{
	struct json_object *arr, *out;
	struct pfarg_setdesc sets[64];
	uint64_t ns;
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "sets", &arr);
	n = json_object_array_length(arr);
	memset(sets, 0, sizeof(sets));
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);

		ns             = (uint64_t)vmm_ctl_get_int(e, "timeout_ns", 0);
		sets[i].set_id = (uint16_t)vmm_ctl_get_int(e, "id", 0);
		sets[i].set_id_next = (uint16_t)vmm_ctl_get_int(e, "next", 0);
		sets[i].set_flags   = (uint32_t)vmm_ctl_get_int(e, "flags", 0);
		sets[i].set_timeout.tv_sec  = ns / 1000000000ULL;
		sets[i].set_timeout.tv_nsec = ns % 1000000000ULL;
	}
	ret = vpmu_ctx_create_evtsets(dom(x), &host, hc->handle, sets, (int)n);
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

static int do_getinfo(struct cmd_ctx *x, struct vmm_ctl_hctx *hc)
{
	struct json_object *arr, *out;
	struct pfarg_setinfo info[64];
	size_t i, n;
	int ret;

	json_object_object_get_ex(x->req, "sets", &arr);
	n = json_object_array_length(arr);
	memset(info, 0, sizeof(info));
	for (i = 0; i < n; i++)
		info[i].set_id = (uint16_t)json_object_get_int(
			json_object_array_get_idx(arr, i));
	ret = vpmu_ctx_getinfo_evtsets(dom(x), &host, hc->handle, info, (int)n);
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

static int do_load(struct cmd_ctx *x, struct vmm_ctl_hctx *hc)
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
	vmm_ctl_kick(x->ctl, ld.load_pid, 50000000ULL);
	ret = vpmu_ctx_load(dom(x), &host, hc->handle, &ld, 1);
	if (!ret)
		hc->vcpu = ld.load_pid;
	return ret;
}

static int do_start(struct cmd_ctx *x, struct vmm_ctl_hctx *hc)
{
	struct pfarg_start st = {
		.start_set = (uint16_t)vmm_ctl_get_int(x->req, "set", 0)};
	bool has_set = json_object_object_get_ex(x->req, "set", NULL);

	int ret;

	ret = vpmu_ctx_start(dom(x), &host, hc->handle, has_set ? &st : NULL,
			     has_set ? 1 : 0);
	/* The deadline timer is armed before KVM_RUN: re-arm it now. */
	if (!ret)
		vmm_ctl_kick(x->ctl, hc->vcpu, 0);
	return ret;
}

/* Run the context command (name) of the checked request. */
static int ctx_cmd(struct cmd_ctx *x, const char *name)
{
	struct vmm_ctl_hctx *hc = req_hctx(x);

	if (!hc)
		return -EBADF;
	if (!strcmp(name, "destroy")) {
		free_hctx(x->ctl, hc);
		return 0;
	}
	if (!strcmp(name, "write_pmcs"))
		return do_write_pmcs(x, hc);
	if (!strcmp(name, "write_pmds"))
		return do_pmds(x, hc, true);
	if (!strcmp(name, "read_pmds"))
		return do_pmds(x, hc, false);
	if (!strcmp(name, "create_evtsets"))
		return do_evtsets(x, hc);
	if (!strcmp(name, "getinfo_evtsets"))
		return do_getinfo(x, hc);
	if (!strcmp(name, "load"))
		return do_load(x, hc);
	if (!strcmp(name, "unload"))
		return vpmu_ctx_unload(dom(x), &host, hc->handle);
	if (!strcmp(name, "start"))
		return do_start(x, hc);
	if (!strcmp(name, "stop"))
		return vpmu_ctx_stop(dom(x), &host, hc->handle);
	return vmm_ctl_drain(x->ctl, hc, x->req, x->rep);
}

struct json_object *vmm_ctl_handle(struct vmm_control *ctl,
				   struct vmm_ctl_client *c,
				   const struct vmm_ctl_cmd *cmd,
				   struct json_object *req, int64_t id)
{
	struct cmd_ctx x = {.ctl = ctl, .c = c, .req = req};
	int ret;

	x.rep = vmm_ctl_reply_ok(id);
	if (!strcmp(cmd->name, "hello") || !strcmp(cmd->name, "info"))
		ret = do_hello(&x, !strcmp(cmd->name, "info"));
	else if (!strcmp(cmd->name, "resolve"))
		ret = do_resolve(&x);
	else if (!strcmp(cmd->name, "ctx_create"))
		ret = do_create(&x);
	else
		ret = ctx_cmd(&x, cmd->name);
	if (!ret)
		return x.rep;
	json_object_put(x.rep);
	if (!x.err[0])
		snprintf(x.err, sizeof(x.err), "%s: %s", cmd->name,
			 strerror(-ret));
	return vmm_ctl_reply_err(id, -ret, x.err);
}
