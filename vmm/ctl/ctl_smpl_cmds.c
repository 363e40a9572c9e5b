// SPDX-License-Identifier: MIT
/*
 * ctl_smpl_cmds.c: copying samples out of the host contexts' default-format
 * buffers (see the ordering argument at the top of ctl_pmu_cmds.c) into a
 * per-context spill list, and the smpl_drain command that hands them out.
 * With call chains each sample gets the guest callers its vCPU
 * captured at the sample's time (pv_callchain.c).
 */
#include "ctl_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm_pv.h"

#define DFL_HDR sizeof(struct pfm_default_smpl_hdr)
#define DFL_ENT sizeof(struct pfm_default_smpl_entry)

static const struct vpmu_caller host = {.owner = VPMU_OWNER_HOST};

static int nvals_of(const struct vmm_ctl_hctx *hc, uint16_t set, uint16_t pmd)
{
	unsigned int i;

	for (i = 0; i < hc->nr_nvals; i++) {
		if (hc->nvals[i].set == set && hc->nvals[i].pmd == pmd)
			return hc->nvals[i].nvals;
	}
	return -1;
}

static struct vmm_ctl_sample *spill_slot(struct vmm_ctl_hctx *hc)
{
	struct vmm_ctl_sample *ns;
	unsigned int cap;
	uint64_t *nc;

	if (hc->nr_spill == hc->cap_spill) {
		if (hc->cap_spill >= VMM_CTL_SPILL_MAX)
			return NULL;
		cap = hc->cap_spill ? hc->cap_spill * 2 : 1024;
		if (hc->chain_depth) {
			nc = realloc(hc->chains, (size_t)cap * hc->chain_depth *
							 sizeof(*nc));
			if (!nc)
				return NULL;
			hc->chains = nc;
		}
		ns = realloc(hc->spill, cap * sizeof(*ns));
		if (!ns)
			return NULL;
		hc->spill     = ns;
		hc->cap_spill = cap;
	}
	return &hc->spill[hc->nr_spill++];
}

int vmm_ctl_hctx_chains(struct vmm_ctl_call *x, struct vmm_ctl_hctx *hc,
			unsigned int depth)
{
	int ret;

	if (!depth)
		return 0;
	if (!hc->buf) {
		snprintf(x->err, sizeof(x->err),
			 "callchain needs a sampling buffer (smpl_buf_size)");
		return -EINVAL;
	}
	ret = vmm_pv_chain_enable(&x->ctl->vm->vcpus[hc->vcpu]);
	if (ret) {
		snprintf(x->err, sizeof(x->err), "no memory for call chains");
		return ret;
	}
	hc->chain_depth = depth;
	return 0;
}

void vmm_ctl_hctx_chains_off(struct vmm_control *ctl, struct vmm_ctl_hctx *hc)
{
	if (hc->chain_depth)
		vmm_pv_chain_disable(&ctl->vm->vcpus[hc->vcpu]);
	free(hc->chains);
	hc->chains      = NULL;
	hc->chain_depth = 0;
}

