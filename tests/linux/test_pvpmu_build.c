// SPDX-License-Identifier: MIT
/*
 * test_pvpmu_build.c (label unit): the Linux driver and SDK build where
 * users build them, without a VM:
 *   - pvpmu.ko compiles against the host's Debian linux-headers-amd64
 *     (guest/linux/build-module.sh; a stock kernel: the module
 *     falls back to polling for messages, see guest/linux/README.md);
 *   - `cmake --install` of the Linux SDK gives headers, libpvpmu.so.1,
 *     libpvpmu.a, pvpmu.pc and the tools, and the README's example
 *     (guest/sdk/examples/count.c) builds with
 *     `pkg-config --cflags --libs pvpmu` and runs: without /dev/pvpmu it
 *     says so and exits 1;
 *   - the installed tools answer --help/-h.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp[] = "/tmp/pvpmu-build-XXXXXX";

static void make_tmp(void)
{
	cr_assert(ne(ptr, mkdtemp(tmp), NULL));
}

static void remove_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	cr_assert(eq(int, system(cmd), 0));
}

/* Run (cmd) through the shell; its output in (out); the exit status. */
static int run(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	cr_assert(ne(ptr, p, NULL));
	n      = fread(out, 1, size - 1, p);
	out[n] = 0;
	return WEXITSTATUS(pclose(p));
}

TestSuite(pvpmu_build, .init = make_tmp, .fini = remove_tmp, .timeout = 600);

Test(pvpmu_build, module_builds_against_debian_headers)
{
	char cmd[1024], out[8192];
	glob_t g;

	if (glob("/usr/src/linux-headers-*-amd64", 0, NULL, &g) || !g.gl_pathc)
		cr_skip_test("no linux-headers-amd64 (scripts/setup.sh "
			     "installs it)");
	snprintf(cmd, sizeof(cmd),
		 "%s/guest/linux/build-module.sh %s %s/mod 2>&1 && "
		 "strings %s/mod/pvpmu.ko | grep -E '^(license|vermagic)='",
		 VPMU_SOURCE_DIR, g.gl_pathv[g.gl_pathc - 1], tmp, tmp);
	globfree(&g);
	cr_assert(eq(int, run(cmd, out, sizeof(out)), 0), "%s", out);
	cr_assert(ne(ptr, strstr(out, "license=GPL"), NULL), "%s", out);
	cr_assert(ne(ptr, strstr(out, "vermagic=6.1"), NULL), "%s", out);
}

Test(pvpmu_build, installed_sdk_builds_the_readme_example)
{
	char cmd[2048], out[8192];

	snprintf(cmd, sizeof(cmd),
		 "cmake --install %s/guest/sdk/linux --prefix %s/usr "
		 ">/dev/null && "
		 "ls %s/usr/include/pvpmu/abi.h %s/usr/include/pvpmu/pvpmu.h "
		 "%s/usr/lib/libpvpmu.so.1 %s/usr/lib/libpvpmu.a "
		 "%s/usr/lib/pkgconfig/pvpmu.pc >/dev/null && "
		 "PKG_CONFIG_PATH=%s/usr/lib/pkgconfig cc -Werror "
		 "-o %s/count %s/guest/sdk/examples/count.c "
		 "$(PKG_CONFIG_PATH=%s/usr/lib/pkgconfig pkg-config --cflags "
		 "--libs pvpmu) 2>&1",
		 VPMU_BUILD_DIR, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp,
		 VPMU_SOURCE_DIR, tmp);
	cr_assert(eq(int, run(cmd, out, sizeof(out)), 0), "%s", out);
	if (access("/dev/pvpmu", F_OK) == 0)
		cr_skip_test("/dev/pvpmu exists here (a vpmu guest)");
	snprintf(cmd, sizeof(cmd), "LD_LIBRARY_PATH=%s/usr/lib %s/count 2>&1",
		 tmp, tmp);
	cr_assert(eq(int, run(cmd, out, sizeof(out)), 1), "%s", out);
	cr_assert(ne(ptr, strstr(out, "count: PFM_CREATE_CONTEXT:"), NULL),
		  "%s", out);
}

Test(pvpmu_build, installed_tools_answer_help)
{
	char cmd[1024], out[8192];

	snprintf(cmd, sizeof(cmd),
		 "cmake --install %s/guest/sdk/linux --prefix %s/usr "
		 ">/dev/null && "
		 "LD_LIBRARY_PATH=%s/usr/lib %s/usr/bin/pfstat -h && "
		 "LD_LIBRARY_PATH=%s/usr/lib %s/usr/bin/pfinfo -h && "
		 "LD_LIBRARY_PATH=%s/usr/lib %s/usr/bin/pffast -h && "
		 "LD_LIBRARY_PATH=%s/usr/lib %s/usr/bin/pfrecord -h",
		 VPMU_BUILD_DIR, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp);
	cr_assert(eq(int, run(cmd, out, sizeof(out)), 0), "%s", out);
	cr_assert(ne(ptr, strstr(out, "Usage: pfstat"), NULL), "%s", out);
	cr_assert(ne(ptr, strstr(out, "Usage: pfinfo"), NULL), "%s", out);
	cr_assert(ne(ptr, strstr(out, "Usage: pffast"), NULL), "%s", out);
	cr_assert(ne(ptr, strstr(out, "Usage: pfrecord"), NULL), "%s", out);
}
