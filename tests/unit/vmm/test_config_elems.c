// SPDX-License-Identifier: MIT
/*
 * test_config_elems.c: what vmm_config_load_xml() does with each element
 * of a libvirt domain (vmm/config/config_elems.c): a domain as virt-install
 * writes it loads with one line naming what vpmu ignores, refused elements
 * are errors naming them, <features><pmu state='off'/> is a VM without a
 * PMU, a missing disk file is an error, and the table is consistent.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_config.h"
#include "vm_config_priv.h"

#define DATA VPMU_SOURCE_DIR "/tests/unit/vmm/data/"

static char err[VMM_CONFIG_ERR_LEN];
static char xml_path[256], disk_path[256];

static void make_paths(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(xml_path, sizeof(xml_path), "%s/vpmu-elems-%d.xml", dir,
		 (int)getpid());
	snprintf(disk_path, sizeof(disk_path), "%s/vpmu-elems-%d.img", dir,
		 (int)getpid());
}

static void remove_files(void)
{
	unlink(xml_path);
	unlink(disk_path);
}

TestSuite(vmm_config_elems, .init = make_paths, .fini = remove_files);

/* Write (text) with every "@DISK@" replaced by (disk) and load it. */
static int load_text(const char *text, const char *disk, struct vmm_config *cfg)
{
	const char *at;
	FILE *f = fopen(xml_path, "w");

	cr_assert(not(eq(ptr, f, NULL)));
	while ((at = strstr(text, "@DISK@"))) {
		fprintf(f, "%.*s%s", (int)(at - text), text, disk);
		text = at + strlen("@DISK@");
	}
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	return vmm_config_load_xml(cfg, xml_path, err, sizeof(err));
}

/* The fixture (name) of data/, loaded with (disk) for its @DISK@. */
static int load_fixture(const char *name, const char *disk,
			struct vmm_config *cfg)
{
	static char text[16384];
	char path[512];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", DATA, name);
	f = fopen(path, "r");
	cr_assert(not(eq(ptr, f, NULL)), "%s", path);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	return load_text(text, disk, cfg);
}

static void make_disk(void)
{
	FILE *f = fopen(disk_path, "w");

	cr_assert(not(eq(ptr, f, NULL)));
	fclose(f);
}

/* A minimal Linux domain with (features) and (metadata) spliced in. */
static int load_domain(const char *features, const char *metadata,
		       struct vmm_config *cfg)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "<domain type='kvm'><name>elems</name>"
		 "<memory unit='MiB'>64</memory>"
		 "<os><type arch='x86_64'>hvm</type>"
		 "<kernel>/opt/vpmu/guests/test.elf</kernel></os>"
		 "%s<metadata>%s</metadata><devices>%s</devices></domain>\n",
		 features, metadata, "");
	return load_text(text, disk_path, cfg);
}

Test(vmm_config_elems, virt_install_domain_loads_with_one_warning_line)
{
	static const char want[] =
		": vpmu ignores (it has no such device or setting): "
		"<domain type='qemu'> (vpmu runs on KVM), <os><loader>, "
		"<features><pae>, <cpu>, <clock>, <pm>, <devices><emulator>, "
		"<devices><controller> (x4), <devices><interface>, "
		"<devices><console>, <devices><input>, <devices><graphics>, "
		"<devices><video>, <devices><memballoon>, <devices><rng>";
	struct vmm_config cfg;

	make_disk();
	cr_assert(eq(int, load_fixture("virt_install.xml", disk_path, &cfg), 0),
		  "%s", err);
	printf("warning: %s\n", cfg.ignored);
	cr_assert(eq(str, strchr(cfg.ignored, ':'), (char *)want));
	cr_assert(eq(int, strncmp(cfg.ignored, xml_path, strlen(xml_path)), 0));
	cr_assert(eq(ptr, strchr(cfg.ignored, '\n'), NULL));
	/* What it honours. */
	cr_assert(eq(str, cfg.name, "vi-guest"));
	cr_assert(eq(u64, cfg.mem_size, 64ULL << 20));
	cr_assert(eq(uint, cfg.nr_vcpus, 2));
	cr_assert(eq(uint, cfg.nr_disks, 1));
	cr_assert(eq(str, cfg.disks[0].path, disk_path));
	cr_assert(eq(str, cfg.pmu_model, "auto"));
}

