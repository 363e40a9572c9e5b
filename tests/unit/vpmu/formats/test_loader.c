// SPDX-License-Identifier: MIT
/*
 * test_loader.c: sampling formats registered at run time from shared
 * objects (spec §3.5 "pluggable at runtime", §3.5.8 registration,
 * §3.5.9 unregistration, §3.5.2 listing): the checks before use (version,
 * required handler, unique UUID), one message naming the file for every
 * refusal, "a format in use cannot go away", and the example format
 * "last-n" (formats/lastn/) driven by the real core.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/replay.h"
#include "lastn.h"
#include "vpmu_core.h"
#include "vpmu_pmu.h"
#include "vpmu_smpl.h"
#include <vpmu/vpmu_cmd.h>

#define BAD(f)   VPMU_BUILD_DIR "/tests/formats-bad/" f
#define LASTN_SO VPMU_BUILD_DIR "/formats/lastn.so"
#define EV       0x10

static const uint8_t good_uuid[16] = {0x9f, 0x31, 0x0a, 0x55, 0x6b, 0x12,
				      0x4c, 0x80, 0x8d, 0x2e, 0x41, 0x90,
				      0x77, 0x3b, 0xc6, 0x02};
static char err[512];

static int load(const char *path)
{
	err[0] = '\0';
	return vpmu_format_load(path, err, sizeof(err));
}

static void has(const char *s)
{
	cr_assert(not(eq(ptr, strstr(err, s), NULL)), "'%s' not in '%s'", s,
		  err);
}

/* §3.5.8: a valid object registers and is usable on return (by UUID). */
Test(vpmu_fmt_loader, good_object_registers_and_is_listed)
{
	struct vpmu_format_info fi[8];
	const struct vpmu_smpl_fmt *f;
	size_t n, builtin = vpmu_smpl_fmt_count();

	cr_assert(eq(int, load(BAD("good.so")), 0), "%s", err);
	cr_assert(eq(int, vpmu_smpl_fmt_find(good_uuid, &f), 0));
	cr_assert(eq(str, (char *)f->name, "good-test"));
	vpmu_smpl_fmt_put(f);
	/* §3.5.2: the list has UUID and name, built-in formats first. */
	n = vpmu_format_list(fi, 8);
	cr_assert(eq(sz, n, builtin + 1));
	cr_assert(fi[0].builtin);
	cr_assert(eq(str, fi[0].name, "default"));
	cr_assert(not(fi[builtin].builtin));
	cr_assert(eq(str, fi[builtin].name, "good-test"));
	cr_assert(eq(str, fi[builtin].origin, BAD("good.so")));
	cr_assert(eq(int, memcmp(fi[builtin].uuid, good_uuid, 16), 0));
	cr_assert(eq(sz, vpmu_format_list(NULL, 0), builtin + 1));
}

/* §3.5.8: "EBUSY: the UUID is already registered" (a second load). */
Test(vpmu_fmt_loader, same_uuid_twice_is_ebusy)
{
	cr_assert(eq(int, load(BAD("good.so")), 0), "%s", err);
	cr_assert(eq(int, load(BAD("good.so")), -EBUSY));
	has(BAD("good.so"));
	has("already registered by 'good-test'");
}

/* §3.5.8: the default format's UUID is taken (§3.6.1): refused. */
Test(vpmu_fmt_loader, builtin_uuid_is_ebusy)
{
	cr_assert(eq(int, load(BAD("dup_uuid.so")), -EBUSY));
	has(BAD("dup_uuid.so"));
	has("already registered by 'default'");
}

/* The descriptor's version is checked before anything in it is used. */
Test(vpmu_fmt_loader, wrong_version_is_refused)
{
	cr_assert(eq(int, load(BAD("version.so")), -EINVAL));
	has(BAD("version.so"));
	has("format ABI version 99, this vpmu loads version 1");
	cr_assert(eq(sz, vpmu_format_list(NULL, 0), vpmu_smpl_fmt_count()));
}

/* §3.5.8: fmt_handler is required ("EINVAL: a required field is missing"). */
Test(vpmu_fmt_loader, missing_handler_is_refused)
{
	const struct vpmu_smpl_fmt *f;

	cr_assert(eq(int, load(BAD("no_handler.so")), -EINVAL));
	has(BAD("no_handler.so"));
	has("format 'no-handler' has no handler");
	cr_assert(eq(int, vpmu_smpl_fmt_find(good_uuid, &f), -EINVAL));
}

Test(vpmu_fmt_loader, object_without_descriptor_is_refused)
{
	cr_assert(eq(int, load(BAD("no_symbol.so")), -EINVAL));
	has(BAD("no_symbol.so"));
	has("no 'vpmu_format_descriptor' symbol");
}

