// SPDX-License-Identifier: MIT
/*
 * test_drain_packed.c: samples drained in the packed binary
 * form of smpl_drain are the samples the JSON form gives, against fake
 * VMs (fake_vms: the VMM's real control server, threads as vCPUs whose
 * samples land in fake_guest_hot 9 times in 10, else fake_guest_cold,
 * called from fake_guest_mid from fake_guest_outer; no KVM):
 *   - one operator session drained alternately in JSON (VPMU_DRAIN_JSON=1)
 *     and packed: every sample of either form has the same period, values
 *     count, chain and symbols, and per vCPU the merged stream goes on
 *     without a gap or a repeat (time stamps increasing, the recorded
 *     counter never going back), so no form loses, repeats or garbles one;
 *   - `vpmu record -g` through the packed path (the default) and through
 *     JSON yield files whose reports name hot before cold and the chain
 *     outer -> mid -> hot.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "fake_vms_run.h"
#include "elf_symbols.h"

#define FAKE     VPMU_BUILD_DIR "/tests/serve/fake_vms"
#define VPMU     VPMU_BUILD_DIR "/vmm/vpmu"
#define NR_VCPUS 2
#define PERIOD   2000000ULL /* hv_run_ns: a sample every 2 ms of run */
#define MAX_SMP  20000

static struct fake_vms_run F;

static void setup(void)
{
	fake_vms_start(&F, "packed", "pk:2");
}

static void teardown(void)
{
	fake_vms_stop(&F);
}

TestSuite(drain_packed, .init = setup, .fini = teardown, .timeout = 120);

struct got {
	struct ops_sample smp[MAX_SMP];
	bool packed[MAX_SMP];
	unsigned int nr;
	bool packed_now;
};

static void keep(void *opaque, const struct ops_sample *smp)
{
	struct got *g = opaque;

	if (g->nr == MAX_SMP)
		return;
	g->packed[g->nr] = g->packed_now;
	g->smp[g->nr++]  = *smp;
}

/* The name of the function holding (ip) in fake_vms, or "?". */
static const char *fn_of(const struct symtab *st, uint64_t ip)
{
	const struct sym *s = symtab_find(st, ip);

	return s ? s->name : "?";
}

Test(drain_packed, same_samples_as_json)
{
	static struct got g;
	static struct ops_session s = {.prog = "test_drain_packed"};
	struct ops_select sel       = {.all = true};
	unsigned int i, n[2] = {0, 0}, hot = 0, cold = 0, round;
	const struct ops_sample *a, *prev[NR_VCPUS] = {NULL};
	struct symtab st;
	uint64_t lost;

	cr_assert(eq(int, symtab_load(&st, FAKE), 0));
	cr_assert(eq(int, ops_open(&s, &sel), 0));
	cr_assert(eq(int, ops_parse_events(&s, "hv_run_ns,hv_exits"), 0));
	s.callchain = 4;
	cr_assert(eq(int, ops_start_sampling(&s, PERIOD, 256 << 10), 0));
	for (round = 0; round < 8; round++) {
		fake_sleep_ms(120);
		g.packed_now = round % 2;
		if (g.packed_now)
			unsetenv("VPMU_DRAIN_JSON");
		else
			setenv("VPMU_DRAIN_JSON", "1", 1);
		cr_assert(eq(int, ops_drain(&s, 0, keep, &g, &lost), 0));
		cr_expect(eq(u64, lost, 0));
	}
	unsetenv("VPMU_DRAIN_JSON");
	/* The packed rounds really read binary frames. */
	cr_expect(not(eq(ptr, s.pk_buf, NULL)));
	cr_expect(not(s.vms[0].drain_json));
	ops_close(&s);
	for (i = 0; i < g.nr; i++) {
		a = &g.smp[i];
		n[g.packed[i]]++;
		cr_assert(lt(uint, a->vcpu, NR_VCPUS));
		/*
		 * Fixed by the session: the same in both forms. A vCPU's
		 * first sample overflowed from the value the session wrote,
		 * not from a reset: its period is 0 (unknown).
		 */
		cr_expect(eq(u64, a->period, prev[a->vcpu] ? PERIOD : 0),
			  "sample %u (%s)", i, g.packed[i] ? "packed" : "JSON");
		cr_expect(eq(uint, a->set, 0));
		cr_expect(eq(uint, a->nr_vals, 2),
			  "hv_run_ns, hv_exits recorded");
		cr_assert(eq(uint, a->nr_chain, 2), "sample %u (%s)", i,
			  g.packed[i] ? "packed" : "JSON");
		cr_expect(eq(str, (char *)fn_of(&st, a->chain[0]),
			     "fake_guest_mid"));
		cr_expect(eq(str, (char *)fn_of(&st, a->chain[1]),
			     "fake_guest_outer"));
		hot += !strcmp(fn_of(&st, a->ip), "fake_guest_hot");
		cold += !strcmp(fn_of(&st, a->ip), "fake_guest_cold");
		/* Each vCPU's stream continues across the two forms. */
		if (prev[a->vcpu]) {
			cr_expect(lt(u64, prev[a->vcpu]->tstamp, a->tstamp),
				  "sample %u of vCPU %u repeats or goes back",
				  i, a->vcpu);
			cr_expect(ge(u64, a->vals[1], prev[a->vcpu]->vals[1]),
				  "hv_exits of sample %u goes back", i);
			cr_expect(ge(u64, a->tstamp - prev[a->vcpu]->tstamp,
				     PERIOD * (1 + prev[a->vcpu]->missed) -
					     1000000),
				  "sample %u: closer than its period", i);
		}
		prev[a->vcpu] = a;
	}
	cr_log_info("%u samples in JSON, %u packed; %u hot, %u cold", n[0],
		    n[1], hot, cold);
	cr_expect(lt(uint, 10, n[0]));
	cr_expect(lt(uint, 10, n[1]));
	cr_expect(eq(uint, hot + cold, g.nr), "every ip in hot or cold");
	cr_expect(lt(uint, cold, hot));
	cr_expect(lt(uint, 0, cold));
	symtab_free(&st);
}

