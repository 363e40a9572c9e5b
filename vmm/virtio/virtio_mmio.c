// SPDX-License-Identifier: MIT
/*
 * virtio_mmio.c: the virtio-mmio transport, version 2 (virtio 1.2 §4.2):
 * the register file, the device status state machine with feature
 * negotiation and reset, queue set-up, interrupts, the device
 * configuration space window, and QueueNotify serving the queue.
 *
 * Status state machine (§3.1.1), as the device enforces it:
 *   0 (reset) -> ACKNOWLEDGE -> DRIVER -> FEATURES_OK -> DRIVER_OK
 * FEATURES_OK is refused (it reads back clear) when the driver accepted a
 * feature not offered or did not accept VIRTIO_F_VERSION_1: this device
 * has no legacy interface. Queues are served only with FEATURES_OK and
 * DRIVER_OK set and DEVICE_NEEDS_RESET clear. DEVICE_NEEDS_RESET is the
 * device's own bit: set when the guest's rings make no sense, cleared
 * only by writing 0 to Status.
 */
#include "virtio_priv.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

/* "virt", little-endian. */
#define MMIO_MAGIC   0x74726976U
#define MMIO_VERSION 2U

#define STATUS_RUNNING (VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK)

int virtio_dev_init(struct vmm_virtio_dev *d, const struct virtio_dev_ops *ops,
		    const struct vmm_virtio_host *host)
{
	int ret;

	if (!host || !host->gpa_ptr || !host->irq)
		return -EINVAL;
	ret = -pthread_mutex_init(&d->lock, NULL);
	if (ret)
		return ret;
	d->ops  = ops;
	d->host = *host;
	return 0;
}

void virtio_dev_fini(struct vmm_virtio_dev *d)
{
	pthread_mutex_destroy(&d->lock);
}

void vmm_virtio_dev_destroy(struct vmm_virtio_dev *d)
{
	if (!d)
		return;
	virtio_dev_fini(d);
	d->ops->destroy(d);
}

static void raise_irq(struct vmm_virtio_dev *d, uint32_t why)
{
	d->int_status |= why;
	d->host.irq(d->host.opaque, true);
}

/*
 * §2.1.2: the device cannot go on without the driver's help. It stops
 * serving queues and says so by a configuration change interrupt.
 */