/* Copy the complete samples in [hc->consumed, end) to the spill list. */
static void copy_samples(struct vmm_control *ctl, struct vmm_ctl_hctx *hc,
			 size_t end)
{
	const unsigned char *base = hc->buf;
	struct pfm_default_smpl_entry e;
	struct vmm_ctl_sample *s;
	unsigned int k;
	int nv;

	while (hc->consumed + DFL_ENT <= end) {
		memcpy(&e, base + hc->consumed, sizeof(e));
		nv = nvals_of(hc, e.set, e.ovfl_pmd);
		if (nv < 0 || hc->consumed + DFL_ENT + 8 * (size_t)nv > end) {
			hc->lost++; /* unknown body size: cannot go on */
			hc->consumed = end;
			return;
		}
		s = spill_slot(hc);
		if (s) {
			*s = (struct vmm_ctl_sample){
				.cpu       = e.cpu,
				.set       = e.set,
				.ovfl_pmd  = e.ovfl_pmd,
				.pid       = e.pid,
				.tid       = e.tid,
				.tstamp    = e.tstamp,
				.ip        = e.ip,
				.period    = 0 - e.last_reset_val,
				.nr_missed = e.nr_missed,
			};
			for (k = 0; k < (unsigned int)nv; k++) {
				if (k < VMM_CTL_SAMPLE_VALS)
					memcpy(&s->vals[k],
					       base + hc->consumed + DFL_ENT +
						       8 * k,
					       8);
			}
			s->nr_vals = (uint16_t)(nv < VMM_CTL_SAMPLE_VALS
							? nv
							: VMM_CTL_SAMPLE_VALS);
			if (hc->chain_depth)
				s->nr_chain = (uint16_t)vmm_pv_chain_lookup(
					&ctl->vm->vcpus[hc->vcpu], e.tstamp,
					hc->chains + (size_t)(s - hc->spill) *
							     hc->chain_depth,
					hc->chain_depth);
		} else {
			hc->lost++;
		}
		hc->consumed += DFL_ENT + 8 * (size_t)nv;
	}
}

static void collect(struct vmm_control *ctl, struct vmm_ctl_hctx *hc)
{
	struct pfm_default_smpl_hdr *hdr = hc->buf;
	struct vpmu_domain *d            = vmm_pv(ctl->vm)->domain;
	struct vpmu_ctx_stats st;
	uint64_t ovf, end;

	if (!hdr)
		return;
	ovf = __atomic_load_n(&hdr->hdr_overflows, __ATOMIC_ACQUIRE);
	end = __atomic_load_n(&hdr->hdr_cur_offs, __ATOMIC_ACQUIRE);
	if (end > hc->buf_size)
		end = hc->buf_size;
	if (end < hc->consumed)
		hc->consumed = DFL_HDR; /* restarted by someone: start over */
	copy_samples(ctl, hc, end);
	if (ovf != hc->overflows) {
		/* Full and masked: nothing more is written until restart. */
		hc->overflows = ovf;
		vpmu_ctx_restart(d, &host, hc->handle, 0);
		vmm_ctl_kick(ctl, hc->vcpu); /* re-arm its timer */
		hc->consumed = DFL_HDR;
		return;
	}
	/* Masked by the host's overflow throttle: resume. */
	if (!vpmu_ctx_stats(d, &host, hc->handle, &st) &&
	    st.nr_throttled != hc->throttled) {
		hc->throttled = st.nr_throttled;
		vpmu_ctx_restart(d, &host, hc->handle, 0);
		vmm_ctl_kick(ctl, hc->vcpu);
	}
}

void vmm_ctl_collect_all(struct vmm_control *ctl)
{
	unsigned int i, j;

	for (i = 0; i < VMM_CTL_CLIENTS_MAX; i++) {
		for (j = 0; ctl->clients[i].fd >= 0 && j < VMM_CTL_CTX_MAX;
		     j++) {
			if (ctl->clients[i].ctx[j].handle >= 0)
				collect(ctl, &ctl->clients[i].ctx[j]);
		}
	}
}

static struct json_object *sample_json(const struct vmm_ctl_hctx *hc,
				       const struct vmm_ctl_sample *s)
{
	struct json_object *a = json_object_new_array(), *v;
	unsigned int k;

	json_object_array_add(a, json_object_new_int(s->cpu));
	json_object_array_add(a, json_object_new_int(s->set));
	json_object_array_add(a, json_object_new_int(s->ovfl_pmd));
	json_object_array_add(a, json_object_new_uint64(s->tstamp));
	json_object_array_add(a, json_object_new_uint64(s->ip));
	json_object_array_add(a, json_object_new_int(s->pid));
	json_object_array_add(a, json_object_new_int(s->tid));
	v = json_object_new_array();
	for (k = 0; k < s->nr_vals; k++)
		json_object_array_add(v, json_object_new_uint64(s->vals[k]));
	json_object_array_add(a, v);
	if (!hc->chain_depth)
		return a;
	v = json_object_new_array();
	for (k = 0; k < s->nr_chain; k++)
		json_object_array_add(
			v, json_object_new_uint64(
				   hc->chains[(size_t)(s - hc->spill) *
						      hc->chain_depth +
					      k]));
	json_object_array_add(a, v);
	return a;
}

