// SPDX-License-Identifier: MIT
/*
 * http.c: the HTTP front end of `vpmu serve` (libmicrohttpd, one thread
 * per connection, so a slow client holds only its own thread; it never
 * reaches the collector, whose results it copies from snapshots). Routes
 * are one table; GET and HEAD only; bodies are refused; a request head
 * late past its deadline is cut (slowloris: see SERVE_HEAD_S); at most
 * SERVE_PROFILES_MAX profile requests at once (taken one after another,
 * each ending when its client goes away), more get 429. TLS (GnuTLS) with an
 * optional client CA whose verification every request must pass, and an
 * optional bearer token (--auth-token-file) every request must carry.
 */
#include "serve_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vpmu_file.h"

int serve_parse_listen(const char *s, struct sockaddr_storage *sa, char *err,
		       size_t errlen)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;
	struct sockaddr_in *in4  = (struct sockaddr_in *)sa;
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	unsigned long port;
	char *end;
	size_t n;

	memset(sa, 0, sizeof(*sa));
	colon = strrchr(s, ':');
	if (!colon || colon == s)
		goto bad;
	n = (size_t)(colon - s);
	if (s[0] == '[') { /* [v6]:port */
		if (n < 3 || s[n - 1] != ']')
			goto bad;
		s++;
		n -= 2;
	}
	if (n >= sizeof(host))
		goto bad;
	memcpy(host, s, n);
	host[n] = '\0';
	errno   = 0;
	port    = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port > 65535)
		goto bad;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port   = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port   = htons((uint16_t)port);
		return 0;
	}
bad:
	snprintf(err, errlen,
		 "--listen '%s': expected ADDR:PORT with a numeric IPv4 "
		 "address or [IPv6] and a port 0-65535",
		 s);
	return -EINVAL;
}

bool serve_is_loopback(const struct sockaddr_storage *sa)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *in4  = (const struct sockaddr_in *)sa;

	if (sa->ss_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	return sa->ss_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

int serve_check_tls(const struct serve_opts *o,
		    const struct sockaddr_storage *sa, char *err, size_t errlen)
{
	if (!o->tls_cert != !o->tls_key) {
		snprintf(err, errlen, "--tls-cert and --tls-key go together");
		return -EINVAL;
	}
	if (o->tls_client_ca && !o->tls_cert) {
		snprintf(err, errlen,
			 "--tls-client-ca needs --tls-cert and "
			 "--tls-key");
		return -EINVAL;
	}
	if (serve_is_loopback(sa) || o->tls_cert)
		return 0;
	snprintf(err, errlen,
		 "refusing to serve guest metrics and profiles in clear text "
		 "on the non-loopback address '%s': give --tls-cert and "
		 "--tls-key (and --tls-client-ca to require client "
		 "certificates), or listen on 127.0.0.1",
		 o->listen);
	return -EPERM;
}

/* ---- Request-head deadlines ------------------------------------------- */

/*
 * One connection of the daemon: its socket and the monotonic time (ns) by
 * which its next request head must be complete, 0 while a request is
 * being answered. The reaper shuts the sockets past their deadline down:
 * libmicrohttpd's thread for that connection then reads end-of-file and
 * closes it (the descriptor stays libmicrohttpd's, closed only after the
 * CLOSED notification frees the slot, so it is never another's).
 */
struct serve_conn {
	int fd; /* -1: free slot */
	uint64_t deadline;
};

struct serve_conns {
	pthread_mutex_t lock;
	struct serve_conn c[SERVE_CONNS + 8];
	uint64_t nr_cut;
};

static void conn_deadline(struct serve *sv, struct serve_conn *k,
			  uint64_t after_ns)
{
	if (!k)
		return;
	pthread_mutex_lock(&sv->conns->lock);
	k->deadline = after_ns ? vpmu_monotonic_ns() + after_ns : 0;
	pthread_mutex_unlock(&sv->conns->lock);
}

static struct serve_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
			enum MHD_ConnectionNotificationCode what)
{
	struct serve *sv                   = cls;
	struct serve_conns *cs             = sv->conns;
	const union MHD_ConnectionInfo *ci = NULL;
	struct serve_conn *k               = *ctx;
	unsigned int i;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		pthread_mutex_lock(&cs->lock);
		if (k)
			k->fd = -1;
		pthread_mutex_unlock(&cs->lock);
		*ctx = NULL;
		return;
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return;
	pthread_mutex_lock(&cs->lock);
	for (i = 0; i < ARRAY_SIZE(cs->c) && cs->c[i].fd >= 0; i++)
		;
	if (i < ARRAY_SIZE(cs->c)) {
		cs->c[i].fd = ci->connect_fd;
		cs->c[i].deadline =
			vpmu_monotonic_ns() + SERVE_HEAD_S * 1000000000ULL;
		*ctx = &cs->c[i];
	}
	pthread_mutex_unlock(&cs->lock);
}

