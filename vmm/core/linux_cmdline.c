// SPDX-License-Identifier: MIT
/*
 * linux_cmdline.c: merging parameters the host needs into a Linux command
 * line the user wrote.
 *
 * A word is "name" or "name=value" (a value may hold spaces inside double
 * quotes, as the kernel's parser allows). The user's words win: a needed
 * word is added only when no word of the line has its name, and it goes
 * before a "--" that hands the rest of the line to init, so init's
 * arguments stay init's.
 */
#include "vmm_core.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The word starting at (s) (no leading space): its length. */
static size_t word_len(const char *s)
{
	bool quoted = false;
	size_t n;

	for (n = 0; s[n]; n++) {
		if (s[n] == '"')
			quoted = !quoted;
		else if (s[n] == ' ' && !quoted)
			break;
	}
	return n;
}

/* The length of the name of the word (w, len): up to '=' or its end. */
static size_t name_len(const char *w, size_t len)
{
	const char *eq = memchr(w, '=', len);

	return eq ? (size_t)(eq - w) : len;
}

static bool is_end_of_params(const char *w, size_t len)
{
	return len == 2 && w[0] == '-' && w[1] == '-';
}

/* Where the kernel's parameters of (line) end: at a "--", or its end. */
static size_t params_end(const char *line)
{
	const char *p = line;
	size_t n;

	for (;;) {
		while (*p == ' ')
			p++;
		n = word_len(p);
		if (!n || is_end_of_params(p, n))
			return (size_t)(p - line);
		p += n;
	}
}

/* Does a word of (params, params_len) have the name (name, len)? */
static bool params_name(const char *params, size_t params_len, const char *name,
			size_t len)
{
	const char *p = params, *end = params + params_len;
	size_t n;

	while (p < end) {
		while (*p == ' ')
			p++;
		n = word_len(p);
		if (!n || p + n > end)
			break;
		if (name_len(p, n) == len && !strncmp(p, name, len))
			return true;
		p += n;
	}
	return false;
}

static int append(char *buf, size_t size, size_t *at, const char *s, size_t len)
{
	if (*at + len + 1 > size)
		return -ENAMETOOLONG;
	memcpy(buf + *at, s, len);
	*at += len;
	buf[*at] = '\0';
	return 0;
}

int vmm_cmdline_merge(const char *line, const char *needed, char *out,
		      size_t len, char *added, size_t added_len)
{
	size_t at = 0, added_at = 0, end = params_end(line), n;
	const char *w = needed;
	char extra[VMM_CMDLINE_MAX];
	size_t extra_at = 0;
	int ret         = 0;

	extra[0] = '\0';
	if (added && added_len)
		added[0] = '\0';
	for (;;) {
		while (*w == ' ')
			w++;
		n = word_len(w);
		if (!n)
			break;
		if (!params_name(line, end, w, name_len(w, n))) {
			if (extra_at)
				ret = append(extra, sizeof(extra), &extra_at,
					     " ", 1);
			if (!ret)
				ret = append(extra, sizeof(extra), &extra_at, w,
					     n);
			if (ret)
				return ret;
		}
		w += n;
	}
	/* The user's parameters, ours, then " -- init's arguments". */
	n = end;
	while (n && line[n - 1] == ' ')
		n--;
	ret = append(out, len, &at, line, n);
	if (!ret && extra_at && at)
		ret = append(out, len, &at, " ", 1);
	if (!ret)
		ret = append(out, len, &at, extra, extra_at);
	if (!ret && line[end])
		ret = append(out, len, &at, " ", 1);
	if (!ret)
		ret = append(out, len, &at, line + end, strlen(line + end));
	if (!ret && added && added_len)
		ret = append(added, added_len, &added_at, extra, extra_at);
	return ret;
}
