// SPDX-License-Identifier: MIT
/*
 * test_virtio_mmio.c: the virtio-mmio transport of vmm/virtio as
 * Linux's virtio_mmio driver sees it: the registers it probes, feature
 * negotiation (FEATURES_OK refused without VERSION_1), queue set-up (sizes
 * and ring addresses refused), when a notify is served and how much of
 * the ring one serves, interrupts and their acknowledgement, reset; and
 * what creating a device refuses, the kernel parameter declaring one.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "virtio_driver.h"

TestSuite(vmm_virtio_mmio, .init = vd_setup, .fini = vd_teardown);

Test(vmm_virtio_mmio, probe_values)
{
	uint64_t f = vd_device_features();
	uint64_t v = 0;
	uint16_t w = 0;

	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_MAGIC_VALUE), 0x74726976));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_VERSION), 2));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_DEVICE_ID), 2));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_VENDOR_ID), VMM_VIRTIO_VENDOR_ID));
	cr_assert(eq(u64, f,
		     (1ULL << VIRTIO_F_VERSION_1) |
			     (1ULL << VIRTIO_BLK_F_FLUSH) |
			     (1ULL << VIRTIO_BLK_F_BLK_SIZE) |
			     (1ULL << VIRTIO_BLK_F_SEG_MAX)));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 256));
	vd_wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 0), "one queue");
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_STATUS), 0));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_CONFIG_GENERATION), 0));

	/* Capacity as Linux reads a 64-bit field: two 32-bit halves. */
	cr_assert(eq(u32, vd_cfg32(0), NR_SECTORS));
	cr_assert(eq(u32, vd_cfg32(4), 0));
	cr_assert(eq(u32, vd_cfg32(offsetof(struct virtio_blk_config, seg_max)),
		     254));
	cr_assert(eq(u32,
		     vd_cfg32(offsetof(struct virtio_blk_config, blk_size)),
		     512));
	cr_assert(eq(int,
		     vmm_virtio_mmio_access(vd_dev, VIRTIO_MMIO_CONFIG, false,
					    &v, 8),
		     0));
	cr_assert(eq(u64, le64toh(v), NR_SECTORS));
	cr_assert(
		eq(int,
		   vmm_virtio_mmio_access(
			   vd_dev,
			   VIRTIO_MMIO_CONFIG +
				   offsetof(struct virtio_blk_config, blk_size),
			   false, &w, 2),
		   0));
	cr_assert(eq(u16, le16toh(w), 512));
	/* Past the configuration space: zeros. */
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_CONFIG + 0x200), 0));
}

Test(vmm_virtio_mmio, bad_register_access_is_refused_and_reads_zero)
{
	uint16_t w = 0xffff;
	uint32_t v = 0xffffffff;

	cr_assert(eq(int,
		     vmm_virtio_mmio_access(vd_dev, VIRTIO_MMIO_MAGIC_VALUE,
					    false, &w, 2),
		     -EINVAL));
	cr_assert(eq(u16, w, 0));
	cr_assert(eq(int,
		     vmm_virtio_mmio_access(vd_dev, VIRTIO_MMIO_MAGIC_VALUE + 1,
					    false, &v, 4),
		     -EINVAL));
	cr_assert(eq(u32, v, 0));
	v = 0xffffffff;
	cr_assert(eq(int,
		     vmm_virtio_mmio_access(vd_dev, VMM_VIRTIO_MMIO_SIZE, false,
					    &v, 4),
		     -EINVAL));
	cr_assert(eq(u32, v, 0));
	/* A write to a read-only register changes nothing. */
	vd_wr(VIRTIO_MMIO_MAGIC_VALUE, 0);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_MAGIC_VALUE), 0x74726976));
}

Test(vmm_virtio_mmio, queue_size_must_be_a_power_of_two_up_to_max)
{
	static const uint32_t bad[] = {0, 3, 100, 255, 512, 0x10000};
	size_t i;

	vd_negotiate_ok();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(eq(u32, vd_setup_queue(bad[i], DESC_GPA), 0),
			  "size %u", bad[i]);
	cr_assert(eq(u32, vd_setup_queue(1, DESC_GPA), 1));
	vd_wr(VIRTIO_MMIO_QUEUE_READY, 0);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_QUEUE_READY), 0));
	cr_assert(eq(u32, vd_setup_queue(256, DESC_GPA), 1));
}

