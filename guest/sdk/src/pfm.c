// SPDX-License-Identifier: MIT
/*
 * pfm.c: the perfmon2 calls of libpvpmu (spec 3.1 / 6.1) in the
 * freestanding build, each one PVPMU_HC_PFM hypercall through the driver
 * core, and the other context calls (close, messages, sampling buffer,
 * vector, scheduling, fast read).
 *
 * The calls that only pack their arguments are in pfm_calls.c, over
 * sdk_pfm_call() and sdk_global_fd() here.
 */
#include "sdk_priv.h"

static const struct pvpmu_drv *cur_drv;

void pvpmu_set_driver(const struct pvpmu_drv *drv)
{
	cur_drv = drv;
}

const struct pvpmu_drv *sdk_drv(void)
{
	return cur_drv ? cur_drv : pvpmu_os_driver();
}

const struct pvpmu_drv *pvpmu_driver(void)
{
	return sdk_drv();
}

int sdk_pfm_call(int fd, unsigned int cmd, void *arg, pvpmu_u64 size, int nargs)
{
	return pvpmu_pfm(sdk_drv(), fd, cmd, arg, size, nargs);
}

int sdk_global_fd(void)
{
	return 0; /* the VMM's commands without a context take ctx_fd 0 */
}

int pfm_create_context(pfarg_ctx_t *ctx, const void *fmt_arg,
		       pvpmu_u64 fmt_arg_size)
{
	union {
		pfarg_ctx_t ctx;
		pvpmu_u64 align;
		pvpmu_u8 bytes[PVPMU_CTX_BOUNCE_MAX];
	} bounce;
	const pvpmu_u8 *src = fmt_arg;
	pvpmu_u64 i;
	int ret;

	if (!ctx || (fmt_arg_size && !fmt_arg))
		return -PVPMU_EFAULT;
	if (!fmt_arg_size)
		return pvpmu_pfm(sdk_drv(), 0, PFM_CREATE_CONTEXT, ctx,
				 sizeof(*ctx), 1);
	/* Format arguments already in place right after the pfarg_ctx. */
	if (src == (const pvpmu_u8 *)(ctx + 1))
		return pvpmu_pfm(sdk_drv(), 0, PFM_CREATE_CONTEXT, ctx,
				 sizeof(*ctx) + fmt_arg_size, 1);
	if (fmt_arg_size > sizeof(bounce) - sizeof(*ctx))
		return -PVPMU_E2BIG;
	bounce.ctx = *ctx;
	for (i = 0; i < fmt_arg_size; i++)
		bounce.bytes[sizeof(*ctx) + i] = src[i];
	ret = pvpmu_pfm(sdk_drv(), 0, PFM_CREATE_CONTEXT, &bounce,
			sizeof(*ctx) + fmt_arg_size, 1);
	/* OUT fields come back even on failure (abi.h section 5). */
	*ctx = bounce.ctx;
	return ret;
}

int pfm_restart(int fd)
{
	return pvpmu_pfm_restart(sdk_drv(), fd, 0);
}

int pvpmu_restart_arg(int fd, pvpmu_u64 restart_arg)
{
	return pvpmu_pfm_restart(sdk_drv(), fd, restart_arg);
}

int pfm_close(int fd)
{
	return pvpmu_hc_close(sdk_drv(), fd);
}

int pfm_read_msg(int fd, pfm_msg_t *msg, pvpmu_u64 timeout_ns)
{
	return pvpmu_hc_read_msg(sdk_drv(), fd, msg, timeout_ns);
}

int pfm_smpl_buf(int fd, const void **buf, pvpmu_u64 *size)
{
	return pvpmu_smpl_map(sdk_drv(), fd, buf, size);
}

int pvpmu_set_vector(pvpmu_u32 vector)
{
	return pvpmu_hc_set_vector(sdk_drv(), vector);
}

int pfm_getinfo_formats(pfm_format_info_t *fmts, int max)
{
	struct pvpmu_hc_fmt_info fi;
	pvpmu_u32 i, nr;
	int ret;

	if (max < 0 || (max > 0 && !fmts))
		return -PVPMU_EFAULT;
	ret = pvpmu_hc_fmt_info(sdk_drv(), 0, &fi);
	if (ret && ret != -PVPMU_ENOENT)
		return ret;
	nr = fi.nr;
	for (i = 0; i < nr && i < (pvpmu_u32)max; i++) {
		if (i) {
			ret = pvpmu_hc_fmt_info(sdk_drv(), i, &fi);
			if (ret)
				return ret;
		}
		fmts[i] = fi;
	}
	return (int)nr;
}

int pvpmu_sched(int fd, pvpmu_u32 op, pvpmu_u32 tid)
{
	return pvpmu_hc_sched(sdk_drv(), fd, op, tid, 0);
}

int pvpmu_shared_attach(struct pvpmu_shared_page *page)
{
	return pvpmu_shared_register(sdk_drv(), page);
}

int pvpmu_read_fast(const struct pvpmu_shared_page *page, int fd,
		    pfarg_pmd_t *pmds, int n)
{
	return pvpmu_shared_read(page, fd, pmds, n, pvpmu_rdtsc(), 0);
}

int pfm_read_pmds_fast(const struct pvpmu_shared_page *page, int fd,
		       pfarg_pmd_t *pmds, int n)
{
	int ret;

	if (!page)
		return pfm_read_pmds(fd, pmds, n);
	ret = pvpmu_read_fast(page, fd, pmds, n);
	return ret == -PVPMU_EAGAIN ? pfm_read_pmds(fd, pmds, n) : ret;
}
