// SPDX-License-Identifier: MIT
/*
 * test_config_size.c: vmm_config_parse_size(), vmm_config_defaults() and
 * vmm_config_validate().
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>
#include <string.h>

#include "vm_config.h"

struct size_case {
	int line;
	const char *text;
	int ret;
	uint64_t want;
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

Test(vmm_config_size, parses_good_bad_and_overflowing_sizes)
{
	static const struct size_case cases[] = {
		ROW(.text = "65536", .want = 65536),
		ROW(.text = "0", .want = 0),
		ROW(.text = "64M", .want = 64ULL << 20),
		ROW(.text = "64m", .want = 64ULL << 20),
		ROW(.text = "1G", .want = 1ULL << 30),
		ROW(.text = "512K", .want = 512ULL << 10),
		ROW(.text = "512k", .want = 512ULL << 10),
		ROW(.text = "2MiB", .want = 2ULL << 20),
		ROW(.text = "2mib", .want = 2ULL << 20),
		ROW(.text = "1GiB", .want = 1ULL << 30),
		ROW(.text = "1gIb", .want = 1ULL << 30),
		ROW(.text = "4096B", .want = 4096),
		ROW(.text = "3T", .want = 3ULL << 40),
		ROW(.text = "2PiB", .want = 2ULL << 50),
		ROW(.text = "15E", .want = 15ULL << 60),
		ROW(.text = "007K", .want = 7ULL << 10),
		ROW(.text = "18446744073709551615", .want = UINT64_MAX),
		ROW(.text = "", .ret = -EINVAL),
		ROW(.text = "M", .ret = -EINVAL),
		ROW(.text = "-1", .ret = -EINVAL),
		ROW(.text = "-64M", .ret = -EINVAL),
		ROW(.text = "+64M", .ret = -EINVAL),
		ROW(.text = " 64M", .ret = -EINVAL),
		ROW(.text = "64M ", .ret = -EINVAL),
		ROW(.text = "64 M", .ret = -EINVAL),
		ROW(.text = "1.5G", .ret = -EINVAL),
		ROW(.text = "0x1000", .ret = -EINVAL),
		ROW(.text = "64MB", .ret = -EINVAL), /* 10^6 or 2^20? refuse */
		ROW(.text = "64Mi", .ret = -EINVAL),
		ROW(.text = "64MiBs", .ret = -EINVAL),
		ROW(.text = "64Q", .ret = -EINVAL),
		ROW(.text = "12abc", .ret = -EINVAL),
		ROW(.text = "18446744073709551616", .ret = -ERANGE),
		ROW(.text = "99999999999999999999999", .ret = -ERANGE),
		ROW(.text = "9999999999999999999999999999999999999",
		    .ret  = -ERANGE),
		ROW(.text = "16E", .ret = -ERANGE),
		ROW(.text = "17179869184G", .ret = -ERANGE),
		ROW(.text = "17179869183G", .want = 17179869183ULL << 30),
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct size_case *c = &cases[i];
		uint64_t got              = 0xdead;
		int ret = vmm_config_parse_size(c->text, &got);

		cr_expect(eq(int, ret, c->ret), "row at line %d ('%s')",
			  c->line, c->text);
		if (c->ret == 0)
			cr_expect(eq(u64, got, c->want), "row at line %d",
				  c->line);
		else
			cr_expect(eq(u64, got, 0xdead),
				  "row at line %d: output written on failure",
				  c->line);
	}
}

Test(vmm_config_size, defaults)
{
	struct vmm_config cfg;

	memset(&cfg, 0x5a, sizeof(cfg));
	vmm_config_defaults(&cfg);
	cr_assert(eq(str, cfg.name, ""));
	cr_assert(not(cfg.has_uuid));
	cr_assert(eq(u64, cfg.mem_size, VMM_MEM_DEFAULT));
	cr_assert(eq(uint, cfg.nr_vcpus, 1));
	cr_assert(eq(str, cfg.image, ""));
	cr_assert(eq(str, cfg.console, ""));
	cr_assert(not(cfg.stats));
	cr_assert(eq(str, cfg.pmu_model, "auto"));
	cr_assert(eq(u32, cfg.limits.max_contexts, VMM_LIMIT_CONTEXTS));
	cr_assert(eq(u32, cfg.limits.max_sets, VMM_LIMIT_SETS));
	cr_assert(eq(u64, cfg.limits.max_smpl_mem, VMM_LIMIT_SMPL_MEM));
	cr_assert(eq(u32, cfg.limits.max_msgs, VMM_LIMIT_MSGS));
	cr_assert(eq(u32, cfg.limits.max_arg_size, VMM_LIMIT_ARG_SIZE));
	cr_assert(eq(str, cfg.source, ""));
}

