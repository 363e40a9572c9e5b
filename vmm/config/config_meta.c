// SPDX-License-Identifier: MIT
/*
 * config_meta.c: vpmu's own settings inside a libvirt domain's <metadata>.
 *
 * libvirt keeps each application's metadata in that application's XML
 * namespace; vpmu's is VMM_CONFIG_XMLNS and holds one element:
 *
 *   <vpmu:vpmu xmlns:vpmu="https://github.com/vpmu/vpmu/xmlns/domain/1">
 *     <vpmu:pmu model="intel-v2"/>         auto|intel-v2|amd-core|amd-v2|none
 *     <vpmu:console file="guest.log"/>     default: stdout
 *     <vpmu:stats/>                        print exit statistics at the end
 *     <vpmu:limits contexts="16" sets="32" smpl-mem="16M" queue-depth="64"
 *                  arg-size="4K"/>         any subset; each > 0
 *     <vpmu:throttle max-rate="100000" max-overhead="25"/>  sampling
 *                                          limits
 *     <vpmu:formats dir="/usr/lib/vpmu/formats"/>   run-time sampling
 *                                          formats: every *.so of dir
 *   </vpmu:vpmu>
 *
 * Every child is optional and may appear once. Anything else in the
 * namespace is an error that names it, so a typo is never silently ignored.
 */
#include "vm_config.h"
#include "vpmu_common.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <libxml/tree.h>

#include "vm_config_priv.h"

struct meta_elem {
	const char *name;
	const char *const attrs[6]; /* allowed attributes, NULL-terminated */
	int (*read)(const struct vmm_xml_src *src, xmlNode *n,
		    struct vmm_config *cfg);
};

static const char *s(const xmlChar *str)
{
	return (const char *)str;
}

static bool is_vpmu_ns(const xmlNode *n)
{
	return n->ns && n->ns->href &&
	       strcmp(s(n->ns->href), VMM_CONFIG_XMLNS) == 0;
}

/* Attribute (name) of (n), which must be there. xmlFree() the result. */
static xmlChar *required(const struct vmm_xml_src *src, xmlNode *n,
			 const char *name, int *ret)
{
	xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)name);

	*ret = v ? 0
		 : vmm_config_xml_fail(src, n, "missing attribute '%s'", name);
	return v;
}

static int read_pmu(const struct vmm_xml_src *src, xmlNode *n,
		    struct vmm_config *cfg)
{
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *model;
	int ret;

	model = required(src, n, "model", &ret);
	if (ret)
		return ret;
	vmm_config_xml_where(src, n, w, sizeof(w));
	ret = vmm_config_check_pmu_model(w, s(model), src->err, src->errlen);
	if (!ret)
		strcpy(cfg->pmu_model, s(model)); /* a known, short name */
	xmlFree(model);
	return ret;
}

/* A non-empty path attribute (attr) of (n) copied into (dst). */
static int read_path(const struct vmm_xml_src *src, xmlNode *n,
		     const char *attr, const char *empty_msg, char *dst,
		     size_t len)
{
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *v;
	int ret;

	v = required(src, n, attr, &ret);
	if (ret)
		return ret;
	if (!v[0]) {
		ret = vmm_config_xml_fail(src, n, "%s", empty_msg);
	} else {
		vmm_config_xml_where(src, n, w, sizeof(w));
		ret = vmm_config_copy_str(w, dst, len, s(v), src->err,
					  src->errlen);
	}
	xmlFree(v);
	return ret;
}

static int read_console(const struct vmm_xml_src *src, xmlNode *n,
			struct vmm_config *cfg)
{
	return read_path(src, n, "file", "file='' names no file", cfg->console,
			 sizeof(cfg->console));
}

static int read_stats(const struct vmm_xml_src *src, xmlNode *n,
		      struct vmm_config *cfg)
{
	(void)src;
	(void)n;
	cfg->stats = true;
	return 0;
}

