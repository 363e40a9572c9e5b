// SPDX-License-Identifier: MIT
/*
 * virtqueue.c: the device side of a split virtqueue (virtio 1.2 §2.7):
 * pop a descriptor chain from the available ring, return it through the
 * used ring, decide whether the driver wants an interrupt.
 *
 * The rings are guest memory another vCPU may rewrite while we read them.
 * So ring addresses are resolved through gpa_ptr on every use (nothing
 * host-side is cached across calls), every descriptor is copied once
 * into a local before any field is looked at, and the chain walk is
 * bounded by the queue size, so a loop ends in an error instead of a
 * spin. Indirect descriptors and VIRTIO_RING_F_EVENT_IDX are not offered:
 * an indirect descriptor is a broken chain.
 */
#include "virtio_priv.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include <linux/virtio_ring.h>

/* Ring sizes without the event-index fields (EVENT_IDX is not offered). */
static uint64_t desc_size(uint32_t num)
{
	return sizeof(struct vring_desc) * (uint64_t)num;
}

static uint64_t avail_size(uint32_t num)
{
	return sizeof(struct vring_avail) + sizeof(__virtio16) * (uint64_t)num;
}

static uint64_t used_size(uint32_t num)
{
	return sizeof(struct vring_used) +
	       sizeof(struct vring_used_elem) * (uint64_t)num;
}

/*
 * A ring in guest RAM, aligned as §2.7 requires of the driver. The host
 * address is checked too: the ring indices are accessed atomically, which
 * needs natural alignment on the host side as well.
 */
static void *ring_ptr(const struct vmm_virtio_host *h, uint64_t gpa,
		      uint64_t size, uint64_t align)
{
	void *p;

	if (gpa & (align - 1))
		return NULL;
	p = h->gpa_ptr(h->opaque, gpa, size);
	if (p && ((uintptr_t)p & (align - 1)))
		return NULL;
	return p;
}

static struct vring_desc *desc_table(const struct virtq *q,
				     const struct vmm_virtio_host *h)
{
	return ring_ptr(h, q->desc_gpa, desc_size(q->num),
			VRING_DESC_ALIGN_SIZE);
}

static struct vring_avail *avail_ring(const struct virtq *q,
				      const struct vmm_virtio_host *h)
{
	return ring_ptr(h, q->avail_gpa, avail_size(q->num),
			VRING_AVAIL_ALIGN_SIZE);
}

static struct vring_used *used_ring(const struct virtq *q,
				    const struct vmm_virtio_host *h)
{
	return ring_ptr(h, q->used_gpa, used_size(q->num),
			VRING_USED_ALIGN_SIZE);
}

int virtq_check(const struct virtq *q, const struct vmm_virtio_host *h)
{
	/* The ring index arithmetic (idx & (num - 1)) needs a power of two. */
	if (!q->num || q->num > VMM_VIRTIO_QUEUE_NUM_MAX ||
	    (q->num & (q->num - 1)))
		return -EINVAL;
	if (!desc_table(q, h) || !avail_ring(q, h) || !used_ring(q, h))
		return -EINVAL;
	return 0;
}

/* Host view of one segment, or NULL if [addr, addr + len) is not RAM. */
static void *seg_ptr(const struct vmm_virtio_host *h, uint64_t addr,
		     uint32_t len)
{
	if (!len)
		return NULL;
	if (addr > UINT64_MAX - len)
		return NULL;
	return h->gpa_ptr(h->opaque, addr, len);
}

/*
 * Copy descriptor (src) once. Each field is one relaxed atomic load: with
 * a plain copy the compiler may legally read guest memory again later
 * (it assumes no other thread writes it), and the guest's other vCPUs
 * could change a length between its check and its use.
 */
static void read_desc(const struct vring_desc *src, struct vring_desc *dst)
{
	dst->addr  = __atomic_load_n(&src->addr, __ATOMIC_RELAXED);
	dst->len   = __atomic_load_n(&src->len, __ATOMIC_RELAXED);
	dst->flags = __atomic_load_n(&src->flags, __ATOMIC_RELAXED);
	dst->next  = __atomic_load_n(&src->next, __ATOMIC_RELAXED);
}

