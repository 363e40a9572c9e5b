// SPDX-License-Identifier: MIT
/*
 * vpmu_main.c: the `vpmu` program, the only one that knows every command
 * (run, the operator commands of ops/cmd, serve). The only file that exits.
 *
 *   vpmu [--version] [--help] COMMAND [ARGS...]
 *   vpmu help [COMMAND]
 *
 * Commands are rows of the table below; each parses its own arguments with
 * the shared parser (cli_parse.h), so `vpmu CMD --help` and `vpmu help CMD`
 * print the same usage.
 */
#include "vmm_core.h"
#include "cli_parse.h"
#include "vm_config.h"
#include "vm_registry.h"
#include "ops_cmd.h"
#include "serve.h"
#include "vmm_handover.h"
#include "vmm_snap.h"
#include "vmm_snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vpmu_common.h>

/*
 * `vpmu run` hands the validated configuration to vpmu-vmm, next to this
 * program, and becomes it (same process, same pid): the running VM then
 * maps none of the libraries only the other commands use.
 */
__attribute__((noreturn)) static void exec_vmm(const struct vmm_config *cfg,
					       const char *restore)
{
	static struct vmm_handover h;
	static char prog[] = VMM_HANDOVER_PROG, arg[] = VMM_HANDOVER_ARG;
	char exe[PATH_MAX], fd_text[16];
	char *args[] = {prog, arg, fd_text, NULL};
	ssize_t n    = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int fd;

	exe[n > 0 ? n : 0] = '\0';
	slash              = strrchr(exe, '/');
	if (!slash ||
	    (size_t)(slash + 1 - exe) + sizeof(VMM_HANDOVER_PROG) > sizeof(exe))
		vpmu_die("cannot find the program %s next to /proc/self/exe",
			 VMM_HANDOVER_PROG);
	memcpy(slash + 1, VMM_HANDOVER_PROG, sizeof(VMM_HANDOVER_PROG));
	memcpy(h.magic, VMM_HANDOVER_MAGIC, sizeof(h.magic));
	h.size = sizeof(h);
	h.cfg  = *cfg;
	/* An installed vpmu loads its own formats unless told otherwise. */
	if (!h.cfg.format_dir[0])
		vmm_config_installed_format_dir(h.cfg.format_dir,
						sizeof(h.cfg.format_dir));
	snprintf(h.restore, sizeof(h.restore), "%s", restore ? restore : "");
	/* Inherited by vpmu-vmm, which closes it after one read. */
	fd = memfd_create("vpmu-run-config", 0);
	if (fd < 0 || write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
		vpmu_die("cannot hand the VM to %s: %s", VMM_HANDOVER_PROG,
			 strerror(errno));
	snprintf(fd_text, sizeof(fd_text), "%d", fd);
	fflush(NULL);
	execv(exe, args);
	vpmu_die("cannot run %s: %s", exe, strerror(errno));
}

/*
 * `vpmu run`: cli_parse() checks the syntax and answers --help from rows
 * built out of vmm_run_opts[], the table vmm_config_parse_run_args() then
 * takes the values with; so the usage lists exactly what the parser
 * accepts. The handler has nothing to do: the values are vmm_config's.
 */
static int run_opt(const struct cli_cmd *cmd, void *ctx, const char *value)
{
	(void)cmd;
	(void)ctx;
	(void)value;
	return 0;
}

/* --restore is vpmu_main.c's own: it routes to cmd_run_restore(). */
static const struct cli_opt run_restore_row =
	CLI_FN(0, "restore", "FILE", run_opt,
	       "continue the snapshot FILE instead of booting\n"
	       "an image ('vpmu run --restore --help')");

static const struct cli_cmd *run_command(void)
{
	static struct cli_opt rows[VMM_RUN_NR_OPTS + 2]; /* + restore, {0} */
	static const struct cli_cmd cmd = {
		.name    = "run",
		.args    = "IMAGE|CONFIG.xml",
		.summary = "boot a guest under KVM with a perfmon2 virtual PMU "
			   "on every vCPU",
		.opts    = rows,
		.operands = 1,
		.help = "  IMAGE is vpmu's freestanding ELF, a Linux vmlinux "
			"or bzImage (or\n"
			"  --kernel IMAGE); CONFIG.xml a libvirt domain XML "
			"(options override it).\n"
			"  Exit status: 0 when all vCPUs halted, the guest's "
			"exit-port value,\n"
			"  250 triple fault, 251 KVM error, 253 guest reset "
			"(Linux reboot or\n"
			"  panic), 128 + signal after SIGINT/SIGTERM, 159 "
			"forbidden system\n"
			"  call (seccomp sandbox), 1 on bad input.\n",
	};
	size_t i;

	for (i = 0; i < VMM_RUN_NR_OPTS; i++) {
		const struct vmm_run_opt *o = &vmm_run_opts[i];

		rows[i] = (struct cli_opt)CLI_FN(0, o->name, o->arg, run_opt,
						 o->help);
	}
	rows[i] = run_restore_row;
	return &cmd;
}

/* `vpmu run --restore FILE`: the VM's size is the snapshot's. */
struct restore_opts {
	const char *file, *name, *console, *pmu;
	bool stats, no_sandbox;
};

static const struct cli_opt restore_opts[] = {
	CLI_STR(0, "restore", "FILE", struct restore_opts, file,
		"the snapshot ('vpmu snapshot VM FILE')"),
	CLI_STR(0, "name", "NAME", struct restore_opts, name,
		"the VM's name (default: the saved one)"),
	CLI_STR(0, "console", "FILE", struct restore_opts, console,
		"guest console output to FILE (default stdout)"),
	CLI_STR(0, "pmu", "MODEL", struct restore_opts, pmu,
		"refuse a snapshot of another model (auto)"),
	CLI_FLAG(0, "stats", struct restore_opts, stats,
		 "print exits by reason at the end"),
	CLI_FLAG(0, "no-sandbox", struct restore_opts, no_sandbox,
		 "no seccomp filter (debugging)"),
	{0},
};

static const struct cli_cmd restore_cmd = {
	.name     = "run --restore",
	.args     = "",
	.summary  = "continue a VM from a snapshot file",
	.opts     = restore_opts,
	.operands = CLI_OPERANDS_NONE,
	.help = "  The whole file is checked (version, host CPU vendor, PMU "
		"model, every\n"
		"  section's checksum) before a VM exists. vPMU counters "
		"continue from\n"
		"  their saved 64-bit values; freestanding guests only.\n",
};

static bool wants_restore(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--restore") ||
		    !strncmp(argv[i], "--restore=", 10))
			return true;
	}
	return false;
}

