// SPDX-License-Identifier: MIT
/*
 * config_xml.c: read a libvirt domain XML file into a struct vmm_config.
 *
 * Three gates, all of which must pass before (cfg) is written:
 *   1. the file is a regular file of at most 1 MiB and well-formed XML
 *      (namespaces included) without a DTD, so without entities: nothing
 *      in it expands, and memory stays bounded; no network access;
 *   2. vpmu's own reading: every element checked against the table of
 *      config_elems.c (honoured, ignored and named in one warning line,
 *      or refused), then the honoured ones read (<name>, <uuid>,
 *      <memory>/<currentMemory>, <vcpu>, <os><type>/<kernel>/<initrd>/
 *      <cmdline>, <features><pmu>, <devices><disk>, and its settings in
 *      VMM_CONFIG_XMLNS under <metadata>);
 *   3. libvirt's RelaxNG domain schema, so the file stays a libvirt domain.
 * Gate 2 runs before gate 3 only because its messages are precise ("<vcpu>:
 * '0' is not a vCPU count") where libxml2's RelaxNG messages about
 * <interleave> content are not ("Extra element vcpu in interleave").
 *
 * Loading the schema takes about 10-15 ms (measured on the development
 * hosts), so it is loaded per call and not cached: no global state.
 */
#include "vm_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/relaxng.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <vpmu_file.h>

#include "vm_config_priv.h"

/* Schema errors gathered by the structured error callback. */
struct err_list {
	char buf[VMM_CONFIG_ERR_LEN];
	size_t used;
	unsigned int nr;
};

#define ERR_LIST_SHOWN 3 /* the first errors are the specific ones */

/* Text of xmlChar data: libxml2 strings are UTF-8 bytes. */
static const char *s(const xmlChar *x)
{
	return (const char *)x;
}

static const xmlChar *x(const char *str)
{
	return (const xmlChar *)str;
}

/* "<vcpu>", "<vpmu:limits>": the element as the file spells it. */
static void label(const xmlNode *n, char *buf, size_t len)
{
	if (n->ns && n->ns->prefix)
		snprintf(buf, len, "<%s:%s>", s(n->ns->prefix), s(n->name));
	else
		snprintf(buf, len, "<%s>", s(n->name));
}

void vmm_config_xml_where(const struct vmm_xml_src *src, const xmlNode *n,
			  char *buf, size_t len)
{
	char l[128];

	label(n, l, sizeof(l));
	snprintf(buf, len, "%s:%ld: %s", src->path, xmlGetLineNo(n), l);
}

int vmm_config_xml_fail(const struct vmm_xml_src *src, const xmlNode *n,
			const char *fmt, ...)
{
	char w[VMM_CONFIG_ERR_LEN], msg[VMM_CONFIG_ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vmm_config_xml_where(src, n, w, sizeof(w));
	vmm_config_errf(src->err, src->errlen, "%s: %s", w, msg);
	return -EINVAL;
}

/* Element child of (parent) called (name) in no namespace, or NULL. */
static xmlNode *child(const xmlNode *parent, const char *name)
{
	xmlNode *c;

	for (c = parent->children; c; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && !c->ns &&
		    strcmp(s(c->name), name) == 0)
			return c;
	}
	return NULL;
}

/* Text of (n) without surrounding white space; xmlFree(*raw) after use. */
static char *text(const xmlNode *n, xmlChar **raw)
{
	char *t, *end;

	*raw = xmlNodeGetContent(n);
	if (!*raw)
		return NULL;
	t = (char *)*raw;
	t += strspn(t, " \t\r\n");
	end = t + strlen(t);
	while (end > t && strchr(" \t\r\n", end[-1]))
		end--;
	*end = '\0';
	return t;
}

/* Bytes per libvirt unit (virScaleInteger): KiB etc. 1024, KB etc. 1000. */
static int unit_scale(const char *unit, uint64_t *scale)
{
	static const char powers[] = "kmgtpe";
	const char *p;
	unsigned int i;

	if (!strcasecmp(unit, "b") || !strcasecmp(unit, "byte") ||
	    !strcasecmp(unit, "bytes")) {
		*scale = 1;
		return 0;
	}
	p = unit[0] ? strchr(powers, unit[0] | 0x20) : NULL;
	if (!p)
		return -EINVAL;
	*scale = 1;
	for (i = 0; i <= (unsigned int)(p - powers); i++) {
		if (unit[1] == '\0' || !strcasecmp(unit + 1, "ib"))
			*scale *= 1024;
		else if (!strcasecmp(unit + 1, "b"))
			*scale *= 1000;
		else
			return -EINVAL;
	}
	return 0;
}

