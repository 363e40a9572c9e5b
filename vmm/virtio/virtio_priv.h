/* SPDX-License-Identifier: MIT */
/*
 * virtio_priv.h: the layouts shared inside vmm/virtio/: a split
 * virtqueue as the device tracks it (virtqueue.c), one popped descriptor
 * chain, the device-type ops the transport calls (virtio_mmio.c ->
 * virtio_blk.c) and the device itself. Only vmm/virtio/ includes it.
 */
#ifndef VIRTIO_PRIV_H
#define VIRTIO_PRIV_H

#include "vmm_virtio.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define VIRTIO_MAX_QUEUES 1

#define container_of(ptr, type, member)                                        \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/*
 * One split virtqueue (virtio 1.2 §2.7). The driver writes (num) and the
 * three ring addresses, then QueueReady; from then on they are frozen
 * until QueueReady 0 or a device reset. The indices are the device's own
 * copies: (last_avail) is the next available-ring slot to consume,
 * (used_idx) what the device last published in used->idx; the guest can
 * rewrite its rings at any time, so neither is ever read back from it.
 */
struct virtq {
	uint32_t num;
	bool ready;
	uint64_t desc_gpa;
	uint64_t avail_gpa;
	uint64_t used_gpa;
	uint16_t last_avail;
	uint16_t used_idx;
};

/*
 * One descriptor chain popped from the available ring. (iov) holds the
 * device-readable segments first (nr_out), then the device-writable ones
 * (nr_in), in chain order; a segment whose range is not guest RAM has
 * iov_base NULL (its iov_len kept) and sets (bad_addr). (err) is nonzero
 * when the chain itself is broken (loop, index out of the table, a
 * readable segment after a writable one, an indirect descriptor): then
 * the segments are incomplete and only (head) may be used.
 */
struct virtq_chain {
	uint16_t head;
	int err;
	bool bad_addr;
	unsigned int nr_out;
	unsigned int nr_in;
	struct iovec iov[VMM_VIRTIO_QUEUE_NUM_MAX];
};

/*
 * Returns 0 if (q)'s size and rings are usable (size a power of two up
 * to VMM_VIRTIO_QUEUE_NUM_MAX, rings aligned and in guest RAM), else
 * -EINVAL.
 */
int virtq_check(const struct virtq *q, const struct vmm_virtio_host *h);

/*
 * Read (q)'s avail->idx once into (*end): the chains before it are the
 * ones to serve now. 0, -EFAULT if the ring is not guest RAM, -EINVAL if
 * it claims more chains than the ring holds (the device needs a reset).
 */
int virtq_avail_end(const struct virtq *q, const struct vmm_virtio_host *h,
		    uint16_t *end);

/*
 * Pop the next available chain of (q) before (end) into (c): 0 when one
 * was popped (check (c)->err), -ENOENT when none is left before (end),
 * -EFAULT or -EINVAL when the ring itself is unusable (the device then
 * needs a reset).
 */
int virtq_pop(struct virtq *q, const struct vmm_virtio_host *h, uint16_t end,
	      struct virtq_chain *c);

/*
 * Return chain (head) to the driver through the used ring, (len) bytes
 * written into it. 0, or -EFAULT if the used ring is not guest RAM.
 */
int virtq_push(struct virtq *q, const struct vmm_virtio_host *h, uint16_t head,
	       uint32_t len);

/* Whether the driver wants an interrupt for the buffers just used. */
bool virtq_wants_irq(const struct virtq *q, const struct vmm_virtio_host *h);

/* A device type behind the transport (virtio_blk.c). */
struct virtio_dev_ops {
	uint32_t device_id;
	unsigned int nr_queues;
	/*
	 * Serve chain (c) popped from queue (q), with (c)->err == 0. Return
	 * 0 and set (*written) to the bytes written into the chain's
	 * writable segments, or -errno when the chain cannot even carry an
	 * error answer: the transport then returns it with length 0 and
	 * sets DEVICE_NEEDS_RESET.
	 */
	int (*handle)(struct vmm_virtio_dev *d, unsigned int q,
		      struct virtq_chain *c, uint32_t *written);
	/* Free the device type's state and (d) itself (after fini). */
	void (*destroy)(struct vmm_virtio_dev *d);
};

struct vmm_virtio_dev {
	const struct virtio_dev_ops *ops;
	struct vmm_virtio_host host;
	pthread_mutex_t lock;

	uint64_t features;         /* offered (DeviceFeatures) */
	uint64_t drv_features;     /* accepted (DriverFeatures) */
	uint32_t features_sel;     /* DeviceFeaturesSel */
	uint32_t drv_features_sel; /* DriverFeaturesSel */
	uint32_t queue_sel;        /* QueueSel */
	uint32_t status;           /* Status: VIRTIO_CONFIG_S_* */
	uint32_t int_status;       /* InterruptStatus: VIRTIO_MMIO_INT_* */
	struct virtq vq[VIRTIO_MAX_QUEUES];
	struct virtq_chain chain; /* scratch for one request, under (lock) */

	const void *config; /* device configuration space, little-endian */
	size_t config_len;
};

/*
 * Set up the transport part of (d), already zeroed, for device type
 * (ops); the caller then fills (d)->features, (d)->config and
 * (d)->config_len (kept, not copied) before the guest runs. 0 or -errno.
 */
int virtio_dev_init(struct vmm_virtio_dev *d, const struct virtio_dev_ops *ops,
		    const struct vmm_virtio_host *host);

/* Undo virtio_dev_init(). */
void virtio_dev_fini(struct vmm_virtio_dev *d);

#endif /* VIRTIO_PRIV_H */
