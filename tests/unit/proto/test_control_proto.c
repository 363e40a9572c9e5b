// SPDX-License-Identifier: MIT
/*
 * test_control_proto.c: the control socket protocol without a VM:
 * request validation (table-driven: garbage, wrong types, ranges,
 * unknown fields), framing (oversized and zero lengths, split frames) and
 * a random-bytes fuzz of the parser.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <iconv.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl_proto.h"

struct req_case {
	int line;
	const char *text;
	int want;        /* 0, -EINVAL or -EPROTO */
	const char *msg; /* expected in the error message */
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

static const struct req_case cases[] = {
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"hello\"}", .want = 0),
	ROW(.text = "{\"v\":1,\"id\":9007199254740992,\"cmd\":\"info\"}",
	    .want = 0),
	ROW(.text = "", .want = -EINVAL, .msg = "not JSON"),
	ROW(.text = "nonsense", .want = -EINVAL, .msg = "malformed"),
	ROW(.text = "{\"v\":1", .want = -EINVAL, .msg = "malformed"),
	ROW(.text = "[]", .want = -EINVAL, .msg = "not a JSON object"),
	ROW(.text = "42", .want = -EINVAL, .msg = "JSON"),
	ROW(.text = "{\"v\":1,\"cmd\":\"hello\"}", .want = -EINVAL,
	    .msg = "'id'"),
	ROW(.text = "{\"v\":1,\"id\":-1,\"cmd\":\"hello\"}", .want = -EINVAL,
	    .msg = "'id'"),
	ROW(.text = "{\"v\":1,\"id\":1.5,\"cmd\":\"hello\"}", .want = -EINVAL,
	    .msg = "'id'"),
	ROW(.text = "{\"id\":1,\"cmd\":\"hello\"}", .want = -EINVAL,
	    .msg = "'v'"),
	ROW(.text = "{\"v\":2,\"id\":1,\"cmd\":\"hello\"}", .want = -EPROTO,
	    .msg = "version 2"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":7}", .want = -EINVAL,
	    .msg = "'cmd'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"reboot\"}", .want = -EINVAL,
	    .msg = "unknown command"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"hello\",\"x\":1}",
	    .want = -EINVAL, .msg = "unknown field 'x'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\"}",
	    .want = -EINVAL, .msg = "missing field 'vcpu'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\","
		    "\"vcpu\":\"0\"}",
	    .want = -EINVAL, .msg = "must be an integer"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\","
		    "\"vcpu\":4096}",
	    .want = -EINVAL, .msg = "out of range"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\","
		    "\"vcpu\":0,\"smpl_buf_size\":-1}",
	    .want = -EINVAL, .msg = "out of range"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\","
		    "\"vcpu\":18446744073709551615}",
	    .want = -EINVAL, .msg = "out of range"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		    "\"pmcs\":[]}",
	    .want = -EINVAL, .msg = "elements"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		    "\"pmcs\":{}}",
	    .want = -EINVAL, .msg = "must be an array"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		    "\"pmcs\":[{\"num\":0}]}",
	    .want = -EINVAL, .msg = "pmcs[0]: missing field 'value'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		    "\"pmcs\":[{\"num\":0,\"value\":-3}]}",
	    .want = -EINVAL, .msg = "non-negative"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		    "\"pmcs\":[{\"num\":0,\"value\":"
		    "18446744073709551615}]}",
	    .want = 0),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,"
		    "\"pmcs\":[7]}",
	    .want = -EINVAL, .msg = "must be a JSON object"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"getinfo_evtsets\","
		    "\"ctx\":1,\"sets\":[0,65536]}",
	    .want = -EINVAL, .msg = "sets[1]"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"resolve\",\"name\":\"\"}",
	    .want = -EINVAL, .msg = "bytes"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"resolve\","
		    "\"name\":\"a\\u0000b\"}",
	    .want = -EINVAL, .msg = "without NUL"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"hello\"} {}", .want = -EINVAL,
	    .msg = "malformed"),
	/* Sessions: one request per VM. */
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"pmcs\":[{\"num\":0,\"value\":4}]}",
	    .want = 0),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"vcpus\":[0,3],\"set\":1,\"smpl_buf_size\":65536,"
		    "\"sets\":[{\"id\":1,\"flags\":1,\"timeout_ns\":10}],"
		    "\"pmds\":[{\"num\":0,\"value\":1,\"long_reset\":1}],"
		    "\"pmcs\":[{\"num\":0,\"set\":1,\"value\":4}]}",
	    .want = 0),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\"}",
	    .want = -EINVAL, .msg = "missing field 'pmcs'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"vcpus\":[],\"pmcs\":[{\"num\":0,\"value\":4}]}",
	    .want = -EINVAL, .msg = "'vcpus' needs 1..64 elements"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"vcpus\":\"all\",\"pmcs\":[{\"num\":0,\"value\":4}]}",
	    .want = -EINVAL, .msg = "'vcpus' must be an array"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"pmcs\":[{\"num\":64,\"value\":4}]}",
	    .want = -EINVAL, .msg = "pmcs[0]: field 'num' out of range"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"ctx\":1,\"pmcs\":[{\"num\":0,\"value\":4}]}",
	    .want = -EINVAL, .msg = "unknown field 'ctx'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_read\","
		    "\"session\":3}",
	    .want = 0),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_read\","
		    "\"session\":4}",
	    .want = -EINVAL, .msg = "'session' out of range"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_read\"}",
	    .want = -EINVAL, .msg = "missing field 'session'"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_close\","
		    "\"session\":-1}",
	    .want = -EINVAL, .msg = "out of range"),
	/* Call chains of up to VMM_CTL_CHAIN_MAX (32) callers. */
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":0,"
		    "\"smpl_buf_size\":4096,\"callchain\":32}",
	    .want = 0),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"ctx_create\",\"vcpu\":0,"
		    "\"smpl_buf_size\":4096,\"callchain\":33}",
	    .want = -EINVAL, .msg = "callchain"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"pmcs\":[{\"num\":0,\"value\":1}],\"callchain\":-1}",
	    .want = -EINVAL, .msg = "callchain"),
	ROW(.text = "{\"v\":1,\"id\":1,\"cmd\":\"session_open\","
		    "\"pmcs\":[{\"num\":0,\"value\":1}],\"callchain\":8,"
		    "\"smpl_buf_size\":65536}",
	    .want = 0),
};