/*
 * The snapshot is checked whole here, its VM's size taken from it, and the
 * file handed to vpmu-vmm, which checks it again as it restores it.
 */
static int cmd_run_restore(int argc, char **argv)
{
	struct restore_opts o = {.pmu = "auto"};
	struct vmm_snapshot_dims dims;
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg;
	struct vmm_snap snap;
	struct cli_rest rest;
	int status;

	/* `--restore --help`: help, not a file named --help. */
	for (status = 0; status < argc && strcmp(argv[status], "--");
	     status++) {
		if (!strcmp(argv[status], "--help") ||
		    !strcmp(argv[status], "-h")) {
			cli_usage(&restore_cmd, stdout);
			return 0;
		}
	}
	status = cli_parse(&restore_cmd, &o, argc, argv, &rest);
	if (status)
		return status == CLI_HELP ? 0 : 1;
	cli_rest_free(&rest);
	if (!o.file)
		vpmu_die("run --restore: no snapshot file given");
	if (vmm_snapshot_open(o.file, o.pmu, &snap, &dims, err, sizeof(err)))
		vpmu_die("%s", err);
	vmm_snap_close(&snap);
	vmm_config_defaults(&cfg);
	cfg.mem_size   = dims.mem_size;
	cfg.nr_vcpus   = dims.nr_vcpus;
	cfg.stats      = o.stats;
	cfg.no_sandbox = o.no_sandbox;
	snprintf(cfg.name, sizeof(cfg.name), "%s", o.name ? o.name : dims.name);
	snprintf(cfg.pmu_model, sizeof(cfg.pmu_model), "%s", dims.pmu_model);
	snprintf(cfg.console, sizeof(cfg.console), "%s",
		 o.console ? o.console : "");
	exec_vmm(&cfg, o.file);
}

/* Where scratch images of folder disks go: $TMPDIR, else /var/tmp. */
static const char *scratch_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] ? t : "/var/tmp";
}

