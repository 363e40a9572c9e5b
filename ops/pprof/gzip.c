// SPDX-License-Identifier: MIT
/*
 * gzip.c: one gzip member (RFC 1952) with zlib's deflate, as pprof wants
 * its profiles (and Go's net/http/pprof serves them).
 */
#include "pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

int pprof_gzip(const void *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream z = {0};
	size_t cap;
	uint8_t *buf;
	int ret;

	/* 15 window bits + 16: a gzip header and trailer, not zlib's. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, (uLong)len) + 32;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in   = (Bytef *)(uintptr_t)in;
	z.avail_in  = (uInt)len;
	z.next_out  = buf;
	z.avail_out = (uInt)cap;
	ret         = deflate(&z, Z_FINISH);
	if (ret != Z_STREAM_END) {
		deflateEnd(&z);
		free(buf);
		return -EIO;
	}
	*outlen = z.total_out;
	*out    = buf;
	deflateEnd(&z);
	return 0;
}
