// SPDX-License-Identifier: MIT
/*
 * snap_write.c: writing a snapshot file (vmm_snap.h). Sections are
 * appended with pwrite; each section header is rewritten with its length
 * and CRC once the payload is out, the file header last of all.
 */
#include "vmm_snap.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

_Static_assert(sizeof(struct vmm_snap_hdr) == 104, "header layout");
_Static_assert(sizeof(struct vmm_snap_sect_hdr) == 24, "section layout");

static int put(struct vmm_snap_writer *w, uint64_t off, const void *p, size_t n)
{
	const char *b = p;
	ssize_t r;

	while (!w->err && n) {
		r = pwrite(w->fd, b, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			w->err = r < 0 ? -errno : -EIO;
			break;
		}
		b += r;
		off += (uint64_t)r;
		n -= (size_t)r;
	}
	return w->err;
}

static void seal_hdr(struct vmm_snap_hdr *h)
{
	h->hdr_crc = 0;
	h->hdr_crc = (uint32_t)crc32(0L, (const Bytef *)h, sizeof(*h));
}

int vmm_snap_write_begin(struct vmm_snap_writer *w, int fd,
			 const struct vmm_snap_hdr *hdr)
{
	struct timespec ts;

	memset(w, 0, sizeof(*w));
	w->fd  = fd;
	w->hdr = *hdr;
	memcpy(w->hdr.magic, VMM_SNAP_MAGIC, sizeof(w->hdr.magic));
	w->hdr.version     = VMM_SNAP_VERSION;
	w->hdr.hdr_size    = sizeof(w->hdr);
	w->hdr.page_size   = VMM_SNAP_PAGE_SIZE;
	w->hdr.nr_sections = 0; /* until the end: a cut file is refused */
	clock_gettime(CLOCK_REALTIME, &ts);
	w->hdr.created_ns =
		(uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	seal_hdr(&w->hdr);
	w->off = sizeof(w->hdr);
	return put(w, 0, &w->hdr, sizeof(w->hdr));
}

int vmm_snap_sect_begin(struct vmm_snap_writer *w, uint32_t type,
			uint32_t index)
{
	w->sect     = (struct vmm_snap_sect_hdr){.type = type, .index = index};
	w->sect.crc = (uint32_t)crc32(0L, Z_NULL, 0);
	w->sect_off = w->off;
	w->off += sizeof(w->sect);
	return put(w, w->sect_off, &w->sect, sizeof(w->sect));
}

int vmm_snap_sect_write(struct vmm_snap_writer *w, const void *p, size_t n)
{
	const Bytef *b = p;
	size_t left    = n;

	/* zlib's crc32 takes a uInt length. */
	while (left) {
		uInt chunk = left > (1U << 30) ? (1U << 30) : (uInt)left;

		w->sect.crc = (uint32_t)crc32(w->sect.crc, b, chunk);
		b += chunk;
		left -= chunk;
	}
	if (put(w, w->off, p, n))
		return w->err;
	w->off += n;
	w->sect.length += n;
	return 0;
}

int vmm_snap_sect_end(struct vmm_snap_writer *w)
{
	if (put(w, w->sect_off, &w->sect, sizeof(w->sect)))
		return w->err;
	w->hdr.nr_sections++;
	return 0;
}

int vmm_snap_write_sect(struct vmm_snap_writer *w, uint32_t type,
			uint32_t index, const void *p, size_t n)
{
	vmm_snap_sect_begin(w, type, index);
	vmm_snap_sect_write(w, p, n);
	return vmm_snap_sect_end(w);
}

static int page_is_zero(const unsigned char *p)
{
	const uint64_t *q = (const uint64_t *)p;
	size_t i;

	for (i = 0; i < VMM_SNAP_PAGE_SIZE / sizeof(*q); i++) {
		if (q[i])
			return 0;
	}
	return 1;
}

int vmm_snap_write_memory(struct vmm_snap_writer *w, const void *mem,
			  uint64_t size, uint64_t *stored)
{
	const unsigned char *m = mem;
	uint64_t nr = size / VMM_SNAP_PAGE_SIZE, i, n = 0, word = 0;
	uint64_t hdr[2] = {VMM_SNAP_PAGE_SIZE, nr};

	if (size % VMM_SNAP_PAGE_SIZE)
		return -EINVAL;
	vmm_snap_sect_begin(w, VMM_SNAP_MEMORY, 0);
	vmm_snap_sect_write(w, hdr, sizeof(hdr));
	/* The bitmap, one u64 per 64 pages, then the pages it marks. */
	for (i = 0; i < nr; i++) {
		if (!page_is_zero(m + i * VMM_SNAP_PAGE_SIZE))
			word |= 1ULL << (i % 64);
		if (i % 64 == 63 || i == nr - 1) {
			vmm_snap_sect_write(w, &word, sizeof(word));
			word = 0;
		}
	}
	for (i = 0; i < nr && !w->err; i++) {
		const unsigned char *pg = m + i * VMM_SNAP_PAGE_SIZE;

		if (page_is_zero(pg))
			continue;
		vmm_snap_sect_write(w, pg, VMM_SNAP_PAGE_SIZE);
		n++;
	}
	if (stored)
		*stored = n;
	return vmm_snap_sect_end(w);
}

int vmm_snap_write_end(struct vmm_snap_writer *w)
{
	vmm_snap_write_sect(w, VMM_SNAP_END, 0, NULL, 0);
	if (w->err)
		return w->err;
	seal_hdr(&w->hdr);
	if (put(w, 0, &w->hdr, sizeof(w->hdr)))
		return w->err;
	if (fsync(w->fd) && errno != EINVAL)
		w->err = -errno;
	return w->err;
}
