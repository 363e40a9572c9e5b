// SPDX-License-Identifier: MIT
/*
 * config_cli.c: the `vpmu run` command line.
 *
 * A small hand-written parser rather than getopt_long: getopt permutes the
 * caller's argv, keeps its position in the globals optind/optarg, expects a
 * program name in argv[0] and prints its own messages. Here argv[0] is
 * already the first argument, nothing global changes and every error is one
 * message naming the option, so the parser can run many times per process.
 */
#include "vm_config.h"
#include "vpmu_common.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "vm_config_priv.h"

enum opt_id {
	OPT_VCPUS,
	OPT_MEM,
	OPT_NAME,
	OPT_CONSOLE,
	OPT_STATS,
	OPT_PMU,
	OPT_KERNEL,
	OPT_INITRD,
	OPT_APPEND,
	OPT_DISK,
	OPT_NO_SANDBOX,
	OPT_FORMAT_DIR,
	OPT_MAX_RATE,
	OPT_MAX_OVERHEAD,
	NR_OPTIONS,
};

_Static_assert(NR_OPTIONS == VMM_RUN_NR_OPTS,
	       "one row of vmm_run_opts[] per enum opt_id");

/*
 * The one table of `vpmu run`'s options: this file parses with it and the
 * front end prints its usage from it, so no option is documented and
 * refused, or accepted and undocumented. Rows are designated, so each stays
 * paired with its enum opt_id.
 */
#define RUN_OPT(id, n, a, h) [id] = {(n), (a), (h)}

const struct vmm_run_opt vmm_run_opts[VMM_RUN_NR_OPTS] = {
	RUN_OPT(OPT_VCPUS, "vcpus", "N", "number of vCPUs (default 1)"),
	RUN_OPT(OPT_MEM, "mem", "SIZE",
		"guest memory, e.g. 64M, 1G (default 64M)"),
	RUN_OPT(OPT_NAME, "name", "NAME",
		"the VM's name for operators; refused while a\n"
		"running VM has it (default vm-UUIDPREFIX)"),
	RUN_OPT(OPT_CONSOLE, "console", "FILE",
		"guest console output to FILE (default stdout)"),
	RUN_OPT(OPT_STATS, "stats", NULL,
		"print the image kind, the host kind and what it\n"
		"implies, then exits by reason"),
	RUN_OPT(OPT_PMU, "pmu", "MODEL",
		"auto, intel-v2, amd-core, amd-v2 or none"),
	RUN_OPT(OPT_KERNEL, "kernel", "IMAGE",
		"boot a Linux vmlinux or bzImage"),
	RUN_OPT(OPT_INITRD, "initrd", "FILE", "Linux initial ramdisk"),
	RUN_OPT(OPT_APPEND, "append", "CMDLINE", "Linux kernel command line"),
	RUN_OPT(OPT_DISK, "disk", "DISK[,ro]",
		"a virtio disk: a raw image, a block device, or a\n"
		"folder (copied into a scratch ext4 image); /dev/vda,\n"
		"then vdb...; the first is the root (repeatable)"),
	RUN_OPT(OPT_NO_SANDBOX, "no-sandbox", NULL,
		"no seccomp filter on the vCPU and control\n"
		"threads (debugging; docs/security.md)"),
	RUN_OPT(OPT_FORMAT_DIR, "format-dir", "DIR",
		"load the run-time sampling formats of DIR\n"
		"(every *.so; a malformed one is refused);\n"
		"default: an installed vpmu's LIBDIR/vpmu/formats"),
	RUN_OPT(OPT_MAX_RATE, "max-sample-rate", "HZ",
		"hard maximum of samples/s per context; higher\n"
		"rates are refused (default 100000)"),
	RUN_OPT(OPT_MAX_OVERHEAD, "max-overhead", "PCT",
		"share of a vCPU's time monitoring may take;\n"
		"past it samples are throttled (default 25)"),
};

/* What the command line said; values point into argv. NULL: not given. */
struct run_args {
	const char *value[NR_OPTIONS];
	const char *target;               /* IMAGE or CONFIG.xml */
	const char *disks[VMM_DISKS_MAX]; /* every --disk, in order */
	unsigned int nr_disks;
};

/* --disk adds a disk each time it is given; other options replace. */
static int take_value(struct run_args *ra, int id, const char *value, char *err,
		      size_t errlen)
{
	if (id != OPT_DISK) {
		ra->value[id] = value;
		return 0;
	}
	if (ra->nr_disks >= VMM_DISKS_MAX) {
		vmm_config_errf(err, errlen, "--disk: more than %u disks",
				VMM_DISKS_MAX);
		return -EINVAL;
	}
	ra->disks[ra->nr_disks++] = value;
	return 0;
}

static int find_option(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NR_OPTIONS; i++) {
		if (strlen(vmm_run_opts[i].name) == len &&
		    strncmp(vmm_run_opts[i].name, name, len) == 0)
			return (int)i;
	}
	return -1;
}

