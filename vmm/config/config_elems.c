// SPDX-License-Identifier: MIT
/*
 * config_elems.c: what vpmu does with each element a libvirt domain may
 * hold. One table for the parser and the warning: the walk below checks
 * every element against it (refusing, and gathering the one warning line
 * about what is ignored) before config_xml.c's readers take the honoured
 * ones; the table is the list of what those readers read. An element is
 *   honoured  read by vpmu and obeyed (<memory>, <disk>, <pmu>, ...);
 *   ignored   vpmu has nothing of the kind, but booting without it is what
 *             its owner expects of vpmu (a NIC, graphics, a firmware
 *             loader, clock and CPU model settings): named in the one
 *             warning line `vpmu run` prints;
 *   refused   booting without it would run a different guest than the
 *             file describes (a passed-through device, a shared folder,
 *             an encrypted disk): an error naming it.
 * An element the table does not list is refused too: vpmu cannot know
 * what leaving it out would mean. The elements inside an ignored one are
 * not looked at; those inside honoured ones are, down to <disk>'s.
 */
#include "vm_config.h"
#include "vpmu_common.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <libxml/tree.h>

#include "vm_config_priv.h"

#define H(parent, name)                                                        \
	{                                                                      \
		parent, name, VMM_XML_HONOURED, NULL                           \
	}
#define I(parent, name)                                                        \
	{                                                                      \
		parent, name, VMM_XML_IGNORED, NULL                            \
	}
#define R(parent, name, why)                                                   \
	{                                                                      \
		parent, name, VMM_XML_REFUSED, why                             \
	}

/* (parent) "" is <domain>; "devices/disk" is <devices><disk>. */
const struct vmm_xml_elem vmm_xml_elems[] = {
	H("", "name"),
	H("", "uuid"),
	H("", "memory"),
	H("", "currentMemory"),
	H("", "vcpu"),
	H("", "os"),
	H("", "features"),
	H("", "devices"),
	H("", "metadata"),
	I("", "title"),
	I("", "description"),
	I("", "genid"),
	I("", "maxMemory"),
	I("", "vcpus"),
	I("", "iothreads"),
	I("", "iothreadids"),
	I("", "cputune"),
	I("", "memtune"),
	I("", "blkiotune"),
	I("", "numatune"),
	I("", "memoryBacking"),
	I("", "resource"),
	I("", "sysinfo"),
	I("", "cpu"),
	I("", "clock"),
	I("", "on_poweroff"),
	I("", "on_reboot"),
	I("", "on_crash"),
	I("", "on_lockfailure"),
	I("", "pm"),
	I("", "perf"),
	I("", "idmap"),
	I("", "seclabel"),
	I("", "keywrap"),
	R("", "bootloader",
	  "vpmu boots the image of <os><kernel>, not a host boot loader"),
	R("", "bootloader_args",
	  "vpmu boots the image of <os><kernel>, not a host boot loader"),
	R("", "launchSecurity", "vpmu runs no confidential (SEV, TDX) guests"),

	H("os", "type"),
	H("os", "kernel"),
	H("os", "initrd"),
	H("os", "cmdline"),
	I("os", "loader"),
	I("os", "nvram"),
	I("os", "firmware"),
	I("os", "boot"),
	I("os", "bootmenu"),
	I("os", "smbios"),
	I("os", "bios"),
	I("os", "acpi"),
	R("os", "dtb", "x86 guests have no device tree"),
	R("os", "init", "container init is for libvirt's LXC driver"),

	H("features", "pmu"),
	I("features", "acpi"),
	I("features", "apic"),
	I("features", "pae"),
	I("features", "hap"),
	I("features", "privnet"),
	I("features", "hyperv"),
	I("features", "kvm"),
	I("features", "pvspinlock"),
	I("features", "vmport"),
	I("features", "smm"),
	I("features", "ioapic"),
	I("features", "vmcoreinfo"),
	I("features", "msrs"),
	I("features", "async-teardown"),

	H("devices", "disk"),
	I("devices", "emulator"),
	I("devices", "controller"),
	I("devices", "interface"),
	I("devices", "console"),
	I("devices", "serial"),
	I("devices", "parallel"),
	I("devices", "channel"),
	I("devices", "input"),
	I("devices", "graphics"),
	I("devices", "video"),
	I("devices", "sound"),
	I("devices", "audio"),
	I("devices", "rng"),
	I("devices", "memballoon"),
	I("devices", "watchdog"),
	I("devices", "panic"),
	I("devices", "redirdev"),
	I("devices", "redirfilter"),
	I("devices", "hub"),
	I("devices", "tpm"),
	I("devices", "vsock"),
	I("devices", "iommu"),
	I("devices", "smartcard"),
	I("devices", "lease"),
	R("devices", "hostdev", "vpmu passes no host device through"),
	R("devices", "filesystem",
	  "vpmu shares no host folder: give the folder as a --disk"),
	R("devices", "memory", "vpmu has no memory hotplug"),
	R("devices", "shmem", "vpmu has no shared memory device"),

	H("devices/disk", "source"),
	H("devices/disk", "target"),
	H("devices/disk", "driver"),
	H("devices/disk", "readonly"),
	I("devices/disk", "address"),
	I("devices/disk", "alias"),
	I("devices/disk", "boot"),
	I("devices/disk", "serial"),
	I("devices/disk", "wwn"),
	I("devices/disk", "vendor"),
	I("devices/disk", "product"),
	I("devices/disk", "geometry"),
	I("devices/disk", "blockio"),
	I("devices/disk", "iotune"),
	I("devices/disk", "backingStore"),
	R("devices/disk", "shareable", "vpmu cannot share a disk between VMs"),
	R("devices/disk", "transient",
	  "vpmu writes to the disk itself (no overlay)"),
	R("devices/disk", "encryption", "vpmu reads only unencrypted images"),
	R("devices/disk", "auth", "vpmu's disks are local files"),
};

