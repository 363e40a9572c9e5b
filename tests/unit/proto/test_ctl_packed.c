// SPDX-License-Identifier: MIT
/*
 * test_ctl_packed.c: the packed sample frame of smpl_drain
 * (proto/ctl_packed.c, layout in ctl_proto.h): records written and
 * read back unchanged, every malformed frame refused with a message and
 * no read past its end (each frame is decoded from a heap copy of exactly
 * its length, so the ASan build catches an overread), and the framing
 * rule: the binary frame is read only as the length a reply announced.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_proto.h"

#define NR_RECS 4

static uint64_t vals[NR_RECS][VMM_CTL_SAMPLE_VALS];
static uint64_t chains[NR_RECS][VMM_CTL_CHAIN_MAX];

/* Four records: no arrays, some, the maximum of both, extreme values. */
static void make_recs(struct vmm_ctl_pk_rec *r)
{
	static const uint16_t nv[NR_RECS] = {0, 3, VMM_CTL_SAMPLE_VALS, 1};
	static const uint16_t nc[NR_RECS] = {0, 2, VMM_CTL_CHAIN_MAX, 0};
	unsigned int i, k;

	for (i = 0; i < NR_RECS; i++) {
		for (k = 0; k < VMM_CTL_SAMPLE_VALS; k++)
			vals[i][k] = 0x0102030405060708ULL * (i + 1) + k;
		for (k = 0; k < VMM_CTL_CHAIN_MAX; k++)
			chains[i][k] = 0xffffffff80000000ULL + 16 * k + i;
		r[i] = (struct vmm_ctl_pk_rec){
			.cpu       = (uint16_t)(i * 7),
			.set       = (uint16_t)(i == 3 ? 65535 : i),
			.ovfl_pmd  = (uint16_t)(i + 1),
			.nr_missed = (uint16_t)(i == 3 ? 65535 : i * 3),
			.pid       = i == 3 ? -1 : (int32_t)(100 + i),
			.tid       = i == 3 ? INT32_MIN : (int32_t)(200 + i),
			.tstamp    = i == 3 ? UINT64_MAX : 1000000ULL * i,
			.ip        = 0xffffffff81000000ULL + i,
			.period    = i == 3 ? UINT64_MAX : 100000ULL << i,
			.nr_vals   = nv[i],
			.nr_chain  = nc[i],
			.vals      = vals[i],
			.chain     = chains[i],
		};
	}
}

/* A malloc'd frame of the (n) records (r); its length in (*len). */
static unsigned char *encode(const struct vmm_ctl_pk_rec *r, unsigned int n,
			     size_t *len)
{
	size_t total = VMM_CTL_PK_HDR, off = VMM_CTL_PK_HDR;
	unsigned char *buf;
	unsigned int i;

	for (i = 0; i < n; i++)
		total += vmm_ctl_pk_rec_size(r[i].nr_vals, r[i].nr_chain);
	buf = malloc(total);
	cr_assert(not(eq(ptr, buf, NULL)));
	vmm_ctl_pk_put_hdr(buf, n);
	for (i = 0; i < n; i++)
		off += vmm_ctl_pk_put(buf + off, &r[i]);
	cr_assert(eq(sz, off, total));
	*len = total;
	return buf;
}

/* Decode (buf, len): records read before the end or the error, and the
 * last result (0: clean end, -EPROTO); the message in (err). */
static int decode(const unsigned char *buf, size_t len,
		  struct vmm_ctl_pk_rec *out,
		  uint64_t (*ov)[VMM_CTL_SAMPLE_VALS],
		  uint64_t (*oc)[VMM_CTL_CHAIN_MAX], unsigned int *nr,
		  char *err, size_t errlen)
{
	/* Exactly (len) bytes on the heap: ASan sees any read beyond. */
	unsigned char *copy = malloc(len ? len : 1);
	struct vmm_ctl_pk_reader rd;
	int ret;

	*nr    = 0;
	err[0] = '\0';

	cr_assert(not(eq(ptr, copy, NULL)));
	memcpy(copy, buf, len);
	ret = vmm_ctl_pk_open(&rd, copy, len, err, errlen);
	while (!ret) {
		ret = vmm_ctl_pk_next(&rd, &out[*nr % NR_RECS],
				      ov[*nr % NR_RECS], oc[*nr % NR_RECS], err,
				      errlen);
		if (ret <= 0)
			break;
		(*nr)++;
		ret = 0;
	}
	free(copy);
	return ret;
}

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

