/* SPDX-License-Identifier: MIT */
/*
 * event_spec.h: the event specs of the host operator tools (stat, record,
 * top): "name[:mod]..." as the SDK documents them (guest/sdk/README.md),
 * encoded by the catalogue's parser (pvpmu_event_encode()), plus perf's h
 * and G.
 *
 *   name     a catalogue name ('vpmu events'), a code 0xNNNN or rXXXX
 *   :u :k    guest ring 3 / guest ring 0 only (perf's u, k)
 *   :h       hypervisor / host (the event is counted by the VMM or on the
 *            vCPU thread of the host)
 *   :G       guest execution only
 *   :umask=N the member N of a family event (hv_exit_reason)
 * Letters may be grouped as in perf (cycles:uk) or given one by one as in
 * the SDK (cycles:u:k). A modifier is accepted only where it means
 * something for the event's count source:
 *
 *   source                       u  k  G  h
 *   guest hardware (cycles, raw)  y  y  y  -   (perf, exclude_host)
 *   hypervisor (hv_*)             -  -  -  y   (every guest ring)
 *   host software (task-clock)    -  -  -  y   (the vCPU thread)
 *
 * KVM statistics (kvmstat:*) are refused: only guests can count them
 * (ev_spec_operator_refusal()).
 *
 * A list "a,b,{c,d}:u" is split by ev_list_split(): braces make a group,
 * as perf's, whose members count at the same time (one event set); a
 * modifier after the closing brace applies to every member.
 */
#ifndef OPS_EVENT_SPEC_H
#define OPS_EVENT_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ev_spec {
	uint16_t code;  /* umask << 8 | event */
	uint64_t evsel; /* the PMC value (event select layout, enabled) */
	uint8_t source; /* enum pvpmu_source; 0 for a raw host PMU code */
	bool is_time;   /* counts ns or TSC cycles */
};

/*
 * Parse (spec) into (*out). 0, or -EINVAL / -ENOENT with one sentence in
 * (err) (no program name, no newline).
 */
int ev_spec_parse(const char *spec, struct ev_spec *out, char *err, size_t len);

/*
 * NULL if host operators (vpmu stat/record/top) can count (code), else
 * why not (one sentence). Only KVM statistics are refused.
 */
const char *ev_spec_operator_refusal(uint16_t code);

/* One event of a list: its spec, and its group (0: none). */
struct ev_list_item {
	char spec[64];      /* as the user gave it, a group's modifiers added */
	unsigned int group; /* 1, 2...: the {...} it is in, counted from 1 */
};

/*
 * Split the event list (list) into (out) (at most (max) items), (*nr) of
 * them: "a,b:u,{c,d}:k" gives a, b:u, c:k (group 1), d:k (group 1). Only
 * the list's syntax is checked, not the events (ev_spec_parse()). 0, or
 * -EINVAL with one sentence in (err): unbalanced or nested braces, an
 * empty group or member, text after '}' other than ":MODS", more than
 * (max) events.
 */
int ev_list_split(const char *list, struct ev_list_item *out, unsigned int max,
		  unsigned int *nr, char *err, size_t len);

#endif /* OPS_EVENT_SPEC_H */
