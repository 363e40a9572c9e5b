// SPDX-License-Identifier: MIT
/*
 * test_stat_fake.c: `vpmu stat` against real control servers without KVM
 * (tests/serve/fake_vms: the VMM's VM state and control server, threads as
 * vCPUs; once the file GO exists each vCPU makes exactly N hypercalls):
 *   - -r N: two runs, the first counting all N hypercalls of each vCPU and
 *     the second none: the mean is half the total and perf's "+-" (the
 *     standard deviation of the mean in % of the mean) is exactly 100 %,
 *     in CSV, JSON and text;
 *   - an event the host cannot count is named as the user named it in the
 *     VMM's refusal, never "PMC0 (set 0)";
 *   - a meaningful modifier (hv_hypercalls:h) counts like the plain event;
 *   - with event sets, the interval they switched at (from the
 *     VMM's throttle, session_read "switch_ns") is printed beside the
 *     requested one, with the switches the overhead budget delayed;
 *   - -x and -j print perf stat's fields in perf's order and with its
 *     keys (perf-stat.txt, CSV FORMAT), read here by a parser written to
 *     that description, with -A's CPU<n> and -I's timestamp in front.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli_program.h"

#define FAKE_VMS VPMU_BUILD_DIR "/tests/serve/fake_vms"
#define N        300 /* hypercalls per vCPU */

static char dir[64], go[96], log_path[96], wait_cmd[512];
static pid_t fake;

/* Does the fake VMs' stderr say (what)? */
static bool log_says(const char *what)
{
	char buf[4096];
	FILE *f = fopen(log_path, "r");
	size_t n;

	if (!f)
		return false;
	n      = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, what) != NULL;
}

static void setup(void)
{
	int i;

	snprintf(dir, sizeof(dir), "/tmp/vpmu-stat-fake.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(go, sizeof(go), "%s/go", dir);
	snprintf(log_path, sizeof(log_path), "%s/fake.log", dir);
	fflush(NULL);
	fake = fork();
	cr_assert_geq(fake, 0);
	if (fake == 0) {
		/* Never outlive the test, never hold its output open. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (!freopen(log_path, "w", stderr) ||
		    !freopen("/dev/null", "w", stdout))
			_exit(126);
		setenv("VPMU_RUNTIME_DIR", dir, 1);
		execl(FAKE_VMS, FAKE_VMS, go, "300", "alpha:2", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200 && !log_says("fake_vms: ready"); i++)
		usleep(50000);
	cr_assert(log_says("fake_vms: ready"), "fake_vms did not start");
	/* A COMMAND that lets the hypercalls go and waits until all made. */
	snprintf(wait_cmd, sizeof(wait_cmd),
		 "[ -e %s ] && exit 0; touch %s; i=0; until grep -q "
		 "'hypercalls done' %s; do i=$((i+1)); [ $i -gt 400 ] && "
		 "exit 1; sleep 0.05; done",
		 go, go, log_path);
}

static void teardown(void)
{
	char cmd[160];
	int st;

	if (fake > 0) {
		kill(fake, SIGTERM);
		waitpid(fake, &st, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

TestSuite(stat_fake, .init = setup, .fini = teardown, .timeout = 120);

/* The line of (out) that contains (a) and (b). */
static const char *line_with(const char *out, const char *a, const char *b)
{
	const char *p = out, *e;
	static char line[512];

	while (*p) {
		e = strchr(p, '\n');
		e = e ? e : p + strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		if (strstr(line, a) && strstr(line, b))
			return line;
		p = *e ? e + 1 : e;
	}
	return NULL;
}

Test(stat_fake, repeat_prints_mean_and_perf_spread_in_csv)
{
	static struct vpmu_out r;
	const char *l;
	char want[64];

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-r", "2", "-x", ",",
				      "--vpmu-fields", "-e",
				      "hv_hypercalls,hv_run_ns", "-A", "sh",
				      "-c", wait_cmd, NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* Per vCPU: N in run 1, 0 in run 2 -> mean N/2, +- 100.00 %. */
	snprintf(want, sizeof(want), ",hv_hypercalls,%d,", N / 2);
	l = line_with(r.out, ",alpha,", want);
	cr_assert_not_null(l, "%s", r.out);
	cr_expect(strstr(l, ",mean,2,") != NULL, "%s", l);
	cr_expect(strstr(l, ",100.00") != NULL, "%s", l);
	cr_expect_eq(strlen(strstr(l, ",mean,")) > 0, 1);
	l = line_with(r.out, ",alpha,", ",hv_run_ns,");
	cr_assert_not_null(l, "%s", r.out);
	cr_expect(strstr(l, ",mean,2,") != NULL, "%s", l);
	cr_expect(!strstr(r.out, ",interval"), "-r prints means only");
}

Test(stat_fake, repeat_in_json_and_text)
{
	static struct vpmu_out r;
	const char *l;
	char want[64];

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-r", "2", "-j", "--vpmu-fields",
				      "-e", "hv_hypercalls:h", "sh", "-c",
				      wait_cmd, NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "\"count\": %d,", N); /* 2 vCPUs */
	l = line_with(r.out, "\"event\": \"hv_hypercalls:h\"", want);
	cr_assert_not_null(l, "%s", r.out);
	cr_expect(strstr(l, "\"kind\": \"mean\"") != NULL, "%s", l);
	cr_expect(strstr(l, "\"runs\": 2") != NULL, "%s", l);
	cr_expect(strstr(l, "\"rel_stddev_pct\": 100.00") != NULL, "%s", l);
	/* Text: the runs said once, "+-" after each count. */
	cr_assert_eq(unlink(go), 0);
	teardown();
	setup();
	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-r", "2", "-e", "hv_hypercalls",
				      "sh", "-c", wait_cmd, NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# mean of 2 runs") != NULL, "%s", r.out);
	l = line_with(r.out, "hv_hypercalls", "( +- 100.00% )");
	cr_expect_not_null(l, "%s", r.out);
	cr_expect(strstr(r.out, "# 'sh' ran 2 times; last exit status 0") !=
			  NULL,
		  "%s", r.out);
}

/* The VMM refuses an event by register; the user reads the event's name. */
Test(stat_fake, refusals_name_the_event)
{
	static struct vpmu_out r;

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-e", "hv_exits,cycles:u", "--",
				      "0.2", NULL},
		     &r);
	if (r.status == 0) /* a host with a PMU counts it */
		cr_skip_test("cycles is countable here");
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "not available") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "event 'cycles:u'") != NULL, "%s", r.err);
	cr_expect(!strstr(r.err, "PMC"), "%s", r.err);
}