Test(vpmu_fmt_loader, unloadable_file_is_refused)
{
	char path[] = "/tmp/vpmu-fmt-XXXXXX";
	int fd      = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert(eq(int, (int)write(fd, "not an ELF\n", 11), 11));
	close(fd);
	cr_assert(eq(int, load(path), -ENOEXEC));
	has(path);
	has("cannot load");
	unlink(path);
	cr_assert(eq(int, load("/nonexistent/x.so"), -ENOEXEC));
	has("/nonexistent/x.so: cannot load");
}

/* §3.5.9: EINVAL for a format that is not registered (or built in). */
Test(vpmu_fmt_loader, unload_unknown_or_builtin_is_einval)
{
	const uint8_t dfl[16] = PFM_DEFAULT_SMPL_UUID;

	cr_assert(eq(int, vpmu_format_unload(good_uuid), -EINVAL));
	cr_assert(eq(int, vpmu_format_unload(dfl), -EINVAL));
	cr_assert(eq(int, load(BAD("good.so")), 0), "%s", err);
	cr_assert(eq(int, vpmu_format_unload(good_uuid), 0));
	cr_assert(eq(int, vpmu_format_unload(good_uuid), -EINVAL));
	/* Gone: it can be loaded again. */
	cr_assert(eq(int, load(BAD("good.so")), 0), "%s", err);
}

static unsigned int nr_refused;
static char refused[8][512];

static void on_refused(void *opaque, const char *msg)
{
	(void)opaque;
	if (nr_refused < 8)
		snprintf(refused[nr_refused], sizeof(refused[0]), "%s", msg);
	nr_refused++;
}

/* A directory: every bad object named and skipped, the rest loaded. */
Test(vpmu_fmt_loader, directory_loads_good_and_names_every_bad_file)
{
	static const char *const objs[] = {"dup_uuid.so", "good.so",
					   "no_handler.so", "no_symbol.so",
					   "version.so"};
	char dir[] = "/tmp/vpmu-fmtdir-XXXXXX", p[600], t[600];
	unsigned int i;
	FILE *f;

	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	for (i = 0; i < 5; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, objs[i]);
		snprintf(t, sizeof(t), "%s", BAD(""));
		strcat(t, objs[i]);
		cr_assert(eq(int, symlink(t, p), 0));
	}
	snprintf(p, sizeof(p), "%s/zz_garbage.so", dir);
	f = fopen(p, "w");
	fputs("garbage", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/README", dir); /* not *.so: ignored */
	f = fopen(p, "w");
	fclose(f);
	nr_refused = 0;
	cr_assert(eq(int, vpmu_format_load_dir(dir, on_refused, NULL), 1));
	cr_assert(eq(uint, nr_refused, 5));
	cr_assert(not(eq(ptr, strstr(refused[0], "dup_uuid.so"), NULL)));
	cr_assert(not(eq(ptr, strstr(refused[1], "no_handler.so"), NULL)));
	cr_assert(not(eq(ptr, strstr(refused[2], "no_symbol.so"), NULL)));
	cr_assert(not(eq(ptr, strstr(refused[3], "version.so"), NULL)));
	cr_assert(not(eq(ptr, strstr(refused[4], "zz_garbage.so"), NULL)));
	nr_refused = 0;
	cr_assert(eq(int,
		     vpmu_format_load_dir("/nonexistent", on_refused, NULL),
		     -ENOENT));
	cr_assert(eq(uint, nr_refused, 1));
	cr_assert(not(eq(ptr, strstr(refused[0], "/nonexistent"), NULL)));
}

/* A domain with one replay event, for formats driven by the core. */
static struct {
	struct vpmu_replay *rp;
	struct vpmu_backend be;
	struct vpmu_domain *d;
	struct vpmu_cpu *cpu;
	struct vpmu_caller g;
} D;

static void dom_init(void)
{
	struct vpmu_domain_config cfg = {0};

	cr_assert(eq(int, vpmu_replay_create(&D.rp), 0));
	cr_assert(eq(int, vpmu_replay_add_event(D.rp, EV, "ev"), 0));
	vpmu_replay_instance(D.rp, &D.be);
	vpmu_limits_default(&cfg.limits);
	cfg.backends    = &D.be;
	cfg.nr_backends = 1;
	cr_assert(eq(int, vpmu_domain_create(&cfg, &D.d), 0));
	cr_assert(eq(int, vpmu_cpu_create(D.d, 0, &D.cpu), 0));
	D.g = (struct vpmu_caller){.owner = VPMU_OWNER_GUEST, .cpu = D.cpu};
	cr_assert(eq(int, vpmu_replay_set_rate(D.rp, 0, EV, 1000000000ULL), 0));
}

