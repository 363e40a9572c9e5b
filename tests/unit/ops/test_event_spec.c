// SPDX-License-Identifier: MIT
/*
 * test_event_spec.c: the event specs of the host operator tools
 * (ops/client/event_spec.h): the SDK's "name[:mod]..." grammar
 * (guest/sdk/README.md) with perf's modifiers u, k, h, G accepted only
 * where they mean something for the event's count source, KVM statistics
 * refused with the reason, and VMM errors naming registers rewritten with
 * the user's event names.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "ctl_client.h"
#include "event_spec.h"
#include "pvpmu/abi.h"
#include "pvpmu/catalog.h"

static struct ev_spec parse_ok(const char *spec)
{
	struct ev_spec sp;
	char err[320] = "";

	cr_assert_eq(ev_spec_parse(spec, &sp, err, sizeof(err)), 0, "%s: %s",
		     spec, err);
	return sp;
}

static void parse_fails(const char *spec, int ret, const char *msg)
{
	struct ev_spec sp;
	char err[320] = "";

	cr_expect_eq(ev_spec_parse(spec, &sp, err, sizeof(err)), ret, "%s",
		     spec);
	cr_expect(strstr(err, msg) != NULL, "%s: '%s' not in '%s'", spec, msg,
		  err);
	cr_expect(!strchr(err, '\n'), "one sentence: %s", err);
}

#define RINGS (PVPMU_EVSEL_USR | PVPMU_EVSEL_OS)

Test(event_spec, plain_names_count_every_ring)
{
	struct ev_spec sp = parse_ok("hv_exits");

	cr_expect_eq(sp.code, PVPMU_EV_HV_EXITS);
	cr_expect_eq(sp.source, PVPMU_SRC_HV);
	cr_expect_eq(sp.evsel & RINGS, RINGS);
	cr_expect(sp.evsel & PVPMU_EVSEL_EN);
	cr_expect_not(sp.is_time);
	cr_expect(parse_ok("hv_run_ns").is_time);
}

/* u and k select the guest's rings of a guest hardware event (perf's
 * exclude_kernel / exclude_user), alone, grouped or one by one. */
Test(event_spec, u_and_k_select_guest_rings_of_hardware_events)
{
	cr_expect_eq(parse_ok("cycles:u").evsel & RINGS, PVPMU_EVSEL_USR);
	cr_expect_eq(parse_ok("cycles:k").evsel & RINGS, PVPMU_EVSEL_OS);
	cr_expect_eq(parse_ok("cycles:uk").evsel & RINGS, RINGS);
	cr_expect_eq(parse_ok("cycles:u:k").evsel & RINGS, RINGS);
	cr_expect_eq(parse_ok("cycles:G").evsel & RINGS, RINGS);
	cr_expect_eq(parse_ok("cycles:uG").evsel & RINGS, PVPMU_EVSEL_USR);
	cr_expect_eq(parse_ok("cycles:u").code, PVPMU_EV_CYCLES);
	/* A raw host PMU code is a guest hardware event too. */
	cr_expect_eq(parse_ok("0x00c0:k").evsel & RINGS, PVPMU_EVSEL_OS);
	cr_expect_eq(parse_ok("0x00c0:k").code, 0x00c0);
}

Test(event_spec, h_is_for_hypervisor_and_host_events)
{
	struct ev_spec sp = parse_ok("hv_exits:h");

	cr_expect_eq(sp.code, PVPMU_EV_HV_EXITS);
	cr_expect_eq(sp.evsel & RINGS, RINGS);
	cr_expect_eq(parse_ok("task-clock:h").code, PVPMU_EV_SW_TASK_CLOCK);
	parse_fails("cycles:h", -EINVAL,
		    "modifier 'h' (hypervisor/host) has no meaning for "
		    "cycles: it counts guest execution only");
}

Test(event_spec, meaningless_modifiers_are_one_clear_error)
{
	parse_fails("hv_exits:u", -EINVAL,
		    "event 'hv_exits:u': modifier 'u' (guest ring 3) has no "
		    "meaning for hv_exits: the hypervisor counts it, in every "
		    "guest ring");
	parse_fails("hv_run_ns:k", -EINVAL, "modifier 'k' (guest ring 0)");
	parse_fails("hv_hypercalls:G", -EINVAL, "modifier 'G'");
	parse_fails("task-clock:u", -EINVAL,
		    "it counts the vCPU thread on the host");
	parse_fails("hv_exits:x", -EINVAL,
		    "unknown modifier 'x' (host tools take u, k, h, G and "
		    "umask=N)");
	parse_fails("hv_exits:", -EINVAL, "unknown modifier ''");
	parse_fails("hv_exits:umask=3", -EINVAL, "umask=N");
}

