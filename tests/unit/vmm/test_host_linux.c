// SPDX-License-Identifier: MIT
/*
 * test_host_linux.c: the kind of KVM host (from a sysfs tree made here,
 * so a PVM, VT-x or SVM host is shown on any machine), what each kind
 * hides from a Linux guest, and the merge of the host's kernel parameters
 * into a command line the user wrote.
 */
#include <asm/kvm_para.h>
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm_core.h"

static char out[VMM_CMDLINE_MAX], added[VMM_CMDLINE_MAX];

static int merge(const char *line, const char *needed)
{
	return vmm_cmdline_merge(line, needed, out, sizeof(out), added,
				 sizeof(added));
}

Test(cmdline_merge, missing_words_are_added_after_the_users)
{
	cr_assert(
		eq(int, merge("console=ttyS0 vpmutest=all", "noxsave a=1"), 0));
	cr_expect(eq(str, out, "console=ttyS0 vpmutest=all noxsave a=1"));
	cr_expect(eq(str, added, "noxsave a=1"));
}

Test(cmdline_merge, the_users_words_win_by_name)
{
	cr_assert(eq(int,
		     merge("clearcpuid=smap noxsave panic=-1",
			   "noxsave clearcpuid=smap,erms,popcnt nopv"),
		     0));
	cr_expect(eq(str, out, "clearcpuid=smap noxsave panic=-1 nopv"));
	cr_expect(eq(str, added, "nopv"));
}

Test(cmdline_merge, nothing_to_add_leaves_the_line_as_written)
{
	cr_assert(eq(int, merge("a=1 b", "b a=2"), 0));
	cr_expect(eq(str, out, "a=1 b"));
	cr_expect(eq(str, added, ""));
	cr_assert(eq(int, merge("a=1", ""), 0));
	cr_expect(eq(str, out, "a=1"));
}

Test(cmdline_merge, inits_arguments_after_dashdash_stay_inits)
{
	/* "noxsave" after "--" is init's argument, not the kernel's. */
	cr_assert(eq(int, merge("console=ttyS0 -- noxsave x", "noxsave"), 0));
	cr_expect(eq(str, out, "console=ttyS0 noxsave -- noxsave x"));
	cr_assert(eq(int, merge("-- init-arg", "a"), 0));
	cr_expect(eq(str, out, "a -- init-arg"));
}

Test(cmdline_merge, quoted_values_are_one_word)
{
	/* The kernel's parser: a value may hold spaces inside quotes. */
	cr_assert(eq(int, merge("dyndbg=\"file x.c +p\" b", "x.c b c"), 0));
	cr_expect(eq(str, out, "dyndbg=\"file x.c +p\" b x.c c"));
}

Test(cmdline_merge, an_empty_line_gets_every_needed_word)
{
	cr_assert(eq(int, merge("", "  noxsave   a=1 "), 0));
	cr_expect(eq(str, out, "noxsave a=1"));
	cr_assert(eq(int, merge("   ", "noxsave"), 0));
	cr_expect(eq(str, out, "noxsave"));
}

Test(cmdline_merge, a_line_that_does_not_fit_is_refused)
{
	char small[16];

	cr_expect(eq(int,
		     vmm_cmdline_merge("console=ttyS0", "noxsave", small,
				       sizeof(small), NULL, 0),
		     -ENAMETOOLONG));
	cr_expect(eq(int,
		     vmm_cmdline_merge("console", "noxsave", small,
				       sizeof(small), NULL, 0),
		     0));
	cr_expect(eq(str, small, "console noxsave"));
}

/* mkdir -p of the path (p) below its first (keep) bytes (an existing root). */
static void make_dirs(char *p, size_t keep)
{
	char *slash;

	for (slash = strchr(p + keep + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(p, 0700);
		*slash = '/';
	}
	mkdir(p, 0700);
}

/* A sysfs tree under a fresh directory with the folders (paths). */
static void fake_sysfs(char *root, size_t len, const char *const *paths)
{
	char p[PATH_MAX];
	unsigned int i;

	snprintf(root, len, "%s", "/tmp/vpmu-sysfs-XXXXXX");
	cr_assert(not(eq(ptr, mkdtemp(root), NULL)));
	for (i = 0; paths[i]; i++) {
		snprintf(p, sizeof(p), "%s%s", root, paths[i]);
		make_dirs(p, strlen(root));
		cr_assert(eq(int, access(p, F_OK), 0), "%s", p);
	}
}

/* (root)(dir)/(name) holding (text), its folders made as needed. */
static void write_file(const char *root, const char *dir, const char *name,
		       const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, dir);
	make_dirs(p, strlen(root));
	snprintf(p + strlen(p), sizeof(p) - strlen(p), "/%s", name);
	f = fopen(p, "w");
	cr_assert(not(eq(ptr, f, NULL)), "%s", p);
	fputs(text, f);
	fclose(f);
}

