// SPDX-License-Identifier: MIT
/*
 * test_kick_history.c: the host's recent kick probes, without KVM. A
 * VM's charge is the trimmed mean of the kernel part per ns of exit of
 * this boot's probes of the last day, times its own probe's exit; the
 * file keeps the newest eight; a file that is not a history of ours is
 * replaced and said so, never trusted; another boot's probes are dropped.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vmm_core.h"
#include "vmm_core_priv.h"

static char dir[64];
static char path[96];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/vpmu-kick-history-XXXXXX");
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(path, sizeof(path), "%s/kick-probes", dir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(dir);
}

TestSuite(vmm_kick_history, .init = setup, .fini = teardown);

static struct vmm_kick_cost probe(uint64_t kernel_ns, uint64_t exit_ns)
{
	return (struct vmm_kick_cost){.lost_ns   = kernel_ns + 7000,
				      .user_ns   = 7000,
				      .kernel_ns = kernel_ns,
				      .exit_ns   = exit_ns,
				      .nr_probes = 1,
				      .cpu_ppm   = 999000};
}

static void write_text(const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(not(eq(ptr, f, NULL)));
	fputs(text, f);
	fclose(f);
}

static void boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	buf[0] = '\0';
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

Test(vmm_kick_history, the_first_probe_is_charged_as_measured)
{
	struct vmm_kick_cost c = probe(112000, 62000);
	bool replaced;

	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(not(replaced));
	cr_expect(eq(u32, c.nr_probes, 1));
	cr_expect(eq(u64, c.exit_ns, 62000));
	/* The ratio in millionths: within a ns of the probe's part. */
	cr_expect(le(u64, 111999, c.kernel_ns));
	cr_expect(le(u64, c.kernel_ns, 112000));
	cr_expect(eq(u64, c.lost_ns, c.kernel_ns + 7000));
}

/*
 * The ratio (not the kernel part) is what the probes share: a probe of a
 * slower moment, its exit longer, counts at its own ratio; this VM's exit
 * is what the mean is scaled to.
 */
Test(vmm_kick_history, later_probes_charge_the_mean_ratio_at_their_own_exit)
{
	struct vmm_kick_cost c;
	bool replaced;

	c = probe(180000, 100000); /* 1.8 */
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	c = probe(60000, 30000); /* 2.0 */
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(eq(u32, c.nr_probes, 2));
	cr_expect(eq(u64, c.exit_ns, 30000));
	cr_expect(eq(u64, c.kernel_ns, 57000), "1.9 x 30 us: %llu",
		  (unsigned long long)c.kernel_ns);
	cr_expect(eq(u64, c.lost_ns, 64000));
}

/* Far from the median, or from five on the highest and lowest: out. */
Test(vmm_kick_history, a_busy_moments_probe_is_trimmed)
{
	struct vmm_kick_probe_rec r[6] = {
		{0, 180000, 100000}, {0, 182000, 100000}, {0, 178000, 100000},
		{0, 180000, 100000}, {0, 240000, 100000}, {0, 120000, 100000},
	};

	cr_expect(eq(u64, vmm_kick_history_ratio(r, 6), 1800000));
	cr_expect(eq(u64, vmm_kick_history_ratio(r, 4), 1800000));
	cr_expect(eq(u64, vmm_kick_history_ratio(r, 2), 1810000));
	cr_expect(eq(u64, vmm_kick_history_ratio(r, 0), 0));
}

/*
 * A probe beside a busy neighbour (seen: 0.32 where the host's kicks
 * were 1.8) is no estimate: not counted when the others agree; two that
 * disagree leave the newest, this VM's own, as without a history.
 */
Test(vmm_kick_history, a_probe_far_from_the_median_does_not_count)
{
	struct vmm_kick_probe_rec agree[3] = {
		{0, 180000, 100000}, {0, 179000, 100000}, {0, 32000, 100000}};
	struct vmm_kick_probe_rec apart[2] = {{0, 180000, 100000},
					      {0, 32000, 100000}};

	cr_expect(eq(u64, vmm_kick_history_ratio(agree, 3), 1795000));
	cr_expect(eq(u64, vmm_kick_history_ratio(apart, 2), 320000));
}

Test(vmm_kick_history, keeps_the_newest_eight)
{
	struct vmm_kick_probe_rec r[VMM_KICK_HISTORY_MAX];
	char text[16384], id[64];
	struct vmm_kick_cost c;
	bool replaced;
	unsigned int i;
	FILE *f;

	for (i = 0; i < 12; i++) {
		c = probe(100000 + 1000 * i, 50000);
		cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced),
			     0));
		cr_expect(eq(u32, c.nr_probes, i < 8 ? i + 1 : 8));
	}
	f = fopen(path, "r");
	cr_assert(not(eq(ptr, f, NULL)));
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	boot_id(id, sizeof(id));
	cr_assert(eq(int,
		     vmm_kick_history_parse(text, id, (int64_t)time(NULL), r,
					    VMM_KICK_HISTORY_MAX),
		     8),
		  "%s", text);
	cr_expect(eq(u64, r[0].kernel_ns, 104000), "the oldest kept");
	cr_expect(eq(u64, r[7].kernel_ns, 111000), "the newest");
}

