// SPDX-License-Identifier: MIT
/*
 * test_http.c: the HTTP rules of vpmu serve (ops/serve/http.c): listen
 * addresses, the TLS requirement off loopback (refused with a clear
 * reason), and, against the real libmicrohttpd daemon on 127.0.0.1, the
 * 429 when the profile slots are taken, profile requests queued and
 * leaving when their client hangs up, 401 without the bearer token, 503 before
 * the first collection, 405 for other methods, 404 elsewhere and 400 for bad
 * parameters.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve_priv.h"

Test(serve_http, listen_addresses)
{
	struct sockaddr_storage sa;
	char err[256];

	cr_expect(
		eq(int,
		   serve_parse_listen("127.0.0.1:9464", &sa, err, sizeof(err)),
		   0));
	cr_expect(serve_is_loopback(&sa));
	cr_expect(eq(int, serve_parse_listen("[::1]:80", &sa, err, sizeof(err)),
		     0));
	cr_expect(serve_is_loopback(&sa));
	cr_expect(eq(int,
		     serve_parse_listen("10.1.2.3:80", &sa, err, sizeof(err)),
		     0));
	cr_expect(not(serve_is_loopback(&sa)));
	cr_expect(eq(int,
		     serve_parse_listen("localhost:80", &sa, err, sizeof(err)),
		     -EINVAL));
	cr_expect(
		eq(int,
		   serve_parse_listen("127.0.0.1:65536", &sa, err, sizeof(err)),
		   -EINVAL));
	cr_expect(eq(int,
		     serve_parse_listen("127.0.0.1", &sa, err, sizeof(err)),
		     -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "ADDR:PORT"), NULL)), "%s", err);
}

Test(serve_http, non_loopback_needs_tls)
{
	struct serve_opts o = {.listen = "0.0.0.0:9464"};
	struct sockaddr_storage sa;
	char err[512] = "";

	serve_parse_listen(o.listen, &sa, err, sizeof(err));
	cr_expect(eq(int, serve_check_tls(&o, &sa, err, sizeof(err)), -EPERM));
	cr_expect(not(eq(ptr, strstr(err, "--tls-cert"), NULL)), "%s", err);
	cr_expect(not(eq(ptr, strstr(err, "0.0.0.0:9464"), NULL)), "%s", err);
	o.tls_cert = "c.pem";
	cr_expect(eq(int, serve_check_tls(&o, &sa, err, sizeof(err)), -EINVAL),
		  "a certificate without its key");
	o.tls_key = "k.pem";
	cr_expect(eq(int, serve_check_tls(&o, &sa, err, sizeof(err)), 0));
	o = (struct serve_opts){.listen = "[::1]:1", .tls_client_ca = "ca"};
	serve_parse_listen(o.listen, &sa, err, sizeof(err));
	cr_expect(eq(int, serve_check_tls(&o, &sa, err, sizeof(err)), -EINVAL),
		  "a client CA without TLS");
	o.tls_client_ca = NULL;
	cr_expect(eq(int, serve_check_tls(&o, &sa, err, sizeof(err)), 0));
}

/* A connection to 127.0.0.1:(port) that sent (text). */
static int send_to(unsigned int port, const char *text)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port   = htons((uint16_t)port)};
	int fd                = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(eq(int, connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0));
	cr_assert(eq(sz, (size_t)write(fd, text, strlen(text)), strlen(text)));
	return fd;
}

/* The status code of one request (text) to 127.0.0.1:(port). */
static int status_of(unsigned int port, const char *text)
{
	int fd = send_to(port, text), code = 0;
	char buf[256] = "";
	ssize_t n;

	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0)
		sscanf(buf, "HTTP/1.%*d %d", &code);
	return code;
}

Test(serve_http, statuses_from_the_real_daemon, .timeout = 20)
{
	struct serve sv = {.o = {.listen = "127.0.0.1:0", .max_profile_s = 5}};
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	char err[256];
	unsigned int port;

	pthread_mutex_init(&sv.lock, NULL);
	pthread_cond_init(&sv.cond, NULL);
	cr_assert(eq(int, serve_http_start(&sv, &d, err, sizeof(err)), 0), "%s",
		  err);
	di   = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = di->port;
	/* Every profile slot taken: the next request is refused at once. */
	atomic_store(&sv.nr_profiles, SERVE_PROFILES_MAX);
	cr_expect(eq(int,
		     status_of(port, "GET /debug/pprof/profile?seconds=1 "
				     "HTTP/1.0\r\n\r\n"),
		     429));
	cr_expect(eq(u32, atomic_load(&sv.nr_profiles), SERVE_PROFILES_MAX),
		  "the refused request gave its slot back");
	cr_expect(eq(int,
		     status_of(port, "GET /debug/pprof/profile?seconds=6 "
				     "HTTP/1.0\r\n\r\n"),
		     400),
		  "above --max-profile-seconds");
	cr_expect(eq(int,
		     status_of(port, "GET /debug/pprof/profile?hz=0 "
				     "HTTP/1.0\r\n\r\n"),
		     400));
	cr_expect(
		eq(int, status_of(port, "GET /metrics HTTP/1.0\r\n\r\n"), 503),
		"no collection yet");
	sv.snap[OM_TEXT_004] = strdup("vpmu_serve_vms 0\n");
	cr_expect(
		eq(int, status_of(port, "GET /metrics HTTP/1.0\r\n\r\n"), 200));
	cr_expect(eq(int, status_of(port, "DELETE /metrics HTTP/1.0\r\n\r\n"),
		     405));
	cr_expect(eq(int, status_of(port, "GET /etc/passwd HTTP/1.0\r\n\r\n"),
		     404));
	serve_http_stop(&sv, d);
	free(sv.snap[OM_TEXT_004]);
}