/* A request was answered: the next head has the idle timeout to come. */
static void request_done(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)req_cls;
	(void)toe;
	conn_deadline(cls, conn_of(c), SERVE_IDLE_S * 1000000000ULL);
}

/* Once a second: cut the connections whose head is late. */
static void *reaper(void *arg)
{
	struct serve *sv       = arg;
	struct serve_conns *cs = sv->conns;
	struct timespec dl;
	uint64_t now;
	unsigned int i;

	pthread_mutex_lock(&sv->lock);
	while (!atomic_load(&sv->stop)) {
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec++;
		pthread_cond_timedwait(&sv->cond, &sv->lock, &dl);
		now = vpmu_monotonic_ns();
		pthread_mutex_lock(&cs->lock);
		for (i = 0; i < ARRAY_SIZE(cs->c); i++) {
			if (cs->c[i].fd < 0 || !cs->c[i].deadline ||
			    now < cs->c[i].deadline)
				continue;
			shutdown(cs->c[i].fd, SHUT_RDWR);
			cs->c[i].deadline = 0; /* once */
			cs->nr_cut++;
		}
		pthread_mutex_unlock(&cs->lock);
	}
	pthread_mutex_unlock(&sv->lock);
	return NULL;
}

/* ---- Requests -------------------------------------------------------- */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned int status,
			       const char *type, void *data, size_t len,
			       bool must_free)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, data,
					    must_free ? MHD_RESPMEM_MUST_FREE
						      : MHD_RESPMEM_MUST_COPY);
	if (!r) {
		if (must_free)
			free(data);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "10");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"vpmu serve\"");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

__attribute__((format(printf, 3, 4))) static enum MHD_Result
error(struct MHD_Connection *c, unsigned int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	msg[n]   = '\0';
	return respond(c, status, "text/plain; charset=utf-8", msg, (size_t)n,
		       false);
}

/* A copy of snapshot (*snap), taken under the lock. */
static enum MHD_Result from_snapshot(struct serve *sv, struct MHD_Connection *c,
				     char *const *snap, const char *type)
{
	char *copy;

	pthread_mutex_lock(&sv->lock);
	copy = *snap ? strdup(*snap) : NULL;
	sv->nr_scrapes++;
	pthread_mutex_unlock(&sv->lock);
	if (!copy)
		return error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			     "no collection yet: try again in a second");
	return respond(c, MHD_HTTP_OK, type, copy, strlen(copy), true);
}

static enum MHD_Result do_metrics(struct serve *sv, struct MHD_Connection *c)
{
	enum om_format f = om_negotiate(MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));

	return from_snapshot(sv, c, &sv->snap[f], om_content_type(f));
}

static enum MHD_Result do_vms(struct serve *sv, struct MHD_Connection *c)
{
	return from_snapshot(sv, c, &sv->vms_json, "application/json");
}

struct args_check {
	const char *const *known;
	const char *bad;
};

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind,
				 const char *key, const char *value)
{
	struct args_check *a = cls;
	unsigned int i;

	(void)kind;
	(void)value;
	for (i = 0; a->known[i]; i++) {
		if (!strcmp(key, a->known[i]))
			return MHD_YES;
	}
	a->bad = key;
	return MHD_NO;
}

/* A decimal in [lo, hi], or the default when absent; -1 when bad. */
static long num_arg(struct MHD_Connection *c, const char *key, long def,
		    long lo, long hi)
{
	const char *v =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
	char *end;
	long n;

	if (!v)
		return def;
	errno = 0;
	n     = strtol(v, &end, 10);
	if (!*v || *end || errno || n < lo || n > hi)
		return -1;
	return n;
}

/*
 * Has the client of (ctx), a connection waiting for its profile, gone
 * away? It sent its whole request: end-of-file or a reset now means it
 * hung up (a pipelined request is data, not end-of-file).
 */