/* [nr_missed, period] of a sample ("weights" of smpl_drain). */
static struct json_object *weight_json(const struct vmm_ctl_sample *s)
{
	struct json_object *a = json_object_new_array();

	json_object_array_add(a, json_object_new_int(s->nr_missed));
	json_object_array_add(a, json_object_new_uint64(s->period));
	return a;
}

void vmm_ctl_throttle_json(struct vmm_ctl_call *x, int handle,
			   unsigned int vcpu, struct json_object *o)
{
	struct vpmu_domain *d = vmm_pv(x->ctl->vm)->domain;
	struct vpmu_cpu *cpu  = vpmu_cpu_get(d, vcpu);
	struct vpmu_snapshot snap;
	struct vpmu_ctx_stats st;

	if (vpmu_ctx_stats(d, &host, handle, &st) || !cpu)
		return;
	/* The guest's own context on that vCPU, for `vpmu stat`. */
	if (!vpmu_cpu_snapshot(cpu, &snap))
		json_object_object_add(o, "guest_throttled",
				       json_object_new_uint64(snap.nr_dropped));
	json_object_object_add(o, "samples",
			       json_object_new_uint64(st.nr_samples));
	json_object_object_add(o, "throttled",
			       json_object_new_uint64(st.nr_dropped));
	json_object_object_add(o, "missed",
			       json_object_new_uint64(st.nr_missed));
	json_object_object_add(o, "scale", json_object_new_int64(st.scale));
	json_object_object_add(o, "gap_ns", json_object_new_uint64(st.gap_ns));
	json_object_object_add(o, "switch_ns",
			       json_object_new_uint64(st.switch_ns));
	json_object_object_add(o, "switch_stretched",
			       json_object_new_uint64(st.nr_switch_stretched));
	json_object_object_add(o, "run_ns",
			       json_object_new_uint64(vpmu_cpu_run_ns(cpu)));
	json_object_object_add(o, "cost_ns",
			       json_object_new_uint64(vpmu_cpu_cost_ns(cpu)));
	/*
	 * The thread's CPU time by the kernel's clock, for the share of the
	 * time the vCPU ran: run_ns grows only when KVM_RUN returns (a run
	 * in flight at either end of a window is missing or counted whole)
	 * and counts a halt or a preemption inside KVM_RUN as running.
	 */
	if (vcpu < x->ctl->vm->nr_vcpus)
		json_object_object_add(o, "cpu_ns",
				       json_object_new_uint64(vmm_vcpu_cpu_ns(
					       &x->ctl->vm->vcpus[vcpu])));
}

/* The JSON form: "samples" and "weights" of the first (n) kept samples. */
static void json_samples(const struct vmm_ctl_hctx *hc, unsigned int n,
			 struct json_object *rep)
{
	struct json_object *arr, *w;
	unsigned int i;

	arr = json_object_new_array_ext((int)n);
	w   = json_object_new_array_ext((int)n);
	for (i = 0; i < n; i++) {
		json_object_array_add(arr, sample_json(hc, &hc->spill[i]));
		json_object_array_add(w, weight_json(&hc->spill[i]));
	}
	json_object_object_add(rep, "samples", arr);
	json_object_object_add(rep, "weights", w);
}

/*
 * The packed form: the first (max) kept samples, or fewer that
 * fit in one frame, encoded into (pk) (grown, never shrunk here: no
 * allocation per sample or, once it is big enough, per drain). Returns how
 * many, with the frame's size in (pk->len); -ENOMEM.
 */
