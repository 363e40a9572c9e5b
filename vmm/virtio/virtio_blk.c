// SPDX-License-Identifier: MIT
/*
 * virtio_blk.c: the block device (virtio 1.2 §5.2) on a backing file:
 * requests T_IN, T_OUT, T_FLUSH and T_GET_ID on one queue, served with
 * preadv/pwritev/fdatasync straight between the file and guest RAM.
 *
 * A request is a chain: the device-readable bytes start with the 16-byte
 * struct virtio_blk_outhdr, the rest are T_OUT's data; the
 * device-writable bytes end with the status byte, the rest receive T_IN's
 * data or the T_GET_ID string. VIRTIO_F_VERSION_1 implies ANY_LAYOUT
 * (§2.7.4.3), so these are byte streams over the segments: Linux puts
 * header, data and status in separate descriptors, another driver may
 * merge them. Answers:
 *   S_OK      done
 *   S_IOERR   header short or in no RAM, a data segment in no RAM (the
 *             request is not started, no byte of it is touched), data
 *             not a whole number of sectors or past the capacity, a
 *             write to a read-only disk, a host I/O error
 *   S_UNSUPP  another request type
 * Without a status byte the device can say nothing: the chain goes back
 * with length 0 and the transport sets DEVICE_NEEDS_RESET.
 */
#include "virtio_priv.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_ids.h>

#define SECTOR_SHIFT 9
#define SECTOR_SIZE  (1ULL << SECTOR_SHIFT)

struct virtio_blk {
	struct vmm_virtio_dev dev;
	int fd;
	bool read_only;
	uint64_t capacity; /* sectors */
	char serial[VMM_VIRTIO_BLK_SERIAL_MAX];
	struct virtio_blk_config config;
	struct iovec data[VMM_VIRTIO_QUEUE_NUM_MAX]; /* scratch, under lock */
};

/*
 * The part [skip, skip + len) of the byte stream over (n) segments (src)
 * as segments in (dst), empty pieces left out. Returns how many.
 */
static unsigned int slice(const struct iovec *src, unsigned int n,
			  uint64_t skip, uint64_t len, struct iovec *dst)
{
	unsigned int i, nr = 0;
	uint64_t take;

	for (i = 0; i < n && len; i++) {
		if (skip >= src[i].iov_len) {
			skip -= src[i].iov_len;
			continue;
		}
		take = src[i].iov_len - skip;
		if (take > len)
			take = len;
		dst[nr].iov_base = (char *)src[i].iov_base + skip;
		dst[nr].iov_len  = take;
		nr++;
		len -= take;
		skip = 0;
	}
	return nr;
}

static uint64_t total(const struct iovec *iov, unsigned int n)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/*
 * The first (len) bytes of the stream over (n) segments (iov) into (dst),
 * each read exactly once (volatile: the compiler may not go back to guest
 * memory for a byte later, where another vCPU may have changed it).
 */
static void gather(const struct iovec *iov, unsigned int n, uint8_t *dst,
		   size_t len)
{
	const volatile uint8_t *src;
	unsigned int i;
	size_t j, take;

	for (i = 0; i < n && len; i++) {
		take = iov[i].iov_len < len ? iov[i].iov_len : len;
		src  = iov[i].iov_base;
		for (j = 0; j < take; j++)
			*dst++ = src[j];
		len -= take;
	}
}

/* The last device-writable byte, or NULL if there is none in RAM. */
static uint8_t *status_byte(const struct virtq_chain *c)
{
	const struct iovec *in = c->iov + c->nr_out;
	unsigned int i         = c->nr_in;

	while (i && !in[i - 1].iov_len)
		i--;
	if (!i || !in[i - 1].iov_base)
		return NULL;
	return (uint8_t *)in[i - 1].iov_base + in[i - 1].iov_len - 1;
}

