/* SPDX-License-Identifier: MIT */
/*
 * vpmu_serve.h: `vpmu serve`, the fleet-monitoring daemon, and
 * the pprof encoding it shares with `vpmu report --pprof`.
 *
 * vpmu serve watches the runtime directory, keeps a counting session on
 * every vCPU of every VM found there and serves, over HTTP (libmicrohttpd):
 *   /metrics               Prometheus text 0.0.4 or OpenMetrics 1.0.0
 *   /debug/pprof/profile   a CPU profile of the guests, gzipped pprof
 *   /debug/vpmu/vms        the VMs as JSON
 * Collection runs on a thread of its own; HTTP answers from snapshots.
 */
#ifndef VPMU_SERVE_H
#define VPMU_SERVE_H

/*
 * `vpmu serve [--listen ADDR:PORT] [-e EVENTS] [--interval SECONDS] ...`:
 * runs in the foreground until SIGTERM or SIGINT (logs on stderr).
 * (argc, argv) are the arguments after "serve". Returns 0 after a clean
 * shutdown, 1 with one message on bad usage or when it cannot listen.
 */
int vmm_cmd_serve(int argc, char **argv);

/*
 * `vpmu report --pprof OUT FILE`: convert the record file (in) to a
 * gzipped pprof profile written to (out) (atomically: OUT.tmp, renamed).
 * Returns 0, or 1 with one message on stderr.
 */
int vmm_report_pprof(const char *in, const char *out);

#endif /* VPMU_SERVE_H */