static int pack_samples(const struct vmm_ctl_hctx *hc, unsigned int max,
			struct vmm_ctl_tx *pk)
{
	const struct vmm_ctl_sample *s;
	struct vmm_ctl_pk_rec r;
	size_t bytes = VMM_CTL_PK_HDR, sz, off;
	unsigned int i, n;
	unsigned char *nb;

	for (n = 0; n < max; n++) {
		s  = &hc->spill[n];
		sz = vmm_ctl_pk_rec_size(s->nr_vals,
					 hc->chain_depth ? s->nr_chain : 0);
		if (bytes + sz > VMM_CTL_PK_MAX)
			break;
		bytes += sz;
	}
	if (pk->cap < bytes) {
		nb = realloc(pk->buf, bytes);
		if (!nb)
			return -ENOMEM;
		pk->buf = nb;
		pk->cap = bytes;
	}
	vmm_ctl_pk_put_hdr(pk->buf, n);
	off = VMM_CTL_PK_HDR;
	for (i = 0; i < n; i++) {
		s = &hc->spill[i];
		r = (struct vmm_ctl_pk_rec){
			.cpu       = s->cpu,
			.set       = s->set,
			.ovfl_pmd  = s->ovfl_pmd,
			.nr_missed = s->nr_missed,
			.pid       = s->pid,
			.tid       = s->tid,
			.tstamp    = s->tstamp,
			.ip        = s->ip,
			.period    = s->period,
			.nr_vals   = s->nr_vals,
			.vals      = s->vals,
		};
		if (hc->chain_depth) {
			r.nr_chain = s->nr_chain;
			r.chain    = hc->chains + (size_t)i * hc->chain_depth;
		}
		off += vmm_ctl_pk_put(pk->buf + off, &r);
	}
	pk->len = off;
	return (int)n;
}

int vmm_ctl_drain(struct vmm_control *ctl, struct vmm_ctl_client *c,
		  struct vmm_ctl_hctx *hc, struct json_object *req,
		  struct json_object *rep)
{
	unsigned int max      = (unsigned int)vmm_ctl_get_int(req, "max", 8192);
	bool packed           = vmm_ctl_get_int(req, "packed", 0) == 1;
	struct vmm_ctl_call x = {.ctl = ctl};
	unsigned int n;
	int ret;

	if (!hc->buf)
		return -EINVAL;
	collect(ctl, hc);
	n = hc->nr_spill < max ? hc->nr_spill : max;
	/* Its "samples" count is replaced by the samples in the JSON form. */
	vmm_ctl_throttle_json(&x, hc->handle, hc->vcpu, rep);
	if (packed) {
		ret = pack_samples(hc, n, &c->pk);
		if (ret < 0)
			return ret;
		n = (unsigned int)ret;
		json_object_object_add(rep, "packed_bytes",
				       json_object_new_uint64(c->pk.len));
	} else {
		json_samples(hc, n, rep);
	}
	if (n < hc->nr_spill) {
		memmove(hc->spill, hc->spill + n,
			(hc->nr_spill - n) * sizeof(*hc->spill));
		if (hc->chain_depth)
			memmove(hc->chains,
				hc->chains + (size_t)n * hc->chain_depth,
				(size_t)(hc->nr_spill - n) * hc->chain_depth *
					sizeof(*hc->chains));
	}
	hc->nr_spill -= n;
	json_object_object_add(rep, "lost", json_object_new_uint64(hc->lost));
	/* Snapshot pauses since this context was created. */
	json_object_object_add(
		rep, "snap_pauses",
		json_object_new_uint64(ctl->snap_pauses - hc->snap_pauses0));
	json_object_object_add(rep, "snap_pause_ns",
			       json_object_new_uint64(ctl->snap_pause_ns -
						      hc->snap_pause_ns0));
	json_object_object_add(rep, "more",
			       json_object_new_boolean(hc->nr_spill > 0));
	return 0;
}