/*
 * 9 events make two sets switched every 2 ms of run time; the
 * fake vCPUs' monitoring costs far less than a 50 % budget (each exit is
 * 1 ms of run time; only the accounting is charged), so the VMM reports
 * the requested interval and no switch delayed.
 */
Test(stat_fake, set_switch_interval_is_reported)
{
	static struct vpmu_out r;
	const char *l;

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "--switch-ms", "2",
				      "--max-overhead", "50", "-e",
				      "hv_run_ns,hv_exits,hv_hypercalls,"
				      "hv_msr_reads,hv_msr_writes,hv_pio,"
				      "hv_mmio,hv_irqs,hv_halts",
				      "--", "0.5", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	l = line_with(r.out, "# set switches: every 2.0 ms",
		      "(requested 2 ms); 0 switches delayed by the overhead "
		      "budget");
	cr_expect_not_null(l, "%s", r.out);
	/* One set: no switching to speak of. */
	vpmu_prog_in(
		dir,
		(const char *[]){"stat", "-e", "hv_exits", "--", "0.2", NULL},
		&r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.out, "# set switches"), "%s", r.out);
}

/*
 * A reader of perf stat -x output as perf documents it: the fields of a
 * line after the optional interval and CPU prefixes.
 */
struct perf_csv {
	double interval;
	int cpu; /* -1: no CPU<n> field */
	char value[32], unit[16], event[64];
	unsigned long long runtime;
	double pcnt;
	char metric[32], metric_unit[32];
};

static int perf_csv_parse(const char *line, bool has_interval,
			  struct perf_csv *c)
{
	char buf[512], *f[16], *p = buf;
	int n = 0, i = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	while (n < 16 && (f[n++] = strsep(&p, ",")))
		;
	n--;
	memset(c, 0, sizeof(*c));
	c->cpu = -1;
	if (has_interval)
		c->interval = strtod(f[i++], NULL);
	if (i < n && !strncmp(f[i], "CPU", 3))
		c->cpu = atoi(f[i++] + 3);
	if (n - i != 7)
		return -1; /* perf's seven fields */
	snprintf(c->value, sizeof(c->value), "%s", f[i]);
	snprintf(c->unit, sizeof(c->unit), "%s", f[i + 1]);
	snprintf(c->event, sizeof(c->event), "%s", f[i + 2]);
	c->runtime = strtoull(f[i + 3], NULL, 10);
	c->pcnt    = strtod(f[i + 4], NULL);
	snprintf(c->metric, sizeof(c->metric), "%s", f[i + 5]);
	snprintf(c->metric_unit, sizeof(c->metric_unit), "%s", f[i + 6]);
	return 0;
}

