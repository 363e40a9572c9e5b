// SPDX-License-Identifier: MIT
/*
 * test_config_xml.c: vmm_config_load_xml() on the files in data/ and on the
 * shipped configs: exact reading of good files, and for each kind of bad
 * file an error that names the file, the element and the problem.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vm_config.h"

#define DATA VPMU_SOURCE_DIR "/tests/unit/vmm/data/"

static char err[VMM_CONFIG_ERR_LEN];

static int load(const char *path, struct vmm_config *cfg)
{
	err[0] = '\0';
	return vmm_config_load_xml(cfg, path, err, sizeof(err));
}

Test(vmm_config_xml, reads_every_setting_exactly)
{
	struct vmm_config cfg;
	uuid_t want;

	cr_assert(eq(int, load(DATA "good.xml", &cfg), 0), "%s", err);
	cr_assert(eq(str, cfg.name, "good-vm_1.0"));
	cr_assert(uuid_parse("4dea22b3-1d52-d8f3-2516-782e98ab3fa0", want) ==
		  0);
	cr_assert(cfg.has_uuid);
	cr_assert(uuid_compare(cfg.uuid, want) == 0);
	cr_assert(eq(u64, cfg.mem_size, 1ULL << 30));
	cr_assert(eq(uint, cfg.nr_vcpus, 4));
	cr_assert(eq(str, cfg.image, "/opt/vpmu/guests/test.elf"));
	cr_assert(eq(str, cfg.console, "/tmp/guest console.log"));
	cr_assert(cfg.stats);
	cr_assert(eq(str, cfg.pmu_model, "amd-v2"));
	cr_assert(eq(u32, cfg.limits.max_contexts, 8));
	cr_assert(eq(u32, cfg.limits.max_sets, 4));
	cr_assert(eq(u64, cfg.limits.max_smpl_mem, 2ULL << 20));
	cr_assert(eq(u32, cfg.limits.max_msgs, 128));
	cr_assert(eq(u32, cfg.limits.max_arg_size, 4096));
	/* <vpmu:throttle max-rate max-overhead>. */
	cr_assert(eq(u32, cfg.limits.max_smpl_rate, 5000));
	cr_assert(eq(u32, cfg.limits.max_overhead_pct, 10));
	cr_assert(eq(str, cfg.source, DATA "good.xml"));
	cr_assert(eq(int, vmm_config_validate(&cfg, err, sizeof(err)), 0), "%s",
		  err);
}

Test(vmm_config_xml, minimal_file_keeps_defaults)
{
	struct vmm_config cfg, def;

	vmm_config_defaults(&def);
	cr_assert(eq(int, load(DATA "minimal.xml", &cfg), 0), "%s", err);
	cr_assert(eq(str, cfg.name, "minimal"));
	cr_assert(not(cfg.has_uuid));
	cr_assert(eq(u64, cfg.mem_size, 64ULL << 20)); /* default unit KiB */
	cr_assert(eq(uint, cfg.nr_vcpus, 1));
	cr_assert(eq(str, cfg.image, "/opt/vpmu/guests/min.elf"));
	cr_assert(eq(str, cfg.console, ""));
	cr_assert(not(cfg.stats));
	cr_assert(eq(str, cfg.pmu_model, "auto"));
	cr_assert(memcmp(&cfg.limits, &def.limits, sizeof(def.limits)) == 0);
}

/*
 * Shipped configs, as generated into the build tree by configs/CMakeLists.txt
 * with absolute guest image paths.
 */
Test(vmm_config_xml, shipped_configs_load)
{
	struct vmm_config cfg;

	cr_assert(eq(int, load(VPMU_BUILD_DIR "/configs/demo.xml", &cfg), 0),
		  "%s", err);
	cr_assert(eq(str, cfg.name, "demo"));
	cr_assert(eq(uint, cfg.nr_vcpus, 2));
	cr_assert(eq(u64, cfg.mem_size, 64ULL << 20));
	cr_assert(eq(str, cfg.image, VPMU_BUILD_DIR "/guests/demo_pmu.elf"));
	cr_assert(eq(str, cfg.pmu_model, "intel-v2"));

	cr_assert(eq(int, load(VPMU_BUILD_DIR "/configs/smp4.xml", &cfg), 0),
		  "%s", err);
	cr_assert(eq(uint, cfg.nr_vcpus, 4));
	cr_assert(eq(str, cfg.image, VPMU_BUILD_DIR "/guests/smp.elf"));
	cr_assert(cfg.stats);
}

