// SPDX-License-Identifier: MIT
/*
 * fuzz_serve_http.c: `vpmu serve`'s HTTP request handling (ops/serve/http.c
 * on libmicrohttpd: routing, methods, query parameters, the bearer token)
 * and its exposition encoder (om_encode.c: the Accept header's format
 * choice, label escaping) on any bytes.
 *
 * What goes where: every input is checked in process (the exposition
 * encoder, below); about 1 in 32, chosen by the input's bytes (to_daemon(),
 * which also sends every input equal to a file of the corpus loaded at
 * start and every replayed input), also goes through a real daemon, 25
 * times as costly as the rest.
 *
 * Input: byte 0 chooses the daemon (bit 0: the one that requires the
 * token "fuzz-token-0123456789"); the rest is sent as it is over a TCP
 * connection to 127.0.0.1, whose write side is then shut. The answer must
 * come (no hang) and, if there is one, start "HTTP/1.x NNN" with a status
 * the daemon gives. No collector runs: /metrics answers from a fixed
 * snapshot, and the daemon is "stopping", so a valid profile request is
 * answered 503 at once instead of waiting for samples.
 * The rest, as a string, is also an Accept header for om_negotiate() and a
 * label value for om_escape(), whose output must be valid UTF-8 with every
 * '"', '\' and newline escaped.
 */
#include "fuzz_input.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve_priv.h"

static struct serve sv[2];
static struct MHD_Daemon *daemons[2];
static unsigned int port[2];
/* Standard error as it was before libFuzzer closed it (-close_fd_mask). */
static int harness_err = 2;
static char token[]    = "fuzz-token-0123456789";

static void start(unsigned int i)
{
	struct MHD_Daemon *d;
	char err[256];

	sv[i].o.listen        = "127.0.0.1:0";
	sv[i].o.max_profile_s = 60;
	sv[i].wake_fd         = -1;
	sv[i].token           = i ? token : NULL;
	atomic_store(&sv[i].stop, true); /* profiles: 503 at once */
	pthread_mutex_init(&sv[i].lock, NULL);
	pthread_cond_init(&sv[i].cond, NULL);
	sv[i].snap[OM_TEXT_004]      = strdup("vpmu_serve_vms 0\n");
	sv[i].snap[OM_OPENMETRICS_1] = strdup("vpmu_serve_vms 0\n# EOF\n");
	sv[i].vms_json               = strdup("[]");
	if (serve_http_start(&sv[i], &d, err, sizeof(err))) {
		fprintf(stderr, "fuzz_serve_http: %s\n", err);
		abort();
	}
	port[i]    = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	daemons[i] = d;
}

/*
 * Wait until daemon (i) is done with every connection: libFuzzer looks
 * for leaks right after an input, and a response the daemon's thread
 * still holds while it closes a connection (the client read its 4 KiB
 * and went away) was reported as leaked. Its threads finish within
 * microseconds, so the wait yields first and sleeps only after that
 * (a millisecond's sleep per daemon input cut the rate threefold); 2 s
 * at most: a daemon that keeps a closed client's connection longer is
 * left to the next input.
 */
static void daemon_idle(unsigned int i)
{
	const union MHD_DaemonInfo *info;
	int polls;

	for (polls = 0; polls < 2200; polls++) {
		info = MHD_get_daemon_info(daemons[i],
					   MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		if (!info || !info->num_connections)
			return;
		if (polls < 200)
			sched_yield();
		else
			usleep(1000);
	}
}

/*
 * Whether this input goes to a daemon: a round trip through loopback TCP
 * and the daemon's thread costs 0.5 to 1.5 ms, 25 times the rest. It is a
 * function of the input alone: about 1 in 32 inputs of any shape (size
 * and three sampled bytes), every input equal to a file named on the
 * command line (the corpus libFuzzer loads at start, the hand-written
 * seeds, a crash reproduced alone: kept by LLVMFuzzerInitialize) and
 * every replayed input (fuzz_replaying). Not a count of runs: libFuzzer
 * runs an input again to look for a leak.
 */
struct seed {
	size_t size;
	uint8_t *data;
};

static struct seed *seeds;
static size_t nr_seeds;

static int seed_cmp(const void *a, const void *b)
{
	const struct seed *x = a, *y = b;

	return (x->size > y->size) - (x->size < y->size);
}

static bool is_seed(const uint8_t *data, size_t size)
{
	struct seed key = {.size = size};
	const struct seed *s;

	if (!nr_seeds)
		return false; /* seeds is NULL: not for bsearch */
	s = bsearch(&key, seeds, nr_seeds, sizeof(*seeds), seed_cmp);
	if (!s)
		return false;
	/* bsearch found one of this size: look at all of them. */
	while (s > seeds && s[-1].size == size)
		s--;
	for (; s < seeds + nr_seeds && s->size == size; s++) {
		if (!memcmp(s->data, data, size))
			return true;
	}
	return false;
}

static bool to_daemon(const uint8_t *data, size_t size)
{
	uint32_t h = (uint32_t)size * 2654435761U;

	if (fuzz_replaying)
		return true;
	h ^= data[size / 2] * 40503U + data[size - 1] * 69069U +
	     data[size / 3] * 1103515245U;
	return (h >> 11) % 32 == 0 || is_seed(data, size);
}

/* Keep the file (path) in seeds[]; a harness failure aborts. */
static void add_seed(const char *path)
{
	struct seed *n, s = {0};
	struct stat st;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		if (f)
			fclose(f);
		return; /* not an input: libFuzzer says so */
	}
	s.size = (size_t)st.st_size;
	s.data = malloc(s.size + 1);
	n      = realloc(seeds, (nr_seeds + 1) * sizeof(*seeds));
	if (!s.data || !n || fread(s.data, 1, s.size, f) != s.size)
		abort();
	fclose(f);
	seeds             = n;
	seeds[nr_seeds++] = s;
}

