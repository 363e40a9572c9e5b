// SPDX-License-Identifier: MIT
/*
 * hypercall.c: the guest side of every vpmu hypercall (pvpmu/abi.h
 * sections 5 and 8). Each wrapper fills the call's request block on the
 * caller's stack, translates addresses through the OS glue and rings the
 * doorbell; the VMM copies the block in and out once.
 */
#include "pvpmu_core.h"

#include "pvpmu_hc.h"

long pvpmu_doorbell(void *opaque, unsigned int nr, pvpmu_u32 gpa)
{
	(void)opaque;
	return pvpmu_hypercall(nr, gpa);
}

static pvpmu_u32 tid_of(const struct pvpmu_drv *drv)
{
	return drv->ops->current_tid ? drv->ops->current_tid(drv->opaque) : 0;
}

static pvpmu_u32 gid_of(const struct pvpmu_drv *drv)
{
	return drv->ops->current_gid ? drv->ops->current_gid(drv->opaque) : 0;
}

int pvpmu_call(const struct pvpmu_drv *drv, unsigned int nr, void *block,
	       pvpmu_u64 size)
{
	pvpmu_u64 gpa = 0;
	long ret;

	if (nr == PVPMU_HC_RESERVED || nr >= PVPMU_HC_MAX)
		return -PVPMU_EINVAL;
	if (block && drv->ops->call_block)
		return (int)drv->ops->call_block(drv->opaque, nr, block, size);
	if (block) {
		ret = drv->ops->virt_to_gpa(drv->opaque, block, size, &gpa);
		if (ret)
			return (int)ret;
		/* The doorbell carries EAX only (abi.h section 5). */
		if (gpa + size > 0x100000000ULL || gpa + size < gpa)
			return -PVPMU_EFAULT;
	}
	/*
	 * The VMM reads and writes (block) and the arrays it points to: make
	 * them escape, so the doorbell's memory clobber covers them even if
	 * the glue is inlined down to an integer.
	 */
	__asm__ __volatile__("" : : "r"(block) : "memory");
	if (drv->ops->doorbell)
		ret = drv->ops->doorbell(drv->opaque, nr, (pvpmu_u32)gpa);
	else
		ret = pvpmu_doorbell(drv->opaque, nr, (pvpmu_u32)gpa);
	__asm__ __volatile__("" : : "r"(block) : "memory");
	return (int)ret;
}

int pvpmu_pfm_gpa(const struct pvpmu_drv *drv, const struct pvpmu_pfm_req *r)
{
	struct pvpmu_hc_pfm req = {
		.size        = sizeof(req),
		.cmd         = r->cmd,
		.fd          = r->fd,
		.nargs       = r->nargs,
		.arg_gpa     = r->arg_gpa,
		.arg_size    = r->arg_size,
		.tid         = tid_of(drv),
		.gid         = gid_of(drv),
		.restart_arg = r->restart_arg,
	};

	return pvpmu_call(drv, PVPMU_HC_PFM, &req, sizeof(req));
}

int pvpmu_pfm(const struct pvpmu_drv *drv, int fd, unsigned int cmd, void *arg,
	      pvpmu_u64 arg_size, int nargs)
{
	struct pvpmu_pfm_req r = {.fd = fd, .cmd = cmd, .nargs = nargs};
	int ret;

	if (arg && arg_size) {
		ret = drv->ops->virt_to_gpa(drv->opaque, arg, arg_size,
					    &r.arg_gpa);
		if (ret)
			return ret;
		r.arg_size = arg_size;
	}
	/* The VMM reads and writes *arg: let it escape (see pvpmu_call). */
	__asm__ __volatile__("" : : "r"(arg) : "memory");
	return pvpmu_pfm_gpa(drv, &r);
}

int pvpmu_pfm_restart(const struct pvpmu_drv *drv, int fd,
		      pvpmu_u64 restart_arg)
{
	struct pvpmu_pfm_req r = {
		.fd          = fd,
		.cmd         = PFM_RESTART,
		.restart_arg = restart_arg,
	};

	return pvpmu_pfm_gpa(drv, &r);
}

int pvpmu_hc_close(const struct pvpmu_drv *drv, int fd)
{
	struct pvpmu_hc_ctx req = {.size = sizeof(req), .fd = fd};

	return pvpmu_call(drv, PVPMU_HC_CLOSE, &req, sizeof(req));
}

