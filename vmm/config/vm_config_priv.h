/* SPDX-License-Identifier: MIT */
/*
 * vm_config_priv.h: helpers shared by vm_config.c, config_cli.c and
 * config_xml.c. Only those files include it.
 *
 * Every check takes (where), the source of the value as the user wrote it
 * ("--vcpus", "configs/demo.xml:5: <vcpu>"), and on failure writes
 * "(where): problem" into (err) and returns -EINVAL.
 */
#ifndef VMM_VM_CONFIG_PRIV_H
#define VMM_VM_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vmm_config;

/* snprintf into (err) unless (err) is NULL or (errlen) is 0. */
__attribute__((format(printf, 3, 4))) void
vmm_config_errf(char *err, size_t errlen, const char *fmt, ...);

/*
 * Parse (text) as plain decimal digits (no sign, spaces or suffix).
 * Returns 0 and sets (*out), -EINVAL if malformed, -ERANGE if > (max).
 */
int vmm_config_parse_u64(const char *text, uint64_t max, uint64_t *out);

/* Parse (text) as a vCPU count 1..VMM_VCPUS_MAX into (*out). */
int vmm_config_check_vcpus(const char *where, const char *text,
			   unsigned int *out, char *err, size_t errlen);

/* Check a guest RAM size: 4 KiB multiple, VMM_MEM_MIN..VMM_MEM_MAX. */
int vmm_config_check_mem(const char *where, uint64_t bytes, char *err,
			 size_t errlen);

/* Check a VM name: 1..VMM_NAME_MAX-1 characters of [A-Za-z0-9._-]. */
int vmm_config_check_name(const char *where, const char *name, char *err,
			  size_t errlen);

/* Check a PMU model name: auto, intel-v2, amd-core, amd-v2 or none. */
int vmm_config_check_pmu_model(const char *where, const char *model, char *err,
			       size_t errlen);

/*
 * Copy (src) into the string field (dst) of (dstlen) bytes; -EINVAL
 * (with a message naming (where)) if it does not fit.
 */
int vmm_config_copy_str(const char *where, char *dst, size_t dstlen,
			const char *src, char *err, size_t errlen);

/*
 * Add the disk (path) to (cfg), read-only or not: at most VMM_DISKS_MAX,
 * (path) a readable regular file or block device (and writable unless
 * read-only), checked now so that a missing disk is named before boot.
 */
int vmm_config_add_disk(const char *where, struct vmm_config *cfg,
			const char *path, bool read_only, char *err,
			size_t errlen);

/*
 * The XML reader's state (config_xml.c, config_meta.c): the file being read
 * and where its one error message goes.
 */
struct vmm_xml_src {
	const char *path;
	char *err;
	size_t errlen;
};

struct _xmlNode; /* libxml2's xmlNode */

/* Write "path:LINE: <elem>" for element (n) into (buf). */
void vmm_config_xml_where(const struct vmm_xml_src *src,
			  const struct _xmlNode *n, char *buf, size_t len);

/* Write "path:LINE: <elem>: (fmt...)" into src->err; returns -EINVAL. */
__attribute__((format(printf, 3, 4))) int
vmm_config_xml_fail(const struct vmm_xml_src *src, const struct _xmlNode *n,
		    const char *fmt, ...);

/*
 * Read vpmu's settings, the VMM_CONFIG_XMLNS elements under <metadata>
 * (md), into (cfg). Elements of other namespaces are left to their owners;
 * unknown vpmu elements and attributes are errors.
 */
int vmm_config_xml_read_metadata(const struct vmm_xml_src *src,
				 struct _xmlNode *md, struct vmm_config *cfg);

/*
 * <features><pmu state='on|off'/> of the domain (dom), after the metadata
 * was read: 'off' makes (cfg) a VM without a PMU (model "none"), an error
 * if <vpmu:pmu> named a model; 'on' keeps the model.
 */
int vmm_config_xml_read_pmu_feature(const struct vmm_xml_src *src,
				    struct _xmlNode *dom,
				    struct vmm_config *cfg);

/*
 * What vpmu does with an element of a libvirt domain (config_elems.c):
 * one row per element vpmu knows, under its parent's path ("" for
 * <domain>, "os", "features", "devices", "devices/disk").
 */
enum vmm_xml_use {
	VMM_XML_HONOURED, /* read and obeyed */
	VMM_XML_IGNORED,  /* named in the one warning line (cfg->ignored) */
	VMM_XML_REFUSED,  /* an error naming it and (why) */
};

struct vmm_xml_elem {
	const char *parent;
	const char *name;
	enum vmm_xml_use use;
	const char *why; /* refused: what vpmu lacks */
};

extern const struct vmm_xml_elem vmm_xml_elems[];
extern const size_t vmm_xml_nr_elems;

/* The row of <(name)> under (parent), or NULL: vpmu does not know it. */
const struct vmm_xml_elem *vmm_config_xml_elem(const char *parent,
					       const char *name);

/*
 * Check every element of the domain (dom) against vmm_xml_elems[]: the
 * first refused one is an error naming it (-EINVAL); the ignored ones
 * (and a <domain type> other than kvm) make one line in cfg->ignored, ""
 * if none. Elements the table lacks are left to libvirt's schema, then to
 * vmm_config_xml_check_unknown().
 */
int vmm_config_xml_check_elems(const struct vmm_xml_src *src,
			       const struct _xmlNode *dom,
			       struct vmm_config *cfg);

/*
 * After the schema passed: an element of (dom) vmm_xml_elems[] lacks is
 * an error naming it (-EINVAL): valid libvirt, but vpmu cannot tell what
 * booting without it would change.
 */
int vmm_config_xml_check_unknown(const struct vmm_xml_src *src,
				 const struct _xmlNode *dom);

#endif /* VMM_VM_CONFIG_PRIV_H */
