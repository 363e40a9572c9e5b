// SPDX-License-Identifier: MIT
/*
 * pv_calls.c: the paravirtual perfmon2 hypercalls (pvpmu/abi.h §5, §8).
 *
 * Every handler copies its request block out of guest memory once, checks
 * the copy, copies any argument array once into a per-call host buffer,
 * runs the libvpmu command as the guest owner on the calling vCPU, and
 * copies the answer back once. Host errno values are mapped explicitly to
 * the ABI's status codes; a guest never sees anything else.
 */
#include "vmm_pv.h"
#include "pv_priv.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Formats one PVPMU_HC_FMT_INFO can see (built-in + run-time). */
#define VMM_FMT_LIST_MAX 64

/* How a command takes its argument. */
enum arg_kind {
	ARG_UNKNOWN = 0, /* not a command */
	ARG_NONE,        /* nargs 0, no argument */
	ARG_VECTOR,      /* nargs elements of elem bytes */
	ARG_ONE,         /* one element (nargs must be 1: libvpmu checks) */
	ARG_START,       /* none, or one pfarg_start */
	ARG_CREATE,      /* pfarg_ctx + format arguments */
};

static const struct {
	uint8_t kind;
	uint16_t elem;
} cmds[] = {
	[PFM_WRITE_PMCS]      = {ARG_VECTOR, sizeof(struct pfarg_pmc)},
	[PFM_WRITE_PMDS]      = {ARG_VECTOR, sizeof(struct pfarg_pmd)},
	[PFM_READ_PMDS]       = {ARG_VECTOR, sizeof(struct pfarg_pmd)},
	[PFM_STOP]            = {ARG_NONE, 0},
	[PFM_START]           = {ARG_START, sizeof(struct pfarg_start)},
	[PFM_CREATE_CONTEXT]  = {ARG_CREATE, sizeof(struct pfarg_ctx)},
	[PFM_LOAD_CONTEXT]    = {ARG_ONE, sizeof(struct pfarg_load)},
	[PFM_UNLOAD_CONTEXT]  = {ARG_NONE, 0},
	[PFM_RESTART]         = {ARG_NONE, 0},
	[PFM_CREATE_EVTSETS]  = {ARG_VECTOR, sizeof(struct pfarg_setdesc)},
	[PFM_DELETE_EVTSETS]  = {ARG_VECTOR, sizeof(struct pfarg_setdesc)},
	[PFM_GETINFO_EVTSETS] = {ARG_VECTOR, sizeof(struct pfarg_setinfo)},
	[PFM_GETINFO_PMCS]    = {ARG_VECTOR, sizeof(struct pfarg_pmcinfo)},
	[PFM_GETINFO_PMDS]    = {ARG_VECTOR, sizeof(struct pfarg_pmdinfo)},
	[PFM_SET_CONFIG]      = {ARG_ONE, sizeof(struct pfarg_config)},
	[PFM_GET_CONFIG]      = {ARG_ONE, sizeof(struct pfarg_config)},
};

/* Map a host errno (negative) to the ABI's status (negative). */
int vmm_pv_status(int err)
{
	switch (err) {
	case 0:
		return 0;
	case -EPERM:
		return -PVPMU_EPERM;
	case -ENOENT:
		return -PVPMU_ENOENT;
	case -ESRCH:
		return -PVPMU_ESRCH;
	case -EINTR:
		return -PVPMU_EINTR;
	case -EBADF:
		return -PVPMU_EBADF;
	case -EAGAIN:
		return -PVPMU_EAGAIN;
	case -ENOMEM:
		return -PVPMU_ENOMEM;
	case -EACCES:
		return -PVPMU_EACCES;
	case -EFAULT:
		return -PVPMU_EFAULT;
	case -EBUSY:
		return -PVPMU_EBUSY;
	case -EEXIST:
		return -PVPMU_EEXIST;
	case -ENODEV:
		return -PVPMU_ENODEV;
	case -EINVAL:
		return -PVPMU_EINVAL;
	case -ENOSPC:
		return -PVPMU_ENOSPC;
	case -E2BIG:
		return -PVPMU_E2BIG;
	case -ENOSYS:
		return -PVPMU_ENOSYS;
	case -EOPNOTSUPP:
		return -PVPMU_ENOTSUP;
	case -ETIMEDOUT:
		return -PVPMU_ETIMEDOUT;
	default:
		return -PVPMU_EIO;
	}
}

static struct vpmu_caller guest_caller(struct vmm_vcpu *vcpu, uint32_t tid,
				       uint32_t gid)
{
	return (struct vpmu_caller){.owner = VPMU_OWNER_GUEST,
				    .cpu   = vmm_pv_vcpu(vcpu)->cpu,
				    .tid   = tid,
				    .gid   = gid};
}

