/* SPDX-License-Identifier: MIT */
/*
 * snap_io.h: the libvpmu state blob's constants and a bounds-checked byte
 * cursor for it (snapshot_save.c, snapshot_restore.c). Writing grows a malloc'd
 * buffer; reading never goes past the end: the first short read latches (bad)
 * and every later read yields zeroes, so a parser checks (bad) once per object
 * instead of per field. Values are host-endian (the snapshot file is x86-64
 * only, see docs/snapshot-format.md).
 */
#ifndef VPMU_SNAP_IO_H
#define VPMU_SNAP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_MAGIC    0x534d5056u /* "VPMS" */
#define SNAP_NO_CPU   UINT32_MAX
#define SNAP_NAME_LEN 32

struct snap_wr {
	unsigned char *buf;
	size_t len, cap;
	bool nomem; /* an allocation failed: the blob is incomplete */
};

struct snap_rd {
	const unsigned char *p;
	size_t len, off;
	bool bad; /* read past the end */
};

void snap_put(struct snap_wr *w, const void *src, size_t n);

static inline void snap_put_u8(struct snap_wr *w, uint8_t v)
{
	snap_put(w, &v, sizeof(v));
}
static inline void snap_put_u16(struct snap_wr *w, uint16_t v)
{
	snap_put(w, &v, sizeof(v));
}
static inline void snap_put_u32(struct snap_wr *w, uint32_t v)
{
	snap_put(w, &v, sizeof(v));
}
static inline void snap_put_u64(struct snap_wr *w, uint64_t v)
{
	snap_put(w, &v, sizeof(v));
}

/* Copy (n) bytes to (dst) (zeroes once past the end). */
void snap_get(struct snap_rd *r, void *dst, size_t n);
/* Pointer to the next (n) bytes, or NULL (and bad) past the end. */
const void *snap_get_ptr(struct snap_rd *r, size_t n);

static inline uint8_t snap_get_u8(struct snap_rd *r)
{
	uint8_t v;

	snap_get(r, &v, sizeof(v));
	return v;
}
static inline uint16_t snap_get_u16(struct snap_rd *r)
{
	uint16_t v;

	snap_get(r, &v, sizeof(v));
	return v;
}
static inline uint32_t snap_get_u32(struct snap_rd *r)
{
	uint32_t v;

	snap_get(r, &v, sizeof(v));
	return v;
}
static inline uint64_t snap_get_u64(struct snap_rd *r)
{
	uint64_t v;

	snap_get(r, &v, sizeof(v));
	return v;
}

#endif /* VPMU_SNAP_IO_H */