/* Run `vpmu record -g ... -o (rec) -- 1`, JSON drains when (json). */
static void record(const char *rec, const char *out, bool json)
{
	char *argv[] = {
		VPMU, "record", "-g", "-a",        "-e", "hv_run_ns,hv_exits",
		"-F", "500",    "-o", (char *)rec, "--", "1",
		NULL};
	int status;

	if (json)
		setenv("VPMU_DRAIN_JSON", "1", 1);
	fake_run(argv, out, &status);
	unsetenv("VPMU_DRAIN_JSON");
	cr_assert(eq(int, status, 0), "%s", fake_slurp(out));
}

/* `vpmu report (opt) (rec)` into (out). */
static void report(const char *rec, const char *opt, const char *out)
{
	char *argv[] = {VPMU, "report", (char *)(opt ? opt : rec),
			opt ? (char *)rec : NULL, NULL};
	int status;

	fake_run(argv, out, &status);
	cr_assert(eq(int, status, 0), "%s", fake_slurp(out));
}

/* The line number of the first line of (path) containing (what). */
static int line_of(const char *path, const char *what)
{
	char line[512];
	int n = 0, at = -1;
	FILE *f = fopen(path, "re");

	while (f && at < 0 && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, what))
			at = n;
	}
	if (f)
		fclose(f);
	return at;
}

Test(drain_packed, record_same_profile_as_json)
{
	static const char *const form[2] = {"json", "packed"};
	char rec[128], out[128], rep[128], fold[128];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		snprintf(rec, sizeof(rec), "%s/%s.rec", F.dir, form[i]);
		snprintf(out, sizeof(out), "%s/%s.out", F.dir, form[i]);
		snprintf(rep, sizeof(rep), "%s/%s.report", F.dir, form[i]);
		snprintf(fold, sizeof(fold), "%s/%s.folded", F.dir, form[i]);
		record(rec, out, i == 0);
		report(rec, NULL, rep);
		report(rec, "--folded", fold);
		cr_log_info("%s: %s", form[i], fake_slurp(rep));
		cr_expect(lt(int, 0, line_of(rep, "fake_guest_hot")), "%s: %s",
			  form[i], fake_slurp(rep));
		cr_expect(lt(int, line_of(rep, "fake_guest_hot"),
			     line_of(rep, "fake_guest_cold")),
			  "%s: hot first: %s", form[i], fake_slurp(rep));
		cr_expect(lt(int, 0,
			     line_of(fold, "fake_guest_outer;fake_guest_mid;"
					   "fake_guest_hot ")),
			  "%s: %s", form[i], fake_slurp(fold));
	}
}
