// SPDX-License-Identifier: MIT
/*
 * event_spec.c: "name[:mod]..." event specs of the host operator tools (see
 * event_spec.h). The grammar the SDK documents is the SDK's own parser's
 * (pvpmu_event_encode()); this file adds perf's h and G, perf-style letter
 * groups (cycles:uk), 0xNNNN codes, and refuses what a modifier cannot mean
 * for the event's count source, with one sentence saying why.
 */
#include "event_spec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pvpmu/catalog.h"

#define SRC_BIT(s) (1u << (s))
#define HW_SRCS    (SRC_BIT(0) | SRC_BIT(PVPMU_SRC_PERF_HW))
#define HOST_SRCS  (SRC_BIT(PVPMU_SRC_HV) | SRC_BIT(PVPMU_SRC_PERF_SW))

/* A modifier letter: what it restricts the count to, and for which
 * sources that restriction holds. */
struct mod_row {
	char letter;
	const char *what;
	unsigned int sources; /* SRC_BIT()s */
};

static const struct mod_row mod_rows[] = {
	{'u', "guest ring 3", HW_SRCS},
	{'k', "guest ring 0", HW_SRCS},
	{'G', "guest execution only", HW_SRCS},
	{'h', "hypervisor/host", HOST_SRCS},
};

/* Why a modifier cannot apply to an event of (source). */
static const char *source_counts(unsigned int source)
{
	switch (source) {
	case PVPMU_SRC_HV:
		return "the hypervisor counts it, in every guest ring";
	case PVPMU_SRC_PERF_SW:
		return "it counts the vCPU thread on the host";
	default:
		return "it counts guest execution only (never the host)";
	}
}

const char *ev_spec_operator_refusal(uint16_t code)
{
	if (PVPMU_EV_EVENT(code) != PVPMU_EVSEL_KVMSTAT)
		return NULL;
	return "KVM statistics (kvmstat:*) are counted by guests only (SDK, "
	       "pfstat): the VMM opens them with an ioctl on the vCPU, which "
	       "blocks while the vCPU runs";
}

/* A code "0xNNNN" (1 to 4 hex digits) as the SDK's "rNNNN" in (buf). */
static bool hex_code(const char *s, size_t n, char *buf, size_t len)
{
	size_t d;

	if (n < 3 || n > 6 || strncmp(s, "0x", 2))
		return false;
	d = strspn(s + 2, "0123456789abcdefABCDEF");
	if (d != n - 2)
		return false;
	snprintf(buf, len, "r%.*s", (int)d, s + 2);
	return true;
}

#define NR_MODS (sizeof(mod_rows) / sizeof(mod_rows[0]))

/*
 * The modifiers of (p) (":..." or ""): u and k, and umask=N, appended to
 * the SDK's spec (sdk, of (len)); every letter's row marked in (used).
 */
static int parse_mods(const char *p, char *sdk, size_t len, bool *used,
		      char *err, size_t elen)
{
	size_t n, i, k, o = strlen(sdk);

	while (*p == ':') {
		p++;
		n = strcspn(p, ":");
		if (n && strspn(p, "ukhG") >= n) {
			/* Letters, perf-style groups (uk) or one by one. */
			for (i = 0; i < n; i++) {
				for (k = 0; mod_rows[k].letter != p[i]; k++)
					;
				used[k] = true;
			}
		} else if (n > 6 && !strncmp(p, "umask=", 6)) {
			o += (size_t)snprintf(sdk + o, o < len ? len - o : 0,
					      ":%.*s", (int)n, p);
		} else {
			snprintf(err, elen,
				 "unknown modifier '%.*s' (host tools take u, "
				 "k, h, G and umask=N)",
				 (int)n, p);
			return -EINVAL;
		}
		p += n;
	}
	for (k = 0; k < 2; k++) /* u, k: the SDK's event select bits */
		if (used[k])
			o += (size_t)snprintf(sdk + o, o < len ? len - o : 0,
					      ":%c", mod_rows[k].letter);
	return o < len ? 0 : -EINVAL;
}