/* Write a minimal domain with (memory) as its <memory> element. */
static void write_domain(char *path, const char *memory)
{
	int fd;
	FILE *f;

	strcpy(path, "/tmp/vpmu_test_XXXXXX.xml");
	fd = mkstemps(path, 4);
	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	cr_assert(f != NULL);
	fprintf(f,
		"<domain type='kvm'><name>m</name>%s<os><type>hvm</type>"
		"<kernel>/g.elf</kernel></os></domain>\n",
		memory);
	cr_assert(eq(int, fclose(f), 0));
}

struct mem_case {
	int line;
	const char *xml;
	int ret;
	uint64_t want;   /* bytes, when ret is 0 */
	const char *msg; /* part of the message, when ret is not 0 */
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

Test(vmm_config_xml, memory_units)
{
	static const struct mem_case cases[] = {
		ROW(.xml = "<memory>65536</memory>", .want = 64ULL << 20),
		ROW(.xml  = "<memory unit='KiB'>4096</memory>",
		    .want = 4ULL << 20),
		ROW(.xml  = "<memory unit='k'>4096</memory>",
		    .want = 4ULL << 20),
		ROW(.xml  = "<memory unit='b'>8388608</memory>",
		    .want = 8ULL << 20),
		ROW(.xml  = "<memory unit='bytes'>8388608</memory>",
		    .want = 8ULL << 20),
		ROW(.xml = "<memory unit='M'>64</memory>", .want = 64ULL << 20),
		ROW(.xml  = "<memory unit='MiB'>64</memory>",
		    .want = 64ULL << 20),
		ROW(.xml = "<memory unit='MB'>64</memory>", .want = 64000000),
		ROW(.xml = "<memory unit='KB'>8192</memory>", .want = 8192000),
		ROW(.xml = "<memory unit='G'>2</memory>", .want = 2ULL << 30),
		ROW(.xml = "<memory unit='GiB'>3</memory>", .want = 3ULL << 30),
		ROW(.xml = "<memory unit='GB'>2</memory>", .ret = -EINVAL,
		    .msg = "<memory>: 1953125 KiB is not a multiple of 4 KiB"),
		ROW(.xml = "<memory unit='MiB'> 64 </memory>", .ret = -EINVAL,
		    .msg = "not a valid libvirt domain: line 1: <memory>: "
			   "Error "
			   "validating datatype unsignedLong"),
		ROW(.xml  = "<currentMemory unit='MiB'>32</currentMemory>",
		    .want = 32ULL << 20),
		ROW(.xml  = "<memory unit='MiB'>16</memory>"
			    "<currentMemory unit='KiB'>16384</currentMemory>",
		    .want = 16ULL << 20),
		ROW(.xml = "<memory unit='KiB'>4194304</memory>",
		    .ret = -EINVAL,
		    .msg = "<memory>: 4 GiB is more than the maximum, 3 GiB"),
		ROW(.xml = "<memory unit='MiB'>1</memory>", .ret = -EINVAL,
		    .msg = "<memory>: 1 MiB is less than the minimum, 2 MiB"),
		ROW(.xml = "<memory unit='MB'>3</memory>", .ret = -EINVAL,
		    .msg = "<memory>: 3000000 bytes is not a multiple of 4 "
			   "KiB"),
		ROW(.xml = "<memory unit='EiB'>16</memory>", .ret = -EINVAL,
		    .msg = "<memory>: '16 EiB' does not fit in 64 bits"),
		ROW(.xml = "<memory>-1</memory>", .ret = -EINVAL,
		    .msg = "<memory>: '-1' is not a number"),
		ROW(.xml = "<memory unit='MiX'>64</memory>", .ret = -EINVAL,
		    .msg = "<memory>: unit 'MiX' is not a libvirt unit"),
		ROW(.xml = "<memory unit='MiB'>64</memory>"
			   "<currentMemory unit='MiB'>32</currentMemory>",
		    .ret = -EINVAL,
		    .msg = "<currentMemory>: 33554432 bytes "
			   "differs from <memory>"),
	};
	struct vmm_config cfg;
	char path[64];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mem_case *c = &cases[i];

		write_domain(path, c->xml);
		ret = load(path, &cfg);
		unlink(path);
		cr_expect(eq(int, ret, c->ret), "row at line %d: %s", c->line,
			  err);
		if (c->ret == 0 && ret == 0)
			cr_expect(eq(u64, cfg.mem_size, c->want),
				  "row at line %d", c->line);
		if (c->ret)
			cr_expect(strstr(err, c->msg) && strstr(err, path),
				  "row at line %d: '%s' lacks '%s' or the path",
				  c->line, err, c->msg);
	}
}