static int ctx_with(const uint8_t *uuid, const void *arg, size_t size)
{
	struct pfarg_ctx c = {.ctx_flags = PFM_FL_SYSTEM_WIDE};

	memcpy(c.ctx_smpl_buf_id, uuid, 16);
	cr_assert(eq(int, vpmu_ctx_create(D.d, &D.g, &c, 1, arg, size), 0));
	return c.ctx_fd;
}

/* digest §9.4 [GAP] resolved: a format in use by a context cannot go. */
Test(vpmu_fmt_loader, format_in_use_cannot_be_unloaded)
{
	int fd;

	dom_init();
	cr_assert(eq(int, load(BAD("good.so")), 0), "%s", err);
	fd = ctx_with(good_uuid, NULL, 0);
	cr_assert(eq(int, vpmu_format_unload(good_uuid), -EBUSY));
	cr_assert(eq(int, vpmu_ctx_destroy(D.d, &D.g, fd), 0));
	cr_assert(eq(int, vpmu_format_unload(good_uuid), 0));
	vpmu_domain_destroy(D.d);
	vpmu_replay_destroy(D.rp);
}

/* The example format end to end through the core: last n per PMD. */
Test(vpmu_fmt_loader, lastn_keeps_the_last_n_samples_per_pmd)
{
	static const uint8_t uuid[16] = LASTN_SMPL_UUID;
	struct lastn_arg a            = {.n = 4, .nr_pmds = 2};
	struct pfarg_pmc pmc          = {.reg_value = VPMU_EVSEL(EV, 0)};
	struct pfarg_pmd pmd          = {.reg_value       = 0 - 100,
					 .reg_short_reset = 0 - 100,
					 .reg_long_reset  = 0 - 100};
	struct pfarg_load l           = {.load_pid = 0};
	struct vpmu_guest_state gs    = {.ip = 0x401000, .pid = 3, .tid = 4};
	const struct lastn_hdr *h;
	const struct lastn_sample *s;
	struct lastn_arg bad = {.n = 0, .nr_pmds = 1};
	struct pfarg_ctx c   = {.ctx_flags = PFM_FL_SYSTEM_WIDE};
	void *base           = NULL;
	size_t size          = 0;
	unsigned int i;
	int fd;

	dom_init();
	cr_assert(eq(int, load(LASTN_SO), 0), "%s", err);
	/* §3.5.10: its validate refuses n = 0. */
	memcpy(c.ctx_smpl_buf_id, uuid, 16);
	cr_assert(eq(int, vpmu_ctx_create(D.d, &D.g, &c, 1, &bad, sizeof(bad)),
		     -EINVAL));
	fd = ctx_with(uuid, &a, sizeof(a));
	cr_assert(eq(int, vpmu_ctx_write_pmcs(D.d, &D.g, fd, &pmc, 1), 0));
	cr_assert(eq(int, vpmu_ctx_write_pmds(D.d, &D.g, fd, &pmd, 1), 0));
	cr_assert(eq(int, vpmu_ctx_load(D.d, &D.g, fd, &l, 1), 0));
	cr_assert(eq(int, vpmu_ctx_start(D.d, &D.g, fd, NULL, 0), 0));
	cr_assert(eq(int, vpmu_ctx_smpl_buf(D.d, &D.g, fd, &base, &size), 0));
	h = base;
	cr_assert(eq(u32, h->version, LASTN_VERSION));
	cr_assert(eq(u32, h->n, 4));
	/* 10 periods, one exit each: 10 samples, never masked. */
	for (i = 0; i < 10; i++) {
		gs.ip = 0x401000 + i;
		cr_assert(eq(int, vpmu_cpu_account(D.cpu, 100, &gs), 0));
	}
	cr_assert(eq(u64, h->total[0], 10));
	cr_assert(eq(u64, h->total[1], 0));
	for (i = 6; i < 10; i++) { /* the last four, in ring order */
		s = (const void *)((const char *)base + lastn_offset(h, 0, i));
		cr_assert(eq(u64, s->ip, 0x401000 + i));
		cr_assert(eq(i32, s->tid, 4));
	}
	cr_assert(eq(int, vpmu_format_unload(uuid), -EBUSY));
	cr_assert(eq(int, vpmu_ctx_destroy(D.d, &D.g, fd), 0));
	cr_assert(eq(int, vpmu_format_unload(uuid), 0));
	vpmu_domain_destroy(D.d);
	vpmu_replay_destroy(D.rp);
}
