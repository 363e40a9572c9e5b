// SPDX-License-Identifier: MIT
/*
 * test_cli_parse.c: the shared table-driven parser of every `vpmu` command
 * (ops/client/cli_parse.h): typed rows, short and long names, attached
 * values, operands and "--", --help, and one message per error.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli_parse.h"
#include "ctl_client.h"

struct opts {
	struct ops_select sel;
	bool flag;
	const char *str;
	uint64_t num;
	double secs;
	int calls;
	const char *last;
};

static int fn(const struct cli_cmd *cmd, void *ctx, const char *v)
{
	struct opts *o = ctx;

	if (v && !strcmp(v, "bad"))
		return cli_error(cmd, "'%s' is bad", v);
	o->calls++;
	o->last = v;
	return 0;
}

static const struct cli_opt rows[] = {
	OPS_SELECT_ROWS,
	CLI_FLAG('f', "flag", struct opts, flag, "a flag"),
	CLI_STR('s', "str", "TEXT", struct opts, str, "a string"),
	CLI_UINT('n', "num", "N", struct opts, num, 1, "a positive integer"),
	CLI_NUM(0, "secs", "S", struct opts, secs, 0, "a number"),
	CLI_FN('k', "call", "V", fn, "a handler"),
	{0},
};

static const struct cli_cmd cmd = {
	.name            = "test",
	.args            = "[ARGS...]",
	.summary         = "the test command",
	.opts            = rows,
	.operands        = CLI_OPERANDS_ANY,
	.stop_at_operand = true,
	.help            = "  Trailing text.\n",
};

static const struct cli_cmd one_operand = {
	.name     = "one",
	.opts     = rows,
	.operands = 1,
};

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})

static int parse(const struct cli_cmd *c, struct opts *o, char **argv, int argc,
		 struct cli_rest *rest)
{
	*o = (struct opts){0};
	return cli_parse(c, o, argc, argv, rest);
}

Test(cli_parse, typed_rows_short_and_long)
{
	char **argv = ARGV("-f", "--str", "hello", "-n42", "--secs=1.5", "-k",
			   "x", "--call=y");
	struct cli_rest rest;
	struct opts o;

	cr_assert_eq(parse(&cmd, &o, argv, 8, &rest), 0);
	cr_expect(o.flag);
	cr_expect_str_eq(o.str, "hello");
	cr_expect_eq(o.num, 42);
	cr_expect_float_eq(o.secs, 1.5, 1e-9);
	cr_expect_eq(o.calls, 2);
	cr_expect_str_eq(o.last, "y");
	cr_expect_eq(rest.argc, 0);
	cli_rest_free(&rest);
}

Test(cli_parse, unique_prefix_of_a_long_name)
{
	struct cli_rest rest;
	struct opts o;

	cr_assert_eq(parse(&cmd, &o, ARGV("--fl", "--st", "v"), 3, &rest), 0);
	cr_expect(o.flag);
	cr_expect_str_eq(o.str, "v");
	cli_rest_free(&rest);
}

Test(cli_parse, operands_stop_options_and_dashdash_is_seen)
{
	char **argv = ARGV("-f", "sleep", "-n", "3");
	struct cli_rest rest;
	struct opts o;

	cr_assert_eq(parse(&cmd, &o, argv, 4, &rest), 0);
	cr_expect_eq(o.num, 0, "-n after the first operand is the operand's");
	cr_assert_eq(rest.argc, 3);
	cr_expect_str_eq(rest.argv[0], "sleep");
	cr_expect_str_eq(rest.argv[1], "-n");
	cr_expect_not(rest.dashdash);
	cr_expect_str_eq(argv[1], "sleep", "the caller's argv is untouched");
	cli_rest_free(&rest);

	cr_assert_eq(parse(&cmd, &o, ARGV("-f", "--", "5"), 3, &rest), 0);
	cr_expect(rest.dashdash);
	cr_assert_eq(rest.argc, 1);
	cr_expect_str_eq(rest.argv[0], "5");
	cli_rest_free(&rest);

	/* A "--" that is an option's value is not the separator. */
	cr_assert_eq(parse(&cmd, &o, ARGV("-s", "--", "x"), 3, &rest), 0);
	cr_expect_str_eq(o.str, "--");
	cr_expect_not(rest.dashdash);
	cli_rest_free(&rest);
}

Test(cli_parse, options_may_follow_operands_when_permuting)
{
	struct cli_rest rest;
	struct opts o;

	cr_assert_eq(parse(&one_operand, &o, ARGV("FILE", "-f"), 2, &rest), 0);
	cr_expect(o.flag);
	cr_assert_eq(rest.argc, 1);
	cr_expect_str_eq(rest.argv[0], "FILE");
	cli_rest_free(&rest);
}

Test(cli_parse, parses_again_from_a_fresh_state)
{
	struct cli_rest rest;
	struct opts o;
	int i;

	for (i = 0; i < 3; i++) {
		cr_assert_eq(parse(&cmd, &o, ARGV("-n", "7", "-f"), 3, &rest),
			     0);
		cr_expect_eq(o.num, 7);
		cr_expect(o.flag);
		cli_rest_free(&rest);
	}
}