/* Table-driven (libpfm4 validate style): every row reports its line. */
static void check_row(const struct req_case *tc)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req;
	char err[256] = "";
	int64_t id;
	int ret;

	ret = vmm_ctl_parse_request(tc->text, strlen(tc->text), &req, &cmd, &id,
				    err, sizeof(err));
	cr_assert(eq(int, ret, tc->want), "row at line %d: %s", tc->line, err);
	if (!ret) {
		cr_assert(not(eq(ptr, req, NULL)));
		json_object_put(req);
	} else {
		cr_assert(eq(ptr, req, NULL));
		cr_assert(not(eq(ptr, strstr(err, tc->msg), NULL)),
			  "row at line %d: '%s' lacks '%s'", tc->line, err,
			  tc->msg);
	}
}

Test(vmm_ctl, parse_request)
{
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_row(&cases[i]);
}

/* Random bytes, and random mutations of valid requests: never a crash. */
Test(vmm_ctl, fuzz_random_bytes)
{
	static const char *const seeds[] = {
		"{\"v\":1,\"id\":1,\"cmd\":\"write_pmcs\",\"ctx\":1,\"pmcs\":"
		"[{\"num\":0,\"value\":1,\"flags\":1}]}",
		"{\"v\":1,\"id\":1,\"cmd\":\"create_evtsets\",\"ctx\":1,"
		"\"sets\":[{\"id\":1,\"timeout_ns\":100}]}",
	};
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req;
	char buf[512], err[256];
	unsigned int i, j, ok = 0;
	size_t len;
	int64_t id;

	srand(7);
	for (i = 0; i < 20000; i++) {
		if (i & 1) {
			len = (size_t)(rand() % (int)sizeof(buf)) + 1;
			for (j = 0; j < len; j++)
				buf[j] = (char)rand();
		} else {
			len = strlen(seeds[i / 2 % 2]);
			memcpy(buf, seeds[i / 2 % 2], len);
			for (j = 0; j < 1 + (unsigned)rand() % 4; j++)
				buf[rand() % (int)len] = (char)rand();
		}
		if (!vmm_ctl_parse_request(buf, len, &req, &cmd, &id, err,
					   sizeof(err))) {
			ok++;
			json_object_put(req);
		}
	}
	cr_log_info("%u of 20000 fuzzed requests were valid", ok);
}

static void pair(int sv[2])
{
	cr_assert(eq(int, socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0));
}