/* The perf CSV lines of (out) for (event) into (c); how many. */
static int perf_csv_rows(const char *out, bool has_interval, const char *event,
			 struct perf_csv *c, int max)
{
	char line[512];
	const char *p = out, *e;
	int n         = 0;

	while (*p && n < max) {
		e = strchr(p, '\n');
		e = e ? e : p + strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		p = *e ? e + 1 : e;
		cr_assert_eq(perf_csv_parse(line, has_interval, &c[n]), 0,
			     "not perf's CSV: '%s'", line);
		if (!strcmp(c[n].event, event))
			n++;
	}
	return n;
}

Test(stat_fake, csv_has_perf_fields_in_perf_order)
{
	static struct vpmu_out r;
	struct perf_csv c[8];
	char want[16];

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-x", ",", "-e",
				      "hv_hypercalls,hv_run_ns", "sh", "-c",
				      wait_cmd, NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(perf_csv_rows(r.out, false, "hv_hypercalls", c, 8), 1,
		     "%s", r.out);
	snprintf(want, sizeof(want), "%d", 2 * N); /* 2 vCPUs */
	cr_expect_str_eq(c[0].value, want);
	cr_expect_str_eq(c[0].unit, "");
	cr_expect_eq(c[0].cpu, -1);
	cr_expect_float_eq(c[0].pcnt, 100.0, 1e-9);
	cr_expect_str_eq(c[0].metric, "");
	cr_expect_str_eq(c[0].metric_unit, "");
	/* A count of nanoseconds has perf's unit for them (duration_time). */
	cr_assert_eq(perf_csv_rows(r.out, false, "hv_run_ns", c, 8), 1);
	cr_expect_str_eq(c[0].unit, "ns");
	cr_expect(c[0].runtime > 0, "%s", r.out);
}

Test(stat_fake, csv_per_vcpu_and_interval_prefixes_as_perf)
{
	static struct vpmu_out r;
	struct perf_csv c[64];
	int n, i;

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-x", ",", "-A", "-I", "100",
				      "-e", "hv_hypercalls", "--", "0.5", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	n = perf_csv_rows(r.out, true, "hv_hypercalls", c, 64);
	cr_assert(n >= 4, "%s", r.out); /* 2 vCPUs, >= 2 reports */
	for (i = 0; i < n; i++) {
		cr_expect(c[i].cpu == 0 || c[i].cpu == 1, "%s", r.out);
		cr_expect(c[i].interval > 0.0, "%s", r.out);
	}
}

/* perf -j's keys, in the order perf prints them. */
static const char *const perf_json_keys[] = {
	"counter-value", "unit",         "event",       "event-runtime",
	"pcnt-running",  "metric-value", "metric-unit",
};

Test(stat_fake, json_has_perf_keys)
{
	static struct vpmu_out r;
	struct json_object *o, *v;
	struct json_object_iterator it, end;
	char want[16];
	size_t k = 0;

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-j", "-e", "hv_hypercalls", "sh",
				      "-c", wait_cmd, NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	o = json_tokener_parse(r.out); /* one event, one VM: one line */
	cr_assert_not_null(o, "%s", r.out);
	it  = json_object_iter_begin(o);
	end = json_object_iter_end(o);
	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		cr_expect_str_eq(json_object_iter_peek_name(&it),
				 perf_json_keys[k++], "%s", r.out);
	cr_expect_eq(k, sizeof(perf_json_keys) / sizeof(perf_json_keys[0]));
	snprintf(want, sizeof(want), "%d", 2 * N);
	cr_assert(json_object_object_get_ex(o, "counter-value", &v));
	cr_expect_str_eq(json_object_get_string(v), want);
	cr_assert(json_object_object_get_ex(o, "event", &v));
	cr_expect_str_eq(json_object_get_string(v), "hv_hypercalls");
	cr_assert(json_object_object_get_ex(o, "pcnt-running", &v));
	cr_expect_float_eq(json_object_get_double(v), 100.0, 1e-9);
	json_object_put(o);
}

