// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_glue.c: the hypercalls of pvpmu.ko, through the driver core
 * (core/hypercall.c fills every request block) with this glue.
 *
 * The doorbell carries a 32-bit guest-physical address, and kernel stacks
 * are virtually mapped (VMAP_STACK), so request blocks never reach the VMM
 * from the stack: the glue's call_block copies each into this CPU's
 * 128-byte slot in one page below 4 GiB, used with interrupts off (the
 * notification interrupt issues hypercalls too). Argument arrays are
 * kmalloc()ed bounce buffers: physically contiguous, passed by their
 * 64-bit guest-physical address.
 */
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/io.h>

#include "pvpmu_core.h"
#include "pvpmu_hc.h"
#include "pvpmu_mod.h"

#define SLOT_SIZE 128 /* the largest block: pvpmu_hc_fmt_info, 80 bytes */

union hc_block {
	struct pvpmu_hc_pfm pfm;
	struct pvpmu_hc_ctx ctx;
	struct pvpmu_hc_read_msg msg;
	struct pvpmu_hc_smpl_info smpl;
	struct pvpmu_hc_vector vec;
	struct pvpmu_hc_shared shared;
	struct pvpmu_hc_sched sched;
	struct pvpmu_hc_fmt_info fmt;
	struct pvpmu_hc_task task;
};
_Static_assert(sizeof(union hc_block) <= SLOT_SIZE, "a block fits its slot");

static struct page *slots_page;
static unsigned int slots_order;

int lx_hc_init(void)
{
	unsigned long bytes = (unsigned long)nr_cpu_ids * SLOT_SIZE;

	slots_order = get_order(bytes);
	slots_page =
		alloc_pages(GFP_KERNEL | __GFP_DMA32 | __GFP_ZERO, slots_order);
	if (!slots_page)
		return -ENOMEM;
	if (page_to_phys(slots_page) + bytes > 0x100000000ULL) {
		__free_pages(slots_page, slots_order);
		slots_page = NULL;
		return -ENOMEM;
	}
	return 0;
}

void lx_hc_exit(void)
{
	if (slots_page)
		__free_pages(slots_page, slots_order);
	slots_page = NULL;
}

/*
 * Copy (block) into this CPU's slot, ring (nr), copy the slot back into
 * (block) (OUT fields). Interrupts stay off across, so the slot is ours.
 */
static long slot_call(void *opaque, unsigned int nr, void *block,
		      pvpmu_u64 size)
{
	unsigned long flags;
	union hc_block *blk;
	long ret;

	(void)opaque;
	if (size > SLOT_SIZE)
		return -PVPMU_EINVAL;
	local_irq_save(flags);
	blk = (union hc_block *)((char *)page_address(slots_page) +
				 smp_processor_id() * SLOT_SIZE);
	memcpy(blk, block, size);
	ret = pvpmu_hypercall(nr, (u32)virt_to_phys(blk));
	memcpy(block, blk, size);
	local_irq_restore(flags);
	return ret;
}

/* Argument arrays and shared pages: kmalloc()ed or whole pages. */
static int lx_virt_to_gpa(void *opaque, const void *p, pvpmu_u64 len,
			  pvpmu_u64 *gpa)
{
	(void)opaque;
	(void)len;
	*gpa = virt_to_phys((void *)p);
	return 0;
}

/* Sampling buffers are mapped by pvpmu_mmap(), never through the core. */
static int lx_map_gpa(void *opaque, pvpmu_u64 gpa, pvpmu_u64 len,
		      const void **out)
{
	(void)opaque;
	(void)gpa;
	(void)len;
	(void)out;
	return -PVPMU_EFAULT;
}

/*
 * The ids of the thread that issues a perfmon2 command, taken in that
 * thread: a system-wide command runs on its CPU in an interrupt, where
 * current is whoever ran there. Other calls carry no ids (opaque NULL).
 */
struct lx_caller {
	u32 tid, gid;
};

static pvpmu_u32 lx_tid(void *opaque)
{
	return opaque ? ((struct lx_caller *)opaque)->tid : 0;
}

static pvpmu_u32 lx_gid(void *opaque)
{
	return opaque ? ((struct lx_caller *)opaque)->gid : 0;
}

static const struct pvpmu_glue_ops lx_glue = {
	.virt_to_gpa = lx_virt_to_gpa,
	.map_gpa     = lx_map_gpa,
	.call_block  = slot_call,
	.current_tid = lx_tid,
	.current_gid = lx_gid,
};

static const struct pvpmu_drv lx_drv = {.ops = &lx_glue};

/* A perfmon2 command of the current thread. */
struct lx_pfm {
	struct lx_caller who;
	struct pvpmu_drv drv;
	struct pvpmu_pfm_req req;
	int ret;
};

static void lx_pfm_init(struct lx_pfm *p, int hfd, u32 cmd, int nargs,
			void *kbuf, u64 size, u64 restart_arg)
{
	struct pvpmu_pfm_req req = {
		.fd          = hfd,
		.cmd         = cmd,
		.nargs       = nargs,
		.arg_gpa     = kbuf && size ? virt_to_phys(kbuf) : 0,
		.arg_size    = kbuf ? size : 0,
		.restart_arg = restart_arg,
	};

	p->who.tid    = task_pid_vnr(current);
	p->who.gid    = task_tgid_vnr(current);
	p->drv.ops    = &lx_glue;
	p->drv.opaque = &p->who;
	p->req        = req;
	p->ret        = 0;
}

int lx_hc_pfm(int hfd, u32 cmd, int nargs, void *kbuf, u64 size,
	      u64 restart_arg)
{
	struct lx_pfm p;

	lx_pfm_init(&p, hfd, cmd, nargs, kbuf, size, restart_arg);
	return pvpmu_pfm_gpa(&p.drv, &p.req);
}

static void pfm_on_cpu(void *arg)
{
	struct lx_pfm *p = arg;

	p->ret = pvpmu_pfm_gpa(&p->drv, &p->req);
}

int lx_hc_pfm_on(int cpu, int hfd, u32 cmd, int nargs, void *kbuf, u64 size,
		 u64 restart_arg)
{
	struct lx_pfm p;
	int ret;

	lx_pfm_init(&p, hfd, cmd, nargs, kbuf, size, restart_arg);
	ret = smp_call_function_single(cpu, pfm_on_cpu, &p, 1);
	return ret ? ret : p.ret;
}

int lx_hc_close_ctx(int hfd)
{
	return pvpmu_hc_close(&lx_drv, hfd);
}

int lx_hc_msg(int hfd, union pfm_msg *msg)
{
	return pvpmu_hc_read_msg(&lx_drv, hfd, msg, 0);
}

int lx_hc_smpl(int hfd, u64 *gpa, u64 *size)
{
	return pvpmu_hc_smpl_info(&lx_drv, hfd, gpa, size);
}

int lx_hc_vector(u32 vector)
{
	return pvpmu_hc_set_vector(&lx_drv, vector);
}

int lx_hc_shared(struct page *pg)
{
	return pvpmu_shared_register(&lx_drv, pg ? page_address(pg) : NULL);
}

int lx_hc_sched(int hfd, u32 op, u32 tid, u32 *counting)
{
	return pvpmu_hc_sched(&lx_drv, hfd, op, tid, counting);
}

int lx_hc_fmt_info(u32 index, struct pvpmu_hc_fmt_info *fi)
{
	return pvpmu_hc_fmt_info(&lx_drv, index, fi);
}

int lx_hc_task(struct pvpmu_hc_task *req)
{
	return pvpmu_hc_task(&lx_drv, req);
}
