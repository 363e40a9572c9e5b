// SPDX-License-Identifier: MIT
/*
 * ctl_proto.c: framing, request validation and reply helpers of the
 * control socket protocol (see ctl_proto.h). The command table is in
 * ctl_schema.c.
 */
#include "ctl_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <vpmu_common.h>

static bool is_int(struct json_object *v)
{
	return json_object_is_type(v, json_type_int);
}

static int check_int(struct json_object *v, const struct vmm_ctl_field *f,
		     const char *where, char *err, size_t errlen)
{
	int64_t x;

	if (!is_int(v))
		return vpmu_fail(err, errlen, -EINVAL,
				 "%s: field '%s' must be an integer", where,
				 f->name);
	x = json_object_get_int64(v);
	/* json-c saturates above INT64_MAX: such values are out of range. */
	if (x < f->min || x > f->max ||
	    (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)x))
		return vpmu_fail(err, errlen, -EINVAL,
				 "%s: field '%s' out of range (%lld..%lld)",
				 where, f->name, (long long)f->min,
				 (long long)f->max);
	return 0;
}

/*
 * json-c keeps integers above INT64_MAX as unsigned: get_int64() of such a
 * value is INT64_MAX (>= 0), so only negative values are refused here.
 */
static int check_u64(struct json_object *v, const struct vmm_ctl_field *f,
		     const char *where, char *err, size_t errlen)
{
	if (!is_int(v) || json_object_get_int64(v) < 0)
		return vpmu_fail(
			err, errlen, -EINVAL,
			"%s: field '%s' must be a non-negative integer", where,
			f->name);
	return 0;
}