const size_t vmm_xml_nr_elems = ARRAY_SIZE(vmm_xml_elems);

const struct vmm_xml_elem *vmm_config_xml_elem(const char *parent,
					       const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vmm_xml_elems); i++) {
		if (!strcmp(vmm_xml_elems[i].parent, parent) &&
		    !strcmp(vmm_xml_elems[i].name, name))
			return &vmm_xml_elems[i];
	}
	return NULL;
}

/* The ignored elements met so far: row and count, in document order. */
struct ignored {
	const struct vmm_xml_elem *row[ARRAY_SIZE(vmm_xml_elems)];
	unsigned int count[ARRAY_SIZE(vmm_xml_elems)];
	size_t nr;
};

static void note_ignored(struct ignored *ig, const struct vmm_xml_elem *e)
{
	size_t i;

	for (i = 0; i < ig->nr && ig->row[i] != e; i++)
		;
	if (i == ig->nr)
		ig->row[ig->nr++] = e;
	ig->count[i]++;
}

/* "<devices><disk><boot>" for (parent) "devices/disk", (name) "boot". */
static void elem_label(const char *parent, const char *name, char *buf,
		       size_t len)
{
	size_t used = 0;
	const char *p;

	for (p = parent; *p && used < len; p += strcspn(p, "/"), p += !!*p)
		used += (size_t)snprintf(buf + used, len - used, "<%.*s>",
					 (int)strcspn(p, "/"), p);
	if (used < len)
		snprintf(buf + used, len - used, "<%s>", name);
}

/*
 * Check the element children of (n), whose path is (parent). The first
 * pass (ig given) refuses the refused rows and gathers the ignored ones,
 * and skips elements the table lacks: libvirt's schema, checked next,
 * says better what is wrong with an element libvirt does not know either.
 * The second (ig NULL, after the schema passed) refuses those elements.
 */
static int walk(const struct vmm_xml_src *src, const xmlNode *n,
		const char *parent, struct ignored *ig)
{
	const struct vmm_xml_elem *e;
	char path[64];
	xmlNode *c;
	int ret;

	for (c = n->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE)
			continue;
		e = c->ns ? NULL
			  : vmm_config_xml_elem(parent, (const char *)c->name);
		if (!e && !ig)
			return vmm_config_xml_fail(
				src, c,
				"unknown to vpmu, which would boot a different "
				"guest without it: remove it");
		if (!e)
			continue;
		if (e->use == VMM_XML_REFUSED)
			return vmm_config_xml_fail(src, c, "not supported: %s",
						   e->why);
		if (e->use == VMM_XML_IGNORED) {
			if (ig)
				note_ignored(ig, e);
			continue;
		}
		snprintf(path, sizeof(path), "%s%s%s", parent,
			 parent[0] ? "/" : "", e->name);
		/* <metadata> belongs to its namespaces' owners. */
		if (strcmp(path, "metadata") && (ret = walk(src, c, path, ig)))
			return ret;
	}
	return 0;
}

/* "FILE: vpmu ignores ...: <cpu>, <devices><controller> (x4), ..." */
static void write_ignored(const struct vmm_xml_src *src, const char *type,
			  const struct ignored *ig, char *out, size_t len)
{
	char l[64], item[96];
	size_t used, i;

	out[0] = '\0';
	if (!ig->nr && !type)
		return;
	used = (size_t)snprintf(out, len,
				"%s: vpmu ignores (it has no such device or "
				"setting): ",
				src->path);
	if (type && used < len)
		used += (size_t)snprintf(out + used, len - used,
					 "<domain type='%s'> (vpmu runs on "
					 "KVM)",
					 type);
	for (i = 0; i < ig->nr && used < len; i++) {
		elem_label(ig->row[i]->parent, ig->row[i]->name, l, sizeof(l));
		if (ig->count[i] > 1)
			snprintf(item, sizeof(item), "%s (x%u)", l,
				 ig->count[i]);
		else
			snprintf(item, sizeof(item), "%s", l);
		used += (size_t)snprintf(out + used, len - used, "%s%s",
					 (i || type) ? ", " : "", item);
	}
}

int vmm_config_xml_check_elems(const struct vmm_xml_src *src,
			       const xmlNode *dom, struct vmm_config *cfg)
{
	struct ignored ig = {.nr = 0};
	xmlChar *type     = xmlGetProp(dom, (const xmlChar *)"type");
	bool not_kvm      = type && strcmp((const char *)type, "kvm");
	int ret;

	ret = walk(src, dom, "", &ig);
	if (!ret)
		write_ignored(src, not_kvm ? (const char *)type : NULL, &ig,
			      cfg->ignored, sizeof(cfg->ignored));
	xmlFree(type);
	return ret;
}

int vmm_config_xml_check_unknown(const struct vmm_xml_src *src,
				 const xmlNode *dom)
{
	return walk(src, dom, "", NULL);
}