int ev_spec_parse(const char *spec, struct ev_spec *out, char *err, size_t len)
{
	const struct pvpmu_event_desc *d;
	bool used[NR_MODS] = {false};
	size_t n           = strcspn(spec, ":");
	const char *why;
	char sdk[192];
	pvpmu_u64 v;
	unsigned int k, src;
	int ret;

	/* "kvmstat:NAME" is one name: refused whole, before any ':' split. */
	if (!strncmp(spec, "kvmstat", 7) && (spec[7] == ':' || !spec[7])) {
		snprintf(err, len, "event '%s': %s", spec,
			 ev_spec_operator_refusal(PVPMU_EV_KVMSTAT(0)));
		return -EINVAL;
	}
	if (!n || n >= 64)
		goto unknown;
	if (!hex_code(spec, n, sdk, sizeof(sdk)))
		snprintf(sdk, sizeof(sdk), "%.*s", (int)n, spec);
	ret = parse_mods(spec + n, sdk, sizeof(sdk), used, err, len);
	if (ret)
		return ret;
	ret = pvpmu_event_encode(sdk, &v, &d);
	if (ret == -PVPMU_ENOENT)
		goto unknown;
	if (ret) {
		snprintf(err, len,
			 "event '%s': bad modifier (umask=N, N < 256, applies "
			 "to hv_exit_reason only)",
			 spec);
		return -EINVAL;
	}
	out->evsel   = v;
	out->code    = (uint16_t)(v & 0xffff);
	d            = pvpmu_catalog_by_code(out->code);
	out->source  = d ? d->source : 0;
	out->is_time = d && d->is_time;
	why          = ev_spec_operator_refusal(out->code);
	if (why) {
		snprintf(err, len, "event '%s': %s", spec, why);
		return -EINVAL;
	}
	src = out->source;
	for (k = 0; k < NR_MODS; k++) {
		if (used[k] && !(mod_rows[k].sources & SRC_BIT(src))) {
			snprintf(err, len,
				 "event '%s': modifier '%c' (%s) has no "
				 "meaning for %.*s: %s",
				 spec, mod_rows[k].letter, mod_rows[k].what,
				 (int)n, spec, source_counts(src));
			return -EINVAL;
		}
	}
	return 0;
unknown:
	snprintf(err, len,
		 "unknown event '%.*s' (names from 'vpmu events', or a code "
		 "0xNNNN)",
		 (int)(n < 64 ? n : 64), spec);
	return -ENOENT;
}

/* Append member (m, of n bytes) with the group's modifiers (mods). */
static int list_add(struct ev_list_item *out, unsigned int max,
		    unsigned int *nr, const char *m, size_t n, const char *mods,
		    unsigned int group, char *err, size_t len)
{
	struct ev_list_item *it;

	if (!n) {
		snprintf(err, len, "empty event in the list");
		return -EINVAL;
	}
	if (*nr == max) {
		snprintf(err, len, "at most %u events", max);
		return -EINVAL;
	}
	it = &out[(*nr)++];
	if ((size_t)snprintf(it->spec, sizeof(it->spec), "%.*s%s", (int)n, m,
			     mods) >= sizeof(it->spec)) {
		snprintf(err, len, "event '%.*s%s' is too long", (int)n, m,
			 mods);
		return -EINVAL;
	}
	it->group = group;
	return 0;
}

/* The group "{...}" at (p) with its modifiers; (*end) after them. */
static int split_group(const char *p, const char **end,
		       struct ev_list_item *out, unsigned int max,
		       unsigned int *nr, unsigned int group, char *err,
		       size_t len)
{
	const char *close = strchr(p + 1, '}'), *m, *after;
	char mods[64]     = "";
	size_t n;
	int ret = 0;

	n = strcspn(p + 1, "{}");
	if (!close || p[1 + n] == '{') {
		snprintf(err, len, "group '%.40s': %s", p,
			 close ? "groups do not nest" : "no closing '}'");
		return -EINVAL;
	}
	after = close + 1;
	n     = strcspn(after, ",");
	if (n && *after != ':') {
		snprintf(err, len,
			 "group '%.*s': only ':MODIFIERS' may follow '}'",
			 (int)(after + n - p), p);
		return -EINVAL;
	}
	if (n >= sizeof(mods) || memchr(after, '{', n) ||
	    memchr(after, '}', n)) {
		snprintf(err, len, "group '%.40s': bad modifiers", p);
		return -EINVAL;
	}
	snprintf(mods, sizeof(mods), "%.*s", (int)n, after);
	if (close == p + 1 || close[-1] == ',') {
		snprintf(err, len, "empty event in group '%.*s'",
			 (int)(close + 1 - p), p);
		return -EINVAL;
	}
	for (m = p + 1; !ret && m < close; m += n + 1) {
		n   = strcspn(m, ",}");
		ret = list_add(out, max, nr, m, n, mods, group, err, len);
	}
	*end = after + strlen(mods);
	return ret;
}

int ev_list_split(const char *list, struct ev_list_item *out, unsigned int max,
		  unsigned int *nr, char *err, size_t len)
{
	const char *p      = list;
	unsigned int group = 0;
	size_t n;
	int ret = 0;

	*nr = 0;
	while (!ret && *p) {
		if (*p == '{') {
			ret = split_group(p, &p, out, max, nr, ++group, err,
					  len);
		} else {
			n = strcspn(p, ",{}");
			if (p[n] == '{' || p[n] == '}') {
				snprintf(err, len, "'%c' inside event '%.*s'",
					 p[n], (int)(n + 1), p);
				return -EINVAL;
			}
			ret = list_add(out, max, nr, p, n, "", 0, err, len);
			p += n;
		}
		if (!ret && *p == ',' && !p[1]) {
			snprintf(err, len, "empty event in the list");
			return -EINVAL;
		}
		p += *p == ',';
	}
	return ret;
}