struct bad_case {
	int line;
	const char *file;
	int ret;
	const char *msg[3]; /* all must appear in the message */
};

Test(vmm_config_xml, bad_files_name_file_element_and_problem)
{
	static const struct bad_case cases[] = {
		ROW(.file = "not_well_formed.xml", .ret = -EINVAL,
		    .msg = {"not_well_formed.xml:7: not well-formed XML",
			    "osx"}),
		ROW(.file = "undeclared_prefix.xml", .ret = -EINVAL,
		    .msg = {"undeclared_prefix.xml:9: not well-formed XML",
			    "vpmu"}),
		ROW(.file = "not_domain.xml", .ret = -EINVAL,
		    .msg = {"not_domain.xml:1: <network>",
			    "root element must be <domain>"}),
		ROW(.file = "schema_invalid.xml", .ret = -EINVAL,
		    .msg = {"schema_invalid.xml: not a valid libvirt domain",
			    "line 3: <frobnicate>", "extra content"}),
		ROW(.file = "bad_uuid.xml", .ret = -EINVAL,
		    .msg = {"bad_uuid.xml:3: <uuid>:",
			    "'4dea22b3-1d52-d8f3-2516-782e98ab3fz0' is not a "
			    "UUID"}),
		ROW(.file = "bad_unit.xml", .ret = -EINVAL,
		    .msg = {"bad_unit.xml:3: <memory>:",
			    "unit 'furlong' is not a libvirt unit"}),
		ROW(.file = "bad_memory.xml", .ret = -EINVAL,
		    .msg = {"bad_memory.xml:3: <memory>:",
			    "4194305 bytes is not a multiple of 4 KiB"}),
		ROW(.file = "big_memory.xml", .ret = -EINVAL,
		    .msg = {"big_memory.xml:3: <memory>:",
			    "1 TiB is more than the maximum, 3 GiB"}),
		ROW(.file = "nan_memory.xml", .ret = -EINVAL,
		    .msg = {"nan_memory.xml:3: <memory>:",
			    "'lots' is not a number"}),
		ROW(.file = "balloon.xml", .ret = -EINVAL,
		    .msg = {"balloon.xml:4: <currentMemory>:",
			    "no memory balloon"}),
		ROW(.file = "vcpu_zero.xml", .ret = -EINVAL,
		    .msg = {"vcpu_zero.xml:3: <vcpu>: '0' is not a vCPU count "
			    "(1..64)"}),
		ROW(.file = "vcpu_many.xml", .ret = -EINVAL,
		    .msg = {"vcpu_many.xml:3: <vcpu>: '65' is not a vCPU count "
			    "(1..64)"}),
		ROW(.file = "no_kernel.xml", .ret = -EINVAL,
		    .msg = {"no_kernel.xml:4: <os>: no <kernel>"}),
		ROW(.file = "relative_kernel.xml", .ret = -EINVAL,
		    .msg = {"relative_kernel.xml:6: <kernel>:",
			    "'min.elf' is not an absolute path"}),
		ROW(.file = "relative_initrd.xml", .ret = -EINVAL,
		    .msg = {"relative_initrd.xml:7: <initrd>:",
			    "'initrd.cpio' is not an absolute path"}),
		ROW(.file = "bad_name.xml", .ret = -EINVAL,
		    .msg = {"bad_name.xml:2: <name>:", "'my vm' contains ' '"}),
		ROW(.file = "bad_arch.xml", .ret = -EINVAL,
		    .msg = {"bad_arch.xml:5: <type>:",
			    "arch 'aarch64' is not supported"}),
		ROW(.file = "unknown_vpmu_elem.xml", .ret = -EINVAL,
		    .msg = {"unknown_vpmu_elem.xml:11: <vpmu:sampling>:",
			    "unknown vpmu setting"}),
		ROW(.file = "unknown_vpmu_attr.xml", .ret = -EINVAL,
		    .msg = {"unknown_vpmu_attr.xml:10: <vpmu:limits>:",
			    "unknown attribute 'context'"}),
		ROW(.file = "unknown_vpmu_top.xml", .ret = -EINVAL,
		    .msg = {"unknown_vpmu_top.xml:9: <vpmu:settings>:",
			    "unknown vpmu element"}),
		ROW(.file = "bad_pmu_model.xml", .ret = -EINVAL,
		    .msg = {"bad_pmu_model.xml:10: <vpmu:pmu>:",
			    "'intel-v9' is not a PMU model"}),
		ROW(.file = "bad_limit.xml", .ret = -EINVAL,
		    .msg = {"bad_limit.xml:10: <vpmu:limits>:",
			    "sets='0' is not a whole number from 1 to "
			    "4294967295"}),
		ROW(.file = "bad_limit_size.xml", .ret = -EINVAL,
		    .msg = {"bad_limit_size.xml:10: <vpmu:limits>:",
			    "arg-size='8G' is not a size"}),
		ROW(.file = "twice.xml", .ret = -EINVAL,
		    .msg = {"twice.xml:11: <vpmu:stats>: given twice"}),
		ROW(.file = "missing_attr.xml", .ret = -EINVAL,
		    .msg = {"missing_attr.xml:10: <vpmu:console>:",
			    "missing attribute 'file'"}),
		ROW(.file = "no_such_file.xml", .ret = -ENOENT,
		    .msg = {"no_such_file.xml: No such file or directory"}),
	};
	struct vmm_config cfg, before;
	char path[512];
	size_t i, j;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];

		snprintf(path, sizeof(path), DATA "%s", c->file);
		memset(&cfg, 0x5a, sizeof(cfg));
		before = cfg;
		ret    = load(path, &cfg);
		cr_expect(eq(int, ret, c->ret), "row at line %d: %s", c->line,
			  err);
		cr_expect(memcmp(&cfg, &before, sizeof(cfg)) == 0,
			  "row at line %d: cfg written on failure", c->line);
		for (j = 0; j < 3 && c->msg[j]; j++)
			cr_expect(strstr(err, c->msg[j]) != NULL,
				  "row at line %d: '%s' lacks '%s'", c->line,
				  err, c->msg[j]);
	}
}