Test(vmm_virtio_mmio, rings_outside_ram_or_misaligned_are_refused)
{
	vd_negotiate_ok();
	cr_assert(eq(u32, vd_setup_queue(128, RAM_BASE + RAM_SIZE - 16), 0));
	cr_assert(eq(u32, vd_setup_queue(128, 0), 0));
	cr_assert(eq(u32, vd_setup_queue(128, DESC_GPA + 8), 0), "16-aligned");
	cr_assert(eq(u32, vd_setup_queue(128, DESC_GPA), 1));
}

Test(vmm_virtio_mmio, notify_before_ready_or_driver_ok_is_ignored)
{
	/* Rings programmed and DRIVER_OK, but QueueReady never written. */
	vd_negotiate_ok();
	vd_program_queue(128, DESC_GPA);
	vd_driver_ok();
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 0));
	cr_assert(eq(u8, *vd_status(), 0xff));
	cr_assert(eq(u32, vd_nr_irq_raises, 0));

	/* Queue ready but no DRIVER_OK yet: still nothing. */
	vd_negotiate_ok();
	cr_assert(eq(u32, vd_setup_queue(128, DESC_GPA), 1));
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 0));
	cr_assert(eq(u8, *vd_status(), 0xff));

	/* DRIVER_OK: the next notify serves what was waiting. */
	vd_driver_ok();
	vd_wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
	/* A notify for a queue that does not exist does nothing. */
	vd_wr(VIRTIO_MMIO_QUEUE_NOTIFY, 5);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u32, vd_nr_irq_raises, 1));
}

Test(vmm_virtio_mmio, no_interrupt_flag_suppresses_the_interrupt)
{
	struct vring_avail *a = vd_gpa(AVAIL_GPA);

	vd_start(128);
	a->flags = htole16(VRING_AVAIL_F_NO_INTERRUPT);
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u32, vd_nr_irq_raises, 0));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
}

Test(vmm_virtio_mmio, reset_clears_queue_and_interrupt_state)
{
	vd_start(128);
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 2));
	cr_assert(vd_irq_level);

	vd_wr(VIRTIO_MMIO_STATUS, 0);
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_STATUS), 0));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_QUEUE_READY), 0));
	cr_assert(eq(u32, vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0));
	cr_assert(not(vd_irq_level));
	/* Features are negotiated afresh. */
	vd_wr(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE |
					  VIRTIO_CONFIG_S_DRIVER |
					  VIRTIO_CONFIG_S_FEATURES_OK);
	cr_assert(eq(u32,
		     vd_rd(VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK,
		     0));

	/* A new driver starts its rings at index 0 again. */
	vd_start(64);
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 1));
	cr_assert(eq(u32, vd_last_used().id, 0));
	cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK));
}

Test(vmm_virtio_mmio, features_ok_needs_version_1_and_offered_bits_only)
{
	uint64_t f = vd_device_features();

	cr_assert(eq(u32,
		     vd_negotiate(f & ~(1ULL << VIRTIO_F_VERSION_1)) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     0));
	/* Queues stay idle even if the driver presses on. */
	vd_setup_queue(128, DESC_GPA);
	vd_driver_ok();
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert(eq(u16, vd_used_idx(), 0));

	cr_assert(eq(u32,
		     vd_negotiate(f | (1ULL << VIRTIO_RING_F_EVENT_IDX)) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     0));
	cr_assert(eq(u32,
		     vd_negotiate(1ULL << VIRTIO_F_VERSION_1) &
			     VIRTIO_CONFIG_S_FEATURES_OK,
		     VIRTIO_CONFIG_S_FEATURES_OK),
		  "a subset with VERSION_1 is fine");
}