/* Map a new context's sampling buffer into the guest; undo on failure. */
static int map_new_buffer(struct vmm_vcpu *vcpu, const struct vpmu_caller *who,
			  int fd)
{
	struct vmm_vm *vm = vcpu->vm;
	struct vmm_pv *pv = vmm_pv(vm);
	size_t size       = 0;
	void *base        = NULL;
	uint64_t gpa;
	int ret;

	ret = vpmu_ctx_smpl_buf(pv->domain, who, fd, &base, &size);
	if (ret || !base)
		return ret;
	ret = vmm_pv_smpl_map(vm, fd, base, size, &gpa);
	if (ret) {
		vpmu_ctx_destroy(pv->domain, who, fd);
		return -ENOMEM;
	}
	return 0;
}

static int run_cmd(struct vmm_vcpu *vcpu, const struct pvpmu_hc_pfm *req,
		   void *arg)
{
	struct vpmu_domain *d  = vmm_pv(vcpu->vm)->domain;
	struct vpmu_caller who = guest_caller(vcpu, req->tid, req->gid);
	int n = req->nargs, fd = req->fd, ret;

	switch (req->cmd) {
	case PFM_CREATE_CONTEXT:
		ret = vpmu_ctx_create(d, &who, arg, n,
				      (char *)arg + sizeof(struct pfarg_ctx),
				      req->arg_size - sizeof(struct pfarg_ctx));
		if (!ret)
			ret = map_new_buffer(vcpu, &who,
					     ((struct pfarg_ctx *)arg)->ctx_fd);
		return ret;
	case PFM_WRITE_PMCS:
		return vpmu_ctx_write_pmcs(d, &who, fd, arg, n);
	case PFM_WRITE_PMDS:
		return vpmu_ctx_write_pmds(d, &who, fd, arg, n);
	case PFM_READ_PMDS:
		return vpmu_ctx_read_pmds(d, &who, fd, arg, n);
	case PFM_START:
		return vpmu_ctx_start(d, &who, fd, arg, n);
	case PFM_STOP:
		return vpmu_ctx_stop(d, &who, fd);
	case PFM_LOAD_CONTEXT:
		return vpmu_ctx_load(d, &who, fd, arg, n);
	case PFM_UNLOAD_CONTEXT:
		return vpmu_ctx_unload(d, &who, fd);
	case PFM_RESTART:
		return vpmu_ctx_restart(d, &who, fd, req->restart_arg);
	case PFM_CREATE_EVTSETS:
		return vpmu_ctx_create_evtsets(d, &who, fd, arg, n);
	case PFM_DELETE_EVTSETS:
		return vpmu_ctx_delete_evtsets(d, &who, fd, arg, n);
	case PFM_GETINFO_EVTSETS:
		return vpmu_ctx_getinfo_evtsets(d, &who, fd, arg, n);
	case PFM_GETINFO_PMCS:
		return vpmu_getinfo_pmcs(d, &who, arg, n);
	case PFM_GETINFO_PMDS:
		return vpmu_getinfo_pmds(d, &who, arg, n);
	case PFM_SET_CONFIG:
		return vpmu_set_config(d, &who, arg, n);
	case PFM_GET_CONFIG:
		return vpmu_get_config(d, &who, arg, n);
	default:
		return -ENOSYS;
	}
}

/*
 * Check the argument shape of (req) against its command. Returns 0 or a
 * status; the libvpmu command itself checks nargs against its rules.
 */
static int check_arg(const struct pvpmu_hc_pfm *req, uint64_t max)
{
	uint64_t elem;

	if (req->cmd >= ARRAY_SIZE(cmds) || cmds[req->cmd].kind == ARG_UNKNOWN)
		return -PVPMU_ENOSYS;
	elem = cmds[req->cmd].elem;
	switch (cmds[req->cmd].kind) {
	case ARG_NONE:
		return req->arg_size || req->nargs ? -PVPMU_EINVAL : 0;
	case ARG_START:
		if (req->nargs == 0)
			return req->arg_size ? -PVPMU_EINVAL : 0;
		/* fall through */
	case ARG_ONE:
		return req->arg_size == elem ? 0 : -PVPMU_EFAULT;
	case ARG_CREATE:
		if (req->arg_size < elem)
			return -PVPMU_EFAULT;
		return req->arg_size > elem + max ? -PVPMU_E2BIG : 0;
	default: /* ARG_VECTOR */
		if (req->nargs <= 0)
			return -PVPMU_EINVAL;
		if (req->arg_size > max)
			return -PVPMU_EFAULT; /* spec 3.1: too many elements */
		return req->arg_size == (uint64_t)req->nargs * elem
			       ? 0
			       : -PVPMU_EFAULT;
	}
}

