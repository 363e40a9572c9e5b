/* SPDX-License-Identifier: MIT */
/*
 * commands.h: host commands of the `vpmu` program other than `run`, each in
 * its own cmd_*.c file. main.c dispatches to them; they print their own
 * output and messages and return the exit status (they never exit).
 */
#ifndef VMM_COMMANDS_H
#define VMM_COMMANDS_H

/*
 * `vpmu events [--json]`: list every event of the catalogue and every KVM
 * statistic this host offers, with its code, backend, availability and
 * the reason when unavailable. (argc, argv) are the arguments after
 * "events". Returns 0, or 1 on bad usage or output failure (one message on
 * stderr).
 */
int vmm_cmd_events(int argc, char **argv);

#endif /* VMM_COMMANDS_H */