/* What -d adds (cmd_stat.c STAT_DETAILED); the hv_* ones every host counts. */
static const char *const detailed[] = {
	"hv_pio",           "hv_mmio",      "hv_msr_reads", "hv_halts",
	"cycles",           "instructions", "branches",     "branch-misses",
	"cache-references", "cache-misses",
};

/*
 * Without -e, the default events the host cannot count (the fake VMs have
 * no guest TSC: hv_guest_cycles) are <not supported>, not an error.
 */
Test(stat_fake, default_events_the_host_refuses_are_not_supported)
{
	static struct vpmu_out r;
	struct perf_csv c[4];

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-x", ",", "--", "0.2", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(perf_csv_rows(r.out, false, "hv_exits", c, 4), 1, "%s",
		     r.out);
	cr_assert_eq(perf_csv_rows(r.out, false, "hv_guest_cycles", c, 4), 1,
		     "%s", r.out);
	if (strcmp(c[0].value, "<not supported>"))
		cr_skip_test("hv_guest_cycles is countable here");
	cr_expect_eq(c[0].runtime, 0);
}

/*
 * -d adds the detailed events; those this host cannot count (guest
 * hardware events without a host PMU) are rows of <not supported>, as
 * perf stat -d prints them, and the count goes on.
 */
Test(stat_fake, detailed_adds_events_and_marks_unsupported)
{
	static struct vpmu_out r;
	struct perf_csv c[4];
	size_t i;
	int nr_unsupported = 0;

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-d", "-x", ",", "-e",
				      "hv_hypercalls", "--", "0.3", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s\n%s", r.out, r.err);
	cr_expect_eq(perf_csv_rows(r.out, false, "hv_hypercalls", c, 4), 1);
	for (i = 0; i < sizeof(detailed) / sizeof(detailed[0]); i++) {
		cr_assert_eq(perf_csv_rows(r.out, false, detailed[i], c, 4), 1,
			     "%s: %s", detailed[i], r.out);
		if (!strcmp(c[0].value, "<not supported>")) {
			nr_unsupported++;
			cr_expect(strncmp(detailed[i], "hv_", 3), "%s",
				  detailed[i]);
		} else {
			cr_expect_eq(strspn(c[0].value, "0123456789"),
				     strlen(c[0].value), "%s", r.out);
		}
	}
	cr_log_info("-d: %d events not supported on this host", nr_unsupported);
	/* -I: refused events sit beside each interval's counts, and, as
	 * perf's -I fields, nothing is printed after the last interval. */
	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-d", "-x", ",", "-I", "100",
				      "-e", "hv_exits", "--", "0.35", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(perf_csv_rows(r.out, true, "cycles", c, 4),
		     perf_csv_rows(r.out, true, "hv_exits", c, 4), "%s", r.out);
	/* Text: the same rows, said the way perf says it. */
	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-d", "-e", "hv_exits", "--",
				      "0.2", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "hv_halts") != NULL, "%s", r.out);
	cr_expect_eq(strstr(r.out, "<not supported>") != NULL,
		     nr_unsupported > 0, "%s", r.out);
}

/*
 * {a,b}: the members of a group count in the same event set, so with
 * multiplexing they ran for exactly the same time; the padding that
 * puts the group in one set prints no row.
 */
Test(stat_fake, group_members_count_at_the_same_time)
{
	static struct vpmu_out r;
	struct perf_csv c[4], d[4];
	const char *line;
	int rows = 0;

	vpmu_prog_in(dir,
		     (const char *[]){"stat", "-x", ",", "--switch-ms", "2",
				      "-e",
				      "hv_exits,hv_pio,hv_mmio,hv_irqs,"
				      "hv_halts,hv_msr_reads,hv_msr_writes,"
				      "{hv_hypercalls,hv_run_ns}",
				      "--", "0.5", NULL},
		     &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (line = r.out; (line = strchr(line, '\n')); line++)
		rows++;
	cr_expect_eq(rows, 9, "%s", r.out);
	cr_assert_eq(perf_csv_rows(r.out, false, "hv_hypercalls", c, 4), 1);
	cr_assert_eq(perf_csv_rows(r.out, false, "hv_run_ns", d, 4), 1);
	cr_expect_eq(c[0].runtime, d[0].runtime, "%s", r.out);
	cr_expect(c[0].pcnt < 100.0, "multiplexed: %s", r.out);
}