Test(vmm_ctl, frames_split_and_bad_lengths)
{
	const char *body     = "{\"a\":1}";
	unsigned char h[4]   = {0, 0, 0, 7};
	struct vmm_ctl_rx rx = {0};
	const char *got;
	size_t len;
	int sv[2];

	pair(sv);
	/* Split: header, then half the body, then the rest. */
	cr_assert(eq(int, (int)write(sv[0], h, 4), 4));
	cr_assert(eq(int, vmm_ctl_rx_fill(&rx, sv[1]), 0));
	cr_assert(eq(int, vmm_ctl_rx_next(&rx, &got, &len), 0));
	cr_assert(eq(int, (int)write(sv[0], body, 3), 3));
	cr_assert(eq(int, vmm_ctl_rx_fill(&rx, sv[1]), 0));
	cr_assert(eq(int, vmm_ctl_rx_next(&rx, &got, &len), 0));
	cr_assert(eq(int, (int)write(sv[0], body + 3, 4), 4));
	cr_assert(eq(int, vmm_ctl_rx_fill(&rx, sv[1]), 0));
	cr_assert(eq(int, vmm_ctl_rx_next(&rx, &got, &len), 1));
	cr_assert(eq(sz, len, 7));
	cr_assert(eq(int, memcmp(got, body, 7), 0));
	vmm_ctl_rx_drop(&rx, len);
	cr_assert(eq(sz, rx.len, 0));
	/* Zero and oversized lengths lose framing. */
	memset(h, 0, 4);
	cr_assert(eq(int, (int)write(sv[0], h, 4), 4));
	cr_assert(eq(int, vmm_ctl_rx_fill(&rx, sv[1]), 0));
	cr_assert(eq(int, vmm_ctl_rx_next(&rx, &got, &len), -EMSGSIZE));
	rx.len = 0;
	h[0]   = 0x7f;
	cr_assert(eq(int, (int)write(sv[0], h, 4), 4));
	cr_assert(eq(int, vmm_ctl_rx_fill(&rx, sv[1]), 0));
	cr_assert(eq(int, vmm_ctl_rx_next(&rx, &got, &len), -EMSGSIZE));
	/* EOF. */
	close(sv[0]);
	cr_assert(eq(int, vmm_ctl_rx_fill(&rx, sv[1]), -ECONNRESET));
	vmm_ctl_rx_free(&rx);
	close(sv[1]);
}

Test(vmm_ctl, send_recv_round_trip)
{
	struct json_object *m = vmm_ctl_reply_err(5, 22, "bad"), *r, *v;
	int sv[2];

	pair(sv);
	cr_assert(eq(int, vmm_ctl_send(sv[0], m, 1000), 0));
	cr_assert(eq(int, vmm_ctl_recv(sv[1], &r, 1000), 0));
	cr_assert(json_object_object_get_ex(r, "error", &v));
	cr_assert(eq(str, (char *)json_object_get_string(v), "bad"));
	json_object_put(r);
	json_object_put(m);
	/* Nothing more: times out; peer gone: ECONNRESET. */
	cr_assert(eq(int, vmm_ctl_recv(sv[1], &r, 50), -ETIMEDOUT));
	close(sv[0]);
	cr_assert(eq(int, vmm_ctl_recv(sv[1], &r, 50), -ECONNRESET));
	close(sv[1]);
}

/* ---- Replies are valid UTF-8 JSON ------------------------------------- */

/*
 * Strict UTF-8 (RFC 3629: no overlong forms, surrogates or code points
 * above U+10FFFF), checked by glibc's converter rather than by the code
 * under test.
 */
static bool is_utf8(const char *s, size_t len)
{
	iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
	char out[4096], *in = (char *)s, *o;
	size_t il = len, ol, r = 0;

	cr_assert(cd != (iconv_t)-1);
	while (il && r != (size_t)-1) {
		o  = out;
		ol = sizeof(out);
		r  = iconv(cd, &in, &il, &o, &ol);
		if (r == (size_t)-1 && errno == E2BIG)
			r = 0;
	}
	iconv_close(cd);
	return r != (size_t)-1 && il == 0;
}

/*
 * Send (rep) as the server does and read the frame's raw bytes: they must
 * be valid UTF-8 and one JSON object (json-c, strict, UTF-8 checked).
 * Returns the parsed reply.
 */
static struct json_object *wire(struct json_object *rep, const char *what)
{
	struct json_tokener *tok;
	struct json_object *obj;
	unsigned char h[4];
	char *body;
	size_t n;
	int sv[2];

