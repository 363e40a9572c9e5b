/* SPDX-License-Identifier: MIT */
/*
 * serve.h: `vpmu serve`, the fleet-monitoring daemon.
 *
 * vpmu serve watches the runtime directory, keeps a counting session on
 * every vCPU of every VM found there and serves, over HTTP (libmicrohttpd):
 *   /metrics               Prometheus text 0.0.4 or OpenMetrics 1.0.0
 *   /debug/pprof/profile   a CPU profile of the guests, gzipped pprof
 *   /debug/vpmu/vms        the VMs as JSON
 * Collection runs on a thread of its own; HTTP answers from snapshots.
 * Profiles are encoded by ops/pprof, which `vpmu report --pprof` shares.
 */
#ifndef OPS_SERVE_H
#define OPS_SERVE_H

/*
 * `vpmu serve [--listen ADDR:PORT] [-e EVENTS] [--interval SECONDS] ...`:
 * runs in the foreground until SIGTERM or SIGINT (logs on stderr).
 * (argc, argv) are the arguments after "serve". Returns 0 after a clean
 * shutdown, 1 with one message on bad usage or when it cannot listen.
 */
int serve_run(int argc, char **argv);

#endif /* OPS_SERVE_H */