/* <memory unit='MiB'>64</memory>: bytes, default unit KiB. */
static int read_scaled(const struct vmm_xml_src *src, xmlNode *n, uint64_t *out)
{
	xmlChar *raw, *unit = xmlGetProp(n, x("unit"));
	const char *u = unit ? s(unit) : "KiB";
	char *t       = text(n, &raw);
	uint64_t v, scale;
	int ret;

	if (unit_scale(u, &scale)) {
		ret = vmm_config_xml_fail(
			src, n,
			"unit '%s' is not a libvirt unit (b, KiB, KB, MiB, "
			"MB, GiB, GB, TiB, TB, ...)",
			u);
	} else if (vmm_config_parse_u64(t ? t : "", UINT64_MAX, &v) ==
		   -EINVAL) {
		ret = vmm_config_xml_fail(src, n, "'%s' is not a number",
					  t ? t : "");
	} else if (t && (v == 0 || (v <= UINT64_MAX / scale))) {
		*out = v * scale;
		ret  = 0;
	} else {
		ret = vmm_config_xml_fail(
			src, n, "'%s %s' does not fit in 64 bits", t, u);
	}
	xmlFree(unit);
	xmlFree(raw);
	return ret;
}

static int read_memory(const struct vmm_xml_src *src, xmlNode *dom,
		       struct vmm_config *cfg)
{
	xmlNode *mem = child(dom, "memory"), *cur = child(dom, "currentMemory");
	char w[VMM_CONFIG_ERR_LEN];
	uint64_t m = 0, c = 0;
	int ret;

	if (mem && (ret = read_scaled(src, mem, &m)))
		return ret;
	if (cur && (ret = read_scaled(src, cur, &c)))
		return ret;
	if (mem && cur && m != c)
		return vmm_config_xml_fail(
			src, cur,
			"%llu bytes differs from <memory> (%llu bytes); "
			"vpmu has no memory balloon",
			(unsigned long long)c, (unsigned long long)m);
	if (!mem && !cur)
		return 0;
	cfg->mem_size = mem ? m : c;
	vmm_config_xml_where(src, mem ? mem : cur, w, sizeof(w));
	return vmm_config_check_mem(w, cfg->mem_size, src->err, src->errlen);
}

static int read_vcpus(const struct vmm_xml_src *src, xmlNode *dom,
		      struct vmm_config *cfg)
{
	xmlNode *n = child(dom, "vcpu");
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *raw, *cur;
	char *t;
	int ret;

	if (!n)
		return 0;
	vmm_config_xml_where(src, n, w, sizeof(w));
	t   = text(n, &raw);
	ret = vmm_config_check_vcpus(w, t ? t : "", &cfg->nr_vcpus, src->err,
				     src->errlen);
	xmlFree(raw);
	if (ret)
		return ret;
	cur = xmlGetProp(n, x("current"));
	if (cur && strtoul(s(cur), NULL, 10) != cfg->nr_vcpus)
		ret = vmm_config_xml_fail(
			src, n,
			"current='%s' differs from %u; vpmu has no vCPU "
			"hotplug",
			s(cur), cfg->nr_vcpus);
	xmlFree(cur);
	return ret;
}

static int read_name(const struct vmm_xml_src *src, xmlNode *dom,
		     struct vmm_config *cfg)
{
	xmlNode *n = child(dom, "name");
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *raw;
	char *t;
	int ret;

	if (!n)
		return 0;
	vmm_config_xml_where(src, n, w, sizeof(w));
	t   = text(n, &raw);
	ret = vmm_config_check_name(w, t ? t : "", src->err, src->errlen);
	if (!ret)
		strcpy(cfg->name, t); /* checked: shorter than VMM_NAME_MAX */
	xmlFree(raw);
	return ret;
}

/* libvirt accepts 32 hex digits with or without the four dashes. */
static int read_uuid(const struct vmm_xml_src *src, xmlNode *dom,
		     struct vmm_config *cfg)
{
	xmlNode *n = child(dom, "uuid");
	char canon[37];
	xmlChar *raw;
	char *t;
	int ret = 0;

