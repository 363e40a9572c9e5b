// SPDX-License-Identifier: MIT
/*
 * test_ops_drain.c: ops_drain() (ops/client/op_session.c) against
 * a scripted VMM on a socketpair: the packed form is asked for; a VMM that
 * refuses the field is drained in JSON from then on (asked once); a packed
 * frame that is malformed or not the length its reply announced ends the
 * VM with a message, the samples before the bad record given, nothing read
 * past the frame.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_client.h"

enum script {
	OLD_VMM,    /* refuses "packed", answers JSON */
	BAD_RECORD, /* a frame whose second record has 17 values */
	BAD_LENGTH, /* a frame shorter than packed_bytes announced */
};

struct vmm_fake {
	int fd;
	enum script script;
	unsigned int requests, packed_requests;
};

static struct json_object *ok_reply(struct json_object *req)
{
	struct json_object *id, *r;

	json_object_object_get_ex(req, "id", &id);
	r = vmm_ctl_reply_ok(json_object_get_int64(id));
	json_object_object_add(r, "lost", json_object_new_int(0));
	json_object_object_add(r, "more", json_object_new_boolean(0));
	return r;
}

/* [cpu,set,ovfl_pmd,tstamp,ip,pid,tid,[values],[callers]] */
static struct json_object *json_sample(void)
{
	struct json_object *a = json_object_new_array(), *v;

	json_object_array_add(a, json_object_new_int(0));
	json_object_array_add(a, json_object_new_int(0));
	json_object_array_add(a, json_object_new_int(1));
	json_object_array_add(a, json_object_new_int(5000));
	json_object_array_add(a, json_object_new_int64(0x401000));
	json_object_array_add(a, json_object_new_int(7));
	json_object_array_add(a, json_object_new_int(8));
	v = json_object_new_array();
	json_object_array_add(v, json_object_new_int(11));
	json_object_array_add(v, json_object_new_int(12));
	json_object_array_add(a, v);
	v = json_object_new_array();
	json_object_array_add(v, json_object_new_int64(0x402000));
	json_object_array_add(a, v);
	return a;
}

/* A frame of two records, the second with (nv2) values. */
static size_t packed_frame(unsigned char *buf, uint16_t nv2)
{
	static const uint64_t vals[VMM_CTL_SAMPLE_VALS + 1] = {11, 12};
	static const uint64_t chain[1]                      = {0x402000};
	struct vmm_ctl_pk_rec r                             = {.ovfl_pmd  = 1,
							       .nr_missed = 2,
							       .tstamp    = 5000,
							       .ip        = 0x401000,
							       .period    = 1000,
							       .nr_vals   = 2,
							       .nr_chain  = 1,
							       .vals      = vals,
							       .chain     = chain};
	size_t off                                          = VMM_CTL_PK_HDR;

	vmm_ctl_pk_put_hdr(buf, 2);
	off += vmm_ctl_pk_put(buf + off, &r);
	r.nr_vals  = VMM_CTL_SAMPLE_VALS; /* written in full, then relabelled */
	r.nr_chain = 0;
	off += vmm_ctl_pk_put(buf + off, &r);
	buf[off - 8 * VMM_CTL_SAMPLE_VALS - 8] = (unsigned char)nv2;
	return off;
}

/*
 * Write a frame of (len) bytes announced as (prefix). The client may have
 * hung up already (a frame it refused): no SIGPIPE, nothing to do.
 */
static void send_raw(int fd, const void *p, size_t len, uint32_t prefix)
{
	unsigned char hdr[4] = {
		(unsigned char)(prefix >> 24), (unsigned char)(prefix >> 16),
		(unsigned char)(prefix >> 8), (unsigned char)prefix};

	if (send(fd, hdr, 4, MSG_NOSIGNAL) == 4)
		(void)!send(fd, p, len, MSG_NOSIGNAL);
}

static void *vmm_thread(void *arg)
{
	struct vmm_fake *f = arg;
	struct json_object *req, *rep, *arr;
	unsigned char frame[1024];
	size_t len;

	while (!vmm_ctl_recv(f->fd, &req, 5000)) {
		bool packed = json_object_object_get_ex(req, "packed", NULL);

		f->requests++;
		f->packed_requests += packed;
		rep = ok_reply(req);
		if (packed && f->script == OLD_VMM) {
			json_object_put(rep);
			rep = vmm_ctl_reply_err(
				json_object_get_int64(
					json_object_object_get(req, "id")),
				EINVAL, "request: unknown field 'packed'");
			vmm_ctl_send(f->fd, rep, 1000);
		} else if (!packed) {
			arr = json_object_new_array();
			json_object_array_add(arr, json_sample());
			json_object_object_add(rep, "samples", arr);
			arr = json_object_new_array();
			json_object_array_add(arr, json_object_new_array());
			json_object_array_add(json_object_array_get_idx(arr, 0),
					      json_object_new_int(2));
			json_object_array_add(json_object_array_get_idx(arr, 0),
					      json_object_new_int(1000));
			json_object_object_add(rep, "weights", arr);
			vmm_ctl_send(f->fd, rep, 1000);
		} else {
			len = packed_frame(frame,
					   f->script == BAD_RECORD
						   ? VMM_CTL_SAMPLE_VALS + 1
						   : VMM_CTL_SAMPLE_VALS);
			json_object_object_add(
				rep, "packed_bytes",
				json_object_new_int64((int64_t)len));
			vmm_ctl_send(f->fd, rep, 1000);
			if (f->script == BAD_LENGTH)
				send_raw(f->fd, frame, len - 8, len - 8);
			else
				send_raw(f->fd, frame, len, len);
		}
		json_object_put(rep);
		json_object_put(req);
	}
	return NULL;
}