static uint64_t ov[NR_RECS][VMM_CTL_SAMPLE_VALS];
static uint64_t oc[NR_RECS][VMM_CTL_CHAIN_MAX];

static void expect_same(const struct vmm_ctl_pk_rec *a,
			const struct vmm_ctl_pk_rec *b)
{
	cr_expect(eq(u16, a->cpu, b->cpu));
	cr_expect(eq(u16, a->set, b->set));
	cr_expect(eq(u16, a->ovfl_pmd, b->ovfl_pmd));
	cr_expect(eq(u16, a->nr_missed, b->nr_missed));
	cr_expect(eq(i32, a->pid, b->pid));
	cr_expect(eq(i32, a->tid, b->tid));
	cr_expect(eq(u64, a->tstamp, b->tstamp));
	cr_expect(eq(u64, a->ip, b->ip));
	cr_expect(eq(u64, a->period, b->period));
	cr_assert(eq(u16, a->nr_vals, b->nr_vals));
	cr_assert(eq(u16, a->nr_chain, b->nr_chain));
	cr_expect(eq(int,
		     memcmp(a->vals, b->vals, a->nr_vals * sizeof(uint64_t)),
		     0));
	cr_expect(eq(int,
		     memcmp(a->chain, b->chain, a->nr_chain * sizeof(uint64_t)),
		     0));
}

Test(ctl_packed, round_trip)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int i, nr;
	char err[200];
	size_t len;
	unsigned char *buf;

	make_recs(in);
	buf = encode(in, NR_RECS, &len);
	/* Header, then 48 fixed bytes per record plus its arrays. */
	cr_expect(eq(sz, len,
		     VMM_CTL_PK_HDR + NR_RECS * VMM_CTL_PK_REC +
			     8 * (3 + 2 + 16 + 32 + 1)));
	cr_assert(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(uint, nr, NR_RECS));
	for (i = 0; i < NR_RECS; i++)
		expect_same(&in[i], &out[i]);
	free(buf);
}

Test(ctl_packed, little_endian_layout)
{
	struct vmm_ctl_pk_rec in[NR_RECS];
	unsigned char *buf;
	size_t len;

	make_recs(in);
	buf = encode(&in[1], 1, &len);
	/* Header: version 1, record size 48, count 1. */
	cr_expect(eq(u8, buf[0], 1));
	cr_expect(eq(u8, buf[1], 0));
	cr_expect(eq(u8, buf[2], VMM_CTL_PK_REC));
	cr_expect(eq(u8, buf[4], 1));
	/* ovfl_pmd at 4, pid at 8, ip at 24, nr_vals at 40 (ctl_proto.h). */
	cr_expect(eq(u8, buf[8 + 4], 2));
	cr_expect(eq(u8, buf[8 + 8], 101));
	cr_expect(eq(u8, buf[8 + 24], 0x01));
	cr_expect(eq(u8, buf[8 + 31], 0xff));
	cr_expect(eq(u8, buf[8 + 40], 3));
	cr_expect(eq(u8, buf[8 + 42], 2));
	free(buf);
}

Test(ctl_packed, empty_frame)
{
	unsigned char hdr[VMM_CTL_PK_HDR];
	struct vmm_ctl_pk_rec out[NR_RECS];
	unsigned int nr;
	char err[200];

	vmm_ctl_pk_put_hdr(hdr, 0);
	cr_expect(
		eq(int,
		   decode(hdr, sizeof(hdr), out, ov, oc, &nr, err, sizeof(err)),
		   0));
	cr_expect(eq(uint, nr, 0));
}

/* Every truncation of a valid frame is refused, never over-read. */
Test(ctl_packed, short_frames_refused)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int nr;
	char err[200];
	unsigned char *buf;
	size_t len, cut;

	make_recs(in);
	buf = encode(in, NR_RECS, &len);
	for (cut = 0; cut < len; cut++) {
		cr_assert(
			eq(int,
			   decode(buf, cut, out, ov, oc, &nr, err, sizeof(err)),
			   -EPROTO),
			"a frame cut to %zu of %zu bytes was accepted", cut,
			len);
		cr_assert(lt(uint, nr, NR_RECS));
		cr_assert(not(eq(str, err, "")));
	}
	free(buf);
}