	if (!n)
		return 0;
	t = text(n, &raw);
	if (t && strlen(t) == 32 && strspn(t, "0123456789abcdefABCDEF") == 32)
		snprintf(canon, sizeof(canon), "%.8s-%.4s-%.4s-%.4s-%.12s", t,
			 t + 8, t + 12, t + 16, t + 20);
	else
		snprintf(canon, sizeof(canon), "%s", t ? t : "");
	if (!t || strlen(t) > 36 || uuid_parse(canon, cfg->uuid))
		ret = vmm_config_xml_fail(
			src, n,
			"'%s' is not a UUID "
			"(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
			t ? t : "");
	else
		cfg->has_uuid = true;
	xmlFree(raw);
	return ret;
}

/*
 * An absolute path in the text of (node) into (dst): libvirt's schema
 * wants absolute kernel and initrd paths.
 */
static int read_path(const struct vmm_xml_src *src, xmlNode *node, char *dst,
		     size_t dstlen)
{
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *path = xmlNodeGetContent(node);
	int ret;

	if (!path || s(path)[0] != '/') {
		ret = vmm_config_xml_fail(
			src, node,
			"'%s' is not an absolute path (libvirt requires "
			"one; see configs/README.md)",
			path ? s(path) : "");
	} else {
		vmm_config_xml_where(src, node, w, sizeof(w));
		ret = vmm_config_copy_str(w, dst, dstlen, s(path), src->err,
					  src->errlen);
	}
	xmlFree(path);
	return ret;
}

/* <os><initrd>/abs/initrd</initrd><cmdline>text</cmdline></os> (Linux) */
static int read_linux_args(const struct vmm_xml_src *src, xmlNode *os,
			   struct vmm_config *cfg)
{
	xmlNode *initrd = child(os, "initrd"), *cmdline = child(os, "cmdline");
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *text;
	int ret = 0;

	if (initrd)
		ret = read_path(src, initrd, cfg->initrd, sizeof(cfg->initrd));
	if (ret || !cmdline)
		return ret;
	text = xmlNodeGetContent(cmdline);
	vmm_config_xml_where(src, cmdline, w, sizeof(w));
	ret = vmm_config_copy_str(w, cfg->cmdline, sizeof(cfg->cmdline),
				  text ? s(text) : "", src->err, src->errlen);
	xmlFree(text);
	cfg->has_cmdline = !ret;
	return ret;
}

/*
 * <os><type arch='x86_64'>hvm</type><kernel>/abs/guest.elf</kernel>
 * [<initrd>/abs/initrd</initrd>] [<cmdline>...</cmdline>]</os>
 */
static int read_os(const struct vmm_xml_src *src, xmlNode *dom,
		   struct vmm_config *cfg)
{
	xmlNode *os = child(dom, "os"), *type, *kernel;
	xmlChar *arch;
	int ret = 0;

	if (!os)
		return vmm_config_xml_fail(
			src, dom,
			"no <os><kernel>: vpmu boots the guest image "
			"named there");
	type = child(os, "type");
	arch = type ? xmlGetProp(type, x("arch")) : NULL;
	if (arch && strcmp(s(arch), "x86_64") != 0)
		ret = vmm_config_xml_fail(src, type,
					  "arch '%s' is not supported (x86_64)",
					  s(arch));
	xmlFree(arch);
	if (ret)
		return ret;
	kernel = child(os, "kernel");
	if (!kernel)
		return vmm_config_xml_fail(
			src, os,
			"no <kernel>: vpmu boots the guest image "
			"named there");
	ret = read_path(src, kernel, cfg->image, sizeof(cfg->image));
	if (!ret)
		ret = read_linux_args(src, os, cfg);
	return ret;
}

/* The attribute (name) of (n) is (want), or it is absent and (want) is
 * the default. */
static bool attr_is(const xmlNode *n, const char *name, const char *want,
		    bool absent_ok)
{
	xmlChar *v = xmlGetProp(n, x(name));
	bool ok    = v ? strcmp(s(v), want) == 0 : absent_ok;

	xmlFree(v);
	return ok;
}

/*
 * <disk type='file|block' device='disk'> with <source file=|dev=>,
 * <target bus='virtio'>, a raw <driver> if any, and <readonly/>: a virtio
 * disk. Anything else a disk can be (a cdrom, a qcow2 image, another bus)
 * is refused by name rather than booted without it.
 */
static int read_disk(const struct vmm_xml_src *src, xmlNode *disk,
		     struct vmm_config *cfg)
{
	xmlNode *source = child(disk, "source"),
		*target = child(disk, "target");
	xmlNode *driver = child(disk, "driver");
	bool block      = attr_is(disk, "type", "block", false);
	char w[VMM_CONFIG_ERR_LEN];
	xmlChar *path;
	int ret;

