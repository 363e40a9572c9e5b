// SPDX-License-Identifier: MIT
/*
 * test_om.c: the exposition encoder of vpmu serve (ops/serve/om_encode.c)
 * and its monotonic counters (counters.c): label values escaped as both
 * formats require, counter families named as each format names them,
 * "# EOF" in OpenMetrics only, the format chosen from Prometheus's real
 * Accept header, and published counters that never go down across
 * multiplexed estimates and session switches.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "serve_priv.h"

Test(serve_om, label_values_are_escaped)
{
	struct om_buf b            = {0};
	const struct om_label l[2] = {{"vm", "a\"b\\c\nd"}, {"vcpu", "0"}};

	om_sample_u64(&b, "vpmu_events", "_total", l, 2, 42);
	cr_assert(eq(int, b.err, 0));
	cr_expect(eq(str, b.s,
		     "vpmu_events_total{vm=\"a\\\"b\\\\c\\nd\",vcpu=\"0\"} "
		     "42\n"));
	om_buf_free(&b);
}

Test(serve_om, label_values_are_utf8_whatever_the_bytes)
{
	struct om_buf b = {0};
	/* Latin-1 e-acute, a lone continuation byte, an overlong '/', 0xff. */
	const struct om_label l[2] = {{"image", "caf\xe9\"\x80/\xc0\xaf\xff"},
				      {"vm", "\xc3\xa9t\xc3\xa9"}};

	om_sample_u64(&b, "vpmu_vm_info", NULL, l, 2, 1);
	cr_assert(eq(int, b.err, 0));
	/* Each byte that is not UTF-8 is one U+FFFD; valid text stays. */
	cr_expect(eq(str, b.s,
		     "vpmu_vm_info{image=\"caf\xef\xbf\xbd\\\"\xef\xbf\xbd/"
		     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\","
		     "vm=\"\xc3\xa9t\xc3\xa9\"} 1\n"));
	cr_expect(eq(sz, vmm_ctl_utf8_check(b.s, b.len), b.len));
	om_buf_free(&b);
}

Test(serve_om, counter_family_names_per_format)
{
	struct om_buf t = {0}, o = {0};

	om_family(&t, OM_TEXT_004, "vpmu_events", "counter", "a\\b\nc\"d");
	om_family(&o, OM_OPENMETRICS_1, "vpmu_events", "counter", "a\\b\nc\"d");
	om_end(&t, OM_TEXT_004);
	om_end(&o, OM_OPENMETRICS_1);
	/* Text 0.0.4: the family is its sample name; '"' stays in HELP. */
	cr_expect(eq(str, t.s,
		     "# HELP vpmu_events_total a\\\\b\\nc\"d\n"
		     "# TYPE vpmu_events_total counter\n"));
	/* OpenMetrics: the family without _total, '"' escaped, # EOF. */
	cr_expect(eq(str, o.s,
		     "# HELP vpmu_events a\\\\b\\nc\\\"d\n"
		     "# TYPE vpmu_events counter\n# EOF\n"));
	om_buf_free(&t);
	om_buf_free(&o);
}

Test(serve_om, accept_header_chooses_the_format)
{
	/* What Prometheus 2.42 sends. */
	const char *prom =
		"application/openmetrics-text;version=1.0.0,application/"
		"openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0."
		"4;q=0.5,*/*;q=0.1";

	cr_expect(eq(int, om_negotiate(prom), OM_OPENMETRICS_1));
	cr_expect(eq(int, om_negotiate(NULL), OM_TEXT_004));
	cr_expect(eq(int, om_negotiate("*/*"), OM_TEXT_004));
	cr_expect(
		eq(int, om_negotiate("text/plain;version=0.0.4"), OM_TEXT_004));
	cr_expect(eq(int,
		     om_negotiate("application/openmetrics-text;q=0.1, "
				  "text/plain;q=0.9"),
		     OM_TEXT_004));
	/* A version we do not write is not chosen. */
	cr_expect(eq(int,
		     om_negotiate("application/openmetrics-text;version=0.0.1"),
		     OM_TEXT_004));
	cr_expect(not(eq(
		ptr, strstr(om_content_type(OM_OPENMETRICS_1), "version=1.0.0"),
		NULL)));
}

Test(serve_counters, estimates_that_go_down_are_not_published)
{
	struct serve_counter c = {0};

	/* Two sets at 50 %: raw 100 -> 200, then the estimate drops. */
	cr_expect(eq(u64, serve_scale(100, 2000, 1000), 200));
	cr_expect(eq(u64, serve_counter_update(&c, 200), 200));
	cr_expect(eq(u64, serve_counter_update(&c, 180), 200));
	cr_expect(eq(u64, serve_counter_update(&c, 260), 260));
	/* Exact counts (one set) are not scaled. */
	cr_expect(eq(u64, serve_scale(77, 1000, 1000), 77));
	cr_expect(eq(u64, serve_scale(77, 0, 0), 77));
}

Test(serve_counters, session_switches_continue_from_the_bank)
{
	struct serve_counter c = {0};

	serve_counter_update(&c, 1000);
	serve_counter_bank(&c); /* a profile replaces the session */
	cr_expect(eq(u64, serve_counter_update(&c, 0), 1000));
	cr_expect(eq(u64, serve_counter_update(&c, 5), 1005));
	serve_counter_update(&c, 3); /* an estimate that went down */
	serve_counter_bank(&c);
	cr_expect(eq(u64, c.pub, 1005));
	cr_expect(eq(u64, serve_counter_update(&c, 1), 1006),
		  "the next session starts from what was published");
}
