// SPDX-License-Identifier: MIT
/*
 * cli_parse.c: the table-driven parser of cli_parse.h over getopt_long.
 *
 * getopt keeps its state in globals and permutes the argv it is given, so
 * cli_parse() works on a copy of the argument vector with the program name
 * in front, resets getopt (optind = 0) and turns its messages off (opterr,
 * a leading ':'): every error is our own one line.
 */
#include "cli_parse.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "vpmu_common.h"

#define LONG_BASE 256 /* getopt_long's val for row i: LONG_BASE + i */
#define HELP_VAL  'h'
#define COLUMN    28 /* where the help text of an option starts */

int cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	const char *sp = cmd->name[0] ? " " : "";
	va_list ap;

	fprintf(stderr, "vpmu%s%s: ", sp, cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'vpmu%s%s --help')\n", sp, cmd->name);
	return -EINVAL;
}

static size_t nr_rows(const struct cli_cmd *cmd)
{
	size_t n = 0;

	while (cmd->opts && (cmd->opts[n].key || cmd->opts[n].name))
		n++;
	return n;
}

/* "-e/--event" style name of row (o) for messages. */
static void opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->key && o->name)
		snprintf(buf, len, "-%c/--%s", o->key, o->name);
	else if (o->key)
		snprintf(buf, len, "-%c", o->key);
	else
		snprintf(buf, len, "--%s", o->name);
}

int cli_parse_uint(const struct cli_cmd *cmd, const char *opt, const char *text,
		   uint64_t min, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v     = strtoull(text, &end, 10);
	if (!*text || *end || errno || text[0] == '-' || v < min) {
		if (min == 1)
			return cli_error(cmd,
					 "%s needs a positive integer, "
					 "not '%s'",
					 opt, text);
		return cli_error(cmd, "%s needs an integer >= %llu, not '%s'",
				 opt, (unsigned long long)min, text);
	}
	*out = v;
	return 0;
}

int cli_parse_num(const struct cli_cmd *cmd, const char *opt, const char *text,
		  double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v     = strtod(text, &end);
	/* min > 0 asks for a positive number (0.2 s is a fine delay). */
	if (!*text || *end || errno || !isfinite(v) || v < 0 ||
	    (min > 0 && v == 0))
		return cli_error(cmd, "%s needs a %s number, not '%s'", opt,
				 min > 0 ? "positive" : "non-negative", text);
	*out = v;
	return 0;
}

static int apply(const struct cli_cmd *cmd, const struct cli_opt *o, void *ctx,
		 const char *value)
{
	char *field = (char *)ctx + o->off;
	char label[64];

	opt_label(o, label, sizeof(label));
	switch (o->type) {
	case CLI_T_FLAG:
		*(bool *)field = true;
		return 0;
	case CLI_T_STR:
		*(const char **)field = value;
		return 0;
	case CLI_T_UINT:
		return cli_parse_uint(cmd, label, value, o->min,
				      (uint64_t *)field);
	case CLI_T_NUM:
		return cli_parse_num(cmd, label, value, (double)o->min,
				     (double *)field);
	case CLI_T_FN:
		return o->fn(cmd, ctx, value);
	}
	return -EINVAL;
}

/* getopt_long's tables for (cmd): "+:" + short letters, long rows. */
static int build_tables(const struct cli_cmd *cmd, char *shorts, size_t slen,
			struct option *longs)
{
	size_t i, n = nr_rows(cmd), s = 0, l = 0;

	if (cmd->stop_at_operand)
		shorts[s++] = '+';
	shorts[s++] = ':';
	shorts[s++] = HELP_VAL;
	for (i = 0; i < n; i++) {
		const struct cli_opt *o = &cmd->opts[i];

		if (o->key && s + 3 < slen) {
			shorts[s++] = o->key;
			if (o->arg)
				shorts[s++] = ':';
		}
		if (o->name)
			longs[l++] = (struct option){
				.name    = o->name,
				.has_arg = o->arg ? required_argument
						  : no_argument,
				.val     = LONG_BASE + (int)i,
			};
	}
	shorts[s]  = '\0';
	longs[l++] = (struct option){.name = "help", .val = HELP_VAL};
	longs[l]   = (struct option){0};
	return 0;
}

static const struct cli_opt *row_of(const struct cli_cmd *cmd, int val)
{
	size_t i, n = nr_rows(cmd);

	if (val >= LONG_BASE)
		return (size_t)(val - LONG_BASE) < n
			       ? &cmd->opts[val - LONG_BASE]
			       : NULL;
	for (i = 0; i < n; i++) {
		if (cmd->opts[i].key == val)
			return &cmd->opts[i];
	}
	return NULL;
}