static bool client_gone(void *ctx)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(ctx, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd pf;
	char byte;

	if (!ci)
		return false;
	pf = (struct pollfd){.fd     = ci->connect_fd,
			     .events = POLLIN | POLLRDHUP};
	if (poll(&pf, 1, 0) <= 0)
		return false;
	if (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))
		return true;
	return recv(ci->connect_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

static enum MHD_Result do_profile(struct serve *sv, struct MHD_Connection *c)
{
	static const char *const known[] = {"seconds", "vm", "hz", NULL};
	struct args_check a              = {.known = known};
	struct serve_profile *p;
	const char *vm;
	enum MHD_Result ret;
	long secs, hz;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, check_arg, &a);
	if (a.bad)
		return error(c, MHD_HTTP_BAD_REQUEST,
			     "unknown query parameter '%.64s' (seconds, vm, "
			     "hz)",
			     a.bad);
	secs = num_arg(c, "seconds",
		       SERVE_PROFILE_DEFAULT_S < sv->o.max_profile_s
			       ? SERVE_PROFILE_DEFAULT_S
			       : sv->o.max_profile_s,
		       1, sv->o.max_profile_s);
	if (secs < 0)
		return error(c, MHD_HTTP_BAD_REQUEST,
			     "seconds: an integer from 1 to %u",
			     sv->o.max_profile_s);
	hz = num_arg(c, "hz", 100, 1, 1000);
	if (hz < 0)
		return error(c, MHD_HTTP_BAD_REQUEST,
			     "hz: an integer from 1 to 1000");
	vm = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "vm");
	if (vm && (!vm[0] || strlen(vm) >= VMM_NAME_MAX))
		return error(c, MHD_HTTP_BAD_REQUEST,
			     "vm: a VM name, uuid or uuid prefix");
	if (atomic_fetch_add(&sv->nr_profiles, 1) >= SERVE_PROFILES_MAX) {
		atomic_fetch_sub(&sv->nr_profiles, 1);
		return error(c, MHD_HTTP_TOO_MANY_REQUESTS,
			     "%d profile requests are being taken or waiting "
			     "(profiles are taken one after another): retry "
			     "later",
			     SERVE_PROFILES_MAX);
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		atomic_fetch_sub(&sv->nr_profiles, 1);
		return error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "out of memory");
	}
	p->seconds  = (unsigned int)secs;
	p->hz       = (unsigned int)hz;
	p->gone     = client_gone;
	p->gone_ctx = c;
	snprintf(p->vm, sizeof(p->vm), "%s", vm ? vm : "");
	serve_profile_run(sv, p);
	atomic_fetch_sub(&sv->nr_profiles, 1);
	if (p->status == MHD_HTTP_OK) {
		ret     = respond(c, MHD_HTTP_OK, "application/octet-stream",
				  p->data, p->len, true);
		p->data = NULL;
	} else {
		ret = error(c, (unsigned int)p->status, "%s", p->err);
	}
	free(p->data);
	free(p);
	return ret;
}

static enum MHD_Result do_index(struct serve *sv, struct MHD_Connection *c)
{
	static const char text[] =
		"vpmu serve\n"
		"  /metrics                       Prometheus / OpenMetrics\n"
		"  /debug/pprof/profile?seconds=N[&vm=NAME][&hz=HZ]\n"
		"                                 guest CPU profile (pprof)\n"
		"  /debug/vpmu/vms                the VMs (JSON)\n";

	(void)sv;
	return respond(c, MHD_HTTP_OK, "text/plain; charset=utf-8",
		       (void *)text, sizeof(text) - 1, false);
}

typedef enum MHD_Result (*route_fn_t)(struct serve *sv,
				      struct MHD_Connection *c);

static const struct route {
	const char *path;
	route_fn_t fn;
} routes[] = {
	{"/", do_index},
	{"/metrics", do_metrics},
	{"/debug/pprof/profile", do_profile},
	{"/debug/vpmu/vms", do_vms},
};

/* With a client CA, the peer's certificate must verify against it. */
static bool client_verified(struct serve *sv, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	unsigned int status = 0;

	if (!sv->o.tls_client_ca)
		return true;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session)
		return false;
	if (!gnutls_certificate_get_peers((gnutls_session_t)ci->tls_session,
					  NULL))
		return false;
	return gnutls_certificate_verify_peers2(
		       (gnutls_session_t)ci->tls_session, &status) == 0 &&
	       status == 0;
}