Test(vmm_virtio_mmio, a_notify_serves_what_was_there_when_it_came)
{
	unsigned int i;

	vd_start(8);
	vd_producer_left = 100;
	vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
	/*
	 * The device serves what was there when it read avail->idx, at most
	 * the queue size; what the other vCPU adds later waits for its own
	 * notify, so this vCPU comes back to its guest.
	 */
	cr_assert(le(u16, vd_used_idx(), 8));
	cr_assert(lt(u16, vd_used_idx(), vd_avail_idx));
	for (i = 0; i < 1000 && vd_used_idx() != vd_avail_idx; i++)
		vd_wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	cr_assert(eq(u32, vd_producer_left, 0));
	cr_assert(eq(u16, vd_used_idx(), vd_avail_idx));
	cr_assert(eq(u16, vd_used_idx(), 101));
	cr_assert(not(vd_needs_reset()));
}

Test(vmm_virtio_mmio, create_refuses_bad_parameters)
{
	struct vmm_virtio_blk_params p = {.fd = vd_disk_fd};
	struct vmm_virtio_host no_irq  = {.gpa_ptr = vd_gpa_ptr};
	struct vmm_virtio_dev *d       = NULL;
	int pipe_fd[2];

	cr_assert(eq(int, vmm_virtio_blk_create(&p, &no_irq, &d), -EINVAL));
	p.fd = -1;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &vd_host, &d), -EINVAL));
	cr_assert(eq(ptr, d, NULL));
	/* Neither a file nor a block device: no size to serve. */
	cr_assert(eq(int, pipe(pipe_fd), 0));
	p.fd = pipe_fd[0];
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &vd_host, &d), -EINVAL));
	close(pipe_fd[0]);
	close(pipe_fd[1]);
	/* Less than one sector. */
	cr_assert(eq(int, ftruncate(vd_disk_fd, 100), 0));
	p.fd = vd_disk_fd;
	cr_assert(eq(int, vmm_virtio_blk_create(&p, &vd_host, &d), -EINVAL));
	cr_assert(eq(ptr, d, NULL));
}

Test(vmm_virtio_mmio, cmdline_declares_the_window)
{
	char buf[64];

	cr_assert(eq(int,
		     vmm_virtio_mmio_cmdline(buf, sizeof(buf), 0xd0000000, 5),
		     (int)strlen("virtio_mmio.device=4K@0xd0000000:5")));
	cr_assert(eq(str, buf, "virtio_mmio.device=4K@0xd0000000:5"));
	cr_assert(eq(int, vmm_virtio_mmio_cmdline(buf, 10, 0xd0000000, 5),
		     -ENOSPC));
	cr_assert(eq(int, vmm_virtio_mmio_cmdline(buf, sizeof(buf), 0x800, 5),
		     -EINVAL));
}

static bool handler_stop;

/* Another vCPU in Linux's vm_interrupt: read InterruptStatus, ACK it. */
static void *irq_handler(void *arg)
{
	uint32_t isr;

	(void)arg;
	while (!__atomic_load_n(&handler_stop, __ATOMIC_ACQUIRE)) {
		isr = vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS);
		if (isr)
			vd_wr(VIRTIO_MMIO_INTERRUPT_ACK, isr);
		(void)vd_cfg32(0);
	}
	return NULL;
}

Test(vmm_virtio_mmio, two_vcpus_at_once_keep_the_line_and_the_ring_right)
{
	pthread_t t;
	unsigned int i;

	vd_start(128);
	cr_assert(eq(int, pthread_create(&t, NULL, irq_handler, NULL), 0));
	for (i = 0; i < 3000; i++) {
		vd_request(VIRTIO_BLK_T_FLUSH, 0, 0);
		cr_assert(eq(u8, *vd_status(), VIRTIO_BLK_S_OK), "request %u",
			  i);
	}
	__atomic_store_n(&handler_stop, true, __ATOMIC_RELEASE);
	cr_assert(eq(int, pthread_join(t, NULL), 0));
	cr_assert(eq(u16, vd_used_idx(), 3000));
	cr_assert(eq(u32, vd_nr_irq_raises, 3000));
	/* The line is up exactly while a bit is pending. */
	cr_assert(eq(int, vd_rd(VIRTIO_MMIO_INTERRUPT_STATUS) != 0,
		     vd_irq_level));
	cr_assert(not(vd_needs_reset()));
}