/* Skip (done) bytes of (*iov) (*n segments) after a short transfer. */
static void advance(struct iovec **iov, unsigned int *n, size_t done)
{
	while (*n && done >= (*iov)->iov_len) {
		done -= (*iov)->iov_len;
		(*iov)++;
		(*n)--;
	}
	if (*n) {
		(*iov)->iov_base = (char *)(*iov)->iov_base + done;
		(*iov)->iov_len -= done;
	}
}

/* All of (iov) from or to the file at (off): 0 or -errno. */
static int transfer(int fd, struct iovec *iov, unsigned int n, off_t off,
		    bool is_write)
{
	ssize_t r;

	while (n) {
		r = is_write ? pwritev(fd, iov, (int)n, off)
			     : preadv(fd, iov, (int)n, off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		/* The file shrank under the guest: not silently zeros. */
		if (r == 0)
			return -EIO;
		off += r;
		advance(&iov, &n, (size_t)r);
	}
	return 0;
}

/*
 * T_IN / T_OUT of the data (iov, n), (len) bytes, at (sector).
 * Returns a VIRTIO_BLK_S_* status.
 */
static uint8_t blk_rw(struct virtio_blk *b, uint64_t sector, struct iovec *iov,
		      unsigned int n, uint64_t len, bool is_write)
{
	uint64_t nr_sectors = len >> SECTOR_SHIFT;

	if (is_write && b->read_only)
		return VIRTIO_BLK_S_IOERR;
	if (len & (SECTOR_SIZE - 1))
		return VIRTIO_BLK_S_IOERR;
	if (sector > b->capacity || nr_sectors > b->capacity - sector)
		return VIRTIO_BLK_S_IOERR;
	if (transfer(b->fd, iov, n, (off_t)(sector << SECTOR_SHIFT), is_write))
		return VIRTIO_BLK_S_IOERR;
	return VIRTIO_BLK_S_OK;
}

/* T_GET_ID: the serial, NUL-padded, into as much of (iov) as there is. */
static uint32_t blk_get_id(struct virtio_blk *b, const struct iovec *iov,
			   unsigned int n)
{
	uint32_t done = 0;
	unsigned int i;
	size_t take;

	for (i = 0; i < n && done < sizeof(b->serial); i++) {
		take = sizeof(b->serial) - done;
		if (take > iov[i].iov_len)
			take = iov[i].iov_len;
		memcpy(iov[i].iov_base, b->serial + done, take);
		done += (uint32_t)take;
	}
	return done;
}

/*
 * Serve a request whose header is (hdr); (c)'s segments are all in RAM.
 * (in_len) device-writable bytes precede the status byte. Adds the data
 * bytes written to (*written) and returns a VIRTIO_BLK_S_* status.
 */
static uint8_t blk_request(struct virtio_blk *b, const struct virtq_chain *c,
			   const struct virtio_blk_outhdr *hdr, uint64_t in_len,
			   uint32_t *written)
{
	const struct iovec *out = c->iov, *in = c->iov + c->nr_out;
	uint64_t sector = le64toh(hdr->sector);
	uint64_t out_len;
	unsigned int n;
	uint8_t st;

	switch (le32toh(hdr->type)) {
	case VIRTIO_BLK_T_IN:
		/* The used length is 32 bits: data plus the status byte. */
		if (in_len >= UINT32_MAX)
			return VIRTIO_BLK_S_IOERR;
		n  = slice(in, c->nr_in, 0, in_len, b->data);
		st = blk_rw(b, sector, b->data, n, in_len, false);
		if (st == VIRTIO_BLK_S_OK)
			*written += (uint32_t)in_len;
		return st;
	case VIRTIO_BLK_T_OUT:
		out_len = total(out, c->nr_out) - sizeof(*hdr);
		n       = slice(out, c->nr_out, sizeof(*hdr), out_len, b->data);
		return blk_rw(b, sector, b->data, n, out_len, true);
	case VIRTIO_BLK_T_FLUSH:
		/* Nothing of a read-only disk can be dirty. */
		if (!b->read_only && fdatasync(b->fd))
			return VIRTIO_BLK_S_IOERR;
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_GET_ID:
		n = slice(in, c->nr_in, 0, in_len, b->data);
		*written += blk_get_id(b, b->data, n);
		return VIRTIO_BLK_S_OK;
	default:
		return VIRTIO_BLK_S_UNSUPP;
	}
}

static int blk_handle(struct vmm_virtio_dev *d, unsigned int q,
		      struct virtq_chain *c, uint32_t *written)
{
	struct virtio_blk *b = container_of(d, struct virtio_blk, dev);
	struct virtio_blk_outhdr hdr;
	uint8_t *status = status_byte(c);
	uint64_t in_len;
	uint8_t st;

	(void)q;
	if (!status)
		return -EINVAL;
	*written = 1;
	in_len   = total(c->iov + c->nr_out, c->nr_in) - 1;
	if (c->bad_addr || total(c->iov, c->nr_out) < sizeof(hdr)) {
		st = VIRTIO_BLK_S_IOERR;
		goto out_status;
	}
	/* Copy the header once: the guest may change it while we serve. */
	gather(c->iov, c->nr_out, (uint8_t *)&hdr, sizeof(hdr));
	st = blk_request(b, c, &hdr, in_len, written);

out_status:
	*status = st;
	return 0;
}

static void blk_destroy(struct vmm_virtio_dev *d)
{
	free(container_of(d, struct virtio_blk, dev));
}

static const struct virtio_dev_ops blk_ops = {
	.device_id = VIRTIO_ID_BLOCK,
	.nr_queues = 1,
	.handle    = blk_handle,
	.destroy   = blk_destroy,
};

/* Bytes in (fd): regular files and block devices alike. */
static int backing_size(int fd, uint64_t *size)
{
	struct stat st;
	off_t end;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		return 0;
	}
	if (!S_ISBLK(st.st_mode))
		return -EINVAL;
	end = lseek(fd, 0, SEEK_END);
	if (end < 0)
		return -errno;
	*size = (uint64_t)end;
	return 0;
}