	pair(sv);
	cr_assert(eq(int, vmm_ctl_send(sv[0], rep, 1000), 0), "%s", what);
	cr_assert(eq(int, (int)read(sv[1], h, 4), 4));
	n    = (size_t)h[0] << 24 | (size_t)h[1] << 16 | h[2] << 8 | h[3];
	body = malloc(n);
	cr_assert(eq(int, (int)recv(sv[1], body, n, MSG_WAITALL), (int)n));
	close(sv[0]);
	close(sv[1]);
	cr_expect(is_utf8(body, n), "%s: reply is not UTF-8: %.*s", what,
		  (int)n, body);
	tok = json_tokener_new();
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, body, (int)n);
	cr_expect(obj && json_object_is_type(obj, json_type_object) &&
			  tok->char_offset == (int)n,
		  "%s: reply is not one JSON object: %.*s", what, (int)n, body);
	json_tokener_free(tok);
	free(body);
	return obj;
}

/* What the server answers (text, len) with, as it arrives at the client. */
static struct json_object *answer(const char *text, size_t len,
				  const char *what)
{
	const struct vmm_ctl_cmd *cmd;
	struct json_object *req, *rep, *got;
	char err[256];
	int64_t id;
	int ret;

	ret = vmm_ctl_parse_request(text, len, &req, &cmd, &id, err,
				    sizeof(err));
	rep = ret ? vmm_ctl_reply_err(id, -ret, err) : vmm_ctl_reply_ok(id);
	json_object_put(req);
	got = wire(rep, what);
	json_object_put(rep);
	return got;
}

static const char *error_of(struct json_object *rep)
{
	struct json_object *v;

	if (!rep || !json_object_object_get_ex(rep, "error", &v))
		return "";
	return json_object_get_string(v);
}

Test(vmm_ctl, replies_to_hostile_bytes_are_utf8_json)
{
	static const char *const bodies[] = {
		"\xff\xfe",         /* never UTF-8 */
		"\xc0\xaf",         /* overlong '/' */
		"\xe0\x80\xaf",     /* overlong, 3 bytes */
		"\xf0\x80\x80\xaf", /* overlong, 4 bytes */
		"\xed\xa0\x80",     /* UTF-16 surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"\xf8\x88\x80\x80\x80",
		"\x80",            /* lone continuation byte */
		"\xc3",            /* lead byte at the end of the string */
		"a\xe2\x82z",      /* cut three-byte character */
		"\\ud800",         /* lone surrogate escape */
		"\\udc00\\ud800x", /* reversed pair */
	};
	/* Where the bytes go: between these two halves of a request. */
	static const char *const forms[][2] = {
		{"{\"v\":1,\"id\":1,\"cmd\":\"", "\"}"},
		{"{\"v\":1,\"id\":1,\"cmd\":\"hello\",\"", "\":1}"},
		{"{\"v\":1,\"id\":1,\"cmd\":\"resolve\",\"name\":1,\"",
		 "\":2}"},
		{"{\"v\":1,\"id\":\"", "\",\"cmd\":\"hello\"}"},
		{"{\"v\":1,\"id\":1,\"cmd\":\"hello\"", "}"},
	};
	struct json_object *rep;
	char text[256], what[300];
	unsigned int i, j, b;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		for (j = 0; j < sizeof(bodies) / sizeof(bodies[0]); j++) {
			snprintf(text, sizeof(text), "%s%s%s", forms[i][0],
				 bodies[j], forms[i][1]);
			snprintf(what, sizeof(what), "form %u body %u: %s", i,
				 j, text);
			rep = answer(text, strlen(text), what);
			cr_expect(error_of(rep)[0] != '\0', "%s", what);
			json_object_put(rep);
		}
	}
	/* Every byte 0x80..0xff alone and doubled in a command name. */
	for (b = 0x80; b <= 0xff; b++) {
		snprintf(text, sizeof(text),
			 "{\"v\":1,\"id\":1,\"cmd\":\"x%c%cy\"}", b, b);
		snprintf(what, sizeof(what), "byte 0x%02x", b);
		rep = answer(text, strlen(text), what);
		json_object_put(rep);
	}
}

/*
 * Request text echoed in a message is cut at a character boundary: a
 * two-byte character straddling the 64-byte limit is left out whole.
 */