/* "unknown option 'OPT' (options: --vcpus, --mem, ...)" into (err). */
static int unknown_option(const char *arg, int len, char *err, size_t errlen)
{
	char list[NR_OPTIONS * 24] = "";
	size_t used                = 0;
	size_t i;

	for (i = 0; i < NR_OPTIONS && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s--%s", i ? ", " : "",
					 vmm_run_opts[i].name);
	vmm_config_errf(err, errlen, "unknown option '%.*s' (options: %s)", len,
			arg, list);
	return -EINVAL;
}

/* One "--opt[=value]" at argv[*i]; may consume argv[*i + 1]. */
static int take_option(struct run_args *ra, int argc, char **argv, int *i,
		       char *err, size_t errlen)
{
	const char *arg = argv[*i];
	const char *eq  = strchr(arg + 2, '=');
	size_t len      = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
	int id          = find_option(arg + 2, len);

	if (id < 0)
		return unknown_option(arg, (int)len + 2, err, errlen);
	if (!vmm_run_opts[id].arg) {
		if (eq) {
			vmm_config_errf(err, errlen,
					"option '--%s' takes no value",
					vmm_run_opts[id].name);
			return -EINVAL;
		}
		ra->value[id] = "";
		return 0;
	}
	if (eq)
		return take_value(ra, id, eq + 1, err, errlen);
	/* "--console --stats" is a forgotten value, not a file "--stats". */
	if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0) {
		vmm_config_errf(err, errlen, "option '--%s' needs a value",
				vmm_run_opts[id].name);
		return -EINVAL;
	}
	*i += 1;
	return take_value(ra, id, argv[*i], err, errlen);
}

static int take_target(struct run_args *ra, const char *arg, char *err,
		       size_t errlen)
{
	if (ra->target) {
		vmm_config_errf(err, errlen,
				"more than one image or config file given: "
				"'%s' and '%s'",
				ra->target, arg);
		return -EINVAL;
	}
	if (!*arg) {
		vmm_config_errf(err, errlen, "empty image or config file name");
		return -EINVAL;
	}
	ra->target = arg;
	return 0;
}

static bool is_xml(const char *path)
{
	size_t len = strlen(path);

	return len > 4 && strcasecmp(path + len - 4, ".xml") == 0;
}

static int scan_args(struct run_args *ra, int argc, char **argv, char *err,
		     size_t errlen)
{
	bool only_targets = false;
	int i, ret;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!only_targets && strcmp(arg, "--") == 0) {
			only_targets = true;
			continue;
		}
		if (only_targets || arg[0] != '-' || arg[1] == '\0') {
			ret = take_target(ra, arg, err, errlen);
		} else if (arg[1] != '-') {
			ret = unknown_option(arg, (int)strlen(arg), err,
					     errlen);
		} else {
			ret = take_option(ra, argc, argv, &i, err, errlen);
		}
		if (ret)
			return ret;
	}
	if (!ra->target && !ra->value[OPT_KERNEL]) {
		vmm_config_errf(err, errlen,
				"no guest image or config file given "
				"(vpmu run IMAGE|CONFIG.xml [options], or "
				"--kernel IMAGE)");
		return -EINVAL;
	}
	if (ra->target && ra->value[OPT_KERNEL] && !is_xml(ra->target)) {
		vmm_config_errf(err, errlen,
				"both an image '%s' and --kernel '%s' given: "
				"name the image once",
				ra->target, ra->value[OPT_KERNEL]);
		return -EINVAL;
	}
	return 0;
}

static int apply_mem(struct vmm_config *cfg, const char *text, char *err,
		     size_t errlen)
{
	int ret = vmm_config_parse_size(text, &cfg->mem_size);

	if (ret == -ERANGE) {
		vmm_config_errf(err, errlen, "--mem: '%s' is too large", text);
		return -EINVAL;
	}
	if (ret) {
		vmm_config_errf(err, errlen,
				"--mem: '%s' is not a size (e.g. 64M, 1G, "
				"512KiB)",
				text);
		return -EINVAL;
	}
	return vmm_config_check_mem("--mem", cfg->mem_size, err, errlen);
}