static void fill_config(struct virtio_blk *b)
{
	b->config.capacity = htole64(b->capacity);
	/* Two descriptors of a chain carry the header and the status. */
	b->config.seg_max  = htole32(VMM_VIRTIO_QUEUE_NUM_MAX - 2);
	b->config.blk_size = htole32(SECTOR_SIZE);
}

int vmm_virtio_blk_create(const struct vmm_virtio_blk_params *p,
			  const struct vmm_virtio_host *host,
			  struct vmm_virtio_dev **out)
{
	struct virtio_blk *b;
	uint64_t size = 0;
	int ret;

	if (!p || p->fd < 0 || !out)
		return -EINVAL;
	ret = backing_size(p->fd, &size);
	if (ret)
		return ret;
	if (size < SECTOR_SIZE)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = virtio_dev_init(&b->dev, &blk_ops, host);
	if (ret)
		goto out_free;
	b->fd        = p->fd;
	b->read_only = p->read_only;
	/* A partial last sector is left out: requests are whole sectors. */
	b->capacity = size >> SECTOR_SHIFT;
	if (p->serial)
		memcpy(b->serial, p->serial,
		       strnlen(p->serial, sizeof(b->serial)));
	fill_config(b);
	b->dev.features = (1ULL << VIRTIO_F_VERSION_1) |
			  (1ULL << VIRTIO_BLK_F_FLUSH) |
			  (1ULL << VIRTIO_BLK_F_BLK_SIZE) |
			  (1ULL << VIRTIO_BLK_F_SEG_MAX);
	if (p->read_only)
		b->dev.features |= 1ULL << VIRTIO_BLK_F_RO;
	b->dev.config     = &b->config;
	b->dev.config_len = sizeof(b->config);
	*out              = &b->dev;
	return 0;

out_free:
	free(b);
	return ret;
}
