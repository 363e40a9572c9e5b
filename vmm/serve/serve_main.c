// SPDX-License-Identifier: MIT
/*
 * serve_main.c: `vpmu serve`: options, the collector thread, the HTTP
 * daemon, and a clean shutdown on SIGTERM or SIGINT (the profile being
 * taken is answered 503, every session closed, the VMs untouched).
 */
#include "vpmu_serve.h"

#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_priv.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9464"

static const char serve_usage[] =
	"usage: vpmu serve [--listen ADDR:PORT] [-e EVENT[,EVENT...]]\n"
	"                  [--interval SECONDS] [--max-profile-seconds N]\n"
	"                  [--tls-cert PEM --tls-key PEM [--tls-client-ca "
	"PEM]]\n"
	"\n"
	"  Follow every VM of the runtime directory (as they start and stop)\n"
	"  with a host context per vCPU counting EVENTs "
	"(default " SERVE_DEFAULT_EVENTS ")\n"
	"  and serve, over HTTP on ADDR:PORT (default " SERVE_DEFAULT_LISTEN
	"):\n"
	"    /metrics              Prometheus text or OpenMetrics (by Accept)\n"
	"    /debug/pprof/profile  ?seconds=N&vm=NAME&hz=HZ: a pprof CPU\n"
	"                          profile of the guests (gzipped protobuf)\n"
	"    /debug/vpmu/vms       the VMs as JSON\n"
	"  Counts are read every SECONDS (default 1). Runs in the foreground\n"
	"  until SIGTERM or Ctrl-C; logs to stderr. A non-loopback ADDR needs\n"
	"  TLS. While it runs, its host contexts occupy the vCPUs: other\n"
	"  operator commands get 'busy' on them.\n";

enum { OPT_LISTEN = 1, OPT_INTERVAL, OPT_CERT, OPT_KEY, OPT_CA, OPT_MAXP };

static const struct option long_opts[] = {
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"events", required_argument, NULL, 'e'},
	{"interval", required_argument, NULL, OPT_INTERVAL},
	{"tls-cert", required_argument, NULL, OPT_CERT},
	{"tls-key", required_argument, NULL, OPT_KEY},
	{"tls-client-ca", required_argument, NULL, OPT_CA},
	{"max-profile-seconds", required_argument, NULL, OPT_MAXP},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static int parse(int argc, char **argv, struct serve_opts *o)
{
	char *end;
	double d;
	long n;
	int c;

	*o     = (struct serve_opts){.listen         = SERVE_DEFAULT_LISTEN,
				     .events         = SERVE_DEFAULT_EVENTS,
				     .default_events = true,
				     .interval_ns    = 1000000000ULL,
				     .max_profile_s  = SERVE_PROFILE_MAX_S};
	optind = 1;
	opterr = 0;
	/* getopt wants the program name first: argv[-1] is "serve". */
	while ((c = getopt_long(argc + 1, argv - 1, "+e:h", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case OPT_LISTEN:
			o->listen = optarg;
			break;
		case 'e':
			o->events         = optarg;
			o->default_events = false;
			break;
		case OPT_INTERVAL:
			d = strtod(optarg, &end);
			if (*end || !(d >= 0.1 && d <= 3600)) {
				fprintf(stderr, "vpmu serve: --interval: "
						"seconds from 0.1 to 3600\n");
				return -EINVAL;
			}
			o->interval_ns = (uint64_t)(d * 1e9);
			break;
		case OPT_CERT:
			o->tls_cert = optarg;
			break;
		case OPT_KEY:
			o->tls_key = optarg;
			break;
		case OPT_CA:
			o->tls_client_ca = optarg;
			break;
		case OPT_MAXP:
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 3600) {
				fprintf(stderr, "vpmu serve: "
						"--max-profile-seconds: 1 to "
						"3600\n");
				return -EINVAL;
			}
			o->max_profile_s = (unsigned int)n;
			break;
		case 'h':
			fputs(serve_usage, stdout);
			return 1;
		default:
			fprintf(stderr,
				"vpmu serve: bad or incomplete option '%s' "
				"(try 'vpmu serve --help')\n",
				argv[optind - 2 < argc ? optind - 2
						       : argc - 1]);
			return -EINVAL;
		}
	}
	if (optind - 1 < argc) {
		fprintf(stderr, "vpmu serve: unexpected argument '%s'\n",
			argv[optind - 1]);
		return -EINVAL;
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
	if (d)
		MHD_stop_daemon(d); /* joins the connection threads */
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
	pthread_cond_destroy(&sv->cond);
	pthread_mutex_destroy(&sv->lock);
}

int vmm_cmd_serve(int argc, char **argv)
{
	struct serve sv      = {.inotify_fd = -1, .wake_fd = -1};
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *di;
	sigset_t set, old;
	pthread_t collector;
	char err[512];
	int ret, sig;

	ret = parse(argc, argv, &sv.o);
	if (!ret)
		ret = check_events(&sv.o);
	if (ret)
		return ret > 0 ? 0 : 1;
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
		"vpmu serve: listening on %s (port %u), %s; runtime "
		"directory %s\n",
		sv.o.listen, di ? (unsigned int)di->port : 0,
		sv.o.tls_cert ? "TLS" : "plain HTTP, loopback only", sv.dir);
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
