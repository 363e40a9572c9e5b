// SPDX-License-Identifier: MIT
/*
 * pfm_linux.c: the perfmon2 calls of libpvpmu for Linux user space, over
 * the pvpmu.ko character device (pvpmu/abi.h section 10) instead of the
 * freestanding build's hypercalls (guest/sdk/src/pfm.c). Same API, same return
 * convention (0 or -PVPMU_E*, which equal -errno on Linux x86).
 *
 * Each pfm_create_context() opens /dev/pvpmu; that descriptor is the
 * context (ctx_fd). Commands without a context use one descriptor opened on
 * first use. The sampling buffer and the shared pages are mapped on first
 * use and unmapped by pfm_close(). The calls that only pack their arguments
 * are shared with the freestanding build (../pfm_calls.c), over
 * sdk_pfm_call() and sdk_global_fd() here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sdk_priv.h"

#define MAP_SLOTS 1024 /* descriptors whose mappings are remembered */

struct fd_maps {
	const void *smpl;
	pvpmu_u64 smpl_size;
	const struct pvpmu_shared_page *shared;
	unsigned int nr_cpus;
	int hfd;
};

static struct fd_maps maps[MAP_SLOTS];
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int global_fd             = -1;

void pvpmu_set_driver(const struct pvpmu_drv *drv)
{
	(void)drv; /* the module is the driver on Linux */
}

const struct pvpmu_drv *pvpmu_driver(void)
{
	return 0;
}

