// SPDX-License-Identifier: MIT
/*
 * serve_main.c: `vpmu serve`: options, the collector thread, the HTTP
 * daemon, and a clean shutdown on SIGTERM or SIGINT (the profile being
 * taken is answered 503, every session closed, the VMs untouched).
 */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vpmu_common.h>
#include <vpmu_file.h>

#include "cli_parse.h"
#include "serve_priv.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9464"

/* What the command line gives (the parser's ctx), checked into opts. */
struct serve_args {
	const char *listen, *events, *cert, *key, *ca, *symfs, *token;
	double interval;
	uint64_t max_profile;
	bool no_auth;
};

static const struct cli_opt serve_opts[] = {
	CLI_STR(0, "listen", "ADDR:PORT", struct serve_args, listen,
		"where to serve (default " SERVE_DEFAULT_LISTEN "; port 0 "
		"picks one,\nlogged); not loopback needs TLS"),
	CLI_STR('e', "event", "EVENTS", struct serve_args, events,
		"events to count on every vCPU (default\n" SERVE_DEFAULT_EVENTS
		")"),
	CLI_NUM('I', "interval", "SECONDS", struct serve_args, interval, 0,
		"read the VMs every SECONDS (default 1, 0.1 to 3600)"),
	CLI_UINT(0, "max-profile-seconds", "N", struct serve_args, max_profile,
		 1, "longest /debug/pprof/profile (default 60)"),
	CLI_STR(0, "tls-cert", "PEM", struct serve_args, cert,
		"serve HTTPS with this certificate chain"),
	CLI_STR(0, "tls-key", "PEM", struct serve_args, key,
		"and this private key"),
	CLI_STR(0, "tls-client-ca", "PEM", struct serve_args, ca,
		"require client certificates signed by this CA"),
	CLI_STR(0, "auth-token-file", "FILE", struct serve_args, token,
		"every request must carry 'Authorization: Bearer\n"
		"TOKEN', TOKEN the line of FILE (mode 0600)"),
	CLI_FLAG(0, "no-auth", struct serve_args, no_auth,
		 "serve anyone who can connect (without a token\nor "
		 "client certificates every local user can)"),
	CLI_STR(0, "symfs", "DIR", struct serve_args, symfs,
		"profiles read a Linux guest's programs under DIR\n"
		"(its root file system's tree on the host)"),
	{0},
};

static const struct cli_cmd serve_cmd = {
	.name     = "serve",
	.summary  = "HTTP daemon: /metrics and pprof profiles of every VM",
	.opts     = serve_opts,
	.operands = CLI_OPERANDS_NONE,
	.help = "  Follow every VM of the runtime directory as VMs start and "
		"stop (as\n"
		"  root: every user's), with a host context per vCPU counting "
		"EVENTS,\n"
		"  and serve over HTTP:\n"
		"    /metrics              Prometheus text 0.0.4 or "
		"OpenMetrics "
		"(Accept)\n"
		"    /debug/pprof/profile  ?seconds=N&vm=NAME&hz=HZ: gzipped "
		"pprof CPU\n"
		"                          profile of the guests (go tool "
		"pprof)\n"
		"    /debug/vpmu/vms       the VMs as JSON\n"
		"  Every request must carry the bearer token of "
		"--auth-token-file\n"
		"  (or a client certificate of --tls-client-ca) unless "
		"--no-auth.\n"
		"  Runs in the foreground until SIGTERM or Ctrl-C, logging to "
		"stderr.\n"
		"  Its host contexts take one of the four operator contexts "
		"of each\n"
		"  vCPU: stat, record and top run beside it.\n",
};

static int parse(int argc, char **argv, struct serve_opts *o)
{
	struct serve_args a = {.listen      = SERVE_DEFAULT_LISTEN,
			       .events      = SERVE_DEFAULT_EVENTS,
			       .interval    = 1,
			       .max_profile = SERVE_PROFILE_MAX_S};
	struct cli_rest rest;
	int ret;

	ret = cli_parse(&serve_cmd, &a, argc, argv, &rest);
	if (ret)
		return ret;
	cli_rest_free(&rest);
	if (a.interval < 0.1 || a.interval > 3600)
		return cli_error(&serve_cmd,
				 "--interval: seconds from 0.1 to 3600");
	if (a.max_profile > 3600)
		return cli_error(&serve_cmd,
				 "--max-profile-seconds: 1 to 3600");

	*o = (struct serve_opts){
		.listen          = a.listen,
		.events          = a.events,
		.default_events  = !strcmp(a.events, SERVE_DEFAULT_EVENTS),
		.interval_ns     = (uint64_t)(a.interval * 1e9),
		.tls_cert        = a.cert,
		.tls_key         = a.key,
		.tls_client_ca   = a.ca,
		.symfs           = a.symfs,
		.max_profile_s   = (unsigned int)a.max_profile,
		.auth_token_file = a.token,
		.no_auth         = a.no_auth,
	};
	return 0;
}

