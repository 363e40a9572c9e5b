// SPDX-License-Identifier: MIT
/*
 * events.c: event names -> counting PMC values (pvpmu_event_encode()).
 * Names come from the one catalogue (catalog.c); the PMC value follows the
 * IA32_PERFEVTSELx layout of the logical PMU. Freestanding, like catalog.c.
 */
#include "pvpmu/catalog.h"

#define NAME_MAX_LEN 64

/* Parse a decimal or 0x-prefixed number of [s, e) into (*v). */
static int parse_num(const char *s, const char *e, pvpmu_u64 *v)
{
	unsigned int base = 10, d;
	pvpmu_u64 x       = 0;

	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (s == e)
		return -PVPMU_EINVAL;
	for (; s < e; s++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned int)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return -PVPMU_EINVAL;
		if (x > (~0ULL - d) / base)
			return -PVPMU_EINVAL;
		x = x * base + d;
	}
	*v = x;
	return 0;
}

/* Does [s, e) equal the NUL-terminated (word)? */
static int is(const char *s, const char *e, const char *word)
{
	while (s < e && *word && *s == *word) {
		s++;
		word++;
	}
	return s == e && !*word;
}

/* "key=N" in [s, e) for (key): store N in (*v), 1; not that key: 0. */
static int keyval(const char *s, const char *e, const char *key, pvpmu_u64 *v,
		  int *err)
{
	const char *eq = s;

	while (eq < e && *eq != '=')
		eq++;
	if (eq == e || !is(s, eq, key))
		return 0;
	*err = parse_num(eq + 1, e, v);
	return 1;
}

struct mods {
	int usr, os, edge, inv;
	pvpmu_u64 cmask, umask;
	int has_umask;
};

/* Apply the modifier [s, e) to (*m). */
static int parse_mod(const char *s, const char *e, struct mods *m)
{
	int err = 0;

	if (is(s, e, "u") || is(s, e, "usr"))
		m->usr = 1;
	else if (is(s, e, "k") || is(s, e, "os"))
		m->os = 1;
	else if (is(s, e, "e") || is(s, e, "edge"))
		m->edge = 1;
	else if (is(s, e, "i") || is(s, e, "inv"))
		m->inv = 1;
	else if (keyval(s, e, "c", &m->cmask, &err) ||
		 keyval(s, e, "cmask", &m->cmask, &err))
		return err ? err : (m->cmask > 0xff ? -PVPMU_EINVAL : 0);
	else if (keyval(s, e, "umask", &m->umask, &err)) {
		m->has_umask = 1;
		return err ? err : (m->umask > 0xff ? -PVPMU_EINVAL : 0);
	} else
		return -PVPMU_EINVAL;
	return 0;
}

/* The event code named by [s, e): catalogue name or raw "rXXXX". */
static int lookup(const char *s, const char *e, pvpmu_u16 *code,
		  const struct pvpmu_event_desc **desc)
{
	char name[NAME_MAX_LEN];
	pvpmu_u64 raw;
	unsigned int i;

	*desc = 0;
	if (e - s >= NAME_MAX_LEN || s == e)
		return -PVPMU_ENOENT;
	for (i = 0; s + i < e; i++)
		name[i] = s[i];
	name[i] = '\0';
	*desc   = pvpmu_catalog_find(name);
	if (*desc) {
		*code = (*desc)->code;
		return 0;
	}
	if (name[0] == 'r' && e - s > 1 && e - s <= 5) {
		/* rXXXX is hex without the 0x. */
		char hex[8] = {'0', 'x'};

		for (i = 1; s + i < e; i++)
			hex[i + 1] = s[i];
		if (parse_num(hex, hex + i + 1, &raw) == 0) {
			*code = (pvpmu_u16)raw;
			return 0;
		}
	}
	return -PVPMU_ENOENT;
}

static int is_family(pvpmu_u16 code)
{
	return PVPMU_EV_IS_FAMILY(code);
}

int pvpmu_event_encode(const char *spec, pvpmu_u64 *value,
		       const struct pvpmu_event_desc **desc)
{
	const struct pvpmu_event_desc *d;
	struct mods m = {0};
	const char *s, *e;
	pvpmu_u16 code;
	pvpmu_u64 v;
	int ret;

	if (!spec || !value)
		return -PVPMU_EFAULT;
	for (e = spec; *e && *e != ':'; e++)
		;
	ret = lookup(spec, e, &code, &d);
	if (ret)
		return ret;
	while (*e == ':') {
		s = e + 1;
		for (e = s; *e && *e != ':'; e++)
			;
		ret = parse_mod(s, e, &m);
		if (ret)
			return ret;
	}
	/* A umask selects the member of a family event only. */
	if (m.has_umask) {
		if (!d || !is_family(code))
			return -PVPMU_EINVAL;
		code = (pvpmu_u16)(PVPMU_EV_EVENT(code) | m.umask << 8);
	}
	if (!m.usr && !m.os)
		m.usr = m.os = 1;
	v = code | PVPMU_EVSEL_EN | PVPMU_EVSEL_INT |
	    m.cmask << PVPMU_EVSEL_CMASK_SHIFT;
	v |= m.usr ? PVPMU_EVSEL_USR : 0;
	v |= m.os ? PVPMU_EVSEL_OS : 0;
	v |= m.edge ? PVPMU_EVSEL_EDGE : 0;
	v |= m.inv ? PVPMU_EVSEL_INV : 0;
	*value = v;
	if (desc)
		*desc = d;
	return 0;
}