static int check_array(struct json_object *v, const struct vmm_ctl_field *f,
		       const char *where, char *err, size_t errlen)
{
	static const struct vmm_ctl_field elem_int = {
		.name = "element", .type = VMM_CTL_INT, .min = 0, .max = 65535};
	char sub[96];
	size_t i, n;
	int ret;

	if (!json_object_is_type(v, json_type_array))
		return vpmu_fail(err, errlen, -EINVAL,
				 "%s: field '%s' must be an array", where,
				 f->name);
	n = json_object_array_length(v);
	if ((int64_t)n < f->min || (int64_t)n > f->max)
		return vpmu_fail(err, errlen, -EINVAL,
				 "%s: field '%s' needs %lld..%lld elements",
				 where, f->name, (long long)f->min,
				 (long long)f->max);
	for (i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);

		snprintf(sub, sizeof(sub), "%s: %s[%zu]", where, f->name, i);
		if (f->type == VMM_CTL_INTS)
			ret = check_int(e, &elem_int, sub, err, errlen);
		else
			ret = vmm_ctl_check_fields(e, f->elem, sub, err,
						   errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static int check_value(struct json_object *v, const struct vmm_ctl_field *f,
		       const char *where, char *err, size_t errlen)
{
	size_t len;

	switch (f->type) {
	case VMM_CTL_INT:
		return check_int(v, f, where, err, errlen);
	case VMM_CTL_U64:
		return check_u64(v, f, where, err, errlen);
	case VMM_CTL_STR:
		if (!json_object_is_type(v, json_type_string))
			return vpmu_fail(err, errlen, -EINVAL,
					 "%s: field '%s' must be a string",
					 where, f->name);
		len = (size_t)json_object_get_string_len(v);
		if ((int64_t)len < f->min || (int64_t)len > f->max ||
		    strlen(json_object_get_string(v)) != len)
			return vpmu_fail(
				err, errlen, -EINVAL,
				"%s: field '%s' must be %lld..%lld bytes "
				"without NUL",
				where, f->name, (long long)f->min,
				(long long)f->max);
		return 0;
	default:
		return check_array(v, f, where, err, errlen);
	}
}

static const struct vmm_ctl_field *find_field(const struct vmm_ctl_field *t,
					      const char *name)
{
	for (; t->name; t++) {
		if (!strcmp(t->name, name))
			return t;
	}
	return NULL;
}

int vmm_ctl_check_fields(struct json_object *obj,
			 const struct vmm_ctl_field *fields, const char *where,
			 char *err, size_t errlen)
{
	const struct vmm_ctl_field *f;
	int ret;

	if (!json_object_is_type(obj, json_type_object))
		return vpmu_fail(err, errlen, -EINVAL,
				 "%s: must be a JSON object", where);
	json_object_object_foreach(obj, key, val)
	{
		if (!strcmp(where, "request") &&
		    (!strcmp(key, "v") || !strcmp(key, "id") ||
		     !strcmp(key, "cmd")))
			continue;
		f = find_field(fields, key);
		if (!f)
			return vpmu_fail(err, errlen, -EINVAL,
					 "%s: unknown field '%.*s'", where,
					 vmm_ctl_utf8_prefix(key, 64), key);
		ret = check_value(val, f, where, err, errlen);
		if (ret)
			return ret;
	}
	for (f = fields; f->name; f++) {
		if (f->required &&
		    !json_object_object_get_ex(obj, f->name, NULL))
			return vpmu_fail(err, errlen, -EINVAL,
					 "%s: missing field '%s'", where,
					 f->name);
	}
	return 0;
}

static int parse_header(struct json_object *obj, int64_t *id,
			const struct vmm_ctl_cmd **cmd, char *err,
			size_t errlen)
{
	struct json_object *v, *jid, *jcmd;
	const struct vmm_ctl_cmd *c;
	const char *name;
	int64_t x;

	if (json_object_object_get_ex(obj, "id", &jid) && is_int(jid)) {
		x = json_object_get_int64(jid);
		if (x >= 0 && x <= VMM_CTL_ID_MAX)
			*id = x;
	}
	if (*id < 0)
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: 'id' must be an integer 0..2^53");
	if (!json_object_object_get_ex(obj, "v", &v) || !is_int(v))
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: 'v' (version) missing");
	if (json_object_get_int64(v) != VMM_CTL_PROTO) {
		snprintf(err, errlen,
			 "request: protocol version %lld not supported (this "
			 "VMM speaks %d)",
			 (long long)json_object_get_int64(v), VMM_CTL_PROTO);
		return -EPROTO;
	}
	if (!json_object_object_get_ex(obj, "cmd", &jcmd) ||
	    !json_object_is_type(jcmd, json_type_string))
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: 'cmd' must be a string");
	name = json_object_get_string(jcmd);
	c    = vmm_ctl_cmd_find(name);
	if (!c)
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: unknown command '%.*s'",
				 vmm_ctl_utf8_prefix(name, 64), name);
	*cmd = c;
	return 0;
}

int vmm_ctl_parse_request(const char *text, size_t len,
			  struct json_object **req,
			  const struct vmm_ctl_cmd **cmd, int64_t *id,
			  char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *obj;
	size_t off;
	int ret;

	*id  = -1;
	*req = NULL;
	if (len == 0 || len > VMM_CTL_MSG_MAX || memchr(text, '\0', len))
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: not JSON text");
	/* JSON is UTF-8 (RFC 8259); json-c would take any bytes. */
	off = vmm_ctl_utf8_check(text, len);
	if (off != len)
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: not UTF-8 text (at offset %zu)",
				 off);
	tok = json_tokener_new_ex(32);
	if (!tok)
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: out of memory");
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)len) {
		json_tokener_free(tok);
		json_object_put(obj);
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: malformed JSON");
	}
	json_tokener_free(tok);
	if (!json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		return vpmu_fail(err, errlen, -EINVAL,
				 "request: not a JSON object");
	}
	ret = parse_header(obj, id, cmd, err, errlen);
	if (!ret)
		ret = vmm_ctl_check_fields(obj, (*cmd)->fields, "request", err,
					   errlen);
	if (ret) {
		json_object_put(obj);
		return ret;
	}
	*req = obj;
	return 0;
}

int64_t vmm_ctl_get_int(struct json_object *obj, const char *key, int64_t def)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !is_int(v))
		return def;
	return json_object_get_int64(v);
}

uint64_t vmm_ctl_get_u64(struct json_object *obj, const char *key, uint64_t def)
{
	struct json_object *v;

	if (!json_object_object_get_ex(obj, key, &v) || !is_int(v))
		return def;
	return json_object_get_uint64(v);
}

struct json_object *vmm_ctl_reply_ok(int64_t id)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "v", json_object_new_int(VMM_CTL_PROTO));
	json_object_object_add(r, "id",
			       id >= 0 ? json_object_new_int64(id) : NULL);
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	return r;
}

struct json_object *vmm_ctl_reply_err(int64_t id, int err, const char *msg)
{
	struct json_object *r = vmm_ctl_reply_ok(id);
	size_t len;
	char *text = vmm_ctl_utf8_clean(msg, strlen(msg), &len);

	json_object_object_add(r, "ok", json_object_new_boolean(0));
	json_object_object_add(r, "error",
			       json_object_new_string(text ? text : "?"));
	free(text);
	json_object_object_add(r, "errno", json_object_new_int(err));
	return r;
}

/*
 * The buffer grows to one maximal frame plus read slack and no further:
 * a peer cannot make the VMM allocate more than that per connection.
 */
