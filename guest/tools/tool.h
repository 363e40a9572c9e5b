/* SPDX-License-Identifier: MIT */
/*
 * tool.h: what the perfmon2 tools (pfinfo, pfstat, pfrecord, pffast) share,
 * whichever guest they run in. Each tool is one source built twice:
 *
 *   - bare: a ring-3 program of the minimal guest kernel (guest/kernel),
 *     linked with libpvpmu's freestanding build; it has no libc, no
 *     processes and one input, the VM name (tool_bare.c, *_main.c);
 *   - Linux: a program over pvpmu.ko, linked with libpvpmu for Linux user
 *     space, glibc or musl (tool_linux.c).
 *
 * What differs by platform is behind the functions of "Platform" below;
 * the rest (formatting, options, the perfmon2 calls, the reports) is
 * written once. A tool's entry point is NAME_main(argc, argv): main() on
 * Linux, called with an argv made from the VM name on bare.
 */
#ifndef PVPMU_TOOL_H
#define PVPMU_TOOL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <pvpmu/pvpmu.h>

#define TOOL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Platform (tool_bare.c / tool_linux.c)
 */

/*
 * Output: the report (tool_out: stdout; the console on bare) or a
 * diagnostic (tool_err_out: stderr; the console too on bare). The
 * printf-style wrappers are in tool.c.
 */
