/* SPDX-License-Identifier: MIT */
/*
 * cli_parse.h: the one command-line parser of every `vpmu` subcommand.
 *
 * A command is described by a table (struct cli_cmd): its name, synopsis,
 * description and a NULL-terminated array of option rows (struct cli_opt).
 * cli_parse() runs getopt_long over the rows (perf-style short and long
 * names, "-xVAL", "--opt=VAL", unique prefixes of long names), stores each
 * value where its row says, answers -h/--help with the usage generated from
 * the table, and reports every error as one line on stderr:
 *     vpmu stat: option '-e' needs a value (try 'vpmu stat --help')
 *
 * Adding a flag is adding a row. For example, in cmd_report.c:
 *
 *     struct report_opts { bool stdio; const char *sort; ... };
 *     static const struct cli_opt report_opts[] = {
 *         CLI_FLAG('\0', "stdio", struct report_opts, stdio,
 *                  "plain text output (the only one)"),
 *         CLI_STR('s', "sort", "KEYS", struct report_opts, sort,
 *                 "sort by KEYS (sym, srcline)"),
 *         CLI_FN('g', "call-graph", NULL, set_callgraph,
 *                "print call chains"),
 *         {0},
 *     };
 *     static const struct cli_cmd report_cmd = {
 *         .name = "report", .args = "[FILE]", .summary = "...",
 *         .help = "...", .opts = report_opts, .operands = CLI_OPERANDS_ANY,
 *     };
 *     ...
 *     struct cli_rest rest;
 *     int r = cli_parse(&report_cmd, &opts, argc, argv, &rest);
 *     if (r) return r == CLI_HELP ? 0 : 1;
 *     ... rest.argv[0 .. rest.argc) are the operands ...
 *     cli_rest_free(&rest);
 *
 * A new subcommand (e.g. `vpmu serve`) is one row in ops/vpmu_main.c's
 * command table (name, summary, function), the function declared in its
 * component's header (ops_cmd.h, serve.h); `vpmu help serve` and
 * `vpmu serve --help` then work.
 */
#ifndef OPS_CLI_PARSE_H
#define OPS_CLI_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct cli_cmd;

/* What a row does with its option. */
enum cli_type {
	CLI_T_FLAG, /* bool at (off) set to true; no value */
	CLI_T_STR,  /* const char * at (off) = the value (points into argv) */
	CLI_T_UINT, /* uint64_t at (off): a decimal integer >= (min) */
	CLI_T_NUM,  /* double at (off): a number >= 0 (> 0 if min is 1) */
	CLI_T_FN,   /* fn(cmd, ctx, value): value NULL for a row without arg */
};

struct cli_opt {
	char key;         /* short option letter, 0 for none */
	const char *name; /* long name without "--", NULL for none */
	enum cli_type type;
	const char *arg; /* value's name in the usage (NULL: no value) */
	size_t off;      /* offset of the field in (ctx) */
	uint64_t min;    /* CLI_T_UINT / CLI_T_NUM lower bound */
	/* CLI_T_FN: 0, or -EINVAL after one message (cli_error(cmd...)). */
	int (*fn)(const struct cli_cmd *cmd, void *ctx, const char *value);
	const char *help; /* one sentence; '\n' continues on a new line */
};

/* Row builders: (T) is the type (ctx) points to, (f) its field. */
#define CLI_FLAG(k, n, T, f, h)                                                \
	{                                                                      \
		(k), (n), CLI_T_FLAG, NULL, offsetof(T, f), 0, NULL, (h)       \
	}
#define CLI_STR(k, n, a, T, f, h)                                              \
	{                                                                      \
		(k), (n), CLI_T_STR, (a), offsetof(T, f), 0, NULL, (h)         \
	}
#define CLI_UINT(k, n, a, T, f, lo, h)                                         \
	{                                                                      \
		(k), (n), CLI_T_UINT, (a), offsetof(T, f), (lo), NULL, (h)     \
	}
#define CLI_NUM(k, n, a, T, f, lo, h)                                          \
	{                                                                      \
		(k), (n), CLI_T_NUM, (a), offsetof(T, f), (lo), NULL, (h)      \
	}
#define CLI_FN(k, n, a, fn_, h)                                                \
	{                                                                      \
		(k), (n), CLI_T_FN, (a), 0, 0, (fn_), (h)                      \
	}

/* How many operands (non-option arguments) a command takes. */
#define CLI_OPERANDS_NONE 0
#define CLI_OPERANDS_ANY  (-1)

struct cli_cmd {
	const char *name;    /* "stat": messages say "vpmu stat: ..." */
	const char *args;    /* synopsis after the options, e.g. "[FILE]" */
	const char *summary; /* one line for `vpmu help` */
	const char *help;    /* paragraphs printed after the options */
	const struct cli_opt *opts; /* ends with a {0} row; NULL for none */
	int operands;               /* maximum number, or CLI_OPERANDS_ANY */
	/*
	 * true: options stop at the first operand, as in `perf stat CMD -x`
	 * (the command's own options stay its own); false: options and
	 * operands mix (`vpmu report FILE --folded`).
	 */
	bool stop_at_operand;
};

/* Operands after the options; (dashdash) if "--" introduced them. */
struct cli_rest {
	char **argv; /* NULL-terminated, pointers into the caller's argv */
	int argc;
	bool dashdash;
};

#define CLI_HELP 1 /* cli_parse(): --help was answered */

/*
 * Parse (argc, argv), the arguments after the command name, into (ctx)
 * by (cmd)'s rows. Returns 0 with the operands in (*rest) (free them with
 * cli_rest_free()), CLI_HELP after printing the usage on stdout, or
 * -EINVAL/-ENOMEM after one message on stderr. (argv) is not modified.
 */
int cli_parse(const struct cli_cmd *cmd, void *ctx, int argc, char **argv,
	      struct cli_rest *rest);

void cli_rest_free(struct cli_rest *rest);

/* The usage of (cmd), generated from its table, on (out). */
void cli_usage(const struct cli_cmd *cmd, FILE *out);

/*
 * One error line "vpmu CMD: MESSAGE (try 'vpmu CMD --help')" on stderr;
 * returns -EINVAL. For handlers and post-parse checks.
 */
__attribute__((format(printf, 2, 3))) int cli_error(const struct cli_cmd *cmd,
						    const char *fmt, ...);

/*
 * Parse a number for option (opt) with the table's rules; for handlers
 * that compute from several values. 0 or -EINVAL (message printed).
 */
int cli_parse_uint(const struct cli_cmd *cmd, const char *opt, const char *text,
		   uint64_t min, uint64_t *out);
int cli_parse_num(const struct cli_cmd *cmd, const char *opt, const char *text,
		  double min, double *out);

#endif /* OPS_CLI_PARSE_H */