Test(vmm_config_xml, missing_schema_says_what_to_install)
{
	struct vmm_config cfg;

	setenv(VMM_CONFIG_SCHEMA_ENV, "/nonexistent/domain.rng", 1);
	cr_assert(eq(int, load(DATA "minimal.xml", &cfg), -ENOENT));
	cr_assert(strstr(err,
			 "minimal.xml: libvirt schema not found at "
			 "/nonexistent/domain.rng: install libvirt0") != NULL,
		  "%s", err);
}

Test(vmm_config_xml, schema_path_override_is_used)
{
	struct vmm_config cfg;

	setenv(VMM_CONFIG_SCHEMA_ENV, DATA "good.xml", 1);
	cr_assert(eq(int, load(DATA "minimal.xml", &cfg), -EINVAL));
	cr_assert(strstr(err, "cannot load libvirt schema " DATA "good.xml") !=
			  NULL,
		  "%s", err);
}

Test(vmm_config_xml, small_error_buffer_is_terminated)
{
	struct vmm_config cfg;
	char small[16];

	memset(small, 'x', sizeof(small));
	cr_assert(eq(int,
		     vmm_config_load_xml(&cfg, DATA "vcpu_zero.xml", small,
					 sizeof(small)),
		     -EINVAL));
	cr_assert(eq(sz, strlen(small), sizeof(small) - 1));
	cr_assert(eq(int,
		     vmm_config_load_xml(&cfg, DATA "vcpu_zero.xml", NULL, 0),
		     -EINVAL));
}

