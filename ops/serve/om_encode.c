// SPDX-License-Identifier: MIT
/*
 * om_encode.c: the Prometheus text format 0.0.4 and OpenMetrics 1.0.0
 * exposition (see serve_priv.h): families, samples with escaped label
 * values (always valid UTF-8), the "# EOF" terminator, and the choice between
 * the two from a scraper's Accept header.
 */
#include "serve_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void reserve(struct om_buf *b, size_t more)
{
	size_t cap;
	char *n;

	if (b->err || b->len + more + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	n = realloc(b->s, cap);
	if (!n) {
		b->err = -ENOMEM;
		return;
	}
	b->s   = n;
	b->cap = cap;
}

/* Append (n) bytes of (s): the escapers' one character at a time. */
static void put(struct om_buf *b, const char *s, size_t n)
{
	reserve(b, n);
	if (b->err)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void om_buf_printf(struct om_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reserve(b, (size_t)n);
	if (b->err)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void om_buf_free(struct om_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

void om_escape(struct om_buf *b, const char *v)
{
	size_t len  = strlen(v);
	char *clean = NULL;

	/*
	 * Names come from files and the registry, in any bytes: one that is
	 * not UTF-8 would make the whole exposition unparsable.
	 */
	if (vmm_ctl_utf8_check(v, len) != len) {
		clean = vmm_ctl_utf8_clean(v, len, NULL);
		if (!clean) {
			b->err = -ENOMEM;
			return;
		}
		v = clean;
	}
	/* put(), not printf: two vsnprintf calls a byte were most of it. */
	for (; *v; v++) {
		if (*v == '\\')
			put(b, "\\\\", 2);
		else if (*v == '"')
			put(b, "\\\"", 2);
		else if (*v == '\n')
			put(b, "\\n", 2);
		else
			put(b, v, 1);
	}
	free(clean);
}

/* q value of one Accept element's parameters ("; q=0.5"), default 1. */
static double q_of(const char *params)
{
	const char *q = strstr(params, "q=");

	return q ? strtod(q + 2, NULL) : 1.0;
}

enum om_format om_negotiate(const char *accept)
{
	double q_om = -1, q_text = -1, q;
	char buf[1024], *tok, *save = NULL, *semi;

	if (!accept)
		return OM_TEXT_004;
	snprintf(buf, sizeof(buf), "%s", accept);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		semi = strchr(tok, ';');
		q    = semi ? q_of(semi) : 1.0;
		if (semi)
			*semi = '\0';
		if (!strcasecmp(tok, "application/openmetrics-text")) {
			/* Only version 1.0.0 (or none) is what we write. */
			if ((!semi || !strstr(semi + 1, "version=") ||
			     strstr(semi + 1, "version=1.0.0")) &&
			    q > q_om)
				q_om = q;
		} else if (!strcasecmp(tok, "text/plain") && q > q_text) {
			q_text = q;
		}
	}
	return q_om > 0 && q_om >= q_text ? OM_OPENMETRICS_1 : OM_TEXT_004;
}

const char *om_content_type(enum om_format f)
{
	return f == OM_OPENMETRICS_1
		       ? "application/openmetrics-text; version=1.0.0; "
			 "charset=utf-8"
		       : "text/plain; version=0.0.4; charset=utf-8";
}

/* HELP text: backslash and newline escaped (and '"' in OpenMetrics). */
static void help_escape(struct om_buf *b, enum om_format f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			put(b, "\\\\", 2);
		else if (*v == '\n')
			put(b, "\\n", 2);
		else if (*v == '"' && f == OM_OPENMETRICS_1)
			put(b, "\\\"", 2);
		else
			put(b, v, 1);
	}
}

void om_family(struct om_buf *b, enum om_format f, const char *name,
	       const char *type, const char *help)
{
	/* Text 0.0.4 names the counter family by its sample name. */
	const char *sfx =
		f == OM_TEXT_004 && !strcmp(type, "counter") ? "_total" : "";

	om_buf_printf(b, "# HELP %s%s ", name, sfx);
	help_escape(b, f, help);
	om_buf_printf(b, "\n# TYPE %s%s %s\n", name, sfx, type);
}

static void labels(struct om_buf *b, const struct om_label *l, unsigned int nr)
{
	unsigned int i;

	if (!nr)
		return;
	om_buf_printf(b, "{");
	for (i = 0; i < nr; i++) {
		om_buf_printf(b, "%s%s=\"", i ? "," : "", l[i].name);
		om_escape(b, l[i].value);
		om_buf_printf(b, "\"");
	}
	om_buf_printf(b, "}");
}

void om_sample_u64(struct om_buf *b, const char *name, const char *suffix,
		   const struct om_label *l, unsigned int nr, uint64_t value)
{
	om_buf_printf(b, "%s%s", name, suffix ? suffix : "");
	labels(b, l, nr);
	om_buf_printf(b, " %llu\n", (unsigned long long)value);
}

void om_sample_f64(struct om_buf *b, const char *name, const char *suffix,
		   const struct om_label *l, unsigned int nr, double value)
{
	om_buf_printf(b, "%s%s", name, suffix ? suffix : "");
	labels(b, l, nr);
	om_buf_printf(b, " %.17g\n", value);
}

void om_end(struct om_buf *b, enum om_format f)
{
	if (f == OM_OPENMETRICS_1)
		om_buf_printf(b, "# EOF\n");
}
