/* SPDX-License-Identifier: MIT */
/*
 * ops_cmd.h: the operator commands of the `vpmu` program (all but `run`
 * and `serve`), each in its own cmd_*.c file, over the client library
 * (ops/client) and the pprof encoder (ops/pprof). They print their own
 * output and messages and return the exit status (they never exit).
 * Each parses its arguments with the shared table-driven parser of
 * cli_parse.h (one row per flag; see there how to add a flag or a
 * command); the command table of ops/vpmu_main.c dispatches, and answers
 * `vpmu help CMD` by calling the command with "--help".
 */
#ifndef OPS_CMD_H
#define OPS_CMD_H

/*
 * `vpmu events [--json]`: list every event of the catalogue and every KVM
 * statistic this host offers, with its code, backend, availability and
 * the reason when unavailable. (argc, argv) are the arguments after
 * "events". Returns 0, or 1 on bad usage or output failure (one message on
 * stderr).
 */
int ops_cmd_events(int argc, char **argv);

/*
 * Host operator commands, each in cmd_<name>.c; (argc, argv)
 * are the arguments after the command name. `--help` describes the
 * options. They return 0, or 1 with one message on stderr.
 *   list    the running VMs (vpmu and libvirt)
 *   stat    count events on every vCPU of the chosen VMs
 *   record  sample into a file (written atomically)
 *   report  flat profile / folded stacks of a record file
 *   top     live profile, refreshed every second
 */
int ops_cmd_list(int argc, char **argv);
int ops_cmd_stat(int argc, char **argv);
int ops_cmd_record(int argc, char **argv);
int ops_cmd_report(int argc, char **argv);
int ops_cmd_top(int argc, char **argv);
/* snapshot a running VM into a file (cmd_snapshot.c). */
int ops_cmd_snapshot(int argc, char **argv);

#endif /* OPS_CMD_H */