Test(vmm_config_xml, uuid_with_or_without_dashes)
{
	static const char *const forms[] = {
		"<uuid>4DEA22B31D52D8F32516782E98AB3FA0</uuid>",
		"<uuid>4dea22b3-1d52-d8f3-2516-782e98ab3fa0</uuid>",
	};
	struct vmm_config cfg;
	char xml[128], path[64];
	uuid_t want;
	size_t i;
	int ret;

	cr_assert(uuid_parse("4dea22b3-1d52-d8f3-2516-782e98ab3fa0", want) ==
		  0);
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(xml, sizeof(xml), "%s<memory>65536</memory>",
			 forms[i]);
		write_domain(path, xml);
		ret = load(path, &cfg);
		unlink(path);
		cr_assert(eq(int, ret, 0), "%s: %s", forms[i], err);
		cr_assert(cfg.has_uuid);
		cr_assert(uuid_compare(cfg.uuid, want) == 0, "%s", forms[i]);
	}
}

/* ---- Untrusted files: entities, DTDs, size ---------------------------- */

/* Peak resident set of this test process, bytes. */
static uint64_t max_rss(void)
{
	struct rusage ru;

	cr_assert(eq(int, getrusage(RUSAGE_SELF, &ru), 0));
	return (uint64_t)ru.ru_maxrss << 10;
}

/*
 * Write (head), then (body) repeated (n) times, then (tail) into a new
 * temporary file named into (path).
 */
static void write_parts(char *path, const char *head, const char *body,
			size_t n, const char *tail)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/vpmu_test_XXXXXX.xml");
	fd = mkstemps(path, 4);
	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	cr_assert(f != NULL);
	fputs(head, f);
	while (n--)
		fputs(body, f);
	fputs(tail, f);
	cr_assert(eq(int, fclose(f), 0));
}

/*
 * An internal entity of 64 KiB referenced 2048 times in <name>: 128 MiB of
 * text from a 70 KiB file if the reader expanded it (the probe's 1 GB
 * config is this, scaled). It must be refused with one message naming the
 * file, before anything is expanded: the peak memory of the load stays
 * far below the expansion.
 */
Test(vmm_config_xml, entity_expansion_is_refused_in_bounded_memory)
{
	static char head[(64 << 10) + 256];
	struct vmm_config cfg;
	uint64_t before, grew;
	char path[64];
	int n, ret;

	n = snprintf(head, sizeof(head),
		     "<?xml version='1.0'?>\n<!DOCTYPE domain [\n"
		     "<!ENTITY e \"");
	memset(head + n, 'x', 64 << 10);
	snprintf(head + n + (64 << 10), sizeof(head) - n - (64 << 10),
		 "\">\n]>\n<domain type='kvm'><name>");
	write_parts(path, head, "&e;", 2048,
		    "</name><os><type>hvm</type><kernel>/g.elf</kernel>"
		    "</os></domain>\n");
	before = max_rss();
	ret    = load(path, &cfg);
	grew   = max_rss() - before;
	unlink(path);
	cr_log_info("entity bomb: refused with %llu KiB more peak memory",
		    (unsigned long long)(grew >> 10));
	cr_expect(eq(int, ret, -EINVAL), "%s", err);
	cr_expect(strstr(err, path) != NULL, "'%s' lacks the path", err);
	cr_expect(strstr(err, ":2: <!DOCTYPE> is not allowed") != NULL,
		  "'%s' does not say what is refused", err);
	cr_expect(lt(u64, grew, 16ULL << 20),
		  "loading took %llu KiB more peak memory",
		  (unsigned long long)(grew >> 10));
}

/*
 * Every way of bringing a DTD or entities in is refused at the
 * <!DOCTYPE>; an entity reference without one is not well-formed.
 */
