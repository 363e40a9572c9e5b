// SPDX-License-Identifier: GPL-2.0
/*
 * pvpmu_main.c: pvpmu.ko, the vpmu paravirtual perfmon2 driver for Linux.
 *
 * Load: detect vpmu through CPUID (pvpmu/abi.h section 3, the driver
 * core's pvpmu_detect()), give every online CPU a shared page
 * (PVPMU_HC_SHARED) and the notification vector, register /dev/pvpmu.
 * Notifications arrive on the x86 platform IPI vector (0xf7), whose
 * callback the guest-support patch vpmu-0003 exports: the callback only
 * queues a work item that fetches every context's messages.
 */
#include <linux/cpu.h>
#include <linux/gfp.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <asm/io.h>
#include <asm/irq.h>
#include <asm/irq_vectors.h>

#include "pvpmu_core.h"
#include "pvpmu_mod.h"

struct page **pvpmu_shared_pages;

static LIST_HEAD(ctx_list);
static DEFINE_SPINLOCK(ctx_list_lock);
static bool own_vector;
/* CPUs whose notification vector fired since the last drain_all. */
static struct cpumask notified_cpus;
static struct cpumask fired_cpus; /* ctx_list_lock */

void pvpmu_ctx_list_add(struct pvpmu_ctx *ctx)
{
	spin_lock_irq(&ctx_list_lock);
	list_add_tail(&ctx->node, &ctx_list);
	spin_unlock_irq(&ctx_list_lock);
}

void pvpmu_ctx_list_del(struct pvpmu_ctx *ctx)
{
	spin_lock_irq(&ctx_list_lock);
	list_del_init(&ctx->node);
	spin_unlock_irq(&ctx_list_lock);
}

void pvpmu_drain_all(void)
{
	struct pvpmu_ctx *ctx;
	unsigned int cpu;

	spin_lock_irq(&ctx_list_lock);
	cpumask_clear(&fired_cpus);
	/* Each bit is taken once: the interrupt may set it again meanwhile. */
	for_each_possible_cpu(cpu)
	{
		if (cpumask_test_and_clear_cpu(cpu, &notified_cpus))
			cpumask_set_cpu(cpu, &fired_cpus);
	}
	list_for_each_entry(ctx, &ctx_list, node)
	{
		pvpmu_ctx_drain(ctx);
		pvpmu_ctx_notified(ctx, &fired_cpus);
	}
	spin_unlock_irq(&ctx_list_lock);
}

static void drain_fn(struct work_struct *w)
{
	pvpmu_drain_all();
}
static DECLARE_WORK(drain_work, drain_fn);

/*
 * Hard interrupt (vector 0xf7): note the CPU (a notification without a
 * message, PFM_FL_OVFL_NO_MSG, leaves no other trace) and defer the
 * hypercalls to a work item.
 */
static void __maybe_unused notify_irq(void)
{
	cpumask_set_cpu(smp_processor_id(), &notified_cpus);
	schedule_work(&drain_work);
}

/*
 * Kbuild defines PVPMU_HAVE_PLATFORM_IPI when the kernel exports the
 * callback (vpmu-0003). Without it (a stock kernel, e.g. Debian's) the
 * driver fetches messages every POLL_JIFFIES instead of on notification.
 */
#ifdef PVPMU_HAVE_PLATFORM_IPI
static bool claim_vector(void)
{
	return cmpxchg(&x86_platform_ipi_callback, NULL, notify_irq) == NULL;
}

static void release_vector(void)
{
	cmpxchg(&x86_platform_ipi_callback, notify_irq, NULL);
}
#else
static bool claim_vector(void)
{
	return false;
}

static void release_vector(void)
{
}
#endif

#define POLL_JIFFIES (HZ / 10)

static void poll_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(poll_work, poll_fn);

static void poll_fn(struct work_struct *w)
{
	pvpmu_drain_all();
	schedule_delayed_work(&poll_work, POLL_JIFFIES);
}

static void cpu_attach(void *unused)
{
	struct page *pg = pvpmu_shared_pages[smp_processor_id()];

	lx_hc_shared(pg);
	if (own_vector)
		lx_hc_vector(X86_PLATFORM_IPI_VECTOR);
}

static void cpu_detach(void *unused)
{
	lx_hc_vector(0);
	lx_hc_shared(NULL);
}

static void free_pages_all(void)
{
	unsigned int cpu;

	if (!pvpmu_shared_pages)
		return;
	for_each_possible_cpu(cpu) if (pvpmu_shared_pages[cpu])
		__free_page(pvpmu_shared_pages[cpu]);
	kfree(pvpmu_shared_pages);
	pvpmu_shared_pages = NULL;
}

static int alloc_pages_all(void)
{
	unsigned int cpu;

	pvpmu_shared_pages =
		kcalloc(nr_cpu_ids, sizeof(*pvpmu_shared_pages), GFP_KERNEL);
	if (!pvpmu_shared_pages)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
	{
		pvpmu_shared_pages[cpu] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pvpmu_shared_pages[cpu])
			return -ENOMEM;
	}
	return 0;
}

static struct miscdevice pvpmu_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name  = "pvpmu",
	.fops  = &pvpmu_fops,
	.mode  = 0666,
};

static int __init pvpmu_init(void)
{
	struct pvpmu_features f;
	int ret;

	ret = pvpmu_detect(&f);
	if (ret)
		return ret;
	if (!(f.features & PVPMU_FEAT_PFM) || !(f.features & PVPMU_FEAT_SHARED))
		return -ENODEV;
	ret = lx_hc_init();
	if (ret)
		return ret;
	ret = alloc_pages_all();
	if (ret)
		goto err_pages;
	/* The platform IPI callback is free on a vpmu guest (no UV, NumaChip).
	 */
	own_vector = claim_vector();
	if (!own_vector)
		schedule_delayed_work(&poll_work, POLL_JIFFIES);
	cpus_read_lock();
	on_each_cpu(cpu_attach, NULL, 1);
	cpus_read_unlock();
	preempt_notifier_inc();
	ret = misc_register(&pvpmu_dev);
	if (ret)
		goto err_dev;
	/* Host profiles without process names are still profiles. */
	ret = pvpmu_tasks_start();
	if (ret)
		pr_warn("pvpmu: no process records for host profiles (%d)\n",
			ret);
	pr_info("pvpmu: vpmu ABI %u, /dev/pvpmu, notifications on vector "
		"0x%x%s\n",
		f.abi, X86_PLATFORM_IPI_VECTOR,
		own_vector ? ""
			   : " (not available: messages polled every 100 ms)");
	return 0;

err_dev:
	preempt_notifier_dec();
	on_each_cpu(cpu_detach, NULL, 1);
	cancel_delayed_work_sync(&poll_work);
	if (own_vector)
		release_vector();
err_pages:
	free_pages_all();
	lx_hc_exit();
	return ret;
}

static void __exit pvpmu_exit(void)
{
	pvpmu_tasks_stop();
	misc_deregister(&pvpmu_dev);
	on_each_cpu(cpu_detach, NULL, 1);
	cancel_delayed_work_sync(&poll_work);
	if (own_vector)
		release_vector();
	synchronize_rcu();
	flush_work(&drain_work);
	preempt_notifier_dec();
	free_pages_all();
	lx_hc_exit();
}

module_init(pvpmu_init);
module_exit(pvpmu_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vpmu paravirtual perfmon2 driver (/dev/pvpmu)");
MODULE_AUTHOR("vpmu project");