static int cmd_run(int argc, char **argv)
{
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg;
	struct cli_rest rest;
	int status;

	if (wants_restore(argc, argv))
		return cmd_run_restore(argc, argv);
	/* Syntax and --help from the table, values from vmm_config. */
	status = cli_parse(run_command(), NULL, argc, argv, &rest);
	if (status)
		return status == CLI_HELP ? 0 : 1;
	cli_rest_free(&rest);
	vmm_config_defaults(&cfg);
	if (vmm_config_parse_run_args(&cfg, argc, argv, err, sizeof(err)) ||
	    vmm_config_validate(&cfg, err, sizeof(err)) ||
	    vmm_config_disk_images(&cfg, scratch_dir(), err, sizeof(err)))
		vpmu_die("%s", err);
	/* One line, as `virsh define` users expect of what is left out. */
	if (cfg.ignored[0])
		fprintf(stderr, "vpmu: warning: %s\n", cfg.ignored);
	exec_vmm(&cfg, NULL);
}

static int cmd_help(int argc, char **argv);

/* Every command: name, one line for `vpmu help`, its function. */
static const struct command {
	const char *name, *summary;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{"run", "boot a guest image or libvirt domain XML", cmd_run},
	{"events", "every event of the virtual PMU, and who can count it",
	 ops_cmd_events},
	{"list", "the running VMs (vpmu and libvirt)", ops_cmd_list},
	{"stat", "count events on the vCPUs of running VMs", ops_cmd_stat},
	{"record", "sample the vCPUs of running VMs into a file",
	 ops_cmd_record},
	{"report", "profile of a record file", ops_cmd_report},
	{"top", "live profile of running VMs", ops_cmd_top},
	{"snapshot", "save a running VM and its whole vPMU to a file",
	 ops_cmd_snapshot},
	{"serve", "HTTP daemon: /metrics and pprof profiles of every VM",
	 serve_run},
	{"help", "this list, or the usage of COMMAND", cmd_help},
};

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	}
	return NULL;
}

static void list_commands(FILE *out)
{
	size_t i;

	fputs("usage: vpmu [--version] [--help] COMMAND [ARGS...]\n"
	      "       vpmu help COMMAND | vpmu COMMAND --help\n\ncommands:\n",
	      out);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name,
			commands[i].summary);
	fputs("\nHost operators see every VM and vCPU; the options mirror "
	      "perf's\n(see ops/OPERATORS.md).\n",
	      out);
}

static int cmd_help(int argc, char **argv)
{
	static char help_arg[] = "--help";
	const struct command *c;
	char *args[] = {help_arg, NULL};

	if (argc < 1) {
		list_commands(stdout);
		return 0;
	}
	c = find_command(argv[0]);
	if (!c || c->fn == cmd_help) {
		fprintf(stderr,
			"vpmu help: unknown command '%s' (try 'vpmu "
			"help')\n",
			argv[0]);
		return 1;
	}
	return c->fn(1, args);
}

struct top_opts {
	bool version;
};

static const struct cli_opt top_opts[] = {
	CLI_FLAG('V', "version", struct top_opts, version,
		 "print the version and exit"),
	{0},
};

static const struct cli_cmd top_cmd = {
	.name            = "",
	.args            = "COMMAND [ARGS...]",
	.opts            = top_opts,
	.operands        = CLI_OPERANDS_ANY,
	.stop_at_operand = true,
};

int main(int argc, char **argv)
{
	const struct command *c;
	struct top_opts o = {0};
	struct cli_rest rest;
	int ret;

	ret = cli_parse(&top_cmd, &o, argc - 1, argv + 1, &rest);
	if (ret == CLI_HELP || (!ret && !o.version && !rest.argc)) {
		if (!ret)
			cli_rest_free(&rest);
		list_commands(ret == CLI_HELP ? stdout : stderr);
		return ret == CLI_HELP ? 0 : 1;
	}
	if (ret)
		return 1;
	if (o.version) {
		cli_rest_free(&rest);
		printf("vpmu %s\n", VPMU_VERSION);
		return 0;
	}
	c = find_command(rest.argv[0]);
	if (!c) {
		fprintf(stderr,
			"vpmu: unknown command '%s' (try 'vpmu help')\n",
			rest.argv[0]);
		cli_rest_free(&rest);
		return 1;
	}
	ret = c->fn(rest.argc - 1, rest.argv + 1);
	cli_rest_free(&rest);
	return ret;
}