/* The message for getopt's '?' or ':' (c) at (vec[optind - 1]). */
static int getopt_error(const struct cli_cmd *cmd, int c, char **vec)
{
	const struct cli_opt *o = optopt ? row_of(cmd, optopt) : NULL;
	char label[64];

	if (o)
		opt_label(o, label, sizeof(label));
	if (c == ':' && o)
		return cli_error(cmd, "option '%s' needs a value", label);
	if (c == '?' && o) /* "--flag=value" */
		return cli_error(cmd, "option '%s' takes no value", label);
	if (optopt && optopt < LONG_BASE)
		return cli_error(cmd, "unknown option '-%c'", optopt);
	return cli_error(cmd, "unknown or ambiguous option '%s'",
			 vec[optind - 1]);
}

static int check_operands(const struct cli_cmd *cmd, struct cli_rest *rest)
{
	if (cmd->operands == CLI_OPERANDS_ANY || rest->argc <= cmd->operands)
		return 0;
	return cli_error(cmd, "unexpected argument '%s'",
			 rest->argv[cmd->operands]);
}

int cli_parse(const struct cli_cmd *cmd, void *ctx, int argc, char **argv,
	      struct cli_rest *rest)
{
	size_t n = nr_rows(cmd);
	struct option *longs;
	char prog[64], *shorts;
	char **vec;
	int c, i, last = 1, ret = 0;

	*rest  = (struct cli_rest){0};
	vec    = calloc((size_t)argc + 2, sizeof(*vec));
	longs  = calloc(n + 2, sizeof(*longs));
	shorts = calloc(2 * n + 8, 1);
	if (!vec || !longs || !shorts) {
		fprintf(stderr, "vpmu %s: out of memory\n", cmd->name);
		ret = -ENOMEM;
		goto out;
	}
	snprintf(prog, sizeof(prog), "vpmu%s%s", cmd->name[0] ? " " : "",
		 cmd->name);
	vec[0] = prog;
	for (i = 0; i < argc; i++)
		vec[i + 1] = argv[i];
	build_tables(cmd, shorts, 2 * n + 8, longs);
	optind = 0; /* glibc: start afresh */
	opterr = 0;
	for (;;) {
		last = optind ? optind : 1;
		c    = getopt_long(argc + 1, vec, shorts, longs, NULL);
		if (c == -1)
			break;
		if (c == HELP_VAL) {
			cli_usage(cmd, stdout);
			ret = CLI_HELP;
			goto out;
		}
		if (c == '?' || c == ':') {
			ret = getopt_error(cmd, c, vec);
			goto out;
		}
		ret = row_of(cmd, c) ? apply(cmd, row_of(cmd, c), ctx, optarg)
				     : -EINVAL;
		if (ret)
			goto out;
	}
	/* In stop_at_operand mode "--" is the argument getopt stopped on. */
	rest->dashdash = cmd->stop_at_operand && optind == last + 1 &&
			 last <= argc && !strcmp(vec[last], "--");
	rest->argc = argc + 1 - optind;
	rest->argv = calloc((size_t)rest->argc + 1, sizeof(char *));
	if (!rest->argv) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < rest->argc; i++)
		rest->argv[i] = vec[optind + i];
	ret = check_operands(cmd, rest);
out:
	if (ret)
		cli_rest_free(rest);
	free(vec);
	free(longs);
	free(shorts);
	return ret;
}

void cli_rest_free(struct cli_rest *rest)
{
	free(rest->argv);
	*rest = (struct cli_rest){0};
}

/* "  -e, --event EVENTS" of row (o) into (buf). */
static void spec_of(const struct cli_opt *o, char *buf, size_t len)
{
	snprintf(buf, len, "  %s%c%s%s%s%s%s", o->key ? "-" : " ",
		 o->key ? o->key : ' ', o->key && o->name ? ", " : "  ",
		 o->name ? "--" : "", o->name ? o->name : "", o->arg ? " " : "",
		 o->arg ? o->arg : "");
}

/* (text) with every '\n' continued at column (col). */
static void indented(FILE *out, const char *text, int col)
{
	for (; *text; text++) {
		fputc(*text, out);
		if (*text == '\n' && text[1])
			fprintf(out, "%*s", col, "");
	}
}

void cli_usage(const struct cli_cmd *cmd, FILE *out)
{
	static const struct cli_opt help_row = {
		.key = 'h', .name = "help", .help = "this help"};
	size_t i, n = nr_rows(cmd);
	char spec[96];
	int w;

	fprintf(out, "usage: vpmu %s%s%s%s\n", cmd->name,
		n ? " [OPTIONS]" : " [--help]", cmd->args ? " " : "",
		cmd->args ? cmd->args : "");
	if (cmd->summary)
		fprintf(out, "\n  %s\n", cmd->summary);
	fputs("\noptions:\n", out);
	for (i = 0; i <= n; i++) {
		const struct cli_opt *o = i < n ? &cmd->opts[i] : &help_row;

		spec_of(o, spec, sizeof(spec));
		w = (int)strlen(spec);
		fputs(spec, out);
		if (w + 2 > COLUMN)
			fprintf(out, "\n%*s", COLUMN, "");
		else
			fprintf(out, "%*s", COLUMN - w, "");
		indented(out, o->help ? o->help : "", COLUMN);
		fputc('\n', out);
	}
	if (cmd->help) {
		fputc('\n', out);
		fputs(cmd->help, out);
	}
}