Test(event_spec, umask_picks_a_family_member)
{
	struct ev_spec sp = parse_ok("hv_exit_reason:umask=2");

	cr_expect_eq(sp.code, PVPMU_EV_HV_EXIT_REASON(2));
	cr_expect_eq(sp.source, PVPMU_SRC_HV);
}

Test(event_spec, unknown_names_and_codes)
{
	parse_fails("nosuch", -ENOENT, "unknown event 'nosuch'");
	parse_fails("nosuch:u", -ENOENT, "unknown event 'nosuch'");
	parse_fails("0x12345", -ENOENT, "unknown event '0x12345'");
	parse_fails("", -ENOENT, "unknown event");
	cr_expect_eq(parse_ok("0x02e0").code, PVPMU_EV_HV_EXITS);
	cr_expect_eq(parse_ok("0x02e0").source, PVPMU_SRC_HV);
	cr_expect_eq(parse_ok("r02e0").code, PVPMU_EV_HV_EXITS);
}

/* kvmstat events are listed, so "unknown event" would contradict the
 * list: they are refused with who can count them. */
Test(event_spec, kvmstat_events_say_only_guests_count_them)
{
	parse_fails("kvmstat:exits", -EINVAL,
		    "event 'kvmstat:exits': KVM statistics (kvmstat:*) are "
		    "counted by guests only");
	parse_fails("kvmstat", -EINVAL, "counted by guests only");
	parse_fails("0x03e2", -EINVAL, "counted by guests only");
	cr_expect_not_null(ev_spec_operator_refusal(PVPMU_EV_KVMSTAT(5)));
	cr_expect_null(ev_spec_operator_refusal(PVPMU_EV_HV_EXITS));
	cr_expect_null(ev_spec_operator_refusal(PVPMU_EV_CYCLES));
}

/* Every catalogue event but kvmstat is accepted by name, as listed. */
Test(event_spec, every_catalogue_name_parses)
{
	struct ev_spec sp;
	char err[320];
	unsigned int i;

	for (i = 0; i < pvpmu_catalog_size(); i++) {
		const struct pvpmu_event_desc *d = pvpmu_catalog_at(i);
		int ret = ev_spec_parse(d->name, &sp, err, sizeof(err));

		if (d->source == PVPMU_SRC_KVMSTAT) {
			cr_expect_eq(ret, -EINVAL, "%s", d->name);
			continue;
		}
		cr_expect_eq(ret, 0, "%s: %s", d->name, err);
		cr_expect_eq(sp.code, d->code, "%s", d->name);
		cr_expect_eq(sp.is_time, d->is_time != 0, "%s", d->name);
	}
}

/* VMM errors name registers; the user named events. */
Test(event_spec, vmm_errors_name_the_users_events)
{
	static struct ops_session s;
	char out[512];
	unsigned int i;

	s.prog = "vpmu stat";
	cr_assert_eq(ops_parse_events(&s, "cycles,hv_exits:h"), 0);
	s.nr_sets = 1;
	ops_name_pmcs(&s,
		      "vCPU 0: PMC0 (set 0): event not available on this "
		      "host",
		      out, sizeof(out));
	cr_expect_str_eq(out, "vCPU 0: event 'cycles': event not available "
			      "on this host");
	ops_name_pmcs(&s, "PMC1: invalid value", out, sizeof(out));
	cr_expect_str_eq(out, "event 'hv_exits:h': invalid value");
	/* A register of no event of the session is left as it is. */
	ops_name_pmcs(&s, "PMC5 (set 0): x", out, sizeof(out));
	cr_expect_str_eq(out, "PMC5 (set 0): x");
	/* Multiplexed: the set is extra information. */
	s.nr_ev = 0;
	for (i = 0; i < 10; i++)
		cr_assert_eq(
			ops_parse_events(&s, i == 9 ? "cycles:u" : "hv_exits"),
			0);
	s.nr_sets = 2;
	ops_name_pmcs(&s, "vCPU 1: PMC1 (set 1): invalid value", out,
		      sizeof(out));
	cr_expect_str_eq(out, "vCPU 1: event 'cycles:u' (set 1): invalid "
			      "value");
	ops_name_pmcs(&s, "PMC1 (set 1): invalid value", out, 12);
	cr_expect_eq(strlen(out), 11);
}