static int hc_pfm(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	uint64_t max = vmm_pv(vcpu->vm)->arg_size_max;
	struct pvpmu_hc_pfm req;
	void *arg = NULL;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req), PVPMU_HC_PFM_SIZE_VER1);
	if (ret)
		return ret;
	ret = check_arg(&req, max);
	if (ret)
		return ret;
	if (req.arg_size) {
		arg = malloc(req.arg_size);
		if (!arg)
			return -PVPMU_ENOMEM;
		if (vmm_guest_read(vcpu->vm, req.arg_gpa, arg, req.arg_size)) {
			ret = -PVPMU_EFAULT;
			goto out_free;
		}
	}
	ret = vmm_pv_status(run_cmd(vcpu, &req, arg));
	/* 3.1.9: RESTART and UNLOAD wake a thread blocked by the context. */
	if (!ret && (req.cmd == PFM_RESTART || req.cmd == PFM_UNLOAD_CONTEXT))
		vmm_pv_wake_waiters(vcpu->vm);
	/* Answers (OUT fields, RETFL flags) go back even on failure. */
	if (arg && vmm_guest_write(vcpu->vm, req.arg_gpa, arg, req.arg_size))
		ret = -PVPMU_EFAULT;
out_free:
	free(arg);
	return ret;
}

/*
 * Copy in a request block whose second field is a context handle, once,
 * and check that the handle is a live guest context of this VM: no
 * mapping of a handle is touched before that. Sets (*fd).
 */
_Static_assert(offsetof(struct pvpmu_hc_smpl_info, fd) ==
		       offsetof(struct pvpmu_hc_ctx, fd),
	       "handle at the same offset");
static int read_ctx_block(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *block,
			  size_t size, size_t min_size, int *fd)
{
	struct vpmu_caller who = guest_caller(vcpu, 0, 0);
	int ret;

	ret = vmm_hc_read(vcpu, gpa, block, size, min_size);
	if (ret)
		return ret;
	memcpy(fd, (char *)block + offsetof(struct pvpmu_hc_ctx, fd),
	       sizeof(*fd));
	return vmm_pv_status(vpmu_ctx_smpl_buf(vmm_pv(vcpu->vm)->domain, &who,
					       *fd, &(void *){NULL},
					       &(size_t){0}));
}

static int hc_close(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct vpmu_caller who = guest_caller(vcpu, 0, 0);
	struct pvpmu_hc_ctx req;
	int ret, fd;

	(void)opaque;
	ret = read_ctx_block(vcpu, gpa, &req, sizeof(req),
			     PVPMU_HC_CTX_SIZE_VER1, &fd);
	if (ret)
		return ret;
	vmm_pv_smpl_unmap(vcpu->vm, fd);
	ret = vpmu_ctx_destroy(vmm_pv(vcpu->vm)->domain, &who, fd);
	vmm_pv_wake_waiters(vcpu->vm); /* a thread it blocked goes on */
	return vmm_pv_status(ret);
}

/* 3.5.2: format (index) of this host, built-in first; no privilege. */
static int hc_fmt_info(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct vpmu_format_info fi[VMM_FMT_LIST_MAX];
	struct pvpmu_hc_fmt_info req;
	size_t nr;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_FMT_INFO_SIZE_VER1);
	if (ret)
		return ret;
	nr = vpmu_format_list(fi, ARRAY_SIZE(fi));
	if (nr > ARRAY_SIZE(fi))
		nr = ARRAY_SIZE(fi);
	req.nr = (uint32_t)nr;
	memset(req.uuid, 0, sizeof(req.uuid));
	memset(req.name, 0, sizeof(req.name));
	req.flags     = 0;
	req.arg_size  = 0;
	req.reserved0 = 0;
	if (req.index < nr) {
		memcpy(req.uuid, fi[req.index].uuid, sizeof(req.uuid));
		_Static_assert(PVPMU_FMT_NAME_MAX == VPMU_FORMAT_NAME_MAX,
			       "format names fit");
		memcpy(req.name, fi[req.index].name, sizeof(req.name));
		req.flags    = fi[req.index].builtin ? PVPMU_FMT_BUILTIN : 0;
		req.arg_size = fi[req.index].arg_size;
	}
	ret = vmm_hc_write(vcpu, gpa, &req, sizeof(req));
	if (!ret && req.index >= nr)
		ret = -PVPMU_ENOENT;
	return ret;
}