/*
 * With a token, the request must carry "Authorization: Bearer TOKEN";
 * compared in a time that does not depend on where they differ.
 */
static bool authorized(struct serve *sv, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	size_t n, i;
	unsigned char diff;

	if (!sv->token)
		return true;
	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	for (h += 7; *h == ' '; h++)
		;
	n    = strlen(sv->token);
	diff = strlen(h) != n;
	for (i = 0; i < n && h[i]; i++)
		diff |= (unsigned char)(h[i] ^ sv->token[i]);
	return !diff && i == n;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	static int first;
	struct serve *sv = cls;
	unsigned int i;

	(void)version;
	(void)upload_data;
	if (!*req_cls) { /* headers only so far: refuse early */
		*req_cls = &first;
		conn_deadline(sv, conn_of(c), 0); /* the head is complete */
		if (strcmp(method, MHD_HTTP_METHOD_GET) &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD))
			return error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				     "method %.16s not allowed: GET or HEAD",
				     method);
		if (MHD_lookup_connection_value(
			    c, MHD_HEADER_KIND,
			    MHD_HTTP_HEADER_CONTENT_LENGTH) ||
		    MHD_lookup_connection_value(
			    c, MHD_HEADER_KIND,
			    MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return error(c, MHD_HTTP_CONTENT_TOO_LARGE,
				     "request bodies are not accepted");
		return MHD_YES;
	}
	if (*upload_data_size)
		return MHD_NO; /* a body after all: close the connection */
	if (!client_verified(sv, c))
		return error(c, MHD_HTTP_FORBIDDEN,
			     "a client certificate signed by the configured "
			     "CA is required");
	if (!authorized(sv, c))
		return error(c, MHD_HTTP_UNAUTHORIZED,
			     "a bearer token is required (Authorization: "
			     "Bearer TOKEN, the token of --auth-token-file)");
	for (i = 0; i < ARRAY_SIZE(routes); i++) {
		if (!strcmp(url, routes[i].path))
			return routes[i].fn(sv, c);
	}
	return error(c, MHD_HTTP_NOT_FOUND,
		     "no such page: /metrics, /debug/pprof/profile, "
		     "/debug/vpmu/vms");
}

__attribute__((format(printf, 2, 0))) static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("vpmu serve: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

/*
 * The whole file (path) as a NUL-terminated string, or NULL (err set).
 * Only a regular file: a FIFO would block the open, and then the daemon.
 */
static char *slurp(const char *path, char *err, size_t errlen)
{
	int fd = vpmu_file_open(path, O_RDONLY, 0, NULL, err, errlen);
	char *buf;
	FILE *f;
	long n;

	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "r"))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (1 << 20) ||
	    fseek(f, 0, SEEK_SET)) {
		snprintf(err, errlen, "%s: not a readable PEM file", path);
		fclose(f);
		return NULL;
	}
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (!buf)
		snprintf(err, errlen, "%s: cannot read", path);
	return buf;
}

int serve_check_auth(const struct serve_opts *o, char *err, size_t errlen)
{
	if (o->auth_token_file && o->no_auth) {
		snprintf(err, errlen,
			 "--auth-token-file and --no-auth exclude each other");
		return -EINVAL;
	}
	if (o->auth_token_file || o->tls_client_ca || o->no_auth)
		return 0;
	snprintf(err, errlen,
		 "every local user could read the VMs' metrics and take "
		 "profiles: give --auth-token-file FILE (mode 0600, the token "
		 "clients send as 'Authorization: Bearer TOKEN') or "
		 "--tls-client-ca, or --no-auth to allow that");
	return -EPERM;
}

