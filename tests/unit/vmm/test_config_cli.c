// SPDX-License-Identifier: MIT
/*
 * test_config_cli.c: vmm_config_parse_run_args(): every option in both
 * spellings, bad values, unknown options, missing and duplicate images, and
 * options overriding a config file.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vm_config.h"

#define DATA     VPMU_SOURCE_DIR "/tests/unit/vmm/data/"
#define MAX_ARGS 16

/*
 * One command line. For a good one the fields to check are the non-zero
 * want_* ones (want_vcpus 0: not checked); for a bad one, msg is the
 * whole expected message.
 */
struct cli_case {
	int line;
	const char *argv[MAX_ARGS]; /* NULL-terminated */
	const char *msg;
	const char *want_image;
	unsigned int want_vcpus;
	uint64_t want_mem;
	const char *want_name;
	const char *want_console;
	const char *want_pmu;
	bool want_stats;
	const char *want_initrd;
	const char *want_cmdline;
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

static int argc_of(const char *const *argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

static void check_good(const struct cli_case *c, const struct vmm_config *cfg)
{
	if (c->want_image)
		cr_expect(eq(str, (char *)cfg->image, (char *)c->want_image),
			  "row at line %d", c->line);
	if (c->want_vcpus)
		cr_expect(eq(uint, cfg->nr_vcpus, c->want_vcpus),
			  "row at line %d", c->line);
	if (c->want_mem)
		cr_expect(eq(u64, cfg->mem_size, c->want_mem), "row at line %d",
			  c->line);
	if (c->want_name)
		cr_expect(eq(str, (char *)cfg->name, (char *)c->want_name),
			  "row at line %d", c->line);
	if (c->want_console)
		cr_expect(
			eq(str, (char *)cfg->console, (char *)c->want_console),
			"row at line %d", c->line);
	if (c->want_pmu)
		cr_expect(eq(str, (char *)cfg->pmu_model, (char *)c->want_pmu),
			  "row at line %d", c->line);
	cr_expect(eq(int, cfg->stats, c->want_stats), "row at line %d",
		  c->line);
	if (c->want_initrd)
		cr_expect(eq(str, (char *)cfg->initrd, (char *)c->want_initrd),
			  "row at line %d", c->line);
	if (c->want_cmdline) {
		cr_expect(
			eq(str, (char *)cfg->cmdline, (char *)c->want_cmdline),
			"row at line %d", c->line);
		cr_expect(cfg->has_cmdline, "row at line %d", c->line);
	}
}

static void run_rows(const struct cli_case *cases, size_t n)
{
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg, before;
	char *argv[MAX_ARGS];
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		const struct cli_case *c = &cases[i];

		memcpy(argv, c->argv, sizeof(argv));
		memset(&cfg, 0x5a, sizeof(cfg));
		before = cfg;
		err[0] = '\0';
		ret    = vmm_config_parse_run_args(&cfg, argc_of(c->argv), argv,
						   err, sizeof(err));
		cr_expect(memcmp(argv, c->argv, sizeof(argv)) == 0,
			  "row at line %d: argv was permuted", c->line);
		if (!c->msg) {
			cr_expect(eq(int, ret, 0), "row at line %d: %s",
				  c->line, err);
			if (ret == 0)
				check_good(c, &cfg);
			continue;
		}
		cr_expect(eq(int, ret, -EINVAL), "row at line %d", c->line);
		cr_expect(eq(str, err, (char *)c->msg), "row at line %d",
			  c->line);
		cr_expect(memcmp(&cfg, &before, sizeof(cfg)) == 0,
			  "row at line %d: cfg written on failure", c->line);
	}
}

Test(vmm_config_cli, every_option_both_spellings)
{
	static const struct cli_case cases[] = {
		ROW(.argv = {"g.elf"}, .want_image = "g.elf", .want_vcpus = 1,
		    .want_mem = VMM_MEM_DEFAULT, .want_name = "",
		    .want_console = "", .want_pmu = "auto"),
		ROW(.argv = {"g.elf", "--vcpus", "4"}, .want_vcpus = 4),
		ROW(.argv = {"g.elf", "--vcpus=64"}, .want_vcpus = 64),
		ROW(.argv = {"--vcpus", "3", "g.elf"}, .want_image = "g.elf",
		    .want_vcpus = 3),
		ROW(.argv     = {"g.elf", "--mem", "128M"},
		    .want_mem = 128ULL << 20),
		ROW(.argv = {"g.elf", "--mem=1GiB"}, .want_mem = 1ULL << 30),
		ROW(.argv = {"g.elf", "--mem=4194304"}, .want_mem = 4ULL << 20),
		ROW(.argv = {"g.elf", "--name", "vm-1"}, .want_name = "vm-1"),
		ROW(.argv = {"g.elf", "--name=a.b_c"}, .want_name = "a.b_c"),
		ROW(.argv         = {"g.elf", "--console", "out.log"},
		    .want_console = "out.log"),
		ROW(.argv         = {"g.elf", "--console=/tmp/a=b"},
		    .want_console = "/tmp/a=b"),
		ROW(.argv = {"g.elf", "--stats"}, .want_stats = true),
		ROW(.argv     = {"g.elf", "--pmu", "intel-v2"},
		    .want_pmu = "intel-v2"),
		ROW(.argv     = {"g.elf", "--pmu=amd-core"},
		    .want_pmu = "amd-core"),
		ROW(.argv = {"g.elf", "--pmu=amd-v2"}, .want_pmu = "amd-v2"),
		ROW(.argv = {"g.elf", "--pmu=none"}, .want_pmu = "none"),
		ROW(.argv       = {"g.elf", "--vcpus", "2", "--vcpus=5"},
		    .want_vcpus = 5), /* the last one wins */
		ROW(.argv       = {"--stats", "--", "--odd-name.elf"},
		    .want_image = "--odd-name.elf", .want_stats = true),
		ROW(.argv = {"-"}, .want_image = "-"),
		ROW(.argv = {"g.elf", "--vcpus", "2", "--mem", "32M", "--name",
			     "x", "--console", "c", "--stats", "--pmu", "none"},
		    .want_image = "g.elf", .want_vcpus = 2,
		    .want_mem = 32ULL << 20, .want_name = "x",
		    .want_console = "c", .want_pmu = "none",
		    .want_stats = true),
	};

	run_rows(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(vmm_config_cli, linux_kernel_initrd_and_command_line)
{
	static const struct cli_case cases[] = {
		ROW(.argv       = {"--kernel", "vmlinux", "--initrd", "i.cpio",
				   "--append", "console=ttyS0 quiet"},
		    .want_image = "vmlinux", .want_initrd = "i.cpio",
		    .want_cmdline = "console=ttyS0 quiet"),
		ROW(.argv = {"bzImage", "--append="}, .want_image = "bzImage",
		    .want_cmdline = ""),
		ROW(.argv         = {DATA "linux.xml"},
		    .want_image   = "/opt/vpmu/linux/vmlinux",
		    .want_initrd  = "/opt/vpmu/linux/initrd.cpio",
		    .want_cmdline = "console=ttyS0 vpmutest=boot"),
		ROW(.argv = {DATA "linux.xml", "--kernel=/k", "--append", "x"},
		    .want_image = "/k", .want_cmdline = "x"),
		ROW(.argv = {"a.elf", "--kernel", "b"},
		    .msg = "both an image 'a.elf' and --kernel 'b' given: name "
			   "the image once"),
		ROW(.argv = {"--kernel", "vmlinux", "--initrd"},
		    .msg  = "option '--initrd' needs a value"),
	};

	run_rows(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(vmm_config_cli, bad_command_lines_name_the_option)
{
	static const struct cli_case cases[] = {
		ROW(.argv = {NULL},
		    .msg  = "no guest image or config file given (vpmu run "
			    "IMAGE|CONFIG.xml [options], or --kernel IMAGE)"),
		ROW(.argv = {"--stats"},
		    .msg  = "no guest image or config file given (vpmu run "
			    "IMAGE|CONFIG.xml [options], or --kernel IMAGE)"),
		ROW(.argv = {"a.elf", "b.elf"},
		    .msg  = "more than one image or config file given: 'a.elf' "
			    "and 'b.elf'"),
		ROW(.argv = {""}, .msg = "empty image or config file name"),
		ROW(.argv = {"g.elf", "--cpus", "2"},
		    .msg  = "unknown option '--cpus' (options: --vcpus, --mem, "
			    "--name, --console, --stats, --pmu, --kernel, "
			    "--initrd, --append, --disk, --no-sandbox, "
			    "--format-dir, "
			    "--max-sample-rate, --max-overhead)"),
		ROW(.argv = {"g.elf", "--vcpu=2"},
		    .msg  = "unknown option '--vcpu' (options: --vcpus, --mem, "
			    "--name, --console, --stats, --pmu, --kernel, "
			    "--initrd, --append, --disk, --no-sandbox, "
			    "--format-dir, "
			    "--max-sample-rate, --max-overhead)"),
		ROW(.argv = {"g.elf", "-v"},
		    .msg  = "unknown option '-v' (options: --vcpus, --mem, "
			    "--name, --console, --stats, --pmu, --kernel, "
			    "--initrd, --append, --disk, --no-sandbox, "
			    "--format-dir, "
			    "--max-sample-rate, --max-overhead)"),
		ROW(.argv = {"g.elf", "--vcpus"},
		    .msg  = "option '--vcpus' needs a value"),
		ROW(.argv = {"g.elf", "--console", "--stats"},
		    .msg  = "option '--console' needs a value"),
		ROW(.argv = {"g.elf", "--stats=yes"},
		    .msg  = "option '--stats' takes no value"),
		ROW(.argv = {"g.elf", "--vcpus", "4x"},
		    .msg  = "--vcpus: '4x' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus="},
		    .msg  = "--vcpus: '' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus", "-1"},
		    .msg  = "--vcpus: '-1' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus", "0"},
		    .msg  = "--vcpus: '0' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus", "65"},
		    .msg  = "--vcpus: '65' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus", "4294967298"},
		    .msg = "--vcpus: '4294967298' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus", "99999999999999999999999"},
		    .msg  = "--vcpus: '99999999999999999999999' is not a vCPU "
			    "count (1..64)"),
		ROW(.argv = {"g.elf", "--vcpus", " 2"},
		    .msg  = "--vcpus: ' 2' is not a vCPU count (1..64)"),
		ROW(.argv = {"g.elf", "--mem", "64Q"},
		    .msg = "--mem: '64Q' is not a size (e.g. 64M, 1G, 512KiB)"),
		ROW(.argv = {"g.elf", "--mem", "-64M"},
		    .msg  = "--mem: '-64M' is not a size (e.g. 64M, 1G, "
			    "512KiB)"),
		ROW(.argv = {"g.elf", "--mem", "99999999999999999999"},
		    .msg  = "--mem: '99999999999999999999' is too large"),
		ROW(.argv = {"g.elf", "--mem", "1M"},
		    .msg  = "--mem: 1 MiB is less than the minimum, 2 MiB"),
		ROW(.argv = {"g.elf", "--mem", "4G"},
		    .msg  = "--mem: 4 GiB is more than the maximum, 3 GiB"),
		ROW(.argv = {"g.elf", "--mem", "4097K"},
		    .msg  = "--mem: 4097 KiB is not a multiple of 4 KiB"),
		ROW(.argv = {"g.elf", "--name", "a/b"},
		    .msg  = "--name: 'a/b' contains '/'; a name uses only A-Z "
			    "a-z 0-9 . _ -"),
		ROW(.argv = {"g.elf", "--name="},
		    .msg  = "--name: a name has 1 to 63 characters, not 0"),
		ROW(.argv = {"g.elf", "--pmu", "intel"},
		    .msg = "--pmu: 'intel' is not a PMU model (auto, intel-v2, "
			   "amd-core, amd-v2, none)"),
	};

	run_rows(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(vmm_config_cli, options_override_the_config_file)
{
	static const struct cli_case cases[] = {
		ROW(.argv       = {DATA "good.xml"},
		    .want_image = "/opt/vpmu/guests/test.elf", .want_vcpus = 4,
		    .want_mem = 1ULL << 30, .want_name = "good-vm_1.0",
		    .want_console = "/tmp/guest console.log",
		    .want_pmu = "amd-v2", .want_stats = true),
		ROW(.argv       = {"--vcpus=1", DATA "good.xml", "--mem", "16M",
				   "--name", "other", "--console", "-", "--pmu",
				   "none"},
		    .want_image = "/opt/vpmu/guests/test.elf", .want_vcpus = 1,
		    .want_mem = 16ULL << 20, .want_name = "other",
		    .want_console = "-", .want_pmu = "none",
		    .want_stats = true),
		ROW(.argv       = {DATA "minimal.xml", "--stats"},
		    .want_image = "/opt/vpmu/guests/min.elf", .want_vcpus = 1,
		    .want_mem = 64ULL << 20, .want_stats = true),
	};

	run_rows(cases, sizeof(cases) / sizeof(cases[0]));
}

Test(vmm_config_cli, config_file_errors_pass_through)
{
	char err[VMM_CONFIG_ERR_LEN];
	char *argv[] = {DATA "vcpu_zero.xml", "--vcpus", "2", NULL};
	struct vmm_config cfg;

	cr_assert(eq(int,
		     vmm_config_parse_run_args(&cfg, 3, argv, err, sizeof(err)),
		     -EINVAL));
	cr_assert(strstr(err, "vcpu_zero.xml:3: <vcpu>: '0' is not a vCPU "
			      "count") != NULL,
		  "%s", err);

	argv[0] = DATA "no_such_file.xml";
	cr_assert(eq(int,
		     vmm_config_parse_run_args(&cfg, 3, argv, err, sizeof(err)),
		     -ENOENT));
	cr_assert(strstr(err, "no_such_file.xml: No such file or directory") !=
			  NULL,
		  "%s", err);
}

Test(vmm_config_cli, repeated_calls_are_independent)
{
	char err[VMM_CONFIG_ERR_LEN];
	char *a[] = {"a.elf", "--vcpus", "2", "--stats", NULL};
	char *b[] = {"--name=b", "b.elf", NULL};
	struct vmm_config cfg;
	int i;

	for (i = 0; i < 3; i++) {
		cr_assert(eq(
			int,
			vmm_config_parse_run_args(&cfg, 4, a, err, sizeof(err)),
			0));
		cr_assert(eq(uint, cfg.nr_vcpus, 2));
		cr_assert(cfg.stats);
		cr_assert(eq(
			int,
			vmm_config_parse_run_args(&cfg, 2, b, err, sizeof(err)),
			0));
		cr_assert(eq(uint, cfg.nr_vcpus, 1));
		cr_assert(not(cfg.stats));
		cr_assert(eq(str, cfg.name, "b"));
		cr_assert(eq(str, cfg.image, "b.elf"));
	}
}

/* Spec 3.5: vpmu run --format-dir DIR, both spellings. */
Test(vmm_config_cli, format_dir_option)
{
	char *a1[] = {"g.elf", "--format-dir", "/x/fmts"};
	char *a2[] = {"g.elf", "--format-dir=/y"};
	char *a3[] = {"g.elf", "--format-dir"};
	struct vmm_config cfg;
	char e[VMM_CONFIG_ERR_LEN];

	cr_assert(eq(int, vmm_config_parse_run_args(&cfg, 3, a1, e, sizeof(e)),
		     0),
		  "%s", e);
	cr_assert(eq(str, cfg.format_dir, "/x/fmts"));
	cr_assert(eq(int, vmm_config_parse_run_args(&cfg, 2, a2, e, sizeof(e)),
		     0),
		  "%s", e);
	cr_assert(eq(str, cfg.format_dir, "/y"));
	cr_assert(eq(int, vmm_config_parse_run_args(&cfg, 2, a3, e, sizeof(e)),
		     -EINVAL));
	cr_assert(not(eq(ptr, strstr(e, "--format-dir"), NULL)), "%s", e);
}

/* The sandbox is on unless --no-sandbox asks otherwise. */
Test(vmm_config_cli, no_sandbox_flag)
{
	char *with[]    = {"g.elf", "--no-sandbox"};
	char *without[] = {"g.elf"};
	char err[256]   = "";
	struct vmm_config cfg;

	cr_assert(eq(int,
		     vmm_config_parse_run_args(&cfg, 1, without, err,
					       sizeof(err)),
		     0),
		  "%s", err);
	cr_expect(not(cfg.no_sandbox));
	cr_assert(eq(int,
		     vmm_config_parse_run_args(&cfg, 2, with, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_expect(cfg.no_sandbox);
	cr_assert(not(eq(int,
			 vmm_config_parse_run_args(
				 &cfg, 2, (char *[]){"g.elf", "--no-sandbox=1"},
				 err, sizeof(err)),
			 0)),
		  "the flag takes no value");
}

/* A disk file of this test (data/ holds only XML): created on demand. */
static const char *disk_file(const char *name, mode_t mode)
{
	static char path[4][256];
	static unsigned int n;
	char *p = path[n++ % 4];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/vpmu-test-disk-%d-%s",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(),
		 name);
	f = fopen(p, "w");
	cr_assert(not(eq(ptr, f, NULL)), "%s", p);
	fclose(f);
	cr_assert(eq(int, chmod(p, mode), 0));
	return p;
}

static int parse(struct vmm_config *cfg, const char *const *argv, char *err)
{
	char *args[MAX_ARGS];

	memcpy(args, argv, sizeof(args));
	return vmm_config_parse_run_args(cfg, argc_of(argv), args, err,
					 VMM_CONFIG_ERR_LEN);
}

Test(vmm_config_cli, disks_in_order_read_only_or_not)
{
	const char *a = disk_file("a", 0644), *b = disk_file("b", 0644);
	char spec[300], err[VMM_CONFIG_ERR_LEN]  = "";
	struct vmm_config cfg;

	snprintf(spec, sizeof(spec), "%s,ro", b);
	cr_assert(eq(int,
		     parse(&cfg,
			   (const char *[MAX_ARGS]){"--kernel", "bz", "--disk",
						    a, "--disk", spec, NULL},
			   err),
		     0),
		  "%s", err);
	cr_assert(eq(uint, cfg.nr_disks, 2));
	cr_expect(eq(str, cfg.disks[0].path, (char *)a));
	cr_expect(not(cfg.disks[0].read_only));
	cr_expect(eq(str, cfg.disks[1].path, (char *)b));
	cr_expect(cfg.disks[1].read_only);
	unlink(a);
	unlink(b);
}

Test(vmm_config_cli, bad_disks_are_named)
{
	const char *a  = disk_file("c", 0644);
	const char *ro = disk_file("d", 0444);
	char spec[300], err[VMM_CONFIG_ERR_LEN] = "";
	struct vmm_config cfg;

	snprintf(spec, sizeof(spec), "%s,rw", a);
	cr_expect(eq(int,
		     parse(&cfg,
			   (const char *[MAX_ARGS]){"--kernel", "bz", "--disk",
						    spec, NULL},
			   err),
		     -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "only ',ro' may follow"), NULL)),
		  "%s", err);
	cr_expect(eq(
		int,
		parse(&cfg,
		      (const char *[MAX_ARGS]){"--kernel", "bz", "--disk",
					       "/nonexistent/disk.img", NULL},
		      err),
		-EINVAL));
	cr_expect(eq(str, err,
		     "--disk: '/nonexistent/disk.img': No such file or "
		     "directory"));
	cr_expect(eq(int,
		     parse(&cfg,
			   (const char *[MAX_ARGS]){"--kernel", "bz", "--disk",
						    "/dev/null", NULL},
			   err),
		     -EINVAL));
	cr_expect(not(eq(ptr,
			 strstr(err, "not a file, a block device or a folder"),
			 NULL)),
		  "%s", err);
	/* Root may write anywhere: only judged where access() says so. */
	if (access(ro, W_OK)) {
		cr_expect(eq(int,
			     parse(&cfg,
				   (const char *[MAX_ARGS]){"--kernel", "bz",
							    "--disk", ro, NULL},
				   err),
			     -EINVAL));
		cr_expect(not(eq(ptr, strstr(err, "',ro' attaches it"), NULL)),
			  "%s", err);
	}
	cr_expect(eq(int,
		     parse(&cfg,
			   (const char *[MAX_ARGS]){
				   "--kernel", "bz", "--disk", a, "--disk", a,
				   "--disk", a, "--disk", a, "--disk", a, NULL},
			   err),
		     -EINVAL));
	cr_expect(eq(str, err, "--disk: more than 4 disks"));
	unlink(a);
	unlink(ro);
}

/* A folder given as a disk becomes an ext4 image holding its files. */
Test(vmm_config_cli, a_folder_disk_becomes_a_scratch_image)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[256], file[300], cmd[PATH_MAX + 64], out[64] = "";
	char err[VMM_CONFIG_ERR_LEN] = "";
	struct vmm_config cfg;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/vpmu-test-dir-XXXXXX", tmp);
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(file, sizeof(file), "%s/hello.txt", dir);
	f = fopen(file, "w");
	cr_assert(not(eq(ptr, f, NULL)));
	fputs("from the host\n", f);
	fclose(f);
	cr_assert(eq(int,
		     parse(&cfg,
			   (const char *[MAX_ARGS]){"--kernel", "bz", "--disk",
						    dir, NULL},
			   err),
		     0),
		  "%s", err);
	cr_assert(cfg.disks[0].from_dir);
	cr_assert(
		eq(int, vmm_config_disk_images(&cfg, tmp, err, sizeof(err)), 0),
		"%s", err);
	cr_expect(not(cfg.disks[0].from_dir));
	cr_expect(cfg.disks[0].remove_after_open);
	cr_expect(not(eq(ptr, strstr(cfg.disks[0].path, ".ext4"), NULL)));
	snprintf(cmd, sizeof(cmd), "debugfs -R 'cat /hello.txt' %s 2>/dev/null",
		 cfg.disks[0].path);
	f = popen(cmd, "r");
	cr_assert(not(eq(ptr, f, NULL)));
	cr_expect(not(eq(ptr, fgets(out, sizeof(out), f), NULL)));
	pclose(f);
	cr_expect(eq(str, out, "from the host\n"), "%s", cmd);
	unlink(cfg.disks[0].path);
	unlink(file);
	rmdir(dir);
}
