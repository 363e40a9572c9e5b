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