int pvpmu_hc_read_msg(const struct pvpmu_drv *drv, int fd, union pfm_msg *msg,
		      pvpmu_u64 timeout_ns)
{
	struct pvpmu_hc_read_msg req = {
		.size       = sizeof(req),
		.fd         = fd,
		.timeout_ns = timeout_ns,
	};
	int ret;

	if (!msg)
		return -PVPMU_EFAULT;
	ret = pvpmu_call(drv, PVPMU_HC_READ_MSG, &req, sizeof(req));
	if (ret == 0)
		*msg = req.msg;
	return ret;
}

int pvpmu_hc_smpl_info(const struct pvpmu_drv *drv, int fd, pvpmu_u64 *gpa,
		       pvpmu_u64 *size)
{
	struct pvpmu_hc_smpl_info req = {.size = sizeof(req), .fd = fd};
	int ret;

	ret = pvpmu_call(drv, PVPMU_HC_SMPL_INFO, &req, sizeof(req));
	if (ret)
		return ret;
	*gpa  = req.gpa;
	*size = req.buf_size;
	return 0;
}

int pvpmu_smpl_map(const struct pvpmu_drv *drv, int fd, const void **buf,
		   pvpmu_u64 *size)
{
	pvpmu_u64 gpa, len;
	int ret;

	if (!buf || !size)
		return -PVPMU_EFAULT;
	ret = pvpmu_hc_smpl_info(drv, fd, &gpa, &len);
	if (ret)
		return ret;
	ret = drv->ops->map_gpa(drv->opaque, gpa, len, buf);
	if (ret)
		return ret;
	*size = len;
	return 0;
}

int pvpmu_hc_set_vector(const struct pvpmu_drv *drv, pvpmu_u32 vector)
{
	struct pvpmu_hc_vector req = {.size = sizeof(req), .vector = vector};

	return pvpmu_call(drv, PVPMU_HC_SET_VECTOR, &req, sizeof(req));
}

int pvpmu_shared_register(const struct pvpmu_drv *drv,
			  struct pvpmu_shared_page *page)
{
	struct pvpmu_hc_shared req = {.size = sizeof(req)};
	int ret;

	if (page) {
		if ((unsigned long)page & 4095)
			return -PVPMU_EINVAL;
		ret = drv->ops->virt_to_gpa(drv->opaque, page, 4096, &req.gpa);
		if (ret)
			return ret;
	}
	return pvpmu_call(drv, PVPMU_HC_SHARED, &req, sizeof(req));
}

int pvpmu_hc_sched(const struct pvpmu_drv *drv, int fd, pvpmu_u32 op,
		   pvpmu_u32 tid, pvpmu_u32 *counting)
{
	struct pvpmu_hc_sched req = {
		.size = sizeof(req),
		.fd   = fd,
		.op   = op,
		.tid  = tid,
	};
	int ret = pvpmu_call(drv, PVPMU_HC_SCHED, &req, sizeof(req));

	if (counting)
		*counting = ret ? 0 : req.counting;
	return ret;
}

int pvpmu_hc_block(const struct pvpmu_drv *drv, pvpmu_u32 tid,
		   pvpmu_u64 timeout_ns)
{
	struct pvpmu_hc_block req = {
		.size       = sizeof(req),
		.tid        = tid,
		.timeout_ns = timeout_ns,
	};

	return pvpmu_call(drv, PVPMU_HC_BLOCK, &req, sizeof(req));
}

int pvpmu_hc_fmt_info(const struct pvpmu_drv *drv, pvpmu_u32 index,
		      struct pvpmu_hc_fmt_info *out)
{
	struct pvpmu_hc_fmt_info req = {.size = sizeof(req), .index = index};
	int ret;

	if (!out)
		return -PVPMU_EFAULT;
	ret  = pvpmu_call(drv, PVPMU_HC_FMT_INFO, &req, sizeof(req));
	*out = req;
	return ret;
}

int pvpmu_hc_task(const struct pvpmu_drv *drv, struct pvpmu_hc_task *req)
{
	req->size = sizeof(*req);
	return pvpmu_call(drv, PVPMU_HC_TASK, req, sizeof(*req));
}

int pvpmu_hc_nop(const struct pvpmu_drv *drv)
{
	return pvpmu_call(drv, PVPMU_HC_NOP, 0, 0);
}

int pvpmu_hc_echo(const struct pvpmu_drv *drv, pvpmu_u64 in, pvpmu_u64 *out)
{
	struct pvpmu_hc_echo req = {.size = sizeof(req), .in = in};
	int ret;

	ret = pvpmu_call(drv, PVPMU_HC_ECHO, &req, sizeof(req));
	if (ret == 0 && out)
		*out = req.out;
	return ret;
}