	if (!block && !attr_is(disk, "type", "file", false))
		return vmm_config_xml_fail(src, disk,
					   "only type='file' and type='block' "
					   "disks are supported");
	if (!attr_is(disk, "device", "disk", true))
		return vmm_config_xml_fail(src, disk,
					   "only device='disk' is supported "
					   "(no cdrom, floppy or lun)");
	if (driver && !attr_is(driver, "type", "raw", true))
		return vmm_config_xml_fail(
			src, driver, "only raw disk images are supported");
	if (!target || !attr_is(target, "bus", "virtio", false))
		return vmm_config_xml_fail(src, target ? target : disk,
					   "disks need <target bus='virtio'>: "
					   "vpmu's disks are virtio-blk");
	path = source ? xmlGetProp(source, x(block ? "dev" : "file")) : NULL;
	if (!path)
		return vmm_config_xml_fail(src, source ? source : disk,
					   "a disk needs <source %s='...'>",
					   block ? "dev" : "file");
	vmm_config_xml_where(src, source, w, sizeof(w));
	ret = vmm_config_add_disk(w, cfg, s(path),
				  child(disk, "readonly") != NULL, src->err,
				  src->errlen);
	xmlFree(path);
	return ret;
}

/* Every <devices><disk>, in document order (vda, vdb, ...). */
static int read_disks(const struct vmm_xml_src *src, xmlNode *dom,
		      struct vmm_config *cfg)
{
	xmlNode *devices = child(dom, "devices"), *c;
	int ret          = 0;

	for (c = devices ? devices->children : NULL; c && !ret; c = c->next) {
		if (c->type == XML_ELEMENT_NODE && !c->ns &&
		    strcmp(s(c->name), "disk") == 0)
			ret = read_disk(src, c, cfg);
	}
	return ret;
}

static int read_domain(const struct vmm_xml_src *src, xmlNode *dom,
		       struct vmm_config *cfg)
{
	xmlNode *md;
	int ret;

	if (dom->ns || strcmp(s(dom->name), "domain") != 0)
		return vmm_config_xml_fail(src, dom,
					   "the root element must be <domain>");
	/* Refuse first: nothing is read from a domain vpmu cannot run. */
	ret = vmm_config_xml_check_elems(src, dom, cfg);
	if (!ret)
		ret = read_name(src, dom, cfg);
	if (!ret)
		ret = read_uuid(src, dom, cfg);
	if (!ret)
		ret = read_memory(src, dom, cfg);
	if (!ret)
		ret = read_vcpus(src, dom, cfg);
	if (!ret)
		ret = read_os(src, dom, cfg);
	if (!ret)
		ret = read_disks(src, dom, cfg);
	md = child(dom, "metadata");
	if (!ret && md)
		ret = vmm_config_xml_read_metadata(src, md, cfg);
	if (!ret)
		ret = vmm_config_xml_read_pmu_feature(src, dom, cfg);
	return ret;
}

static void trim_newline(char *msg)
{
	size_t len = strlen(msg);

	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
}

static void collect_error(void *data, xmlErrorPtr e)
{
	struct err_list *list = data;
	const xmlNode *n      = e->node;
	char msg[256], l[128] = "";
	long line = e->line;
	int len;

	if (list->nr++ >= ERR_LIST_SHOWN || list->used >= sizeof(list->buf))
		return;
	snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "error");
	trim_newline(msg);
	if (n && n->type == XML_ELEMENT_NODE) {
		label(n, l, sizeof(l));
		line = xmlGetLineNo(n);
	}
	len = snprintf(list->buf + list->used, sizeof(list->buf) - list->used,
		       "%s%s%.0ld%s%s%s%s", list->used ? "; " : "",
		       line > 0 ? "line " : "", line > 0 ? line : 0,
		       line > 0 ? ": " : "", l, l[0] ? ": " : "", msg);
	if (len > 0)
		list->used += (size_t)len;
}

static void finish_list(struct err_list *list)
{
	size_t room = sizeof(list->buf) - list->used;

	if (list->nr > ERR_LIST_SHOWN && list->used < sizeof(list->buf))
		snprintf(list->buf + list->used, room, " (and %u more)",
			 list->nr - ERR_LIST_SHOWN);
}