int vmm_ctl_rx_fill(struct vmm_ctl_rx *rx, int fd)
{
	unsigned char *nb;
	ssize_t n;

	if (rx->cap - rx->len < 65536) {
		size_t cap = rx->cap ? rx->cap * 2 : 131072;

		if (cap > VMM_CTL_MSG_MAX + 2 * 65536 + VMM_CTL_HDR)
			cap = VMM_CTL_MSG_MAX + 2 * 65536 + VMM_CTL_HDR;
		if (cap <= rx->len)
			return -EMSGSIZE;
		nb = realloc(rx->buf, cap);
		if (!nb)
			return -ENOMEM;
		rx->buf = nb;
		rx->cap = cap;
	}
	n = read(fd, rx->buf + rx->len, rx->cap - rx->len);
	if (n < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (n == 0)
		return -ECONNRESET;
	rx->len += (size_t)n;
	return 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

int vmm_ctl_rx_next(struct vmm_ctl_rx *rx, const char **body, size_t *len)
{
	uint32_t n;

	*body = NULL;
	*len  = 0;
	if (rx->len < VMM_CTL_HDR)
		return 0;
	n = be32(rx->buf);
	if (n == 0 || n > VMM_CTL_MSG_MAX)
		return -EMSGSIZE;
	if (rx->len < VMM_CTL_HDR + (size_t)n)
		return 0;
	*body = (const char *)rx->buf + VMM_CTL_HDR;
	*len  = n;
	return 1;
}

void vmm_ctl_rx_drop(struct vmm_ctl_rx *rx, size_t len)
{
	size_t used = VMM_CTL_HDR + len;

	if (used > rx->len)
		used = rx->len;
	memmove(rx->buf, rx->buf + used, rx->len - used);
	rx->len -= used;
}

void vmm_ctl_rx_free(struct vmm_ctl_rx *rx)
{
	free(rx->buf);
	rx->buf = NULL;
	rx->len = rx->cap = 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for (events) on (fd) until (deadline) (ms, monotonic). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int64_t left;
	int n;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * MSG_NOSIGNAL: a peer that went away must give EPIPE, not kill the VMM
 * with SIGPIPE. Non-blocking sends plus poll keep the deadline.
 */
static int write_all(int fd, const void *buf, size_t len, int64_t deadline)
{
	const char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		ret = wait_fd(fd, POLLOUT, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * json-c escapes what JSON requires ('"', '\\', control characters) and
 * copies every byte >= 0x80 as it is: those are only ever inside strings,
 * so replacing the invalid ones keeps the JSON intact.
 */
int vmm_ctl_send(int fd, struct json_object *msg, int timeout_ms)
{
	const char *text;
	char *clean = NULL;
	unsigned char hdr[VMM_CTL_HDR];
	size_t len;
	int64_t deadline = now_ms() + timeout_ms;
	int ret;

	text = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN,
						 &len);
	if (text && vmm_ctl_utf8_check(text, len) != len)
		text = clean = vmm_ctl_utf8_clean(text, len, &len);
	if (!text)
		return -ENOMEM;
	ret = -EMSGSIZE;
	if (len == 0 || len > VMM_CTL_MSG_MAX)
		goto out_free;
	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	ret    = write_all(fd, hdr, sizeof(hdr), deadline);
	if (!ret)
		ret = write_all(fd, text, len, deadline);
out_free:
	free(clean);
	return ret;
}

static int read_all(int fd, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		ret = wait_fd(fd, POLLIN, deadline);
		if (ret)
			return ret;
	}
	return 0;
}

int vmm_ctl_recv(int fd, struct json_object **out, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	unsigned char hdr[VMM_CTL_HDR];
	struct json_object *obj;
	char *text;
	uint32_t n;
	int ret;

	*out = NULL;
	ret  = read_all(fd, hdr, sizeof(hdr), deadline);
	if (ret)
		return ret;
	n = be32(hdr);
	if (n == 0 || n > VMM_CTL_MSG_MAX)
		return -EMSGSIZE;
	text = malloc((size_t)n + 1);
	if (!text)
		return -ENOMEM;
	ret = read_all(fd, text, n, deadline);
	if (ret) {
		free(text);
		return ret;
	}
	text[n] = '\0';
	obj     = json_tokener_parse(text);
	free(text);
	if (!obj || !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		return -EPROTO;
	}
	*out = obj;
	return 0;
}

int vmm_ctl_recv_packed(int fd, void *buf, size_t want, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	unsigned char hdr[VMM_CTL_HDR];
	int ret;

	if (want < VMM_CTL_PK_HDR || want > VMM_CTL_PK_MAX)
		return -EMSGSIZE;
	ret = read_all(fd, hdr, sizeof(hdr), deadline);
	if (ret)
		return ret;
	if (be32(hdr) != want)
		return -EPROTO; /* not the frame the reply announced */
	return read_all(fd, buf, want, deadline);
}