struct got {
	struct ops_sample smp[4];
	unsigned int nr;
};

static void keep(void *opaque, const struct ops_sample *smp)
{
	struct got *g = opaque;

	if (g->nr < 4)
		g->smp[g->nr] = *smp;
	g->nr++;
}

static struct ops_session s;
static struct vmm_fake fake;
static pthread_t thr;

/* A session of one VM with one vCPU (context 0), served by (script). */
static void start(enum script script)
{
	int sv[2];

	cr_assert(eq(int, socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0));
	memset(&s, 0, sizeof(s));
	s.prog    = "test_ops_drain";
	s.vms     = calloc(1, sizeof(*s.vms));
	s.nr_vms  = 1;
	s.nr_live = 1;
	snprintf(s.vms[0].e.name, sizeof(s.vms[0].e.name), "fake");
	s.vms[0].e.nr_vcpus = 1;
	s.vms[0].ctx[0]     = 0;
	s.vms[0].cl.fd      = sv[0];
	s.vms[0].cl.next_id = 1;
	fake                = (struct vmm_fake){.fd = sv[1], .script = script};
	cr_assert(eq(int, pthread_create(&thr, NULL, vmm_thread, &fake), 0));
}

static void stop(void)
{
	ops_close(&s); /* EOF ends the fake VMM */
	pthread_join(thr, NULL);
	close(fake.fd);
}

static void expect_sample(const struct ops_sample *a)
{
	cr_expect(eq(uint, a->ovfl_pmd, 1));
	cr_expect(eq(u64, a->tstamp, 5000));
	cr_expect(eq(u64, a->ip, 0x401000));
	cr_assert(eq(uint, a->nr_vals, 2));
	cr_expect(eq(u64, a->vals[0], 11));
	cr_expect(eq(u64, a->vals[1], 12));
	cr_assert(eq(uint, a->nr_chain, 1));
	cr_expect(eq(u64, a->chain[0], 0x402000));
	cr_expect(eq(u64, a->missed, 2));
	cr_expect(eq(u64, a->period, 1000));
}

Test(ops_drain, older_vmm_drained_in_json_asked_once)
{
	struct got g = {.nr = 0};
	uint64_t lost;

	unsetenv("VPMU_DRAIN_JSON");
	start(OLD_VMM);
	cr_assert(eq(int, ops_drain(&s, 0, keep, &g, &lost), 0));
	cr_assert(eq(int, ops_drain(&s, 0, keep, &g, &lost), 0));
	cr_expect(s.vms[0].drain_json);
	cr_expect(not(s.vms[0].gone));
	stop();
	cr_expect(eq(uint, fake.packed_requests, 1));
	cr_expect(eq(uint, fake.requests, 3));
	cr_assert(eq(uint, g.nr, 2));
	expect_sample(&g.smp[0]);
	expect_sample(&g.smp[1]);
}

Test(ops_drain, json_forced_by_environment)
{
	struct got g = {.nr = 0};
	uint64_t lost;

	setenv("VPMU_DRAIN_JSON", "1", 1);
	start(BAD_RECORD);
	cr_assert(eq(int, ops_drain(&s, 0, keep, &g, &lost), 0));
	unsetenv("VPMU_DRAIN_JSON");
	stop();
	cr_expect(eq(uint, fake.packed_requests, 0));
	cr_assert(eq(uint, g.nr, 1));
	expect_sample(&g.smp[0]);
}

Test(ops_drain, malformed_record_ends_the_vm)
{
	struct got g = {.nr = 0};
	uint64_t lost;

	unsetenv("VPMU_DRAIN_JSON");
	start(BAD_RECORD);
	cr_expect(eq(int, ops_drain(&s, 0, keep, &g, &lost), -EPROTO));
	cr_expect(s.vms[0].gone);
	cr_expect(eq(uint, s.nr_live, 0));
	stop();
	cr_expect(eq(uint, fake.packed_requests, 1));
	/* The first record was good and given; the bad one was not. */
	cr_assert(eq(uint, g.nr, 1));
	expect_sample(&g.smp[0]);
}

Test(ops_drain, frame_not_as_announced_ends_the_vm)
{
	struct got g = {.nr = 0};
	uint64_t lost;

	unsetenv("VPMU_DRAIN_JSON");
	start(BAD_LENGTH);
	cr_expect(eq(int, ops_drain(&s, 0, keep, &g, &lost), -EPROTO));
	cr_expect(s.vms[0].gone);
	stop();
	cr_expect(eq(uint, g.nr, 0));
}
