// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_ctx.c: /dev/pvpmu, one perfmon2 context per open file (pvpmu/abi.h
 * section 10): the PVPMU_IOC_PFM and PVPMU_IOC_INFO ioctls, read of
 * messages, poll, O_ASYNC, mmap of the sampling buffer and the shared
 * pages, and close. A forked child shares the file, so the context lives
 * until the last descriptor is closed (release).
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pvpmu_mod.h"

static void ctx_free(struct kref *ref)
{
	struct pvpmu_ctx *ctx = container_of(ref, struct pvpmu_ctx, ref);

	if (ctx->task)
		put_task_struct(ctx->task);
	kfree(ctx);
}

void pvpmu_ctx_put(struct pvpmu_ctx *ctx)
{
	kref_put(&ctx->ref, ctx_free);
}

static int pvpmu_open(struct inode *inode, struct file *f)
{
	struct pvpmu_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	raw_spin_lock_init(&ctx->hc_lock);
	spin_lock_init(&ctx->mlock);
	init_waitqueue_head(&ctx->wq);
	INIT_LIST_HEAD(&ctx->node);
	ctx->hfd        = -1;
	ctx->load_cpu   = -1;
	ctx->sched_cpu  = -1;
	f->private_data = ctx;
	pvpmu_ctx_list_add(ctx);
	return 0;
}

/* Last close (spec 3.1.9 close(): unload and destroy). */
static int pvpmu_release(struct inode *inode, struct file *f)
{
	struct pvpmu_ctx *ctx = f->private_data;
	unsigned long flags;

	pvpmu_ctx_list_del(ctx);
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->closed = true;
	if (ctx->hfd >= 0)
		lx_hc_close_ctx(ctx->hfd);
	ctx->sched_cpu = -1;
	ctx->loaded    = false;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	wake_up_interruptible_all(&ctx->wq);
	if (ctx->task)
		pvpmu_sched_detach(ctx);
	pvpmu_ctx_put(ctx);
	return 0;
}

/* How each command is routed (spec Table 3.1). */
enum cmd_kind {
	CMD_BAD = 0,
	CMD_GLOBAL, /* no context: GETINFO, CONFIG */
	CMD_CREATE,
	CMD_LOAD,
	CMD_CTX, /* the file's context */
};

static const u8 cmd_kinds[] = {
	[PFM_WRITE_PMCS] = CMD_CTX,      [PFM_WRITE_PMDS] = CMD_CTX,
	[PFM_READ_PMDS] = CMD_CTX,       [PFM_STOP] = CMD_CTX,
	[PFM_START] = CMD_CTX,           [PFM_CREATE_CONTEXT] = CMD_CREATE,
	[PFM_LOAD_CONTEXT] = CMD_LOAD,   [PFM_UNLOAD_CONTEXT] = CMD_CTX,
	[PFM_RESTART] = CMD_CTX,         [PFM_CREATE_EVTSETS] = CMD_CTX,
	[PFM_DELETE_EVTSETS] = CMD_CTX,  [PFM_GETINFO_EVTSETS] = CMD_CTX,
	[PFM_GETINFO_PMCS] = CMD_GLOBAL, [PFM_GETINFO_PMDS] = CMD_GLOBAL,
	[PFM_SET_CONFIG] = CMD_GLOBAL,   [PFM_GET_CONFIG] = CMD_GLOBAL,
};

/* A command of the file's context, on its CPU if it is system-wide. */
static int ctx_call(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		    void *kbuf)
{
	if (ctx->load_cpu >= 0)
		return lx_hc_pfm_on(ctx->load_cpu, ctx->hfd, r->cmd, r->nargs,
				    kbuf, r->arg_size, r->restart_arg);
	return lx_hc_pfm(ctx->hfd, r->cmd, r->nargs, kbuf, r->arg_size,
			 r->restart_arg);
}

static int do_create(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		     void *kbuf)
{
	struct pfarg_ctx *pc = kbuf;
	int ret;

	if (ctx->hfd >= 0)
		return -EBUSY; /* one context per open file */
	if (r->arg_size < sizeof(*pc))
		return -EINVAL;
	ret = lx_hc_pfm(0, r->cmd, r->nargs, kbuf, r->arg_size, 0);
	if (ret)
		return ret;
	ctx->hfd       = pc->ctx_fd;
	ctx->flags     = pc->ctx_flags;
	ctx->smpl_size = pc->ctx_smpl_buf_size;
	return 0;
}

