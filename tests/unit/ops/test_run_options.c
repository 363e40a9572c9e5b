// SPDX-License-Identifier: MIT
/*
 * test_run_options.c: the options `vpmu run` documents against the ones it
 * takes. Every option the built program's `vpmu run --help` lists, and
 * every one in README.md's `vpmu run` synopsis, is accepted by
 * vmm_config_parse_run_args() with a value of its kind and by the program's
 * own front end; a flag refuses a value and an option with a value refuses
 * to go without one. The help and the synopsis list the same options.
 * No VM is run: each program run stops at a bad --vcpus (or --mem) given
 * with the option, a value only checked once every option is parsed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli_program.h"
#include "vm_config.h"

#define MAX_DOC_OPTS 64

/* One documented option: its name without "--", its value's name or "". */
struct doc_opt {
	char name[32];
	char arg[16];
};

struct doc_opts {
	struct doc_opt opt[MAX_DOC_OPTS];
	size_t nr;
};

/*
 * Add the option at (p), just past its "--": its name and, if one follows,
 * its value's name. Returns where they end.
 */
static const char *take_doc_opt(struct doc_opts *d, const char *p)
{
	struct doc_opt *o;
	size_t n = 0, a = 0;

	cr_assert(lt(sz, d->nr, (size_t)MAX_DOC_OPTS));
	o  = &d->opt[d->nr++];
	*o = (struct doc_opt){0};
	while ((islower((unsigned char)p[n]) || isdigit((unsigned char)p[n]) ||
		p[n] == '-') &&
	       n + 1 < sizeof(o->name))
		n++;
	memcpy(o->name, p, n);
	p += n;
	/* The value's name follows after one space, in capitals. */
	if (p[0] == ' ' && isupper((unsigned char)p[1])) {
		p++;
		while ((isupper((unsigned char)p[a]) || p[a] == '_') &&
		       a + 1 < sizeof(o->arg))
			a++;
		memcpy(o->arg, p, a);
	}
	return p + a;
}

/*
 * The option rows of a cli_parse usage: "  -k, --name ARG  help" or
 * "      --name ARG  help"; continuation lines are indented further.
 */
static void help_options(const char *usage, struct doc_opts *d)
{
	const char *p = strstr(usage, "\noptions:\n");

	cr_assert(not(eq(ptr, (void *)p, NULL)), "%s", usage);
	for (p += strlen("\noptions:\n"); *p && *p != '\n';
	     p = strchr(p, '\n') + 1) {
		if (!strncmp(p, "      --", 8))
			take_doc_opt(d, p + 8);
		else if (!strncmp(p, "  -", 3) && !strncmp(p + 4, ", --", 4))
			take_doc_opt(d, p + 8);
		cr_assert(not(eq(ptr, strchr(p, '\n'), NULL)));
	}
}

/* "[--name ARG]" items of the synopsis `vpmu run IMAGE|CONFIG.xml ...`. */
static void readme_options(const char *readme, struct doc_opts *d)
{
	const char *p   = strstr(readme, "`vpmu run IMAGE|CONFIG.xml");
	const char *end = p ? strchr(p + 1, '`') : NULL;

	cr_assert(not(eq(ptr, (void *)end, NULL)),
		  "README.md has no `vpmu run IMAGE|CONFIG.xml ...` synopsis");
	while ((p = strstr(p, "[--")) && p < end)
		p = take_doc_opt(d, p + 3);
}

static const struct doc_opt *find_doc(const struct doc_opts *d,
				      const char *name)
{
	size_t i;

	for (i = 0; i < d->nr; i++) {
		if (!strcmp(d->opt[i].name, name))
			return &d->opt[i];
	}
	return NULL;
}

/* A valid value for a value named (arg) in the usage. */
static const char *value_for(const struct doc_opt *o)
{
	static const char *const values[][2] = {
		{"N", "2"},
		{"SIZE", "128M"},
		{"NAME", "walk-1"},
		{"FILE", "/dev/null"},
		{"MODEL", "none"},
		{"IMAGE", "g.elf"},
		{"CMDLINE", "console=ttyS0"},
		{"DIR", "/tmp"},
		{"DISK", "/tmp"}, /* a folder: its image is made later */
		{"HZ", "1000"},
		{"PCT", "10"},
	};
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		if (!strcmp(values[i][0], o->arg))
			return values[i][1];
	}
	cr_assert(false, "--%s %s: no sample value for %s here; add one",
		  o->name, o->arg, o->arg);
	return NULL;
}

/*
 * argv[n...] of `vpmu run` with option (o), spelt into (opt), and the
 * image: --kernel names the image itself, every other option comes with
 * the positional image. Returns the new argc.
 */
static int run_argv(const struct doc_opt *o, char opt[40], const char **argv,
		    int n)
{
	snprintf(opt, 40, "--%s", o->name);
	argv[n++] = opt;
	if (o->arg[0])
		argv[n++] = value_for(o);
	if (strcmp(o->name, "kernel"))
		argv[n++] = "g.elf";
	argv[n] = NULL;
	return n;
}