Test(vmm_config_xml, dtds_and_entity_references_are_refused)
{
	static const struct mem_case cases[] = {
		ROW(.xml = "<!DOCTYPE domain>\n", .msg = ":1: <!DOCTYPE>"),
		ROW(.xml = "<!DOCTYPE domain SYSTEM '/etc/passwd'>\n",
		    .msg = ":1: <!DOCTYPE>"),
		ROW(.xml = "<?xml version='1.0'?>\n\n<!DOCTYPE domain "
			   "PUBLIC '-//x//y' 'http://example.com/d.dtd'>\n",
		    .msg = ":3: <!DOCTYPE>"),
		ROW(.xml = "<!DOCTYPE domain [<!ENTITY % p SYSTEM "
			   "'/etc/passwd'> %p;]>\n",
		    .msg = ":1: <!DOCTYPE>"),
		ROW(.xml = "<!DOCTYPE domain [<!ENTITY a 'x'>]>\n",
		    .msg = ":1: <!DOCTYPE>"),
	};
	static const char body[] =
		"<domain type='kvm'><name>m</name><os><type>hvm</type>"
		"<kernel>/g.elf</kernel></os></domain>\n";
	struct vmm_config cfg;
	char path[64];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_parts(path, cases[i].xml, body, 1, "");
		ret = load(path, &cfg);
		unlink(path);
		cr_expect(eq(int, ret, -EINVAL), "row at line %d: %s",
			  cases[i].line, err);
		cr_expect(strstr(err, cases[i].msg) && strstr(err, path),
			  "row at line %d: '%s' lacks '%s' or the path",
			  cases[i].line, err, cases[i].msg);
	}
	write_parts(path, "<domain type='kvm'><name>&e;</name>", "", 0,
		    "<os><type>hvm</type><kernel>/g.elf</kernel></os>"
		    "</domain>\n");
	ret = load(path, &cfg);
	unlink(path);
	cr_expect(eq(int, ret, -EINVAL), "%s", err);
	cr_expect(strstr(err, ":1: not well-formed XML: Entity 'e' not "
			      "defined") != NULL,
		  "%s", err);
}

/*
 * A config may have up to VMM_CONFIG_XML_MAX bytes (1 MiB): one of exactly
 * that size loads, one byte more is refused before it is parsed.
 */
Test(vmm_config_xml, size_limit_is_one_mib)
{
	static const char head[] =
		"<domain type='kvm'><name>big</name><os><type>hvm</type>"
		"<kernel>/g.elf</kernel></os><!--";
	static const char tail[] = "--></domain>\n";
	size_t pad = VMM_CONFIG_XML_MAX - strlen(head) - strlen(tail);
	struct vmm_config cfg;
	char path[64];
	int ret;

	cr_assert(eq(u64, VMM_CONFIG_XML_MAX, 1ULL << 20));
	write_parts(path, head, " ", pad, tail);
	ret = load(path, &cfg);
	unlink(path);
	cr_expect(eq(int, ret, 0), "%s", err);
	cr_expect(eq(str, cfg.name, "big"));

	write_parts(path, head, " ", pad + 1, tail);
	ret = load(path, &cfg);
	unlink(path);
	cr_expect(eq(int, ret, -EFBIG), "%s", err);
	cr_expect(strstr(err, path) &&
			  strstr(err, ": 1048577 bytes: a config may have at "
				      "most 1 MiB"),
		  "%s", err);
}