static int check_schema(const struct vmm_xml_src *src, xmlDoc *doc)
{
	const char *rng = getenv(VMM_CONFIG_SCHEMA_ENV);
	xmlRelaxNGParserCtxtPtr pctxt;
	xmlRelaxNGValidCtxtPtr vctxt;
	struct err_list list = {0};
	xmlStructuredErrorFunc old_fn;
	xmlRelaxNGPtr schema;
	void *old_ctx;
	int ret;

	if (!rng || !*rng)
		rng = VMM_CONFIG_SCHEMA;
	if (access(rng, R_OK)) {
		ret = -errno;
		vmm_config_errf(src->err, src->errlen,
				"%s: libvirt schema not found at %s: install "
				"libvirt0 (or set %s)",
				src->path, rng, VMM_CONFIG_SCHEMA_ENV);
		return ret;
	}
	pctxt = xmlRelaxNGNewParserCtxt(rng);
	if (!pctxt)
		return -ENOMEM;
	xmlRelaxNGSetParserStructuredErrors(pctxt, collect_error, &list);
	/*
	 * The schema's own files are read by libxml2's plain parser, which
	 * reports to the (per-thread) global handler, by default stderr.
	 */
	old_fn  = xmlStructuredError;
	old_ctx = xmlStructuredErrorContext;
	xmlSetStructuredErrorFunc(&list, collect_error);
	schema = xmlRelaxNGParse(pctxt);
	xmlSetStructuredErrorFunc(old_ctx, old_fn);
	xmlRelaxNGFreeParserCtxt(pctxt);
	if (!schema) {
		finish_list(&list);
		vmm_config_errf(src->err, src->errlen,
				"%s: cannot load libvirt schema %s: %s",
				src->path, rng, list.buf);
		return -EINVAL;
	}
	ret   = -ENOMEM;
	vctxt = xmlRelaxNGNewValidCtxt(schema);
	if (!vctxt)
		goto out_free_schema;
	xmlRelaxNGSetValidStructuredErrors(vctxt, collect_error, &list);
	ret = xmlRelaxNGValidateDoc(vctxt, doc) == 0 ? 0 : -EINVAL;
	if (ret) {
		finish_list(&list);
		vmm_config_errf(src->err, src->errlen,
				"%s: not a valid libvirt domain: %s", src->path,
				list.buf);
	}
	xmlRelaxNGFreeValidCtxt(vctxt);
out_free_schema:
	xmlRelaxNGFree(schema);
	return ret;
}

/*
 * Read the whole of (src->path) into (*buf, *len): a regular file
 * (vpmu_file.h) of at most VMM_CONFIG_XML_MAX bytes. Bounding the input
 * bounds the parse: with no DTD (refuse_dtd) nothing in the file expands.
 */