/*
 * Fill (c) from the chain starting at (head) in (table). A chain may be
 * as long as the queue (every descriptor once); one more means a loop.
 */
static void walk(const struct virtq *q, const struct vmm_virtio_host *h,
		 const struct vring_desc *table, uint16_t head,
		 struct virtq_chain *c)
{
	struct vring_desc desc;
	uint32_t idx = head;
	uint16_t flags;
	unsigned int n;

	memset(c, 0, offsetof(struct virtq_chain, iov));
	c->head = head;
	for (n = 0;; n++) {
		if (n == q->num) {
			c->err = -ELOOP;
			return;
		}
		read_desc(&table[idx], &desc);
		flags = le16toh(desc.flags);
		if (flags & VRING_DESC_F_INDIRECT) {
			c->err = -EINVAL;
			return;
		}
		/* §2.7.4.2: writable descriptors come after readable ones. */
		if (flags & VRING_DESC_F_WRITE) {
			c->nr_in++;
		} else if (c->nr_in) {
			c->err = -EINVAL;
			return;
		} else {
			c->nr_out++;
		}
		c->iov[n].iov_len = le32toh(desc.len);
		c->iov[n].iov_base =
			seg_ptr(h, le64toh(desc.addr), le32toh(desc.len));
		if (!c->iov[n].iov_base && c->iov[n].iov_len)
			c->bad_addr = true;
		if (!(flags & VRING_DESC_F_NEXT))
			return;
		idx = le16toh(desc.next);
		if (idx >= q->num) {
			c->err = -EINVAL;
			return;
		}
	}
}

int virtq_avail_end(const struct virtq *q, const struct vmm_virtio_host *h,
		    uint16_t *end)
{
	struct vring_avail *avail = avail_ring(q, h);
	uint16_t idx;

	if (!avail)
		return -EFAULT;
	/* Acquire: the ring entries we read next were written before idx. */
	idx = le16toh(__atomic_load_n(&avail->idx, __ATOMIC_ACQUIRE));
	/* More entries than the ring holds: the driver lost count. */
	if ((uint16_t)(idx - q->last_avail) > q->num)
		return -EINVAL;
	*end = idx;
	return 0;
}

int virtq_pop(struct virtq *q, const struct vmm_virtio_host *h, uint16_t end,
	      struct virtq_chain *c)
{
	const struct vring_desc *table = desc_table(q, h);
	struct vring_avail *avail      = avail_ring(q, h);
	uint16_t head;

	if (q->last_avail == end)
		return -ENOENT;
	if (!table || !avail)
		return -EFAULT;
	head = le16toh(__atomic_load_n(
		&avail->ring[q->last_avail & (q->num - 1)], __ATOMIC_RELAXED));
	if (head >= q->num)
		return -EINVAL;
	q->last_avail++;
	walk(q, h, table, head, c);
	return 0;
}

int virtq_push(struct virtq *q, const struct vmm_virtio_host *h, uint16_t head,
	       uint32_t len)
{
	struct vring_used *used     = used_ring(q, h);
	struct vring_used_elem elem = {
		.id  = htole32(head),
		.len = htole32(len),
	};

	if (!used)
		return -EFAULT;
	memcpy(&used->ring[q->used_idx & (q->num - 1)], &elem, sizeof(elem));
	q->used_idx++;
	/* Release: the element is visible before the index that covers it. */
	__atomic_store_n(&used->idx, htole16(q->used_idx), __ATOMIC_RELEASE);
	return 0;
}

bool virtq_wants_irq(const struct virtq *q, const struct vmm_virtio_host *h)
{
	struct vring_avail *avail;

	/*
	 * Order the used->idx store before the flags load. The driver does
	 * the mirror image (clear NO_INTERRUPT, barrier, re-read used->idx),
	 * so one of the two sides always sees the other's write and no
	 * completion is left without an interrupt.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	avail = avail_ring(q, h);
	if (!avail)
		return true;
	return !(le16toh(__atomic_load_n(&avail->flags, __ATOMIC_RELAXED)) &
		 VRING_AVAIL_F_NO_INTERRUPT);
}