static int load_thread(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		       void *kbuf, pid_t pid)
{
	struct task_struct *task;
	unsigned long flags;
	int ret;

	rcu_read_lock();
	task = pid_task(find_vpid(pid), PIDTYPE_PID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	if (ctx->task && ctx->task != task) {
		put_task_struct(task);
		return -EBUSY; /* one monitored thread per context */
	}
	ret = ctx_call(ctx, r, kbuf);
	if (ret) {
		put_task_struct(task);
		return ret;
	}
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->loaded = true;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	if (!ctx->task) {
		ret = pvpmu_sched_attach(ctx, task);
		if (ret) {
			ctx->task = NULL;
			put_task_struct(task);
			lx_hc_pfm(ctx->hfd, PFM_UNLOAD_CONTEXT, 0, NULL, 0, 0);
			ctx->loaded = false;
		}
		return ret;
	}
	put_task_struct(task);
	return 0;
}

static int do_load(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		   void *kbuf)
{
	const struct pfarg_load *ld = kbuf;
	int ret;

	if (ctx->hfd < 0)
		return -EBADF;
	if (r->arg_size < sizeof(*ld))
		return -EINVAL;
	if (!(ctx->flags & PFM_FL_SYSTEM_WIDE))
		return load_thread(ctx, r, kbuf, (pid_t)ld->load_pid);
	/* vCPU-wide: the VMM loads it on the vCPU that calls. */
	if (ld->load_pid >= nr_cpu_ids || !cpu_online(ld->load_pid))
		return -EINVAL;
	ret = lx_hc_pfm_on(ld->load_pid, ctx->hfd, r->cmd, r->nargs, kbuf,
			   r->arg_size, 0);
	if (!ret) {
		ctx->load_cpu = ld->load_pid;
		ctx->loaded   = true;
	}
	return ret;
}

static int dispatch(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		    void *kbuf)
{
	unsigned int kind =
		r->cmd < ARRAY_SIZE(cmd_kinds) ? cmd_kinds[r->cmd] : CMD_BAD;
	unsigned long flags;
	int ret;

	switch (kind) {
	case CMD_GLOBAL:
		return lx_hc_pfm(0, r->cmd, r->nargs, kbuf, r->arg_size, 0);
	case CMD_CREATE:
		return do_create(ctx, r, kbuf);
	case CMD_LOAD:
		return do_load(ctx, r, kbuf);
	case CMD_CTX:
		break;
	default:
		return -EINVAL;
	}
	if (ctx->hfd < 0)
		return -EBADF;
	ret = ctx_call(ctx, r, kbuf);
	if (ret)
		return ret;
	if (r->cmd == PFM_RESTART) {
		pvpmu_restarted(ctx);
	} else if (r->cmd == PFM_UNLOAD_CONTEXT) {
		raw_spin_lock_irqsave(&ctx->hc_lock, flags);
		ctx->loaded    = false;
		ctx->sched_cpu = -1;
		raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
		ctx->load_cpu = -1;
	}
	return 0;
}

static long ioc_pfm(struct pvpmu_ctx *ctx, void __user *uarg)
{
	struct pvpmu_ioc_pfm r;
	void *kbuf = NULL;
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < PVPMU_IOC_PFM_SIZE_VER1)
		return -EINVAL;
	ret = copy_struct_from_user(&r, sizeof(r), uarg, usize);
	if (ret)
		return ret;
	if (r.pad0)
		return -EINVAL;
	if (r.arg_size > PVPMU_ARG_MAX)
		return -E2BIG;
	if (r.arg_size) {
		kbuf = memdup_user(u64_to_user_ptr(r.arg), r.arg_size);
		if (IS_ERR(kbuf))
			return PTR_ERR(kbuf);
	}
	mutex_lock(&ctx->lock);
	ret = dispatch(ctx, &r, kbuf);
	mutex_unlock(&ctx->lock);
	/* OUT fields and RETFL flags go back also when the command failed. */
	if (kbuf && copy_to_user(u64_to_user_ptr(r.arg), kbuf, r.arg_size))
		ret = -EFAULT;
	kfree(kbuf);
	return ret;
}