/* Another boot's kicks went through another kernel; a day-old host. */
Test(vmm_kick_history, other_boots_and_old_probes_are_dropped)
{
	struct vmm_kick_probe_rec r[VMM_KICK_HISTORY_MAX];
	int64_t now = 1800000000;
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"v\":1,\"boot_id\":\"b\",\"probes\":["
		 "{\"time\":%lld,\"kernel_ns\":100000,\"exit_ns\":50000},"
		 "{\"time\":%lld,\"kernel_ns\":110000,\"exit_ns\":50000}]}",
		 (long long)(now - 2 * 86400), (long long)(now - 60));
	cr_expect(eq(int, vmm_kick_history_parse(text, "b", now, r, 8), 1));
	cr_expect(eq(u64, r[0].kernel_ns, 110000));
	cr_expect(eq(int, vmm_kick_history_parse(text, "a", now, r, 8), 0));
}

/* Never trusted: the wrong shape, values no probe measures, the future. */
Test(vmm_kick_history, what_is_not_a_history_is_refused)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{\"v\":2,\"boot_id\":\"b\",\"probes\":[]}",
		"{\"v\":1,\"boot_id\":7,\"probes\":[]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":{}}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[7]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[{\"time\":1,"
		"\"kernel_ns\":0,\"exit_ns\":50000}]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[{\"time\":1,"
		"\"kernel_ns\":100000,\"exit_ns\":0}]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[{\"time\":1,"
		"\"kernel_ns\":100000,\"exit_ns\":2000000}]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[{\"time\":1,"
		"\"kernel_ns\":-5,\"exit_ns\":50000}]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[{\"time\":1,"
		"\"kernel_ns\":\"100000\",\"exit_ns\":50000}]}",
		"{\"v\":1,\"boot_id\":\"b\",\"probes\":[{\"time\":1900000000,"
		"\"kernel_ns\":100000,\"exit_ns\":50000}]}",
	};
	struct vmm_kick_probe_rec r[VMM_KICK_HISTORY_MAX];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect(eq(int,
			     vmm_kick_history_parse(bad[i], "b", 1800000000, r,
						    8),
			     -EINVAL),
			  "%s", bad[i]);
}

Test(vmm_kick_history, a_foreign_file_is_replaced_and_said_so)
{
	struct vmm_kick_cost c = probe(112000, 62000);
	char text[4096], id[64];
	bool replaced;
	FILE *f;

	/* This boot's, so that its probes are read: one no probe makes. */
	boot_id(id, sizeof(id));
	snprintf(text, sizeof(text),
		 "{\"v\":1,\"boot_id\":\"%s\",\"probes\":[{\"time\":%lld,"
		 "\"kernel_ns\":999999999,\"exit_ns\":1}]}",
		 id, (long long)time(NULL));
	write_text(text);
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(replaced);
	cr_expect(eq(u32, c.nr_probes, 1));
	cr_expect(le(u64, 111999, c.kernel_ns));
	cr_expect(le(u64, c.kernel_ns, 112000));
	f = fopen(path, "r");
	cr_assert(not(eq(ptr, f, NULL)));
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	cr_expect(not(eq(ptr, strstr(text, "\"kernel_ns\":112000"), NULL)),
		  "%s", text);
	cr_expect(eq(ptr, strstr(text, "999999999"), NULL), "%s", text);
}

/* A symlink planted at the file's name is not followed, nor kept. */
Test(vmm_kick_history, a_symlink_is_replaced_not_followed)
{
	struct vmm_kick_cost c = probe(112000, 62000);
	char target[96];
	struct stat st;
	bool replaced;

	snprintf(target, sizeof(target), "%s/target", dir);
	write_text("");
	cr_assert(eq(int, rename(path, target), 0));
	cr_assert(eq(int, symlink(target, path), 0));
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(replaced);
	cr_assert(eq(int, lstat(path, &st), 0));
	cr_expect(eq(int, (st.st_mode & S_IFMT) == S_IFREG, 1));
	cr_assert(eq(int, stat(target, &st), 0));
	cr_expect(eq(i64, (int64_t)st.st_size, 0), "the target untouched");
	unlink(target);
}

/* A probe the VMM could not have made is not written: -EINVAL. */
Test(vmm_kick_history, a_probe_without_an_exit_is_not_kept)
{
	struct vmm_kick_cost c = probe(112000, 0);
	bool replaced;

	cr_expect(
		eq(int, vmm_kick_history_update(dir, &c, &replaced), -EINVAL));
	cr_expect(eq(int, access(path, F_OK), -1));
	cr_expect(eq(u64, c.kernel_ns, 112000), "left as probed");
}

/*
 * A probe whose thread waited for a CPU is not kept, and its VM charges
 * the kept probes' ratio at their exit; with none kept, its own.
 */
Test(vmm_kick_history, a_probe_that_waited_for_a_cpu_is_not_kept)
{
	struct vmm_kick_cost c = probe(133000, 250000); /* 0.53 */
	bool replaced;

	c.cpu_ppm = 700000;
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(eq(int, access(path, F_OK), -1), "nothing kept");
	cr_expect(eq(u64, c.kernel_ns, 133000), "its own, alone");
	cr_expect(eq(u32, c.nr_probes, 1));

	c = probe(180000, 100000); /* 1.8, quiet */
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	c = probe(170000, 100000); /* 1.7 */
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	c         = probe(133000, 250000);
	c.cpu_ppm = 700000;
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(eq(u32, c.nr_probes, 2), "the two kept");
	cr_expect(eq(u64, c.exit_ns, 100000), "their exit");
	cr_expect(eq(u64, c.kernel_ns, 175000));
	cr_expect(eq(u64, c.lost_ns, 182000));
	c = probe(180000, 100000);
	cr_assert(eq(int, vmm_kick_history_update(dir, &c, &replaced), 0));
	cr_expect(eq(u32, c.nr_probes, 3), "the busy one was not kept");
}