static void expect_parsed(const struct doc_opt *o, const char *where)
{
	char err[VMM_CONFIG_ERR_LEN] = "", opt[40], want[80];
	const char *argv[8];
	struct vmm_config cfg;
	int argc, ret;

	argc = run_argv(o, opt, argv, 0);
	ret  = vmm_config_parse_run_args(&cfg, argc, (char **)argv, err,
					 sizeof(err));
	cr_expect(eq(int, ret, 0), "%s: --%s %s: %s", where, o->name,
		  o->arg[0] ? argv[1] : "", err);
	/* The usage says whether a value goes with it: so must the parser. */
	if (o->arg[0]) {
		snprintf(opt, sizeof(opt), "--%s", o->name);
		snprintf(want, sizeof(want), "option '--%s' needs a value",
			 o->name);
	} else {
		snprintf(opt, sizeof(opt), "--%s=x", o->name);
		snprintf(want, sizeof(want), "option '--%s' takes no value",
			 o->name);
	}
	argv[0] = "g.elf";
	argv[1] = opt;
	argv[2] = NULL;
	ret     = vmm_config_parse_run_args(&cfg, 2, (char **)argv, err,
					    sizeof(err));
	cr_expect(eq(int, ret, -EINVAL), "%s: g.elf %s", where, opt);
	cr_expect(eq(str, err, want), "%s: g.elf %s", where, opt);
}

/*
 * The program itself takes the option too: the run stops only at the bad
 * --vcpus (--mem when --vcpus is the option), which vmm_config checks
 * once every option has been read, so no guest is started.
 */
static void expect_front_end_takes(const struct doc_opt *o, const char *where)
{
	const char *argv[12] = {"run"};
	struct vpmu_out r;
	const char *msg;
	char opt[40];

	if (strcmp(o->name, "vcpus")) {
		argv[1] = "--vcpus";
		argv[2] = "65";
		msg     = "vpmu: --vcpus: '65' is not a vCPU count (1..64)\n";
	} else {
		argv[1] = "--mem";
		argv[2] = "64Q";
		msg     = "vpmu: --mem: '64Q' is not a size (e.g. 64M, 1G, "
			  "512KiB)\n";
	}
	run_argv(o, opt, argv, 3);
	vpmu_prog(argv, &r);
	cr_expect(eq(int, r.status, 1), "%s: vpmu run ... --%s: status %d",
		  where, o->name, r.status);
	cr_expect(eq(str, r.err, (char *)msg), "%s: vpmu run ... --%s", where,
		  o->name);
}

static void load_help(struct doc_opts *d)
{
	static struct vpmu_out r;

	vpmu_prog((const char *[]){"run", "--help", NULL}, &r);
	cr_assert(eq(int, r.status, 0), "%s", r.err);
	help_options(r.out, d);
}

static void load_readme(struct doc_opts *d)
{
	static char text[1 << 20];
	FILE *f = fopen(VPMU_SOURCE_DIR "/README.md", "r");
	size_t n;

	cr_assert(not(eq(ptr, f, NULL)));
	n       = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	readme_options(text, d);
}

Test(run_options, every_option_in_run_help_is_parsed)
{
	static struct doc_opts d;
	struct vpmu_out r;
	size_t i;

	load_help(&d);
	cr_log_info("vpmu run --help lists %zu options", d.nr);
	cr_assert(lt(sz, (size_t)10, d.nr), "too few options: a parse bug");
	for (i = 0; i < d.nr; i++) {
		const struct doc_opt *o = &d.opt[i];

		if (!strcmp(o->name, "help"))
			continue;
		/* The front end's own: `vpmu run --restore` is a command. */
		if (!strcmp(o->name, "restore")) {
			vpmu_prog((const char *[]){"run", "--restore", "--help",
						   NULL},
				  &r);
			cr_expect(eq(int, r.status, 0), "%s", r.err);
			cr_expect(eq(int,
				     strncmp(r.out, "usage: vpmu run --restore",
					     25),
				     0),
				  "%s", r.out);
			continue;
		}
		expect_parsed(o, "vpmu run --help");
		expect_front_end_takes(o, "vpmu run --help");
	}
}

Test(run_options, every_option_in_readme_synopsis_is_parsed)
{
	static struct doc_opts d;
	size_t i;

	load_readme(&d);
	cr_log_info("README.md's vpmu run synopsis has %zu options", d.nr);
	cr_assert(lt(sz, (size_t)10, d.nr), "too few options: a parse bug");
	for (i = 0; i < d.nr; i++) {
		expect_parsed(&d.opt[i], "README.md");
		expect_front_end_takes(&d.opt[i], "README.md");
	}
}

/* The synopsis and the usage name the same options, values alike. */
Test(run_options, readme_synopsis_and_run_help_agree)
{
	static struct doc_opts help, readme;
	const struct doc_opt *h, *m;
	size_t i;

	load_help(&help);
	load_readme(&readme);
	for (i = 0; i < readme.nr; i++) {
		m = &readme.opt[i];
		h = find_doc(&help, m->name);
		cr_expect(not(eq(ptr, (void *)h, NULL)),
			  "README.md's --%s is not in vpmu run --help",
			  m->name);
		if (h)
			cr_expect(eq(str, (char *)h->arg, (char *)m->arg),
				  "--%s: README.md says '%s', --help '%s'",
				  m->name, m->arg, h->arg);
	}
	for (i = 0; i < help.nr; i++) {
		h = &help.opt[i];
		/* -h/--help is every command's; --restore has its own form. */
		if (!strcmp(h->name, "help") || !strcmp(h->name, "restore"))
			continue;
		cr_expect(
			not(eq(ptr, (void *)find_doc(&readme, h->name), NULL)),
			"vpmu run --help lists --%s, README.md's synopsis "
			"does not",
			h->name);
	}
}