/* How many profile requests wait in the queue. */
static unsigned int queued(struct serve *sv)
{
	struct serve_profile *p;
	unsigned int n = 0;

	pthread_mutex_lock(&sv->lock);
	for (p = sv->want; p; p = p->next)
		n++;
	pthread_mutex_unlock(&sv->lock);
	return n;
}

/*
 * No collector runs here: profile requests wait in the queue. Two at once
 * are both admitted (neither refused), and each leaves, giving its slot
 * back, as soon as its client hangs up, not when its time would be up.
 */
Test(serve_http, profiles_queue_and_leave_with_their_client, .timeout = 20)
{
	static const char req[] = "GET /debug/pprof/profile?seconds=60 "
				  "HTTP/1.1\r\nHost: x\r\n\r\n";
	struct serve sv = {.o = {.listen = "127.0.0.1:0", .max_profile_s = 60}};
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	char err[256];
	int fd[2];

	pthread_mutex_init(&sv.lock, NULL);
	pthread_cond_init(&sv.cond, NULL);
	sv.wake_fd = -1; /* serve_wake() has no collector to wake */
	cr_assert(eq(int, serve_http_start(&sv, &d, err, sizeof(err)), 0), "%s",
		  err);
	di    = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fd[0] = send_to(di->port, req);
	fd[1] = send_to(di->port, req);
	while (queued(&sv) < 2)
		usleep(10000);
	cr_expect(eq(u32, atomic_load(&sv.nr_profiles), 2));
	close(fd[0]);
	close(fd[1]);
	while (atomic_load(&sv.nr_profiles) || queued(&sv))
		usleep(10000);
	serve_http_stop(&sv, d);
}

Test(serve_http, authentication_is_required_unless_refused_explicitly)
{
	struct serve_opts o = {.listen = "127.0.0.1:9464"};
	char path[] = "/tmp/vpmu-token.XXXXXX", err[512] = "", *token;
	int fd = mkstemp(path);

	cr_expect(eq(int, serve_check_auth(&o, err, sizeof(err)), -EPERM));
	cr_expect(not(eq(ptr, strstr(err, "--auth-token-file"), NULL)), "%s",
		  err);
	o.no_auth = true;
	cr_expect(eq(int, serve_check_auth(&o, err, sizeof(err)), 0));
	o.auth_token_file = path;
	cr_expect(eq(int, serve_check_auth(&o, err, sizeof(err)), -EINVAL));
	cr_assert(fd >= 0);
	cr_assert(eq(int, (int)write(fd, "0123456789abcdef\n", 17), 17));
	close(fd);
	cr_expect(eq(int, serve_load_token(path, &token, err, sizeof(err)), 0),
		  "%s", err);
	cr_expect(eq(str, token, "0123456789abcdef"));
	free(token);
	chmod(path, 0644);
	cr_expect(eq(int, serve_load_token(path, &token, err, sizeof(err)),
		     -EPERM));
	cr_expect(not(eq(ptr, strstr(err, "chmod 600"), NULL)), "%s", err);
	unlink(path);
}

Test(serve_http, requests_without_the_token_get_401, .timeout = 20)
{
	struct serve sv = {.o = {.listen = "127.0.0.1:0", .max_profile_s = 5}};
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	char err[256], token[] = "0123456789abcdef";
	unsigned int port;

	pthread_mutex_init(&sv.lock, NULL);
	pthread_cond_init(&sv.cond, NULL);
	sv.token             = token;
	sv.snap[OM_TEXT_004] = strdup("vpmu_serve_vms 0\n");
	cr_assert(eq(int, serve_http_start(&sv, &d, err, sizeof(err)), 0), "%s",
		  err);
	di   = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = di->port;
	cr_expect(
		eq(int, status_of(port, "GET /metrics HTTP/1.0\r\n\r\n"), 401));
	cr_expect(eq(int,
		     status_of(port, "GET /metrics HTTP/1.0\r\nAuthorization: "
				     "Bearer 0123456789abcdeX\r\n\r\n"),
		     401));
	cr_expect(eq(int,
		     status_of(port, "GET /metrics HTTP/1.0\r\nAuthorization: "
				     "Bearer 0123456789abcde\r\n\r\n"),
		     401),
		  "a prefix of the token");
	cr_expect(
		eq(int,
		   status_of(port, "GET /debug/pprof/profile HTTP/1.0\r\n\r\n"),
		   401));
	cr_expect(eq(int,
		     status_of(port, "GET /metrics HTTP/1.0\r\nAuthorization: "
				     "bearer 0123456789abcdef\r\n\r\n"),
		     200));
	serve_http_stop(&sv, d);
	free(sv.snap[OM_TEXT_004]);
}