static void needs_reset(struct vmm_virtio_dev *d)
{
	if (d->status & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	d->status |= VIRTIO_CONFIG_S_NEEDS_RESET;
	raise_irq(d, VIRTIO_MMIO_INT_CONFIG);
}

static void reset(struct vmm_virtio_dev *d)
{
	bool was_raised = d->int_status != 0;

	d->status           = 0;
	d->drv_features     = 0;
	d->features_sel     = 0;
	d->drv_features_sel = 0;
	d->queue_sel        = 0;
	d->int_status       = 0;
	memset(d->vq, 0, sizeof(d->vq));
	if (was_raised)
		d->host.irq(d->host.opaque, false);
}

static struct virtq *selected_queue(struct vmm_virtio_dev *d)
{
	if (d->queue_sel >= d->ops->nr_queues)
		return NULL;
	return &d->vq[d->queue_sel];
}

/*
 * Serve the chains the driver had made available on queue (qi) when it
 * notified: at most the queue size, so the calling vCPU returns to its
 * guest even while another vCPU keeps adding (the driver notifies again
 * for what it adds later: VRING_USED_F_NO_NOTIFY is never set). A chain
 * the device type cannot answer at all, or a broken ring, stops the queue
 * with DEVICE_NEEDS_RESET: what follows in a ring the driver got wrong
 * cannot be trusted either.
 */
static void serve_queue(struct vmm_virtio_dev *d, unsigned int qi)
{
	struct virtq *q       = &d->vq[qi];
	struct virtq_chain *c = &d->chain;
	bool used             = false;
	uint32_t written;
	uint16_t end;
	int ret;

	if (virtq_avail_end(q, &d->host, &end)) {
		needs_reset(d);
		return;
	}
	for (;;) {
		ret = virtq_pop(q, &d->host, end, c);
		if (ret == -ENOENT)
			break;
		if (ret) {
			needs_reset(d);
			break;
		}
		written = 0;
		ret     = c->err ? c->err : d->ops->handle(d, qi, c, &written);
		if (ret)
			written = 0;
		if (virtq_push(q, &d->host, c->head, written)) {
			needs_reset(d);
			break;
		}
		used = true;
		if (ret) {
			needs_reset(d);
			break;
		}
	}
	if (used && virtq_wants_irq(q, &d->host))
		raise_irq(d, VIRTIO_MMIO_INT_VRING);
}

/*
 * QueueNotify: the queue is served right here, in the vCPU thread that
 * wrote the register, with the device mutex held. The guest's vCPU waits
 * for its own disk I/O; no I/O thread or eventfd is needed for a boot
 * disk. Moving the work to an I/O thread later changes only this call.
 */
static void notify(struct vmm_virtio_dev *d, uint32_t qi)
{
	if ((d->status & STATUS_RUNNING) != STATUS_RUNNING ||
	    (d->status & VIRTIO_CONFIG_S_NEEDS_RESET))
		return;
	if (qi >= d->ops->nr_queues || !d->vq[qi].ready)
		return;
	serve_queue(d, qi);
}

static bool features_ok(const struct vmm_virtio_dev *d)
{
	if (d->drv_features & ~d->features)
		return false;
	return d->drv_features & (1ULL << VIRTIO_F_VERSION_1);
}

static void write_status(struct vmm_virtio_dev *d, uint32_t v)
{
	if (!v) {
		reset(d);
		return;
	}
	/* §3.1.1: the driver re-reads Status to learn the refusal. */
	if ((v & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !(d->status & VIRTIO_CONFIG_S_FEATURES_OK) && !features_ok(d))
		v &= ~(uint32_t)VIRTIO_CONFIG_S_FEATURES_OK;
	d->status = (v & 0xff & ~(uint32_t)VIRTIO_CONFIG_S_NEEDS_RESET) |
		    (d->status & VIRTIO_CONFIG_S_NEEDS_RESET);
}

static void set_lo(uint64_t *reg, uint32_t v)
{
	*reg = (*reg & ~0xffffffffULL) | v;
}

static void set_hi(uint64_t *reg, uint32_t v)
{
	*reg = (*reg & 0xffffffffULL) | ((uint64_t)v << 32);
}

static void write_drv_features(struct vmm_virtio_dev *d, uint32_t v)
{
	/* Negotiation is over once FEATURES_OK stuck. */
	if (d->status & VIRTIO_CONFIG_S_FEATURES_OK)
		return;
	if (d->drv_features_sel == 0)
		set_lo(&d->drv_features, v);
	else if (d->drv_features_sel == 1)
		set_hi(&d->drv_features, v);
}

static void write_queue_ready(struct vmm_virtio_dev *d, struct virtq *q,
			      uint32_t v)
{
	if (!(v & 1)) {
		q->ready = false;
		return;
	}
	if (q->ready)
		return;
	/* A ring the device could not use stays not ready (reads back 0). */
	if (virtq_check(q, &d->host))
		return;
	q->last_avail = 0;
	q->used_idx   = 0;
	q->ready      = true;
}

/* Queue registers; the driver must not change a ready queue (§4.2.3.2). */
static void write_queue_reg(struct vmm_virtio_dev *d, uint64_t off, uint32_t v)
{
	struct virtq *q = selected_queue(d);

	if (!q)
		return;
	if (off == VIRTIO_MMIO_QUEUE_READY) {
		write_queue_ready(d, q, v);
		return;
	}
	if (q->ready)
		return;
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM:
		q->num = v;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
		set_lo(&q->desc_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		set_hi(&q->desc_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
		set_lo(&q->avail_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		set_hi(&q->avail_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
		set_lo(&q->used_gpa, v);
		break;
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		set_hi(&q->used_gpa, v);
		break;
	}
}

static void write_reg(struct vmm_virtio_dev *d, uint64_t off, uint32_t v)
{
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		d->features_sel = v;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		write_drv_features(d, v);
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		d->drv_features_sel = v;
		break;
	case VIRTIO_MMIO_QUEUE_SEL:
		d->queue_sel = v;
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		notify(d, v);
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		if (d->int_status && !(d->int_status & ~v)) {
			d->int_status = 0;
			d->host.irq(d->host.opaque, false);
		} else {
			d->int_status &= ~v;
		}
		break;
	case VIRTIO_MMIO_STATUS:
		write_status(d, v);
		break;
	case VIRTIO_MMIO_QUEUE_NUM:
	case VIRTIO_MMIO_QUEUE_READY:
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		write_queue_reg(d, off, v);
		break;
	default:
		/* Read-only and legacy registers: the write is dropped. */
		break;
	}
}

static uint32_t read_reg(struct vmm_virtio_dev *d, uint64_t off)
{
	struct virtq *q = selected_queue(d);

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return MMIO_VERSION;
	case VIRTIO_MMIO_DEVICE_ID:
		return d->ops->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VMM_VIRTIO_VENDOR_ID;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (d->features_sel > 1)
			return 0;
		return (uint32_t)(d->features >> (32 * d->features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		/* 0 tells the driver the selected queue does not exist. */
		return q ? VMM_VIRTIO_QUEUE_NUM_MAX : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return d->int_status;
	case VIRTIO_MMIO_STATUS:
		return d->status;
	case VIRTIO_MMIO_SHM_LEN_LOW:
	case VIRTIO_MMIO_SHM_LEN_HIGH:
		/* Length ~0: no shared memory region (§4.2.2). */
		return 0xffffffffU;
	case VIRTIO_MMIO_CONFIG_GENERATION:
		/* The configuration space never changes after creation. */
		return 0;
	default:
		/* Write-only and reserved registers. */
		return 0;
	}
}

/*
 * The device configuration space. It is immutable after creation, so it
 * is read without the device mutex; no field of the block configuration
 * is writable (VIRTIO_BLK_F_CONFIG_WCE is not offered).
 */
static void config_access(struct vmm_virtio_dev *d, uint64_t off, bool is_write,
			  void *data, unsigned int size)
{
	uint64_t at = off - VIRTIO_MMIO_CONFIG;
	uint64_t n;

	if (is_write)
		return;
	memset(data, 0, size);
	if (at >= d->config_len)
		return;
	n = d->config_len - at < size ? d->config_len - at : size;
	memcpy(data, (const char *)d->config + at, n);
}

int vmm_virtio_mmio_access(struct vmm_virtio_dev *d, uint64_t offset,
			   bool is_write, void *data, unsigned int size)
{
	uint32_t v;

	if (!size)
		return -EINVAL;
	if (size > 8 || offset >= VMM_VIRTIO_MMIO_SIZE ||
	    size > VMM_VIRTIO_MMIO_SIZE - offset)
		goto out_bad;
	if (offset >= VIRTIO_MMIO_CONFIG) {
		/*
		 * Linux reads each field with its own width and 64-bit ones
		 * as two 4-byte halves; other drivers may read 8 at once.
		 */
		if (size != 1 && size != 2 && size != 4 && size != 8)
			goto out_bad;
		config_access(d, offset, is_write, data, size);
		return 0;
	}
	/* §4.2.2.2: the driver uses 32-bit aligned accesses only. */
	if (size != 4 || (offset & 3))
		goto out_bad;

	pthread_mutex_lock(&d->lock);
	if (is_write) {
		memcpy(&v, data, sizeof(v));
		write_reg(d, offset, le32toh(v));
	} else {
		v = htole32(read_reg(d, offset));
		memcpy(data, &v, sizeof(v));
	}
	pthread_mutex_unlock(&d->lock);
	return 0;

out_bad:
	if (!is_write)
		memset(data, 0, size);
	return -EINVAL;
}

int vmm_virtio_mmio_cmdline(char *buf, size_t len, uint64_t base,
			    unsigned int irq)
{
	int n;

	if (base & (VMM_VIRTIO_MMIO_SIZE - 1))
		return -EINVAL;
	n = snprintf(buf, len, "virtio_mmio.device=%lluK@0x%" PRIx64 ":%u",
		     VMM_VIRTIO_MMIO_SIZE >> 10, base, irq);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len)
		return -ENOSPC;
	return n;
}