/* perf's groups: braces, a modifier after '}' for every member. */
static const struct {
	int line;
	const char *list;
	const char *want; /* "spec/group ..." of each item, or NULL: -EINVAL */
	const char *msg;  /* the error says it */
} split_rows[] = {
	{__LINE__, "a,b:u", "a/0 b:u/0", NULL},
	{__LINE__, "{a,b}:u,c", "a:u/1 b:u/1 c/0", NULL},
	{__LINE__, "{a},{b:k,c}", "a/1 b:k/2 c/2", NULL},
	{__LINE__, "x,{a,b}", "x/0 a/1 b/1", NULL},
	{__LINE__, "{a,b", NULL, "no closing '}'"},
	{__LINE__, "{a,{b}}", NULL, "groups do not nest"},
	{__LINE__, "{}", NULL, "empty event in group"},
	{__LINE__, "{a,}", NULL, "empty event in group"},
	{__LINE__, "{a}x", NULL, "only ':MODIFIERS' may follow '}'"},
	{__LINE__, "a}", NULL, "'}' inside event"},
	{__LINE__, "a,,b", NULL, "empty event"},
	{__LINE__, "a,", NULL, "empty event"},
};

Test(event_spec, lists_split_into_groups)
{
	struct ev_list_item it[8];
	char err[320], got[256];
	unsigned int nr, i;
	size_t r, o;
	int ret;

	for (r = 0; r < sizeof(split_rows) / sizeof(split_rows[0]); r++) {
		err[0] = '\0';
		ret    = ev_list_split(split_rows[r].list, it, 8, &nr, err,
				       sizeof(err));
		if (!split_rows[r].want) {
			cr_expect_eq(ret, -EINVAL, "line %d",
				     split_rows[r].line);
			cr_expect(strstr(err, split_rows[r].msg) != NULL,
				  "line %d: '%s'", split_rows[r].line, err);
			continue;
		}
		cr_assert_eq(ret, 0, "line %d: %s", split_rows[r].line, err);
		for (i = 0, o = 0; i < nr; i++)
			o += (size_t)snprintf(got + o, sizeof(got) - o,
					      "%s%s/%u", i ? " " : "",
					      it[i].spec, it[i].group);
		cr_expect_str_eq(got, split_rows[r].want, "line %d",
				 split_rows[r].line);
	}
}

/*
 * A group counts at once: its members share an event set. Seven events
 * then a pair: a hole ends set 0 and the pair opens set 1; the group's
 * modifier reaches each member; a group larger than a set is refused.
 */
Test(event_spec, groups_share_one_event_set)
{
	static struct ops_session s;

	s.prog = "vpmu stat";
	cr_assert_eq(ops_parse_events(&s, "hv_exits,hv_pio,hv_mmio,hv_irqs,"
					  "hv_halts,hv_msr_reads,"
					  "hv_msr_writes,"
					  "{cycles,instructions}:u"),
		     0);
	cr_assert_eq(s.nr_ev, 10);
	cr_expect(s.ev[7].hole);
	cr_expect_str_eq(s.ev[8].name, "cycles:u");
	cr_expect_str_eq(s.ev[9].name, "instructions:u");
	cr_expect_eq(s.ev[8].evsel & RINGS, PVPMU_EVSEL_USR);
	cr_expect_eq(s.ev[9].evsel & RINGS, PVPMU_EVSEL_USR);
	cr_expect_neq(s.ev[8].group, 0);
	cr_expect_eq(s.ev[8].group, s.ev[9].group);
	cr_expect_eq(s.ev[0].group, 0);
	/* A group that fits where it starts is not moved. */
	memset(&s, 0, sizeof(s));
	s.prog = "vpmu stat";
	cr_assert_eq(ops_parse_events(&s, "hv_exits,{hv_pio,hv_mmio}"), 0);
	cr_expect_eq(s.nr_ev, 3);
	cr_expect_not(s.ev[1].hole);
	/* Nine members never count at once on eight counters. */
	cr_expect_eq(ops_parse_events(&s, "{hv_exits,hv_pio,hv_mmio,hv_irqs,"
					  "hv_halts,hv_msr_reads,"
					  "hv_msr_writes,hv_hypercalls,"
					  "hv_run_ns}"),
		     -EINVAL);
	/* A member's own error is the event's. */
	cr_expect_eq(ops_parse_events(&s, "{hv_exits:u,hv_pio}"), -EINVAL);
}