static int dev_open(void)
{
	int fd = open(PVPMU_DEV_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The descriptor for commands that need no context. */
static int dev_global(void)
{
	int fd, old = -1;

	if (__atomic_load_n(&global_fd, __ATOMIC_ACQUIRE) >= 0)
		return global_fd;
	fd = dev_open();
	if (fd < 0)
		return fd;
	if (!__atomic_compare_exchange_n(&global_fd, &old, fd, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		close(fd); /* another thread won */
	return global_fd;
}

static int ioc_pfm(int fd, unsigned int cmd, void *arg, pvpmu_u64 size,
		   int nargs, pvpmu_u64 restart_arg)
{
	struct pvpmu_ioc_pfm r = {
		.size        = sizeof(r),
		.cmd         = cmd,
		.nargs       = nargs,
		.arg         = (pvpmu_u64)(unsigned long)arg,
		.arg_size    = arg ? size : 0,
		.restart_arg = restart_arg,
	};

	return ioctl(fd, PVPMU_IOC_PFM, &r) < 0 ? -errno : 0;
}

int sdk_pfm_call(int fd, unsigned int cmd, void *arg, pvpmu_u64 size, int nargs)
{
	return ioc_pfm(fd, cmd, arg, size, nargs, 0);
}

int sdk_global_fd(void)
{
	return dev_global();
}

int pfm_create_context(pfarg_ctx_t *ctx, const void *fmt_arg,
		       pvpmu_u64 fmt_arg_size)
{
	pvpmu_u8 *buf;
	int fd, ret;

	if (!ctx || (fmt_arg_size && !fmt_arg))
		return -PVPMU_EFAULT;
	if (fmt_arg_size > PVPMU_CTX_BOUNCE_MAX - sizeof(*ctx))
		return -PVPMU_E2BIG;
	buf = malloc(sizeof(*ctx) + fmt_arg_size);
	if (!buf)
		return -PVPMU_ENOMEM;
	memcpy(buf, ctx, sizeof(*ctx));
	if (fmt_arg_size)
		memcpy(buf + sizeof(*ctx), fmt_arg, fmt_arg_size);
	fd = dev_open();
	if (fd < 0) {
		free(buf);
		return fd;
	}
	ret = ioc_pfm(fd, PFM_CREATE_CONTEXT, buf, sizeof(*ctx) + fmt_arg_size,
		      1, 0);
	memcpy(ctx, buf, sizeof(*ctx)); /* OUT fields, also on failure */
	free(buf);
	if (ret) {
		close(fd);
		return ret;
	}
	ctx->ctx_fd = fd;
	return 0;
}

int pfm_restart(int fd)
{
	return ioc_pfm(fd, PFM_RESTART, 0, 0, 0, 0);
}

int pvpmu_restart_arg(int fd, pvpmu_u64 restart_arg)
{
	return ioc_pfm(fd, PFM_RESTART, 0, 0, 0, restart_arg);
}

static struct fd_maps *slot(int fd)
{
	return fd >= 0 && fd < MAP_SLOTS ? &maps[fd] : 0;
}

int pfm_close(int fd)
{
	struct fd_maps *m = slot(fd);

	pthread_mutex_lock(&maps_lock);
	if (m && m->smpl)
		munmap((void *)m->smpl, m->smpl_size);
	if (m && m->shared)
		munmap((void *)m->shared, (size_t)m->nr_cpus * 4096);
	if (m)
		memset(m, 0, sizeof(*m));
	pthread_mutex_unlock(&maps_lock);
	return close(fd) < 0 ? -errno : 0;
}

int pfm_read_msg(int fd, pfm_msg_t *msg, pvpmu_u64 timeout_ns)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int ms          = -1, ret;
	ssize_t n;

	if (!msg)
		return -PVPMU_EFAULT;
	if (timeout_ns != PVPMU_WAIT_FOREVER)
		ms = (int)((timeout_ns + 999999) / 1000000 > 0x7fffffff
				   ? 0x7fffffff
				   : (timeout_ns + 999999) / 1000000);
	do
		ret = poll(&p, 1, ms);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (ret == 0)
		return timeout_ns ? -PVPMU_ETIMEDOUT : -PVPMU_EAGAIN;
	n = read(fd, msg, sizeof(*msg));
	if (n < 0)
		return -errno;
	return n == sizeof(*msg) ? 0 : -PVPMU_EIO;
}

static int ctx_info(int fd, struct pvpmu_ioc_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(fd, PVPMU_IOC_INFO, info) < 0 ? -errno : 0;
}

int pfm_smpl_buf(int fd, const void **buf, pvpmu_u64 *size)
{
	struct fd_maps *m = slot(fd);
	struct pvpmu_ioc_info info;
	void *p;
	int ret;

	if (!buf || !size)
		return -PVPMU_EFAULT;
	if (!m)
		return -PVPMU_EBADF;
	pthread_mutex_lock(&maps_lock);
	ret = m->smpl ? 0 : ctx_info(fd, &info);
	if (!ret && !m->smpl) {
		if (!info.smpl_size) {
			ret = -PVPMU_ENOENT;
		} else {
			p = mmap(0, info.smpl_size, PROT_READ, MAP_SHARED, fd,
				 0);
			if (p == MAP_FAILED) {
				ret = -errno;
			} else {
				m->smpl      = p;
				m->smpl_size = info.smpl_size;
			}
		}
	}
	if (!ret) {
		*buf  = m->smpl;
		*size = m->smpl_size;
	}
	pthread_mutex_unlock(&maps_lock);
	return ret;
}

/* The shared page of the CPU this thread runs on, for context (fd). */
static int shared_of(int fd, const struct pvpmu_shared_page **page, int *hfd)
{
	struct fd_maps *m = slot(fd);
	struct pvpmu_ioc_info info;
	int ret = 0, cpu;
	void *p;

	if (!m)
		return -PVPMU_EBADF;
	pthread_mutex_lock(&maps_lock);
	if (!m->shared) {
		ret = ctx_info(fd, &info);
		if (!ret) {
			p = mmap(0, (size_t)info.nr_cpus * 4096, PROT_READ,
				 MAP_SHARED, fd, PVPMU_MMAP_SHARED);
			if (p == MAP_FAILED) {
				ret = -errno;
			} else {
				m->shared  = p;
				m->nr_cpus = info.nr_cpus;
				m->hfd     = info.ctx;
			}
		}
	}
	pthread_mutex_unlock(&maps_lock);
	if (ret)
		return ret;
	cpu = sched_getcpu();
	if (cpu < 0 || (unsigned int)cpu >= m->nr_cpus)
		return -PVPMU_EAGAIN;
	*page = m->shared + cpu;
	*hfd  = m->hfd;
	return 0;
}

/*
 * On Linux (page) is not needed: pass NULL and the shared page of the CPU
 * the caller runs on is read (a page given is read as it is).
 */
int pvpmu_read_fast(const struct pvpmu_shared_page *page, int fd,
		    pfarg_pmd_t *pmds, int n)
{
	const struct pvpmu_shared_page *sp;
	int ret, hfd;

	ret = shared_of(fd, &sp, &hfd);
	if (ret)
		return ret;
	return pvpmu_shared_read(page ? page : sp, hfd, pmds, n, pvpmu_rdtsc(),
				 0);
}

int pfm_read_pmds_fast(const struct pvpmu_shared_page *page, int fd,
		       pfarg_pmd_t *pmds, int n)
{
	int ret = pvpmu_read_fast(page, fd, pmds, n);

	return ret == -PVPMU_EAGAIN ? pfm_read_pmds(fd, pmds, n) : ret;
}

/* The module does these itself on Linux. */
int pvpmu_set_vector(pvpmu_u32 vector)
{
	(void)vector;
	return -PVPMU_ENOTSUP;
}

int pvpmu_sched(int fd, pvpmu_u32 op, pvpmu_u32 tid)
{
	(void)fd;
	(void)op;
	(void)tid;
	return -PVPMU_ENOTSUP;
}

int pvpmu_shared_attach(struct pvpmu_shared_page *page)
{
	(void)page;
	return -PVPMU_ENOTSUP;
}

/* One format of the list (spec 3.5.2) through the module. */
static int fmt_info(int fd, pvpmu_u32 index, pfm_format_info_t *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->size  = sizeof(*fi);
	fi->index = index;
	return ioctl(fd, PVPMU_IOC_FMT_INFO, fi) < 0 ? -errno : 0;
}

int pfm_getinfo_formats(pfm_format_info_t *fmts, int max)
{
	pfm_format_info_t fi;
	pvpmu_u32 i, nr;
	int fd, ret;

	if (max < 0 || (max > 0 && !fmts))
		return -PVPMU_EFAULT;
	fd = dev_global();
	if (fd < 0)
		return fd;
	ret = fmt_info(fd, 0, &fi);
	if (ret && ret != -PVPMU_ENOENT)
		return ret;
	nr = fi.nr;
	for (i = 0; i < nr && i < (pvpmu_u32)max; i++) {
		if (i) {
			ret = fmt_info(fd, i, &fi);
			if (ret)
				return ret;
		}
		fmts[i] = fi;
	}
	return (int)nr;
}