/* One change to a valid config; msg NULL means it stays valid. */
struct validate_case {
	int line;
	void (*edit)(struct vmm_config *cfg);
	const char *msg;
};

static void nothing(struct vmm_config *c)
{
	(void)c;
}
static void mem_unaligned(struct vmm_config *c)
{
	c->mem_size = (64ULL << 20) + 512;
}
static void mem_small(struct vmm_config *c)
{
	c->mem_size = VMM_MEM_MIN - 4096;
}
static void mem_min(struct vmm_config *c)
{
	c->mem_size = VMM_MEM_MIN;
}
static void mem_max(struct vmm_config *c)
{
	c->mem_size = VMM_MEM_MAX;
}
static void mem_big(struct vmm_config *c)
{
	c->mem_size = VMM_MEM_MAX + 4096;
}
static void vcpus_zero(struct vmm_config *c)
{
	c->nr_vcpus = 0;
}
static void vcpus_max(struct vmm_config *c)
{
	c->nr_vcpus = VMM_VCPUS_MAX;
}
static void vcpus_many(struct vmm_config *c)
{
	c->nr_vcpus = VMM_VCPUS_MAX + 1;
}
static void no_image(struct vmm_config *c)
{
	c->image[0] = '\0';
}
static void name_ok(struct vmm_config *c)
{
	strcpy(c->name, "Az09._-");
}
static void name_slash(struct vmm_config *c)
{
	strcpy(c->name, "a/b");
}
static void name_dotdot(struct vmm_config *c)
{
	strcpy(c->name, "..");
}
static void name_long(struct vmm_config *c)
{
	memset(c->name, 'a', VMM_NAME_MAX);
}
static void pmu_bad(struct vmm_config *c)
{
	strcpy(c->pmu_model, "intel");
}
static void pmu_each(struct vmm_config *c)
{
	strcpy(c->pmu_model, "amd-core");
}
static void limit_zero(struct vmm_config *c)
{
	c->limits.max_msgs = 0;
}

Test(vmm_config_validate, checks_ranges_and_names)
{
	static const struct validate_case cases[] = {
		ROW(.edit = nothing),
		ROW(.edit = mem_unaligned,
		    .msg  = "memory: 67109376 bytes is not "
			    "a multiple of 4 KiB"),
		ROW(.edit = mem_small,
		    .msg  = "memory: 2044 KiB is less than the minimum, 2 MiB"),
		ROW(.edit = mem_min),
		ROW(.edit = mem_max),
		ROW(.edit = mem_big, .msg = "memory: 3145732 KiB is more than "
					    "the maximum, 3 GiB"),
		ROW(.edit = vcpus_zero,
		    .msg  = "vcpus: '0' is not a vCPU count (1..64)"),
		ROW(.edit = vcpus_max),
		ROW(.edit = vcpus_many,
		    .msg  = "vcpus: '65' is not a vCPU count (1..64)"),
		ROW(.edit = no_image, .msg = "no guest image given"),
		ROW(.edit = name_ok),
		ROW(.edit = name_slash,
		    .msg  = "name: 'a/b' contains '/'; a name uses "
			    "only A-Z a-z 0-9 . _ -"),
		ROW(.edit = name_dotdot,
		    .msg  = "name: '..' is not a usable name"),
		ROW(.edit = name_long, .msg = "name: not terminated"),
		ROW(.edit = pmu_bad, .msg = "pmu model: 'intel' is not a PMU "
					    "model (auto, intel-v2, amd-core, "
					    "amd-v2, none)"),
		ROW(.edit = pmu_each),
		ROW(.edit = limit_zero,
		    .msg  = "PMU limit 'queue-depth' must be > 0"),
	};
	char err[VMM_CONFIG_ERR_LEN];
	struct vmm_config cfg;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct validate_case *c = &cases[i];

		vmm_config_defaults(&cfg);
		strcpy(cfg.image, "/g.elf");
		c->edit(&cfg);
		err[0] = '\0';
		ret    = vmm_config_validate(&cfg, err, sizeof(err));
		cr_expect(eq(int, ret, c->msg ? -EINVAL : 0),
			  "row at line %d: %s", c->line, err);
		if (c->msg)
			cr_expect(eq(str, err, (char *)c->msg),
				  "row at line %d", c->line);
	}
}

/*
 * Spec 3.1.16: "by default cf_arg_size_max is the page size" (4 KiB on
 * x86), not more; the XML can still raise it.
 */
Test(vmm_config_size, arg_size_default_is_one_page)
{
	struct vmm_config cfg;

	vmm_config_defaults(&cfg);
	cr_assert(eq(u32, cfg.limits.max_arg_size, 4096));
}