static long ioc_info(struct pvpmu_ctx *ctx, void __user *uarg)
{
	struct pvpmu_ioc_info info = {.size = sizeof(info)};
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < PVPMU_IOC_INFO_SIZE_VER1)
		return -EINVAL;
	mutex_lock(&ctx->lock);
	info.ctx        = ctx->hfd;
	info.ctx_flags  = ctx->flags;
	info.nr_cpus    = nr_cpu_ids;
	info.smpl_size  = ctx->smpl_size;
	info.sched_outs = READ_ONCE(ctx->sched_outs);
	info.load_pid   = ctx->task ? task_pid_vnr(ctx->task) : -1;
	info.load_cpu   = ctx->load_cpu;
	mutex_unlock(&ctx->lock);
	if (copy_to_user(uarg, &info, min_t(u32, usize, sizeof(info))))
		return -EFAULT;
	return 0;
}

static long pvpmu_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct pvpmu_ctx *ctx = f->private_data;
	void __user *uarg     = (void __user *)arg;

	switch (cmd) {
	case PVPMU_IOC_PFM:
		return ioc_pfm(ctx, uarg);
	case PVPMU_IOC_INFO:
		return ioc_info(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

/* The spec's read(): one message per call (3.3.2). */
static ssize_t pvpmu_read(struct file *f, char __user *buf, size_t n,
			  loff_t *pos)
{
	struct pvpmu_ctx *ctx = f->private_data;
	union pfm_msg m;
	long ret;

	if (n < sizeof(m))
		return -EINVAL;
	if (ctx->hfd < 0)
		return -EBADF;
	for (;;) {
		if (pvpmu_msg_pop(ctx, &m))
			break;
		pvpmu_ctx_drain(ctx);
		if (pvpmu_msg_pop(ctx, &m))
			break;
		if (f->f_flags & O_NONBLOCK)
			return -EAGAIN;
		/* Woken by the notification; polls the VMM every 100 ms too. */
		ret = wait_event_interruptible_timeout(
			ctx->wq, pvpmu_msg_ready(ctx), HZ / 10);
		if (ret < 0)
			return ret;
	}
	if (copy_to_user(buf, &m, sizeof(m)))
		return -EFAULT;
	return sizeof(m);
}

static __poll_t pvpmu_poll(struct file *f, poll_table *wait)
{
	struct pvpmu_ctx *ctx = f->private_data;

	poll_wait(f, &ctx->wq, wait);
	if (!READ_ONCE(ctx->count))
		pvpmu_ctx_drain(ctx);
	return READ_ONCE(ctx->count) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int pvpmu_fasync(int fd, struct file *f, int on)
{
	struct pvpmu_ctx *ctx = f->private_data;

	return fasync_helper(fd, f, on, &ctx->fasync);
}

static int map_smpl(struct pvpmu_ctx *ctx, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 gpa, size;
	int ret;

	if (ctx->hfd < 0)
		return -EBADF;
	ret = lx_hc_smpl(ctx->hfd, &gpa, &size);
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;
	if (len > PAGE_ALIGN(size))
		return -EINVAL;
	return remap_pfn_range(vma, vma->vm_start, gpa >> PAGE_SHIFT, len,
			       vma->vm_page_prot);
}

static int map_shared(struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start, i;
	int ret;

	if (len > (unsigned long)nr_cpu_ids * PAGE_SIZE)
		return -EINVAL;
	for (i = 0; i < len / PAGE_SIZE; i++) {
		ret = remap_pfn_range(vma, vma->vm_start + i * PAGE_SIZE,
				      page_to_pfn(pvpmu_shared_pages[i]),
				      PAGE_SIZE, vma->vm_page_prot);
		if (ret)
			return ret;
	}
	return 0;
}

/* Read-only mappings only: a ring-3 write faults (SIGSEGV). */
static int pvpmu_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct pvpmu_ctx *ctx = f->private_data;
	u64 off               = (u64)vma->vm_pgoff << PAGE_SHIFT;
	int ret;

	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	mutex_lock(&ctx->lock);
	if (off == 0)
		ret = map_smpl(ctx, vma);
	else if (off == PVPMU_MMAP_SHARED)
		ret = map_shared(vma);
	else
		ret = -EINVAL;
	mutex_unlock(&ctx->lock);
	return ret;
}

const struct file_operations pvpmu_fops = {
	.owner          = THIS_MODULE,
	.open           = pvpmu_open,
	.release        = pvpmu_release,
	.unlocked_ioctl = pvpmu_ioctl,
	.read           = pvpmu_read,
	.poll           = pvpmu_poll,
	.fasync         = pvpmu_fasync,
	.mmap           = pvpmu_mmap,
	.llseek         = noop_llseek,
};