/* One limits attribute: a count (is_size false) or a size, 1..(max). */
static int read_limit(const struct vmm_xml_src *src, xmlNode *n,
		      const char *name, bool is_size, uint64_t max,
		      uint64_t *out)
{
	xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)name);
	int ret;

	if (!v)
		return 0; /* keep the default */
	if (is_size)
		ret = vmm_config_parse_size(s(v), out);
	else
		ret = vmm_config_parse_u64(s(v), UINT64_MAX, out);
	if (!ret && (*out == 0 || *out > max))
		ret = -ERANGE;
	if (ret)
		ret = vmm_config_xml_fail(
			src, n, "%s='%s' is not %s from 1 to %llu%s", name,
			s(v), is_size ? "a size" : "a whole number",
			(unsigned long long)max,
			is_size ? " bytes (e.g. 64K, 16M)" : "");
	xmlFree(v);
	return ret;
}

static int read_limits(const struct vmm_xml_src *src, xmlNode *n,
		       struct vmm_config *cfg)
{
	struct vmm_pmu_limits *l = &cfg->limits;
	uint64_t ctx = l->max_contexts, sets = l->max_sets;
	uint64_t msgs = l->max_msgs, arg = l->max_arg_size;
	int ret;

	ret = read_limit(src, n, "contexts", false, UINT32_MAX, &ctx);
	if (!ret)
		ret = read_limit(src, n, "sets", false, UINT32_MAX, &sets);
	if (!ret)
		ret = read_limit(src, n, "smpl-mem", true, UINT64_MAX,
				 &l->max_smpl_mem);
	if (!ret)
		ret = read_limit(src, n, "queue-depth", false, UINT32_MAX,
				 &msgs);
	if (!ret)
		ret = read_limit(src, n, "arg-size", true, UINT32_MAX, &arg);
	l->max_contexts = (uint32_t)ctx;
	l->max_sets     = (uint32_t)sets;
	l->max_msgs     = (uint32_t)msgs;
	l->max_arg_size = (uint32_t)arg;
	return ret;
}

static int read_formats(const struct vmm_xml_src *src, xmlNode *n,
			struct vmm_config *cfg)
{
	return read_path(src, n, "dir", "dir='' names no directory",
			 cfg->format_dir, sizeof(cfg->format_dir));
}

/* <vpmu:throttle max-rate='HZ' max-overhead='PCT'/>. */
static int read_sampling(const struct vmm_xml_src *src, xmlNode *n,
			 struct vmm_config *cfg)
{
	struct vmm_pmu_limits *l = &cfg->limits;
	uint64_t rate = l->max_smpl_rate, pct = l->max_overhead_pct;
	int ret;

	ret = read_limit(src, n, "max-rate", false, VMM_SMPL_RATE_CAP, &rate);
	if (!ret)
		ret = read_limit(src, n, "max-overhead", false, 100, &pct);
	l->max_smpl_rate    = (uint32_t)rate;
	l->max_overhead_pct = (uint32_t)pct;
	return ret;
}

static const struct meta_elem meta_elems[] = {
	{"pmu", {"model", NULL}, read_pmu},
	{"console", {"file", NULL}, read_console},
	{"stats", {NULL}, read_stats},
	{"limits",
	 {"contexts", "sets", "smpl-mem", "queue-depth", "arg-size", NULL},
	 read_limits},
	{"formats", {"dir", NULL}, read_formats},
	{"throttle", {"max-rate", "max-overhead", NULL}, read_sampling},
};

#define NR_META_ELEMS (ARRAY_SIZE(meta_elems))

static int check_attrs(const struct vmm_xml_src *src, xmlNode *n,
		       const char *const *allowed)
{
	const char *const *a;
	xmlAttr *attr;

	for (attr = n->properties; attr; attr = attr->next) {
		for (a = allowed; *a && !attr->ns; a++) {
			if (strcmp(*a, s(attr->name)) == 0)
				break;
		}
		if (attr->ns || !*a)
			return vmm_config_xml_fail(src, n,
						   "unknown attribute '%s'",
						   s(attr->name));
	}
	return 0;
}

/* Only white space and comments may sit between vpmu elements. */
static int check_no_content(const struct vmm_xml_src *src, xmlNode *n)
{
	xmlNode *c;

	for (c = n->children; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE)
			return vmm_config_xml_fail(src, c,
						   "unexpected element inside "
						   "<%s>",
						   s(n->name));
		if (c->type == XML_TEXT_NODE && !xmlIsBlankNode(c))
			return vmm_config_xml_fail(
				src, n, "unexpected text '%s'", s(c->content));
	}
	return 0;
}