Test(vmm_ctl, echoes_never_cut_a_character)
{
	char name[80], text[256], want[128];
	struct json_object *rep;

	memset(name, 'a', 63);
	strcpy(name + 63, "\xc3\xa9tc"); /* "é" at bytes 63-64 */
	snprintf(text, sizeof(text), "{\"v\":1,\"id\":1,\"cmd\":\"%s\"}", name);
	rep = answer(text, strlen(text), "long command");
	snprintf(want, sizeof(want), "unknown command '%.63s'", name);
	cr_expect(strstr(error_of(rep), want) != NULL, "'%s' lacks '%s'",
		  error_of(rep), want);
	json_object_put(rep);

	snprintf(text, sizeof(text),
		 "{\"v\":1,\"id\":1,\"cmd\":\"hello\",\"%s\":1}", name);
	rep = answer(text, strlen(text), "long field");
	snprintf(want, sizeof(want), "unknown field '%.63s'", name);
	cr_expect(strstr(error_of(rep), want) != NULL, "'%s' lacks '%s'",
		  error_of(rep), want);
	json_object_put(rep);

	/* Whole characters up to the limit are kept. */
	cr_expect(eq(int, vmm_ctl_utf8_prefix(name, 64), 63));
	cr_expect(eq(int, vmm_ctl_utf8_prefix(name, 65), 65));
	cr_expect(eq(int, vmm_ctl_utf8_prefix("\xf0\x9f\x98\x80", 3), 0));
	cr_expect(eq(int, vmm_ctl_utf8_prefix("ab", 64), 2));
}

/* Requests must be UTF-8 text: others are refused, saying where. */
Test(vmm_ctl, non_utf8_requests_are_refused)
{
	static const char text[] =
		"{\"v\":1,\"id\":7,\"cmd\":\"hel\xc0\xafo\"}";
	struct json_object *rep, *v;

	rep = answer(text, strlen(text), "overlong");
	cr_expect(strstr(error_of(rep),
			 "request: not UTF-8 text (at offset 24)") != NULL,
		  "%s", error_of(rep));
	cr_expect(json_object_object_get_ex(rep, "errno", &v) &&
		  json_object_get_int(v) == EINVAL);
	json_object_put(rep);
}

/*
 * The check stops at the first byte that is not UTF-8 wherever it sits in
 * a run of ASCII (the check takes ASCII a word at a time), and a valid
 * character there is passed, as glibc's converter says.
 */
Test(vmm_ctl, utf8_check_finds_a_bad_byte_at_any_offset)
{
	static const char *const inserts[] = {
		"\xc0\xaf",         "\xe2\x82\xac", "\xed\xa0\x80",
		"\xf0\x9f\x98\x80", "\xff",         "\xe2\x82"};
	char text[64];
	size_t at, k, ins, len;

	for (k = 0; k < sizeof(inserts) / sizeof(inserts[0]); k++) {
		ins = strlen(inserts[k]);
		for (at = 0; at <= 24; at++) {
			memset(text, 'a', at);
			memcpy(text + at, inserts[k], ins);
			memset(text + at + ins, 'b', 20);
			len = at + ins + 20;
			cr_expect(eq(sz, vmm_ctl_utf8_check(text, len),
				     is_utf8(text, len) ? len : at),
				  "insert %zu at offset %zu", k, at);
			cr_expect(eq(sz, vmm_ctl_utf8_check(text, at), at));
		}
	}
}

/*
 * Whatever text a reply carries (a message, an image path from the
 * command line), what goes on the wire is valid UTF-8: invalid bytes
 * become U+FFFD, a character cut at the end of a string is dropped.
 */
Test(vmm_ctl, any_reply_text_is_sent_as_utf8)
{
	struct json_object *m, *got, *v;

	m   = vmm_ctl_reply_err(3, 22, "bad \xff byte \xe2\x82");
	got = wire(m, "error text");
	cr_expect(eq(str, (char *)error_of(got), "bad \xef\xbf\xbd byte "));
	json_object_put(got);
	json_object_put(m);

	m = vmm_ctl_reply_ok(4);
	json_object_object_add(m, "image",
			       json_object_new_string("/g/\xc0\xaf\xed\xa0\x80"
						      "\xf0\x9f\x98\x80.elf"));
	got = wire(m, "ok reply");
	cr_expect(json_object_object_get_ex(got, "image", &v));
	cr_expect(eq(str, (char *)json_object_get_string(v),
		     "/g/\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
		     "\xef\xbf\xbd\xf0\x9f\x98\x80.elf"));
	json_object_put(got);
	json_object_put(m);
}