Test(vmm_config_elems, missing_disk_file_is_an_error)
{
	struct vmm_config cfg;

	cr_assert(eq(
		int,
		load_fixture("virt_install.xml", "/nonexistent/vi.img", &cfg),
		-EINVAL));
	cr_assert(not(eq(ptr,
			 strstr(err, "<source>: '/nonexistent/vi.img': "
				     "No such file or directory"),
			 NULL)),
		  "%s", err);
}

Test(vmm_config_elems, a_domain_vpmu_fully_honours_warns_nothing)
{
	struct vmm_config cfg;

	cr_assert(eq(int, load_domain("", "", &cfg), 0), "%s", err);
	cr_assert(eq(str, cfg.ignored, ""));
}

Test(vmm_config_elems, pmu_off_is_a_vm_without_pmu)
{
	struct vmm_config cfg;

	cr_assert(eq(int,
		     load_domain("<features><pmu state='off'/></features>", "",
				 &cfg),
		     0),
		  "%s", err);
	cr_assert(eq(str, cfg.pmu_model, "none"));
	cr_assert(eq(str, cfg.ignored, ""));
}

Test(vmm_config_elems, pmu_on_keeps_the_model)
{
	struct vmm_config cfg;

	cr_assert(eq(int,
		     load_domain("<features><pmu state='on'/></features>",
				 "<vpmu:vpmu xmlns:vpmu='" VMM_CONFIG_XMLNS "'>"
				 "<vpmu:pmu model='amd-v2'/></vpmu:vpmu>",
				 &cfg),
		     0),
		  "%s", err);
	cr_assert(eq(str, cfg.pmu_model, "amd-v2"));
}

Test(vmm_config_elems, pmu_off_with_a_vpmu_model_is_refused)
{
	struct vmm_config cfg;

	cr_assert(eq(int,
		     load_domain("<features><pmu state='off'/></features>",
				 "<vpmu:vpmu xmlns:vpmu='" VMM_CONFIG_XMLNS "'>"
				 "<vpmu:pmu model='intel-v2'/></vpmu:vpmu>",
				 &cfg),
		     -EINVAL));
	cr_assert(not(eq(ptr,
			 strstr(err, "<pmu>: state='off' contradicts "
				     "<vpmu:pmu model='intel-v2'>"),
			 NULL)),
		  "%s", err);
}

Test(vmm_config_elems, refused_and_unknown_elements_are_named)
{
	static const struct {
		const char *features, *msg;
	} cases[] = {
		{"<devices><hostdev mode='subsystem' type='pci'><source>"
		 "<address domain='0' bus='0' slot='1' function='0'/>"
		 "</source></hostdev></devices>",
		 "<hostdev>: not supported: vpmu passes no host device "
		 "through"},
		{"<devices><filesystem type='mount'><source dir='/srv'/>"
		 "<target dir='srv'/></filesystem></devices>",
		 "<filesystem>: not supported: vpmu shares no host folder"},
		{"<launchSecurity type='sev'><policy>0x0003</policy>"
		 "</launchSecurity>",
		 "<launchSecurity>: not supported: vpmu runs no confidential"},
		{"<features><gic version='2'/></features>",
		 "<gic>: unknown to vpmu"},
	};
	struct vmm_config cfg;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect(eq(int, load_domain(cases[i].features, "", &cfg),
			     -EINVAL),
			  "case %zu", i);
		cr_expect(not(eq(ptr, strstr(err, cases[i].msg), NULL)),
			  "case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
	}
}

/* Each row's parent is <domain> or an honoured element; no row twice. */
Test(vmm_config_elems, table_is_consistent)
{
	const struct vmm_xml_elem *e, *p;
	char parent[64], *slash;
	size_t i;

	for (i = 0; i < vmm_xml_nr_elems; i++) {
		e = &vmm_xml_elems[i];
		cr_expect(eq(ptr,
			     (void *)vmm_config_xml_elem(e->parent, e->name),
			     (void *)e),
			  "<%s> under '%s' listed twice", e->name, e->parent);
		cr_expect(eq(int, e->use == VMM_XML_REFUSED, e->why != NULL),
			  "<%s>: a reason iff refused", e->name);
		if (!e->parent[0])
			continue;
		snprintf(parent, sizeof(parent), "%s", e->parent);
		slash = strrchr(parent, '/');
		if (slash)
			*slash = '\0';
		p = vmm_config_xml_elem(slash ? parent : "",
					slash ? slash + 1 : parent);
		cr_expect(p && p->use == VMM_XML_HONOURED,
			  "<%s>: parent '%s' is not an honoured element",
			  e->name, e->parent);
	}
}