static int read_setting(const struct vmm_xml_src *src, xmlNode *c, bool *seen,
			struct vmm_config *cfg)
{
	size_t i;
	int ret;

	for (i = 0; i < NR_META_ELEMS; i++) {
		if (is_vpmu_ns(c) &&
		    strcmp(s(c->name), meta_elems[i].name) == 0)
			break;
	}
	if (i == NR_META_ELEMS)
		return vmm_config_xml_fail(src, c,
					   "unknown vpmu setting (known: pmu, "
					   "console, stats, limits, formats, "
					   "throttle)");
	if (seen[i])
		return vmm_config_xml_fail(src, c, "given twice");
	seen[i] = true;
	ret     = check_attrs(src, c, meta_elems[i].attrs);
	if (!ret)
		ret = check_no_content(src, c);
	if (!ret)
		ret = meta_elems[i].read(src, c, cfg);
	return ret;
}

static int read_vpmu(const struct vmm_xml_src *src, xmlNode *vpmu,
		     struct vmm_config *cfg)
{
	static const char *const no_attrs[] = {NULL};
	bool seen[NR_META_ELEMS]            = {false};
	xmlNode *c;
	int ret;

	ret = check_attrs(src, vpmu, no_attrs);
	for (c = vpmu->children; c && !ret; c = c->next) {
		if (c->type == XML_ELEMENT_NODE)
			ret = read_setting(src, c, seen, cfg);
		else if (c->type == XML_TEXT_NODE && !xmlIsBlankNode(c))
			ret = vmm_config_xml_fail(src, vpmu,
						  "unexpected text '%s'",
						  s(c->content));
	}
	return ret;
}

int vmm_config_xml_read_metadata(const struct vmm_xml_src *src, xmlNode *md,
				 struct vmm_config *cfg)
{
	xmlNode *c, *found = NULL;
	int ret;

	for (c = md->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || !is_vpmu_ns(c))
			continue;
		if (strcmp(s(c->name), "vpmu") != 0)
			return vmm_config_xml_fail(
				src, c,
				"unknown vpmu element (the settings go in "
				"<vpmu:vpmu>)");
		if (found)
			return vmm_config_xml_fail(src, c, "given twice");
		found = c;
		ret   = read_vpmu(src, c, cfg);
		if (ret)
			return ret;
	}
	return 0;
}

/* <features><pmu> of the domain (dom), or NULL. */
static xmlNode *pmu_feature(const xmlNode *dom)
{
	xmlNode *f, *c;

	for (f = dom->children; f; f = f->next) {
		if (f->type != XML_ELEMENT_NODE || f->ns ||
		    strcmp(s(f->name), "features"))
			continue;
		for (c = f->children; c; c = c->next) {
			if (c->type == XML_ELEMENT_NODE && !c->ns &&
			    !strcmp(s(c->name), "pmu"))
				return c;
		}
	}
	return NULL;
}

int vmm_config_xml_read_pmu_feature(const struct vmm_xml_src *src, xmlNode *dom,
				    struct vmm_config *cfg)
{
	xmlNode *pmu = pmu_feature(dom);
	xmlChar *state;
	int ret = 0;

	if (!pmu)
		return 0;
	state = required(src, pmu, "state", &ret);
	if (ret)
		return ret;
	if (!strcmp(s(state), "off")) {
		/* libvirt's meaning: the guest has no PMU at all. */
		if (strcmp(cfg->pmu_model, "auto") &&
		    strcmp(cfg->pmu_model, "none"))
			ret = vmm_config_xml_fail(
				src, pmu,
				"state='off' contradicts <vpmu:pmu "
				"model='%s'>",
				cfg->pmu_model);
		else
			strcpy(cfg->pmu_model, "none");
	} else if (strcmp(s(state), "on")) {
		ret = vmm_config_xml_fail(src, pmu,
					  "state='%s' is neither 'on' nor "
					  "'off'",
					  s(state));
	}
	xmlFree(state);
	return ret;
}