static int read_config(const struct vmm_xml_src *src, char **buf, size_t *len)
{
	size_t max = VMM_CONFIG_XML_MAX, n = 0;
	struct stat st;
	ssize_t got;
	int fd, ret = 0;

	fd = vpmu_file_open(src->path, O_RDONLY, 0, &st, src->err, src->errlen);
	if (fd < 0)
		return fd;
	/* The file's size, not the limit: a domain is a few hundred bytes. */
	if ((uint64_t)st.st_size < max)
		max = (size_t)st.st_size;
	*buf = malloc(max + 1);
	if (!*buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	/* One byte more tells a file that grew past its size or the limit. */
	while (n <= max && (got = read(fd, *buf + n, max + 1 - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			vmm_config_errf(src->err, src->errlen, "%s: %s",
					src->path, strerror(-ret));
			break;
		}
		n += (size_t)got;
	}
	if (!ret && n > max && max < VMM_CONFIG_XML_MAX) {
		vmm_config_errf(src->err, src->errlen,
				"%s: grew while it was read", src->path);
		ret = -EAGAIN;
	} else if (!ret && (n > max || (uint64_t)st.st_size > max)) {
		vmm_config_errf(
			src->err, src->errlen,
			"%s: %llu bytes: a config may have at most "
			"1 MiB",
			src->path,
			(unsigned long long)((uint64_t)st.st_size > n
						     ? (uint64_t)st.st_size
						     : n));
		ret = -EFBIG;
	}
	if (ret) {
		free(*buf);
		*buf = NULL;
	}
	*len = n;
out_close:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Where the SAX hook below leaves its verdict (ctxt->_private). */
struct parse_guard {
	int dtd_line; /* line of a <!DOCTYPE>, 0 if none */
};

/*
 * libxml2 calls this at "<!DOCTYPE", before any declaration in it is
 * read. A libvirt domain has no DTD; one is the only way to declare
 * entities (internal ones expand wherever text is read: a few KiB of file
 * can become gigabytes) or to pull external files in. So the parse stops
 * here, having expanded nothing.
 */
static void refuse_dtd(void *ctx, const xmlChar *name, const xmlChar *ext_id,
		       const xmlChar *sys_id)
{
	xmlParserCtxtPtr ctxt  = ctx;
	struct parse_guard *pg = ctxt->_private;

	(void)name;
	(void)ext_id;
	(void)sys_id;
	pg->dtd_line = ctxt->input ? ctxt->input->line : 1;
	if (pg->dtd_line <= 0)
		pg->dtd_line = 1;
	xmlStopParser(ctxt);
}

/*
 * Parse (buf, len) read from (src->path): no network, no DTD (neither
 * loaded nor used: no XML_PARSE_DTDLOAD, XML_PARSE_NOENT or
 * XML_PARSE_HUGE, so libxml2's own limits stay on), no messages on stderr.
 */
static int parse_buf(const struct vmm_xml_src *src, const char *buf, size_t len,
		     xmlDoc **out)
{
	struct parse_guard pg = {0};
	xmlParserCtxtPtr ctxt;
	xmlDoc *doc;
	xmlErrorPtr e;
	char msg[256];
	int ret = 0;

	ctxt = xmlNewParserCtxt();
	if (!ctxt)
		return -ENOMEM;
	ctxt->_private            = &pg;
	ctxt->sax->internalSubset = refuse_dtd;
	doc = xmlCtxtReadMemory(ctxt, buf, (int)len, src->path, NULL,
				XML_PARSE_NONET | XML_PARSE_BIG_LINES |
					XML_PARSE_NOERROR |
					XML_PARSE_NOWARNING);
	if (pg.dtd_line) {
		vmm_config_errf(src->err, src->errlen,
				"%s:%d: <!DOCTYPE> is not allowed: a vpmu "
				"config has no DTD and no entity declarations "
				"(libvirt domain XML needs none)",
				src->path, pg.dtd_line);
		ret = -EINVAL;
	} else if (!doc || !ctxt->wellFormed || !ctxt->nsWellFormed) {
		e = xmlCtxtGetLastError(ctxt);
		snprintf(msg, sizeof(msg), "%s",
			 e && e->message ? e->message : "unreadable");
		trim_newline(msg);
		vmm_config_errf(src->err, src->errlen,
				"%s:%d: not well-formed XML: %s", src->path,
				e ? e->line : 0, msg);
		ret = -EINVAL;
	} else if (!xmlDocGetRootElement(doc)) {
		vmm_config_errf(src->err, src->errlen, "%s: no root element",
				src->path);
		ret = -EINVAL;
	}
	if (ret)
		xmlFreeDoc(doc);
	else
		*out = doc;
	xmlFreeParserCtxt(ctxt);
	return ret;
}

static int parse_file(const struct vmm_xml_src *src, xmlDoc **out)
{
	char *buf  = NULL;
	size_t len = 0;
	int ret;

	ret = read_config(src, &buf, &len);
	if (!ret)
		ret = parse_buf(src, buf, len, out);
	free(buf);
	return ret;
}

int vmm_config_load_xml(struct vmm_config *cfg, const char *path, char *err,
			size_t errlen)
{
	struct vmm_xml_src src = {.path = path, .err = err, .errlen = errlen};
	struct vmm_config *tmp;
	xmlDoc *doc = NULL;
	int ret;

	tmp = malloc(sizeof(*tmp));
	if (!tmp) {
		vmm_config_errf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	vmm_config_defaults(tmp);
	ret = vmm_config_copy_str("config file", tmp->source,
				  sizeof(tmp->source), path, err, errlen);
	if (ret)
		goto out_free_tmp;
	ret = parse_file(&src, &doc);
	if (ret)
		goto out_free_tmp;
	ret = read_domain(&src, xmlDocGetRootElement(doc), tmp);
	if (!ret)
		ret = check_schema(&src, doc);
	if (!ret)
		ret = vmm_config_xml_check_unknown(&src,
						   xmlDocGetRootElement(doc));
	if (!ret)
		*cfg = *tmp;
	xmlFreeDoc(doc);
out_free_tmp:
	free(tmp);
	return ret;
}