int serve_load_token(const char *path, char **token, char *err, size_t errlen)
{
	char buf[514], why[256];
	struct stat st;
	ssize_t n;
	size_t i;
	int fd = vpmu_file_open(path, O_RDONLY, 0, &st, why, sizeof(why));

	*token = NULL;
	if (fd < 0) {
		snprintf(err, errlen, "--auth-token-file %s", why);
		return fd;
	}
	if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 077)) {
		snprintf(err, errlen,
			 "--auth-token-file %s: must be yours and readable by "
			 "you only (chmod 600)",
			 path);
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	for (i = 0; i < (size_t)n && buf[i] > ' ' && buf[i] < 0x7f; i++)
		;
	if (n < 16 || n > 512 || i != (size_t)n) {
		snprintf(err, errlen,
			 "--auth-token-file %s: expected one line of 16 to 512 "
			 "printable ASCII characters without spaces "
			 "(e.g. openssl rand -hex 32)",
			 path);
		return -EINVAL;
	}
	*token = strdup(buf);
	if (!*token) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static struct MHD_Daemon *start(struct serve *sv, unsigned int flags,
				struct sockaddr_storage *sa, char *cert,
				char *key, char *ca)
{
	struct MHD_OptionItem o[14];
	unsigned int n = 0;

#define OPT(opt, val, ptr)                                                     \
	(o[n++] = (struct MHD_OptionItem){(opt), (intptr_t)(val), (ptr)})
	OPT(MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL); /* first */
	OPT(MHD_OPTION_SOCK_ADDR, 0, sa);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, SERVE_IDLE_S, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, SERVE_CONNS, NULL);
	OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, SERVE_CONNS_PER_IP, NULL);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, conn_notify, sv);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, request_done, sv);
	/* Request line and headers beyond this get 431/414 from MHD. */
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 32768, NULL);
	if (cert) {
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, cert);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, key);
	}
	if (ca)
		OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, ca);
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	return MHD_start_daemon(flags, 0, NULL, NULL, handle, sv,
				MHD_OPTION_ARRAY, o, MHD_OPTION_END);
}

static int conns_start(struct serve *sv)
{
	unsigned int i;

	sv->conns = calloc(1, sizeof(*sv->conns));
	if (!sv->conns)
		return -ENOMEM;
	pthread_mutex_init(&sv->conns->lock, NULL);
	for (i = 0; i < ARRAY_SIZE(sv->conns->c); i++)
		sv->conns->c[i].fd = -1;
	if (pthread_create(&sv->reaper, NULL, reaper, sv)) {
		pthread_mutex_destroy(&sv->conns->lock);
		free(sv->conns);
		sv->conns = NULL;
		return -EAGAIN;
	}
	sv->has_reaper = true;
	return 0;
}

void serve_http_stop(struct serve *sv, struct MHD_Daemon *d)
{
	if (d)
		MHD_stop_daemon(d); /* joins the connection threads */
	if (sv->has_reaper) {
		/* sv->stop is set: a broadcast ends its wait at once. */
		pthread_mutex_lock(&sv->lock);
		atomic_store(&sv->stop, true);
		pthread_cond_broadcast(&sv->cond);
		pthread_mutex_unlock(&sv->lock);
		pthread_join(sv->reaper, NULL);
		sv->has_reaper = false;
	}
	if (sv->conns) {
		pthread_mutex_destroy(&sv->conns->lock);
		free(sv->conns);
		sv->conns = NULL;
	}
}

int serve_http_start(struct serve *sv, struct MHD_Daemon **out, char *err,
		     size_t errlen)
{
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG;
	char *cert = NULL, *key = NULL, *ca = NULL;
	struct sockaddr_storage sa;
	struct MHD_Daemon *d;
	int ret;

	ret = serve_parse_listen(sv->o.listen, &sa, err, errlen);
	if (!ret)
		ret = serve_check_tls(&sv->o, &sa, err, errlen);
	if (ret)
		return ret;
	if (sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	ret = conns_start(sv);
	if (ret) {
		snprintf(err, errlen, "cannot start the HTTP reaper");
		return ret;
	}
	if (sv->o.tls_cert) {
		flags |= MHD_USE_TLS;
		cert = slurp(sv->o.tls_cert, err, errlen);
		key  = cert ? slurp(sv->o.tls_key, err, errlen) : NULL;
		ca   = key && sv->o.tls_client_ca
			       ? slurp(sv->o.tls_client_ca, err, errlen)
			       : NULL;
		if (!key || (sv->o.tls_client_ca && !ca)) {
			serve_http_stop(sv, NULL);
			ret = -EINVAL;
			goto out_free;
		}
	}
	d = start(sv, flags, &sa, cert, key, ca);
	if (!d) {
		serve_http_stop(sv, NULL);
		snprintf(err, errlen,
			 "cannot listen on %s (address in use, not local, or "
			 "a bad certificate or key)",
			 sv->o.listen);
		ret = -EADDRNOTAVAIL;
		goto out_free;
	}
	*out       = d;
	sv->pem[0] = cert; /* libmicrohttpd keeps pointers to them */
	sv->pem[1] = key;
	sv->pem[2] = ca;
	return 0;
out_free:
	free(cert);
	free(key);
	free(ca);
	return ret;
}
