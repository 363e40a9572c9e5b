// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_hc.c: the hypercalls of pvpmu.ko (pvpmu/abi.h sections 5, 8).
 *
 * The doorbell carries a 32-bit guest-physical address, and kernel stacks
 * are virtually mapped (VMAP_STACK), so request blocks never live on the
 * stack: each CPU has a 64-byte slot in one page below 4 GiB, used with
 * interrupts off (the notification interrupt issues hypercalls too).
 * Argument arrays are kmalloc()ed bounce buffers: physically contiguous,
 * passed by their 64-bit guest-physical address.
 */
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/io.h>

#include "pvpmu_hc.h"
#include "pvpmu_mod.h"

#define SLOT_SIZE 64

union hc_block {
	struct pvpmu_hc_pfm pfm;
	struct pvpmu_hc_ctx ctx;
	struct pvpmu_hc_read_msg msg;
	struct pvpmu_hc_smpl_info smpl;
	struct pvpmu_hc_vector vec;
	struct pvpmu_hc_shared shared;
	struct pvpmu_hc_sched sched;
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
 * Copy (in) into this CPU's slot, ring (nr), copy the slot back into (in)
 * (OUT fields). Interrupts stay off across, so the slot is ours.
 */
static int call(unsigned int nr, void *in, size_t size)
{
	unsigned long flags;
	union hc_block *blk;
	long ret;

	local_irq_save(flags);
	blk = (union hc_block *)((char *)page_address(slots_page) +
				 smp_processor_id() * SLOT_SIZE);
	memcpy(blk, in, size);
	ret = pvpmu_hypercall(nr, (u32)virt_to_phys(blk));
	memcpy(in, blk, size);
	local_irq_restore(flags);
	return (int)ret;
}

int lx_hc_pfm(int hfd, u32 cmd, int nargs, void *kbuf, u64 size,
	      u64 restart_arg)
{
	struct pvpmu_hc_pfm req = {
		.size        = sizeof(req),
		.cmd         = cmd,
		.fd          = hfd,
		.nargs       = nargs,
		.arg_gpa     = kbuf && size ? virt_to_phys(kbuf) : 0,
		.arg_size    = kbuf ? size : 0,
		.tid         = task_pid_vnr(current),
		.gid         = task_tgid_vnr(current),
		.restart_arg = restart_arg,
	};

	return call(PVPMU_HC_PFM, &req, sizeof(req));
}

struct pfm_on_args {
	struct pvpmu_hc_pfm req;
	int ret;
};

static void pfm_on_cpu(void *p)
{
	struct pfm_on_args *a = p;

	a->ret = call(PVPMU_HC_PFM, &a->req, sizeof(a->req));
}

int lx_hc_pfm_on(int cpu, int hfd, u32 cmd, int nargs, void *kbuf, u64 size,
		 u64 restart_arg)
{
	struct pfm_on_args a = {
		.req =
			{
				.size  = sizeof(a.req),
				.cmd   = cmd,
				.fd    = hfd,
				.nargs = nargs,
				.arg_gpa =
					kbuf && size ? virt_to_phys(kbuf) : 0,
				.arg_size    = kbuf ? size : 0,
				.tid         = task_pid_vnr(current),
				.gid         = task_tgid_vnr(current),
				.restart_arg = restart_arg,
			},
	};
	int ret;

	ret = smp_call_function_single(cpu, pfm_on_cpu, &a, 1);
	return ret ? ret : a.ret;
}

int lx_hc_close_ctx(int hfd)
{
	struct pvpmu_hc_ctx req = {.size = sizeof(req), .fd = hfd};

	return call(PVPMU_HC_CLOSE, &req, sizeof(req));
}

int lx_hc_msg(int hfd, union pfm_msg *msg)
{
	struct pvpmu_hc_read_msg req = {.size = sizeof(req), .fd = hfd};
	int ret;

	ret = call(PVPMU_HC_READ_MSG, &req, sizeof(req));
	if (!ret)
		*msg = req.msg;
	return ret;
}

int lx_hc_smpl(int hfd, u64 *gpa, u64 *size)
{
	struct pvpmu_hc_smpl_info req = {.size = sizeof(req), .fd = hfd};
	int ret;

	ret = call(PVPMU_HC_SMPL_INFO, &req, sizeof(req));
	if (!ret) {
		*gpa  = req.gpa;
		*size = req.buf_size;
	}
	return ret;
}

int lx_hc_vector(u32 vector)
{
	struct pvpmu_hc_vector req = {.size = sizeof(req), .vector = vector};

	return call(PVPMU_HC_SET_VECTOR, &req, sizeof(req));
}

int lx_hc_shared(u64 gpa)
{
	struct pvpmu_hc_shared req = {.size = sizeof(req), .gpa = gpa};

	return call(PVPMU_HC_SHARED, &req, sizeof(req));
}

int lx_hc_sched(int hfd, u32 op, u32 tid)
{
	struct pvpmu_hc_sched req = {
		.size = sizeof(req),
		.fd   = hfd,
		.op   = op,
		.tid  = tid,
	};

	return call(PVPMU_HC_SCHED, &req, sizeof(req));
}