/* The inputs the arguments name: files, and the files of folders. */
static void load_seeds(int argc, char **argv)
{
	char sub[4096];
	struct dirent *e;
	DIR *d;
	int i;

	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		d = opendir(argv[i]);
		if (!d) {
			add_seed(argv[i]);
			continue;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", argv[i], e->d_name);
			add_seed(sub);
		}
		closedir(d);
	}
	if (nr_seeds)
		qsort(seeds, nr_seeds, sizeof(*seeds), seed_cmp);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	harness_err = dup(2);
	load_seeds(*argc, *argv);
	start(0);
	start(1);
	return 0;
}

/*
 * A socket connected to daemon (i). On a loaded host a loopback connect()
 * can wait on the daemon's backlog, and libFuzzer's SIGALRM, once a
 * second and without SA_RESTART, then interrupts it (EINTR); the local
 * ports can all sit in TIME_WAIT for a moment (EADDRNOTAVAIL). Each try
 * takes a new socket; after 5 s of failures the harness gives up and
 * says why where libFuzzer's log shows it.
 */
static int daemon_connect(unsigned int i)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port   = htons((uint16_t)port[i])};
	int fd, err = 0, tries;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (tries = 0; tries < 500; tries++) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 &&
		    !connect(fd, (const struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		err = errno;
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	dprintf(harness_err,
		"fuzz_serve_http: connecting to daemon %u (port %u): %s\n", i,
		port[i], strerror(err));
	abort(); /* the harness's fault, or a daemon that stopped listening */
}

/* Send (req) to daemon (i); check the answer's status line. */
static void request(unsigned int i, const uint8_t *req, size_t len)
{
	static const int ok[] = {200, 400, 401, 403, 404, 405, 413,
				 414, 429, 431, 500, 503, 505};
	struct timeval tmo    = {.tv_sec = 10};
	char buf[4096];
	size_t got = 0, k;
	int fd = daemon_connect(i), code = 0;
	ssize_t n = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	/* A reset mid-write is an answer too (a refused body, say). */
	if (len && send(fd, req, len, MSG_NOSIGNAL) < 0) {
		close(fd);
		daemon_idle(i);
		return;
	}
	shutdown(fd, SHUT_WR);
	while (got < sizeof(buf) - 1 &&
	       (n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0)
		got += (size_t)n;
	if (n < 0 && got == 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		abort(); /* no answer and no close in 10 s: a hang */
	close(fd);
	daemon_idle(i);
	buf[got] = '\0';
	if (!got)
		return; /* closed without an answer (garbage) */
	if (sscanf(buf, "HTTP/1.%*1[01] %3d", &code) != 1)
		abort();
	for (k = 0; k < sizeof(ok) / sizeof(ok[0]); k++) {
		if (code == ok[k])
			return;
	}
	abort();
}

/* om_escape's output: valid UTF-8, quotes, backslashes, newlines escaped. */
static void check_escape(const char *s)
{
	struct om_buf b = {0};
	size_t i;

	om_escape(&b, s);
	if (b.err) {
		om_buf_free(&b);
		return;
	}
	if (b.len && vmm_ctl_utf8_check(b.s, b.len) != b.len)
		abort();
	for (i = 0; i < b.len; i++) {
		if (b.s[i] == '\n' || b.s[i] == '"')
			abort();
		if (b.s[i] == '\\' &&
		    (++i == b.len || !strchr("\\\"n", b.s[i])))
			abort();
	}
	om_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum om_format f;
	char *s;

	if (!size)
		return 0;
	if (to_daemon(data, size))
		request(data[0] & 1, data + 1, size - 1);
	s = strndup((const char *)data + 1, size - 1);
	if (!s)
		return 0;
	f = om_negotiate(s);
	if (f != OM_TEXT_004 && f != OM_OPENMETRICS_1)
		abort();
	check_escape(s);
	free(s);
	return 0;
}