/* A whole number from 1 to (max). */
static int apply_u32(const char *opt, const char *text, uint32_t max,
		     uint32_t *out, char *err, size_t errlen)
{
	uint64_t v;

	if (vmm_config_parse_u64(text, max, &v) || v == 0) {
		vmm_config_errf(err, errlen,
				"%s: '%s' is not a whole number from 1 to %u",
				opt, text, max);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

/* "FILE" or "FILE,ro" (the only flag; a path may not hold a comma). */
static int apply_disk(struct vmm_config *cfg, const char *spec, char *err,
		      size_t errlen)
{
	const char *comma = strchr(spec, ',');
	char path[PATH_MAX];

	if (!comma)
		return vmm_config_add_disk("--disk", cfg, spec, false, err,
					   errlen);
	if (strcmp(comma, ",ro") != 0) {
		vmm_config_errf(err, errlen,
				"--disk: '%s': after the file only ',ro' may "
				"follow",
				spec);
		return -EINVAL;
	}
	if ((size_t)(comma - spec) >= sizeof(path)) {
		vmm_config_errf(err, errlen, "--disk: path too long");
		return -EINVAL;
	}
	memcpy(path, spec, (size_t)(comma - spec));
	path[comma - spec] = '\0';
	return vmm_config_add_disk("--disk", cfg, path, true, err, errlen);
}

/* Command-line options override whatever the file or defaults said. */
static int apply_options(struct vmm_config *cfg, const struct run_args *ra,
			 char *err, size_t errlen)
{
	const char *const *v = ra->value;
	unsigned int i;
	int ret = 0;

	if (v[OPT_VCPUS])
		ret = vmm_config_check_vcpus("--vcpus", v[OPT_VCPUS],
					     &cfg->nr_vcpus, err, errlen);
	if (!ret && v[OPT_MEM])
		ret = apply_mem(cfg, v[OPT_MEM], err, errlen);
	if (!ret && v[OPT_NAME])
		ret = vmm_config_check_name("--name", v[OPT_NAME], err, errlen);
	if (!ret && v[OPT_NAME])
		ret = vmm_config_copy_str("--name", cfg->name,
					  sizeof(cfg->name), v[OPT_NAME], err,
					  errlen);
	if (!ret && v[OPT_CONSOLE])
		ret = vmm_config_copy_str("--console", cfg->console,
					  sizeof(cfg->console), v[OPT_CONSOLE],
					  err, errlen);
	if (!ret && v[OPT_PMU])
		ret = vmm_config_check_pmu_model("--pmu", v[OPT_PMU], err,
						 errlen);
	if (!ret && v[OPT_PMU])
		strcpy(cfg->pmu_model, v[OPT_PMU]); /* a known, short name */
	if (!ret && v[OPT_STATS])
		cfg->stats = true;
	if (!ret && v[OPT_KERNEL])
		ret = vmm_config_copy_str("--kernel", cfg->image,
					  sizeof(cfg->image), v[OPT_KERNEL],
					  err, errlen);
	if (!ret && v[OPT_INITRD])
		ret = vmm_config_copy_str("--initrd", cfg->initrd,
					  sizeof(cfg->initrd), v[OPT_INITRD],
					  err, errlen);
	if (!ret && v[OPT_APPEND])
		ret = vmm_config_copy_str("--append", cfg->cmdline,
					  sizeof(cfg->cmdline), v[OPT_APPEND],
					  err, errlen);
	if (!ret && v[OPT_APPEND])
		cfg->has_cmdline = true;
	for (i = 0; !ret && i < ra->nr_disks; i++)
		ret = apply_disk(cfg, ra->disks[i], err, errlen);
	if (!ret && v[OPT_NO_SANDBOX])
		cfg->no_sandbox = true; /* vmm/sandbox: debugging only */
	if (!ret && v[OPT_FORMAT_DIR])
		ret = vmm_config_copy_str("--format-dir", cfg->format_dir,
					  sizeof(cfg->format_dir),
					  v[OPT_FORMAT_DIR], err, errlen);
	if (!ret && v[OPT_MAX_RATE])
		ret = apply_u32("--max-sample-rate", v[OPT_MAX_RATE],
				VMM_SMPL_RATE_CAP, &cfg->limits.max_smpl_rate,
				err, errlen);
	if (!ret && v[OPT_MAX_OVERHEAD])
		ret = apply_u32("--max-overhead", v[OPT_MAX_OVERHEAD], 100,
				&cfg->limits.max_overhead_pct, err, errlen);
	return ret;
}

int vmm_config_parse_run_args(struct vmm_config *cfg, int argc, char **argv,
			      char *err, size_t errlen)
{
	struct run_args ra = {0};
	struct vmm_config tmp;
	int ret;

	ret = scan_args(&ra, argc, argv, err, errlen);
	if (ret)
		return ret;
	if (ra.target && is_xml(ra.target)) {
		ret = vmm_config_load_xml(&tmp, ra.target, err, errlen);
		if (ret)
			return ret;
	} else {
		vmm_config_defaults(&tmp);
		if (ra.target)
			ret = vmm_config_copy_str("image", tmp.image,
						  sizeof(tmp.image), ra.target,
						  err, errlen);
		if (ret)
			return ret;
	}
	ret = apply_options(&tmp, &ra, err, errlen);
	if (ret)
		return ret;
	ret = vmm_config_validate(&tmp, err, errlen);
	if (ret)
		return ret;
	*cfg = tmp;
	return 0;
}