/* A FIFO or a directory is refused at once (a FIFO must not block). */
Test(vmm_config_xml, only_regular_files_are_read, .timeout = 10)
{
	char dir[] = "/tmp/vpmu_test_XXXXXX", fifo[64];
	struct vmm_config cfg;

	cr_assert(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/c.xml", dir);
	cr_assert(eq(int, mkfifo(fifo, 0600), 0));
	cr_expect(eq(int, load(fifo, &cfg), -EINVAL), "%s", err);
	cr_expect(strstr(err, "c.xml: not a regular file") != NULL, "%s", err);
	cr_expect(eq(int, load(dir, &cfg), -EINVAL), "%s", err);
	cr_expect(strstr(err, ": not a regular file") != NULL, "%s", err);
	unlink(fifo);
	rmdir(dir);
}

/* Spec 3.5: <vpmu:formats dir> names the run-time formats. */
Test(vmm_config_xml, formats_dir_is_read)
{
	struct vmm_config cfg;

	cr_assert(eq(int, load(DATA "formats.xml", &cfg), 0), "%s", err);
	cr_assert(eq(str, cfg.format_dir, "/usr/lib/vpmu/formats"));
	cr_assert(eq(int, load(DATA "minimal.xml", &cfg), 0), "%s", err);
	cr_assert(eq(str, cfg.format_dir, ""), "no formats by default");
}

Test(vmm_config_xml, formats_dir_empty_is_refused)
{
	struct vmm_config cfg;

	cr_assert(eq(int, load(DATA "formats_empty.xml", &cfg), -EINVAL));
	cr_assert(not(eq(ptr, strstr(err, "formats_empty.xml:10"), NULL)), "%s",
		  err);
	cr_assert(not(eq(ptr, strstr(err, "names no directory"), NULL)), "%s",
		  err);
}

/*
 * A domain whose <devices> is (devices), with "@DISK@" replaced by the
 * path of an existing empty file, written to a temporary file; loaded.
 */
static int load_devices(const char *devices, struct vmm_config *cfg)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char xml[4096], disk[256], path[256], body[2048];
	const char *at = strstr(devices, "@DISK@");
	FILE *f;
	int ret;

	snprintf(disk, sizeof(disk), "%s/vpmu-xml-disk-%d.img", dir,
		 (int)getpid());
	f = fopen(disk, "w");
	cr_assert(not(eq(ptr, f, NULL)));
	fclose(f);
	body[0] = '\0';
	for (; at;
	     devices = at + strlen("@DISK@"), at = strstr(devices, "@DISK@"))
		snprintf(body + strlen(body), sizeof(body) - strlen(body),
			 "%.*s%s", (int)(at - devices), devices, disk);
	snprintf(body + strlen(body), sizeof(body) - strlen(body), "%s",
		 devices);
	snprintf(xml, sizeof(xml),
		 "<domain type='kvm'>\n"
		 "  <name>disks</name>\n"
		 "  <memory unit='MiB'>256</memory>\n"
		 "  <os>\n"
		 "    <type arch='x86_64'>hvm</type>\n"
		 "    <kernel>/opt/vpmu/linux/bzImage</kernel>\n"
		 "  </os>\n"
		 "  <devices>\n%s  </devices>\n"
		 "</domain>\n",
		 body);
	snprintf(path, sizeof(path), "%s/vpmu-xml-disks-%d.xml", dir,
		 (int)getpid());
	f = fopen(path, "w");
	cr_assert(not(eq(ptr, f, NULL)));
	fputs(xml, f);
	fclose(f);
	ret = load(path, cfg);
	unlink(path);
	unlink(disk);
	return ret;
}

Test(vmm_config_xml, virtio_disks_read_in_order)
{
	struct vmm_config cfg;

	cr_assert(eq(int,
		     load_devices("<disk type='file' device='disk'>"
				  "<driver name='qemu' type='raw'/>"
				  "<source file='@DISK@'/>"
				  "<target dev='vda' bus='virtio'/></disk>\n"
				  "<disk type='file'><source file='@DISK@'/>"
				  "<target dev='vdb' bus='virtio'/><readonly/>"
				  "</disk>\n",
				  &cfg),
		     0),
		  "%s", err);
	cr_assert(eq(uint, cfg.nr_disks, 2));
	cr_expect(not(cfg.disks[0].read_only));
	cr_expect(cfg.disks[1].read_only);
	cr_expect(not(
		eq(ptr, strstr(cfg.disks[1].path, "vpmu-xml-disk-"), NULL)));
}

Test(vmm_config_xml, disks_vpmu_cannot_honour_are_refused_by_name)
{
	static const struct {
		const char *devices, *msg;
	} cases[] = {
		{"<disk type='file' device='cdrom'><source file='@DISK@'/>"
		 "<target dev='hdc' bus='virtio'/></disk>",
		 "only device='disk' is supported"},
		{"<disk type='file'><driver name='qemu' type='qcow2'/>"
		 "<source file='@DISK@'/><target dev='vda' bus='virtio'/>"
		 "</disk>",
		 "only raw disk images are supported"},
		{"<disk type='file'><source file='@DISK@'/>"
		 "<target dev='sda' bus='sata'/></disk>",
		 "disks need <target bus='virtio'>"},
		{"<disk type='network'><source protocol='nbd' name='x'/>"
		 "<target dev='vda' bus='virtio'/></disk>",
		 "only type='file' and type='block' disks"},
		{"<disk type='file'><target dev='vda' bus='virtio'/></disk>",
		 "a disk needs <source file='...'>"},
		{"<disk type='file'><source file='/nonexistent/vpmu.img'/>"
		 "<target dev='vda' bus='virtio'/></disk>",
		 "<source>: '/nonexistent/vpmu.img': No such file or "
		 "directory"},
	};
	struct vmm_config cfg;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect(
			eq(int, load_devices(cases[i].devices, &cfg), -EINVAL),
			"case %zu", i);
		cr_expect(not(eq(ptr, strstr(err, cases[i].msg), NULL)),
			  "case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
	}
}