static void remove_tree(const char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_expect(eq(int, system(cmd), 0));
}

Test(host_kind, a_pvm_host_hides_the_hypercall_features_and_adds_params)
{
	static const char *const pvm[] = {"/module/kvm", "/module/kvm_pvm",
					  NULL};
	char root[64];
	struct vmm_host h;
	uint32_t hidden;

	fake_sysfs(root, sizeof(root), pvm);
	vmm_host_probe_at(root, true, &h);
	remove_tree(root);
	cr_expect(eq(int, h.kind, VMM_HOST_PVM));
	cr_expect(h.nested);
	cr_expect(not(h.hw_pmu));
	hidden = vmm_host_hidden_kvm_features(&h);
	/* The IPIs an SMP boot waits for, the kick of a halted waiter. */
	cr_expect(ne(u32, hidden & (1U << KVM_FEATURE_PV_SEND_IPI), 0));
	cr_expect(ne(u32, hidden & (1U << KVM_FEATURE_PV_UNHALT), 0));
	cr_expect(ne(u32, hidden & (1U << KVM_FEATURE_PV_SCHED_YIELD), 0));
	/* kvm-clock is MSRs and shared memory: it stays. */
	cr_expect(eq(u32, hidden & (1U << KVM_FEATURE_CLOCKSOURCE2), 0));
	cr_expect(not(
		eq(ptr, strstr(vmm_host_linux_params(&h), "noxsave"), NULL)));
}

Test(host_kind, hardware_hosts_hide_nothing_and_add_nothing)
{
	static const char *const vmx[] = {"/module/kvm", "/module/kvm_intel",
					  "/bus/event_source/devices/cpu",
					  NULL};
	static const char *const svm[] = {"/module/kvm_amd", NULL};
	char root[64];
	struct vmm_host h;

	fake_sysfs(root, sizeof(root), vmx);
	write_file(root, "/devices/system/clocksource/clocksource0",
		   "available_clocksource", "kvm-clock tsc hpet acpi_pm\n");
	vmm_host_probe_at(root, false, &h);
	remove_tree(root);
	cr_expect(eq(int, h.kind, VMM_HOST_VMX));
	cr_expect(h.hw_pmu);
	cr_expect(h.tsc_stable);
	cr_expect(eq(u32, vmm_host_hidden_kvm_features(&h), 0));
	cr_expect(eq(str, (char *)vmm_host_linux_params(&h), ""));

	fake_sysfs(root, sizeof(root), svm);
	/* The nested rig's L1: its TSC is no clocksource ("tscs" is not). */
	write_file(root, "/devices/system/clocksource/clocksource0",
		   "available_clocksource", "hpet tscs acpi_pm\n");
	vmm_host_probe_at(root, true, &h);
	remove_tree(root);
	cr_expect(eq(int, h.kind, VMM_HOST_SVM));
	cr_expect(not(h.tsc_stable));
	cr_expect(h.nested);
	cr_expect(eq(u32, vmm_host_hidden_kvm_features(&h), 0));
}

Test(host_kind, the_description_names_the_kind_and_its_consequences)
{
	struct vmm_host h = {.kind = VMM_HOST_PVM, .nested = true};
	char *text        = NULL;
	size_t len        = 0;
	FILE *f           = open_memstream(&text, &len);

	cr_assert(not(eq(ptr, f, NULL)));
	vmm_host_describe(&h, "> ", f);
	fclose(f);
	cr_expect(not(eq(ptr, strstr(text, "> host: PVM"), NULL)), "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "nested"), NULL)), "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "hardware events: refused"), NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "PV IPIs"), NULL)), "%s", text);
	free(text);
}