Test(ctl_packed, count_too_large)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int nr;
	char err[200];
	unsigned char *buf;
	size_t len;

	make_recs(in);
	/* Two records of 48 bytes announced, room for one only. */
	buf = encode(in, 1, &len);
	put32(buf + 4, 2);
	cr_expect(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(not(eq(ptr, strstr(err, "do not fit"), NULL)), "%s", err);
	cr_expect(eq(uint, nr, 0));
	free(buf);
	/* The count passes the header's check, the records do not fit. */
	buf = encode(&in[2], 1, &len); /* 48 + 8 x (16 + 32) bytes */
	put32(buf + 4, 2);
	cr_expect(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(eq(uint, nr, 1));
	free(buf);
	/* More than one drain may hold. */
	buf = calloc(1, VMM_CTL_PK_HDR);
	vmm_ctl_pk_put_hdr(buf, VMM_CTL_DRAIN_MAX + 1);
	cr_expect(eq(
		int,
		decode(buf, VMM_CTL_PK_HDR, out, ov, oc, &nr, err, sizeof(err)),
		-EPROTO));
	free(buf);
}

Test(ctl_packed, record_size_below_known)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int nr;
	char err[200];
	unsigned char *buf;
	size_t len;

	make_recs(in);
	buf = encode(in, 1, &len);
	put16(buf + 2, VMM_CTL_PK_REC - 8);
	cr_expect(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(not(eq(ptr, strstr(err, "record size 40"), NULL)), "%s", err);
	put16(buf + 2, VMM_CTL_PK_REC);
	put16(buf, 2); /* another layout version */
	cr_expect(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(not(eq(ptr, strstr(err, "version 2"), NULL)), "%s", err);
	free(buf);
}

/* A later layout's longer record: known fields read, the rest skipped. */
Test(ctl_packed, longer_records_skipped)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int nr, i;
	char err[200];
	unsigned char *v1, *v2;
	size_t len, off1 = VMM_CTL_PK_HDR, off2 = VMM_CTL_PK_HDR, sz;

	make_recs(in);
	v1 = encode(in, 2, &len);
	v2 = calloc(1, len + 2 * 16);
	memcpy(v2, v1, VMM_CTL_PK_HDR);
	put16(v2 + 2, VMM_CTL_PK_REC + 16);
	for (i = 0; i < 2; i++) {
		sz = vmm_ctl_pk_rec_size(in[i].nr_vals, in[i].nr_chain);
		memcpy(v2 + off2, v1 + off1, VMM_CTL_PK_REC);
		memset(v2 + off2 + VMM_CTL_PK_REC, 0xee, 16);
		memcpy(v2 + off2 + VMM_CTL_PK_REC + 16,
		       v1 + off1 + VMM_CTL_PK_REC, sz - VMM_CTL_PK_REC);
		off1 += sz;
		off2 += sz + 16;
	}
	cr_assert(eq(int, decode(v2, off2, out, ov, oc, &nr, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(uint, nr, 2));
	expect_same(&in[0], &out[0]);
	expect_same(&in[1], &out[1]);
	free(v1);
	free(v2);
}

Test(ctl_packed, arrays_over_limits)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int nr;
	char err[200];
	unsigned char *buf;
	size_t len;

	make_recs(in);
	buf = encode(&in[2], 1, &len); /* 16 values, 32 callers */
	put16(buf + VMM_CTL_PK_HDR + 40, VMM_CTL_SAMPLE_VALS + 1);
	put16(buf + VMM_CTL_PK_HDR + 42, VMM_CTL_CHAIN_MAX - 1);
	cr_expect(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(not(eq(ptr, strstr(err, "17 values"), NULL)), "%s", err);
	put16(buf + VMM_CTL_PK_HDR + 40, VMM_CTL_SAMPLE_VALS - 1);
	put16(buf + VMM_CTL_PK_HDR + 42, VMM_CTL_CHAIN_MAX + 1);
	cr_expect(eq(int, decode(buf, len, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(not(eq(ptr, strstr(err, "33 callers"), NULL)), "%s", err);
	/* Within limits but beyond the frame: 65535 would read 0.5 MiB. */
	put16(buf + VMM_CTL_PK_HDR + 40, VMM_CTL_SAMPLE_VALS);
	put16(buf + VMM_CTL_PK_HDR + 42, VMM_CTL_CHAIN_MAX);
	cr_expect(eq(int,
		     decode(buf, len - 8, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	free(buf);
}

Test(ctl_packed, trailing_bytes_refused)
{
	struct vmm_ctl_pk_rec in[NR_RECS], out[NR_RECS];
	unsigned int nr;
	char err[200];
	unsigned char *buf, *big;
	size_t len;

	make_recs(in);
	buf = encode(in, 2, &len);
	big = calloc(1, len + 8);
	memcpy(big, buf, len);
	cr_expect(eq(int,
		     decode(big, len + 8, out, ov, oc, &nr, err, sizeof(err)),
		     -EPROTO));
	cr_expect(eq(uint, nr, 2));
	cr_expect(not(eq(ptr, strstr(err, "after the last"), NULL)), "%s", err);
	free(buf);
	free(big);
}

/* Write a frame of (len) announced as (prefix) to (fd). */
static void send_frame(int fd, uint32_t prefix, const void *body, size_t len)
{
	unsigned char hdr[4] = {
		(unsigned char)(prefix >> 24), (unsigned char)(prefix >> 16),
		(unsigned char)(prefix >> 8), (unsigned char)prefix};

	cr_assert(eq(sz, (size_t)write(fd, hdr, 4), 4));
	cr_assert(eq(sz, (size_t)write(fd, body, len), len));
}

Test(ctl_packed, binary_frame_only_as_announced)
{
	struct vmm_ctl_pk_rec in[NR_RECS];
	struct json_object *obj = NULL;
	unsigned char *buf, got[4096];
	size_t len;
	int sv[2];

	make_recs(in);
	buf = encode(in, 2, &len);
	cr_assert(eq(int, socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0));
	/* Announced length: read whole. */
	send_frame(sv[0], (uint32_t)len, buf, len);
	cr_expect(eq(int, vmm_ctl_recv_packed(sv[1], got, len, 1000), 0));
	cr_expect(eq(int, memcmp(got, buf, len), 0));
	/* Another length than the reply announced: a protocol error. */
	send_frame(sv[0], (uint32_t)len, buf, len);
	cr_expect(eq(int, vmm_ctl_recv_packed(sv[1], got, len - 8, 1000),
		     -EPROTO));
	cr_expect(eq(int, vmm_ctl_recv_packed(sv[1], got, 4, 1000), -EMSGSIZE));
	cr_expect(eq(int,
		     vmm_ctl_recv_packed(sv[1], got, VMM_CTL_PK_MAX + 1, 1000),
		     -EMSGSIZE));
	close(sv[0]);
	close(sv[1]);
	/* Where JSON is expected, the binary frame is refused. */
	cr_assert(eq(int, socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0));
	send_frame(sv[0], (uint32_t)len, buf, len);
	cr_expect(eq(int, vmm_ctl_recv(sv[1], &obj, 1000), -EPROTO));
	cr_expect(eq(ptr, obj, NULL));
	close(sv[0]);
	close(sv[1]);
	free(buf);
}

/* The request field is schema-checked: 0 or 1 only. */
Test(ctl_packed, request_field_checked)
{
	static const char ok[] =
		"{\"v\":1,\"id\":1,\"cmd\":\"smpl_drain\",\"ctx\":0,"
		"\"packed\":1}";
	static const char bad[] =
		"{\"v\":1,\"id\":1,\"cmd\":\"smpl_drain\",\"ctx\":0,"
		"\"packed\":2}";
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req;
	char err[200];
	int64_t id;

	cr_expect(eq(int,
		     vmm_ctl_parse_request(ok, strlen(ok), &req, &cmd, &id, err,
					   sizeof(err)),
		     0),
		  "%s", err);
	json_object_put(req);
	cr_expect(eq(int,
		     vmm_ctl_parse_request(bad, strlen(bad), &req, &cmd, &id,
					   err, sizeof(err)),
		     -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "'packed'"), NULL)), "%s", err);
}