static int hc_smpl_info(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct pvpmu_hc_smpl_info req;
	int ret, fd;

	(void)opaque;
	ret = read_ctx_block(vcpu, gpa, &req, sizeof(req),
			     PVPMU_HC_SMPL_INFO_SIZE_VER1, &fd);
	if (ret)
		return ret;
	if (vmm_pv_smpl_lookup(vcpu->vm, fd, &req.gpa, &req.buf_size))
		return -PVPMU_ENOENT;
	return vmm_hc_write(vcpu, gpa, &req, sizeof(req));
}

bool vmm_pv_vector_ok(uint32_t vector)
{
	return vector == 0 || (vector >= 32 && vector <= 255);
}

static int hc_set_vector(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct pvpmu_hc_vector req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_VECTOR_SIZE_VER1);
	if (ret)
		return ret;
	if (!vmm_pv_vector_ok(req.vector))
		return -PVPMU_EINVAL;
	vmm_pv_vcpu(vcpu)->vector = req.vector;
	return 0;
}

static int hc_shared(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct pvpmu_hc_shared req;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_SHARED_SIZE_VER1);
	if (ret)
		return ret;
	if (req.pad0)
		return -PVPMU_EINVAL;
	return vmm_pv_status(vmm_pv_shared_register(vcpu, req.gpa));
}

static int hc_sched(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	struct vpmu_domain *d = vmm_pv(vcpu->vm)->domain;
	struct pvpmu_hc_sched req;
	struct vpmu_caller who;
	bool counting;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_SCHED_SIZE_VER1);
	if (ret)
		return ret;
	if (req.pad0)
		return -PVPMU_EINVAL;
	who = guest_caller(vcpu, req.tid, 0);
	switch (req.op) {
	case PVPMU_SCHED_IN:
		return vmm_pv_status(vpmu_ctx_sched_in(d, &who, req.fd));
	case PVPMU_SCHED_OUT:
		ret = vpmu_ctx_sched_out(d, &who, req.fd, &counting);
		if (ret)
			return vmm_pv_status(ret);
		req.counting = counting;
		return vmm_hc_write(vcpu, gpa, &req, sizeof(req));
	case PVPMU_SCHED_EXIT:
		return vmm_pv_status(vpmu_ctx_thread_exit(d, &who, req.fd));
	default:
		return -PVPMU_EINVAL;
	}
}

/*
 * The path is copied once out of guest RAM into a buffer of ours before
 * anything looks at it; pv_tasks.c validates the copy.
 */
static int hc_task(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque)
{
	char path[PVPMU_TASK_PATH_MAX];
	struct vpmu_snapshot snap;
	struct pvpmu_hc_task req;
	const void *src = NULL;
	int ret;

	(void)opaque;
	ret = vmm_hc_read(vcpu, gpa, &req, sizeof(req),
			  PVPMU_HC_TASK_SIZE_VER1);
	if (ret)
		return ret;
	if (req.op == PVPMU_TASK_MMAP && req.path_len &&
	    req.path_len <= sizeof(path))
		src = vmm_gpa_ptr(vcpu->vm, req.path_gpa, req.path_len);
	if (src)
		memcpy(path, src, req.path_len);
	if (req.pad0)
		return -PVPMU_EINVAL;
	ret = vmm_pv_task_add(vcpu->vm, &req, src ? path : NULL,
			      vpmu_monotonic_ns());
	/* Taken or refused, the call was an exit its vCPU's context saw. */
	req.counted = vpmu_cpu_snapshot(vmm_pv_vcpu(vcpu)->cpu, &snap) == 0 &&
		      snap.fd >= 0 && snap.active;
	return vmm_hc_write(vcpu, gpa, &req, sizeof(req)) ?: ret;
}

int vmm_pv_hc_init(struct vmm_vm *vm)
{
	static const struct {
		unsigned int nr;
		vmm_hc_fn_t fn;
	} calls[] = {
		{PVPMU_HC_PFM, hc_pfm},
		{PVPMU_HC_CLOSE, hc_close},
		{PVPMU_HC_READ_MSG, vmm_pv_hc_read_msg},
		{PVPMU_HC_SMPL_INFO, hc_smpl_info},
		{PVPMU_HC_SET_VECTOR, hc_set_vector},
		{PVPMU_HC_SHARED, hc_shared},
		{PVPMU_HC_SCHED, hc_sched},
		{PVPMU_HC_BLOCK, vmm_pv_hc_block},
		{PVPMU_HC_FMT_INFO, hc_fmt_info},
		{PVPMU_HC_TASK, hc_task},
	};
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		ret = vmm_hc_register(vm, calls[i].nr, calls[i].fn, NULL);
		if (ret)
			return ret;
	}
	return 0;
}
