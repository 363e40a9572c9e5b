// SPDX-License-Identifier: MIT
/*
 * ctl_packed.c: the packed sample frame of smpl_drain (layout in
 * ctl_proto.h): little-endian records written by the control server and
 * read back by the operator's commands. The reader trusts nothing in the
 * frame: every count and length is checked against the bytes it has, so a
 * malformed frame is an error, never a read past its end.
 */
#include "ctl_proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <vpmu_common.h>

static void put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const unsigned char *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

size_t vmm_ctl_pk_rec_size(unsigned int nr_vals, unsigned int nr_chain)
{
	return VMM_CTL_PK_REC + 8 * ((size_t)nr_vals + nr_chain);
}

void vmm_ctl_pk_put_hdr(unsigned char *p, uint32_t count)
{
	put16(p, VMM_CTL_PK_VERSION);
	put16(p + 2, VMM_CTL_PK_REC);
	put32(p + 4, count);
}

size_t vmm_ctl_pk_put(unsigned char *p, const struct vmm_ctl_pk_rec *r)
{
	unsigned char *q = p + VMM_CTL_PK_REC;
	unsigned int k;

	put16(p, r->cpu);
	put16(p + 2, r->set);
	put16(p + 4, r->ovfl_pmd);
	put16(p + 6, r->nr_missed);
	put32(p + 8, (uint32_t)r->pid);
	put32(p + 12, (uint32_t)r->tid);
	put64(p + 16, r->tstamp);
	put64(p + 24, r->ip);
	put64(p + 32, r->period);
	put16(p + 40, r->nr_vals);
	put16(p + 42, r->nr_chain);
	put32(p + 44, 0);
	for (k = 0; k < r->nr_vals; k++, q += 8)
		put64(q, r->vals[k]);
	for (k = 0; k < r->nr_chain; k++, q += 8)
		put64(q, r->chain[k]);
	return (size_t)(q - p);
}

int vmm_ctl_pk_open(struct vmm_ctl_pk_reader *rd, const void *buf, size_t len,
		    char *err, size_t errlen)
{
	const unsigned char *p = buf;
	uint16_t version, rec_size;
	uint32_t count;

	memset(rd, 0, sizeof(*rd));
	if (len < VMM_CTL_PK_HDR || len > VMM_CTL_PK_MAX)
		return vpmu_fail(err, errlen, -EPROTO,
				 "packed samples: frame of %zu bytes (must be "
				 "%d..%u)",
				 len, VMM_CTL_PK_HDR, VMM_CTL_PK_MAX);
	version  = get16(p);
	rec_size = get16(p + 2);
	count    = get32(p + 4);
	if (version != VMM_CTL_PK_VERSION)
		return vpmu_fail(
			err, errlen, -EPROTO,
			"packed samples: layout version %u (this client "
			"reads %d)",
			version, VMM_CTL_PK_VERSION);
	if (rec_size < VMM_CTL_PK_REC)
		return vpmu_fail(err, errlen, -EPROTO,
				 "packed samples: record size %u below the %d "
				 "bytes of version %d",
				 rec_size, VMM_CTL_PK_REC, VMM_CTL_PK_VERSION);
	if (count > VMM_CTL_DRAIN_MAX ||
	    (uint64_t)count * rec_size > len - VMM_CTL_PK_HDR)
		return vpmu_fail(
			err, errlen, -EPROTO,
			"packed samples: %u records of %u bytes do not fit "
			"in %zu bytes",
			count, rec_size, len);
	rd->p        = p;
	rd->len      = len;
	rd->off      = VMM_CTL_PK_HDR;
	rd->left     = count;
	rd->rec_size = rec_size;
	return 0;
}

int vmm_ctl_pk_next(struct vmm_ctl_pk_reader *rd, struct vmm_ctl_pk_rec *r,
		    uint64_t *vals, uint64_t *chain, char *err, size_t errlen)
{
	const unsigned char *p;
	unsigned int k;
	size_t need;

	if (!rd->left) {
		if (rd->off != rd->len)
			return vpmu_fail(
				err, errlen, -EPROTO,
				"packed samples: %zu bytes after the last "
				"record",
				rd->len - rd->off);
		return 0;
	}
	if (rd->len - rd->off < rd->rec_size)
		return vpmu_fail(
			err, errlen, -EPROTO,
			"packed samples: record cut short at offset %zu",
			rd->off);
	p            = rd->p + rd->off;
	r->cpu       = get16(p);
	r->set       = get16(p + 2);
	r->ovfl_pmd  = get16(p + 4);
	r->nr_missed = get16(p + 6);
	r->pid       = (int32_t)get32(p + 8);
	r->tid       = (int32_t)get32(p + 12);
	r->tstamp    = get64(p + 16);
	r->ip        = get64(p + 24);
	r->period    = get64(p + 32);
	r->nr_vals   = get16(p + 40);
	r->nr_chain  = get16(p + 42);
	if (r->nr_vals > VMM_CTL_SAMPLE_VALS || r->nr_chain > VMM_CTL_CHAIN_MAX)
		return vpmu_fail(err, errlen, -EPROTO,
				 "packed samples: record at offset %zu has %u "
				 "values and %u callers (at most %d and %d)",
				 rd->off, r->nr_vals, r->nr_chain,
				 VMM_CTL_SAMPLE_VALS, VMM_CTL_CHAIN_MAX);
	need = rd->rec_size + 8 * ((size_t)r->nr_vals + r->nr_chain);
	if (rd->len - rd->off < need)
		return vpmu_fail(
			err, errlen, -EPROTO,
			"packed samples: record at offset %zu needs %zu "
			"bytes, %zu left",
			rd->off, need, rd->len - rd->off);
	p += rd->rec_size; /* fields of a newer layout are skipped */
	for (k = 0; k < r->nr_vals; k++, p += 8)
		vals[k] = get64(p);
	for (k = 0; k < r->nr_chain; k++, p += 8)
		chain[k] = get64(p);
	r->vals  = vals;
	r->chain = chain;
	rd->off += need;
	rd->left--;
	return 1;
}