enum tool_stream { tool_out, tool_err_out };
int tool_vprintf(enum tool_stream to, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
int tool_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * Monotonic time in ns (bare: the TSC at the boot info's frequency);
 * tool_sleep_ns() lets (ns) pass (bare has nothing to yield to: it spins).
 * tool_cpu_khz(): the CPU's frequency (bare: the TSC's; Linux: "cpu MHz"
 * of /proc/cpuinfo), 0 if unknown.
 */
uint64_t tool_now_ns(void);
void tool_sleep_ns(uint64_t ns);
uint64_t tool_cpu_khz(void);

/*
 * What a tool monitors. With a PROGRAM (argv), the platform starts it
 * stopped (tool_target_spawn: Linux forks a child that waits for its go
 * byte; bare has no programs and refuses), the tool loads its context on
 * (load_pid), starts monitoring and lets it run (tool_target_go), then
 * waits for its end (tool_target_wait). Without one the target is the
 * caller itself (tool_target_self): on bare the vCPU it runs on, with a
 * vCPU-wide context (its ring-3 workloads are what is measured); on Linux
 * this thread, with a per-thread context.
 */
struct tool_target {
	char **argv;          /* PROGRAM and its arguments, or NULL */
	pvpmu_u32 ctx_flags;  /* for pfarg_ctx_t.ctx_flags */
	pvpmu_u32 load_pid;   /* for pfarg_load_t.load_pid */
	int go;               /* Linux: the go pipe's write end, else -1 */
	int status;           /* PROGRAM's exit status once waited for */
	unsigned int vcpu;    /* bare: the vCPU the tool runs on */
	int has_builtin_work; /* bare: the tool's own ring-3 workload exists */
};

void tool_target_self(struct tool_target *t);
/*
 * Start PROGRAM (t->argv) stopped; the child closes (close_fd) if >= 0.
 * Returns 0, or 1 after a message.
 */
int tool_target_spawn(const char *tool, struct tool_target *t, int close_fd);
/* Let PROGRAM run (once its context is started). 0, or 1 after a message. */
int tool_target_go(const char *tool, struct tool_target *t);
/*
 * Wait for PROGRAM to end (block) or see whether it has (!block): returns
 * 1 when it has (t->status set), 0 when it still runs, -1 after a message.
 */
int tool_target_wait(const char *tool, struct tool_target *t, int block);
/* Kill a spawned PROGRAM that will not be started. */
void tool_target_kill(struct tool_target *t);
/* The tool's exit status for PROGRAM's (t->status): PROGRAM's own. */
int tool_target_exit_status(const struct tool_target *t);

/*
 * The shared page that answers reads without an exit (pvpmu_read_fast):
 * bare attaches a page of its own, Linux uses the one pvpmu.ko maps
 * (NULL). tool_shared_publish() makes the VMM publish the page now (bare:
 * one more exit; Linux: the module's ioctls already exit).
 */
int tool_shared_open(const struct pvpmu_shared_page **page);
int tool_shared_publish(void);
void tool_shared_close(void);

/*
 * Overflow notifications: tool_notify_open() asks for them (bare: the
 * kernel's notification vector; Linux: the context's fd, nothing to do),
 * tool_notify_count() is a count that changes when one arrived (bare: the
 * vector's interrupts; Linux: always 0, the tool blocks in
 * pfm_read_msg()).
 */
int tool_notify_open(void);
uint64_t tool_notify_count(void);
void tool_notify_close(void);
extern const char tool_notify_how[]; /* "vector", "pfm_read_msg" */

/*
 * The value of PMD (pmd) of context (fd) read without an exit, and whether
 * monitoring is active: 1 when read, 0 when the platform cannot (Linux).
 */
int tool_pmd_live(int fd, unsigned int pmd, uint64_t *value);

/*
 * pfrecord -o FILE: one line per sample. Linux writes a file; bare has no
 * files and refuses (-PVPMU_ENOSYS).
 */
int tool_raw_open(const char *path);
void tool_raw_sample(const struct pfm_default_smpl_entry *e);
int tool_raw_close(void);

/*
 * Symbols of what was sampled: bare resolves against the image's own table
 * (generated from nm at build time); Linux against the .symtab of
 * PROGRAM's ELF file (tool_syms_load). tool_syms_lookup() gives the
 * function holding (ip), or NULL.
 */
int tool_syms_load(const struct tool_target *t, const char **file);
const struct pvpmu_sym *tool_syms_lookup(uint64_t ip);
void tool_syms_unload(void);

/*
 * Platform facts for pfinfo: bare prints what CPUID showed in ring 0 and
 * ring 3; Linux has nothing more than PFM_GET_CONFIG. 0 or nonzero.
 */
int tool_show_platform(const char *tool);

/* The driver's own hypercalls in the counts (Linux: sched-outs), or -1. */
int64_t tool_driver_hypercalls(int fd);

/*
 * A workload the tools can measure without a PROGRAM (bare: ring-3
 * hypercalls and spins; Linux has none, see tool_target.has_builtin_work).
 * tool_mixed(rounds, spin, calls) runs (rounds) times tool_spin(spin),
 * then (calls) PVPMU_HC_NOP hypercalls: exactly rounds * calls hypercalls.
 */
uint64_t tool_mixed(unsigned int rounds, uint64_t spin, unsigned int calls);

/*
 * Portable (tool.c)
 */

/* The report, a diagnostic, a string: printf-style. */
int tool_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tool_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tool_snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Where workloads leave their result, so that it is not optimized away. */
extern volatile uint64_t tool_sink;

/*
 * tool_spin(n) runs n rounds of a dependent xorshift chain (~1 ns each
 * natively) and returns the chain value; tool_spin_ns() spins for (ns).
 * The three functions of the profile workload have weights 6 : 3 : 1.
 */
uint64_t tool_spin(uint64_t n);
void tool_spin_ns(uint64_t ns);
uint64_t work_hot(uint64_t n);
uint64_t work_warm(uint64_t n);
uint64_t work_cold(uint64_t n);

/*
 * Formatting into (buf) of (size) bytes; each returns (buf).
 * tool_u64: 1,234,567. tool_fix2: a / b with two decimals ("12.34"),
 * "-" when b is 0. tool_ns: a duration, "123.456 ms".
 */
char *tool_u64(char *buf, size_t size, uint64_t v);
char *tool_fix2(char *buf, size_t size, uint64_t a, uint64_t b);
char *tool_ns(char *buf, size_t size, uint64_t ns);

/* Print "tool: what: <status> (ret)" as a diagnostic; returns (ret). */
int tool_err(const char *tool, const char *what, int ret);

/* Is (d) a family event (hv_exit_reason...)? */
int tool_is_family(const struct pvpmu_event_desc *d);

/* Do strings (a) and (b) hold the same characters? */
int tool_streq(const char *a, const char *b);

/*
 * Options, getopt-style without libc: (spec) lists the option letters, a
 * ':' after one that takes an argument. Parsing stops at "--" (skipped),
 * at the first non-option (PROGRAM) and at the end. Returns the letter,
 * '?' for an unknown option or a missing argument (after a message), or
 * -1 at the end; (o->ind) is then the index of PROGRAM in argv.
 */
struct tool_opt {
	int ind;          /* next argv index, starts at 1 */
	const char *arg;  /* the option's argument */
	const char *next; /* rest of a group of letters (-ve) */
};

int tool_getopt(struct tool_opt *o, const char *tool, int argc,
		char *const *argv, const char *spec);

/*
 * The target of a tool whose options end at argv[ind]: PROGRAM if one
 * follows, else the tool itself where it has a workload of its own.
 * Returns 0, or 1 after "no PROGRAM given".
 */
int tool_target_args(const char *tool, struct tool_target *t, int argc,
		     char **argv, int ind);

/* A positive number (decimal, 0x hex): 0, or -1 if (s) is not one. */
int tool_parse_u64(const char *s, uint64_t *v);

/*
 * The help text (usage) to the report stream if the user (asked) for it
 * (-h), else as a diagnostic (a usage error). Returns 0 or 1.
 */
int tool_usage(const char *usage, int asked);

/*
 * Tools: each prints its report and returns its exit status (0 when
 * everything it checked held).
 */
int pfinfo_main(int argc, char **argv);
int pfstat_main(int argc, char **argv);
int pfrecord_main(int argc, char **argv);
int pffast_main(int argc, char **argv);

#endif /* PVPMU_TOOL_H */