static void expect_error(const struct cli_cmd *c, char **argv, int argc,
			 const char *msg)
{
	FILE *tmp = tmpfile();
	struct cli_rest rest;
	char line[512] = "";
	struct opts o;
	int saved;

	cr_assert_not_null(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	cr_expect_eq(parse(c, &o, argv, argc, &rest), -EINVAL, "%s", argv[0]);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	cr_expect_not_null(fgets(line, sizeof(line), tmp));
	cr_expect(strstr(line, msg) != NULL, "'%s' not in '%s'", msg, line);
	cr_expect(strstr(line, "(try 'vpmu ") != NULL, "%s", line);
	cr_expect_null(fgets(line, sizeof(line), tmp), "one line only");
	cr_expect_null(rest.argv);
	fclose(tmp);
}

/* A positive number may be below 1 (`top -d 0.2` was refused
 * under the nested-KVM rig), never 0. */
Test(cli_parse, positive_numbers_below_one)
{
	double d = 0;

	cr_redirect_stderr();
	cr_expect_eq(cli_parse_num(&cmd, "-d", "0.2", 1, &d), 0);
	cr_expect_float_eq(d, 0.2, 1e-12);
	cr_expect_eq(cli_parse_num(&cmd, "-d", "0", 1, &d), -EINVAL);
	cr_expect_eq(cli_parse_num(&cmd, "-d", "-0.5", 1, &d), -EINVAL);
}

Test(cli_parse, each_error_is_one_line)
{
	char vms[] = "a,,b"; /* -p cuts its value in place, as argv allows */

	expect_error(&cmd, ARGV("--nope"), 1,
		     "vpmu test: unknown or ambiguous option '--nope'");
	expect_error(&cmd, ARGV("-z"), 1, "unknown option '-z'");
	expect_error(&cmd, ARGV("-s"), 1, "option '-s/--str' needs a value");
	expect_error(&cmd, ARGV("--str"), 1, "option '-s/--str' needs a value");
	expect_error(&cmd, ARGV("--flag=1"), 1,
		     "option '-f/--flag' takes no value");
	expect_error(&cmd, ARGV("-n", "0"), 2,
		     "-n/--num needs a positive integer, not '0'");
	expect_error(&cmd, ARGV("-n", "-3"), 2, "needs a positive integer");
	expect_error(&cmd, ARGV("-n", "12x"), 2, "needs a positive integer");
	expect_error(&cmd, ARGV("--secs", "-1"), 2,
		     "--secs needs a non-negative number");
	expect_error(&cmd, ARGV("--secs", "nan"), 2, "non-negative number");

	expect_error(&cmd, ARGV("-k", "bad"), 2, "'bad' is bad");
	expect_error(&one_operand, ARGV("a", "b"), 2,
		     "vpmu one: unexpected argument 'b'");
	expect_error(&cmd, ARGV("-C", "3-1"), 2, "not a vCPU list");
	expect_error(&cmd, ARGV("-C", "64"), 2, "not a vCPU list");
	expect_error(&cmd, ARGV("-C", "1,,2"), 2, "not a vCPU list");
	expect_error(&cmd, ARGV("-p", vms), 2, "an empty VM name");
}

Test(cli_parse, help_is_generated_from_the_table, .init = cr_redirect_stdout)
{
	struct cli_rest rest;
	struct opts o;

	cr_assert_eq(parse(&cmd, &o, ARGV("-f", "--help"), 2, &rest), CLI_HELP);
	fflush(stdout);
	cr_expect_stdout_eq_str(
		"usage: vpmu test [OPTIONS] [ARGS...]\n"
		"\n"
		"  the test command\n"
		"\n"
		"options:\n"
		"  -a, --all                 every VM (default; as root also "
		"other users')\n"
		"  -p, --pid VM              the VM named by name, uuid, uuid "
		"prefix or\n"
		"                            VMM pid (repeatable, or "
		"VM,VM...)\n"
		"  -m, --vm VM               same as -p\n"
		"  -C, --cpu VCPUS           only these vCPUs, e.g. 0,2-3\n"
		"  -f, --flag                a flag\n"
		"  -s, --str TEXT            a string\n"
		"  -n, --num N               a positive integer\n"
		"      --secs S              a number\n"
		"  -k, --call V              a handler\n"
		"  -h, --help                this help\n"
		"\n"
		"  Trailing text.\n");
}

Test(cli_parse, vm_and_vcpu_selection)
{
	char pv[]    = "web,db",
	     *argv[] = {"-p", pv, "-m", "1234", "-C", "0,2-3", "-a", NULL};
	struct cli_rest rest;
	struct opts o;

	cr_assert_eq(parse(&cmd, &o, argv, 7, &rest), 0);
	cr_assert_eq(o.sel.nr, 3);
	cr_expect_str_eq(o.sel.names[0], "web");
	cr_expect_str_eq(o.sel.names[1], "db");
	cr_expect_str_eq(o.sel.names[2], "1234");
	cr_expect(o.sel.all);
	cr_expect(o.sel.has_vcpus);
	cr_expect_eq(o.sel.vcpus, 0xdULL);
	cr_expect(ops_vcpu_chosen(&o.sel, 2));
	cr_expect_not(ops_vcpu_chosen(&o.sel, 1));
	cr_expect(ops_vcpu_chosen(NULL, 1), "no -C: every vCPU");
	cli_rest_free(&rest);
}

Test(cli_parse, vm_matches_name_uuid_prefix_and_pid)
{
	struct vmm_reg_entry e = {
		.uuid = "0123abcd-0000-4000-8000-000000000001",
		.name = "web",
		.pid  = 4242,
	};

	cr_expect(ops_client_match(&e, "web"));
	cr_expect(ops_client_match(&e, e.uuid));
	cr_expect(ops_client_match(&e, "0123ab"));
	cr_expect(ops_client_match(&e, "4242"), "the VMM's pid");
	cr_expect_not(ops_client_match(&e, "4243"));
	cr_expect_not(ops_client_match(&e, "012"), "prefix of 3 is too short");
	cr_expect_not(ops_client_match(&e, "we"));
}