/*
 * The TLS files are regular files (vpmu_file.h): a FIFO named there would
 * block the daemon before it answers a signal. Checked with the other
 * options, before the daemon starts.
 */
static int check_tls_files(const struct serve_opts *o, char *err, size_t errlen)
{
	const char *files[] = {o->tls_cert, o->tls_key, o->tls_client_ca};
	unsigned int i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (!files[i])
			continue;
		fd = vpmu_file_open(files[i], O_RDONLY, 0, NULL, err, errlen);
		if (fd < 0)
			return fd;
		close(fd);
	}
	return 0;
}

/* The events must parse before we listen: one clear message if not. */
static int check_events(const struct serve_opts *o)
{
	struct ops_session tmp = {.prog = "vpmu serve"};

	return ops_parse_events(&tmp, o->events);
}

static void shutdown_all(struct serve *sv, struct MHD_Daemon *d,
			 pthread_t collector)
{
	atomic_store(&sv->stop, true);
	pthread_mutex_lock(&sv->lock);
	pthread_cond_broadcast(&sv->cond);
	pthread_mutex_unlock(&sv->lock);
	serve_wake(sv);
	serve_http_stop(sv, d);
	pthread_join(collector, NULL);
}

static void serve_free(struct serve *sv)
{
	unsigned int i;

	serve_collect_free(sv);
	for (i = 0; i < 2; i++)
		free(sv->snap[i]);
	free(sv->vms_json);
	for (i = 0; i < 3; i++)
		free(sv->pem[i]);
	free(sv->token);
	pthread_cond_destroy(&sv->cond);
	pthread_mutex_destroy(&sv->lock);
}

int serve_run(int argc, char **argv)
{
	struct serve sv      = {.inotify_fd = -1, .wake_fd = -1};
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *di;
	struct sockaddr_storage sa;
	sigset_t set, old;
	pthread_t collector;
	char err[512];
	int ret, sig;

	ret = parse(argc, argv, &sv.o);
	if (!ret)
		ret = check_events(&sv.o);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	/*
	 * Refuse a bad address, clear text off loopback or no authentication
	 * before anything.
	 */
	if (serve_parse_listen(sv.o.listen, &sa, err, sizeof(err)) ||
	    serve_check_tls(&sv.o, &sa, err, sizeof(err)) ||
	    serve_check_auth(&sv.o, err, sizeof(err)) ||
	    check_tls_files(&sv.o, err, sizeof(err)) ||
	    (sv.o.auth_token_file &&
	     serve_load_token(sv.o.auth_token_file, &sv.token, err,
			      sizeof(err)))) {
		fprintf(stderr, "vpmu serve: %s\n", err);
		return 1;
	}
	pthread_mutex_init(&sv.lock, NULL);
	pthread_cond_init(&sv.cond, NULL);
	ret = serve_collect_init(&sv);
	if (ret) {
		fprintf(stderr, "vpmu serve: runtime directory %s: %s\n",
			sv.dir, vmm_runtime_strerror(ret));
		serve_free(&sv);
		return 1;
	}
	/* Every thread blocks these; the main thread waits for them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (pthread_create(&collector, NULL, serve_collect_thread, &sv)) {
		fprintf(stderr, "vpmu serve: cannot start the collector\n");
		serve_free(&sv);
		return 1;
	}
	ret = serve_http_start(&sv, &d, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vpmu serve: %s\n", err);
		shutdown_all(&sv, NULL, collector);
		serve_free(&sv);
		return 1;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr,
		"vpmu serve: listening on %s (port %u), %s, %s; runtime "
		"directory %s\n",
		sv.o.listen, di ? (unsigned int)di->port : 0,
		sv.o.tls_cert ? "TLS" : "plain HTTP, loopback only",
		sv.token             ? "bearer token required"
		: sv.o.tls_client_ca ? "client certificates required"
				     : "no authentication (--no-auth)",
		sv.dir);
	sigdelset(&set, SIGPIPE);
	while (sigwait(&set, &sig) == 0 && sig != SIGINT && sig != SIGTERM)
		;
	fprintf(stderr, "vpmu serve: %s: shutting down\n",
		sig == SIGINT ? "SIGINT" : "SIGTERM");
	shutdown_all(&sv, d, collector);
	serve_free(&sv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fprintf(stderr, "vpmu serve: stopped\n");
	return 0;
}
