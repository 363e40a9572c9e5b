// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_ctx.c: /dev/pvpmu, one perfmon2 context per open file (pvpmu/abi.h
 * section 10): the PVPMU_IOC_PFM and PVPMU_IOC_INFO ioctls, read of
 * messages, poll, O_ASYNC, mmap of the sampling buffer and the shared
 * pages, and close. A forked child shares the file, so the context lives
 * until the last descriptor is closed (release); a close by the
 * self-monitoring thread unloads it for the others (flush).
 */
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
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
	ctx->last_cpu   = -1;
	f->private_data = ctx;
	pvpmu_ctx_list_add(ctx);
	/* Spec 3.3.3: a stream of messages; lseek() gives ESPIPE. */
	return stream_open(inode, f);
}

/*
 * Every close() (spec 3.1.15, Fig. 3.10): when the self-monitoring thread
 * closes, the context is unloaded, so that a process that still holds it
 * (a forked child) may load it elsewhere. Its exit closes it too.
 */
static int pvpmu_flush(struct file *f, fl_owner_t id)
{
	struct pvpmu_ctx *ctx = f->private_data;

	/*
	 * Only the monitored thread has work here, and only it can make
	 * ctx->task equal current: any other closer returns without waiting
	 * for the lock (a forked child that closes its copy while its parent
	 * loads the context onto it must not return to user space, where
	 * the scheduler hook is installed, before the parent's START).
	 */
	if (READ_ONCE(ctx->task) != current)
		return 0;
	mutex_lock(&ctx->lock);
	/*
	 * Not a thread that another loaded the context onto: its exec()
	 * closing an inherited O_CLOEXEC copy keeps it monitored (3.3.6).
	 */
	if (ctx->task == current && ctx->self)
		pvpmu_sched_self_close(ctx);
	mutex_unlock(&ctx->lock);
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

/*
 * Spec 3.1.7: attach to thread (pid), if the caller may monitor it
 * (pvpmu_perm.c; EPERM). exec_update_lock is held from the check to the
 * attachment, as perf_event_open() holds it: an exec that changes the
 * target's credentials comes before the check or after the attachment.
 */
static int load_thread(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		       void *kbuf, pid_t pid)
{
	struct task_struct *task;
	struct signal_struct *sig;
	unsigned long flags;
	int ret;

	rcu_read_lock();
	task = pid_task(find_vpid(pid), PIDTYPE_PID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	/* Spec 3.3.6: a thread that exited no longer holds the context. */
	pvpmu_sched_reap(ctx);
	if (ctx->task && ctx->task != task) {
		ret = -EBUSY; /* one monitored thread per context */
		goto out_put;
	}
	sig = task->signal;
	ret = down_read_interruptible(&sig->exec_update_lock);
	if (ret)
		goto out_put;
	ret = pvpmu_may_monitor_task(task);
	if (!ret)
		ret = ctx_call(ctx, r, kbuf);
	if (ret)
		goto out_unlock;
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->loaded = true;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
	ctx->self = task == current;
	if (ctx->task)
		goto out_unlock; /* reloaded on the same thread */
	ret = pvpmu_sched_attach(ctx, task);
	if (!ret) {
		task = NULL; /* the reference is ctx->task's now */
		goto out_unlock;
	}
	ctx->task = NULL;
	lx_hc_pfm(ctx->hfd, PFM_UNLOAD_CONTEXT, 0, NULL, 0, 0);
	raw_spin_lock_irqsave(&ctx->hc_lock, flags);
	ctx->loaded = false;
	raw_spin_unlock_irqrestore(&ctx->hc_lock, flags);
out_unlock:
	up_read(&sig->exec_update_lock);
out_put:
	if (task)
		put_task_struct(task);
	return ret;
}

/*
 * A system-wide command that the VMM judges by the vCPU it comes from
 * (spec 3.1.7 LOAD: on the caller's CPU, EINVAL elsewhere; 3.1.8 UNLOAD:
 * from the bound CPU, EBUSY elsewhere): issued from the CPU the caller
 * runs on, never moved to the bound one.
 */
static int call_here(struct pvpmu_ctx *ctx, const struct pvpmu_ioc_pfm *r,
		     void *kbuf)
{
	int ret;

	preempt_disable();
	ret = lx_hc_pfm(ctx->hfd, r->cmd, r->nargs, kbuf, r->arg_size,
			r->restart_arg);
	preempt_enable();
	return ret;
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
	/* A CPU: perf's capability for CPU-wide events (pvpmu_perm.c). */
	ret = pvpmu_may_monitor_cpu();
	if (ret)
		return ret;
	if (ld->load_pid >= nr_cpu_ids || !cpu_online(ld->load_pid))
		return -EINVAL;
	ret = call_here(ctx, r, kbuf);
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
	if (r->cmd == PFM_UNLOAD_CONTEXT && ctx->load_cpu >= 0)
		ret = call_here(ctx, r, kbuf);
	else
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

/*
 * Spec 3.5.2: the list of formats, for any user (the device is 0666),
 * one per call: (index) in, the format out; an index past the end fails
 * with ENOENT and still tells how many there are (nr).
 */
static long ioc_fmt_info(void __user *uarg)
{
	struct pvpmu_hc_fmt_info fi;
	u32 usize;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < sizeof(fi))
		return -EINVAL;
	if (copy_from_user(&fi, uarg, sizeof(fi)))
		return -EFAULT;
	ret = lx_hc_fmt_info(fi.index, &fi);
	if ((!ret || ret == -ENOENT) && copy_to_user(uarg, &fi, sizeof(fi)))
		return -EFAULT;
	return ret;
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
	case PVPMU_IOC_FMT_INFO:
		return ioc_fmt_info(uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * The spec's read(): one message per call (3.3.3); a size that is not a
 * multiple of the message size is EINVAL.
 */
static ssize_t pvpmu_read(struct file *f, char __user *buf, size_t n,
			  loff_t *pos)
{
	struct pvpmu_ctx *ctx = f->private_data;
	union pfm_msg m;
	long ret;

	if (n < sizeof(m) || n % sizeof(m))
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

/* Does the caller's process map (f)'s sampling buffer already? */
static bool smpl_mapped(struct file *f)
{
	struct vm_area_struct *v;
	VMA_ITERATOR(vmi, current->mm, 0);

	/* mmap_lock is held for writing; the new vma is not in the tree. */
	for_each_vma(vmi, v)
	{
		if (v->vm_file == f &&
		    v->vm_pgoff < (PVPMU_MMAP_SHARED >> PAGE_SHIFT))
			return true;
	}
	return false;
}

/*
 * Spec 3.5.4: the buffer is mapped shared, read-only, never executable,
 * whole (ctx_smpl_buf_size, rounded to pages), from offset 0, once per
 * process. A fork()ed child inherits the mapping.
 */
static int map_smpl(struct pvpmu_ctx *ctx, struct file *f,
		    struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	u64 gpa, size;
	int ret;

	if (ctx->hfd < 0)
		return -EBADF;
	if (!(vma->vm_flags & VM_SHARED) ||
	    (vma->vm_flags & (VM_LOCKED | VM_GROWSDOWN)))
		return -EINVAL;
	ret = lx_hc_smpl(ctx->hfd, &gpa, &size);
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;
	if (len != PAGE_ALIGN(size))
		return -EINVAL;
	if (smpl_mapped(f))
		return -EBUSY;
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

/*
 * Read-only, non-executable mappings only (spec 3.5.4: PROT_WRITE and
 * PROT_EXEC are not supported, nor later by mprotect()): a ring-3 write
 * faults (SIGSEGV).
 */
static int pvpmu_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct pvpmu_ctx *ctx = f->private_data;
	u64 off               = (u64)vma->vm_pgoff << PAGE_SHIFT;
	int ret;

	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EACCES;
	vma->vm_flags &= ~(VM_MAYWRITE | VM_MAYEXEC);
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	mutex_lock(&ctx->lock);
	if (off == 0)
		ret = map_smpl(ctx, f, vma);
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
	.flush          = pvpmu_flush,
	.release        = pvpmu_release,
	.unlocked_ioctl = pvpmu_ioctl,
	.read           = pvpmu_read,
	.poll           = pvpmu_poll,
	.fasync         = pvpmu_fasync,
	.mmap           = pvpmu_mmap,
	.llseek         = no_llseek,
};
