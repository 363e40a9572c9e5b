// SPDX-License-Identifier: MIT
/*
 * test_recfile.c: the record file of `vpmu record`: a round
 * trip, the atomic rename (FILE appears only when finished), and the
 * reader refusing truncated, mismatched and corrupt files.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <pvpmu/abi.h>

#include "rec_profile.h"
#include "record_file.h"

static char dir[] = "/tmp/vpmu-rec-XXXXXX";
static char path[128];

static void setup(void)
{
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(path, sizeof(path), "%s/t.rec", dir);
}

static void teardown(void)
{
	char tmp[160];

	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	rmdir(dir);
}

TestSuite(vmm_recfile, .init = setup, .fini = teardown);

static void header(struct rec_header *h, struct rec_vm *vms)
{
	memset(h, 0, sizeof(*h));
	memset(vms, 0, 2 * sizeof(*vms));
	snprintf(h->event, sizeof(h->event), "hv_guest_cycles");
	h->code      = PVPMU_EV_HV_GUEST_CYCLES;
	h->period    = 1000;
	h->nr_events = 1;
	snprintf(h->events[0], sizeof(h->events[0]), "hv_guest_cycles");
	snprintf(vms[0].uuid, sizeof(vms[0].uuid),
		 "11111111-2222-3333-4444-555555555555");
	snprintf(vms[0].name, sizeof(vms[0].name), "a");
	snprintf(vms[0].image, sizeof(vms[0].image), "/x.elf");
	vms[0].nr_vcpus = 2;
	vms[1]          = vms[0];
	vms[1].name[0]  = 'b';
	h->vms          = vms;
	h->nr_vms       = 2;
}

static void write_file(unsigned int n)
{
	struct rec_vm vms[2];
	struct rec_header h;
	struct rec_writer w;
	struct rec_sample s = {.nr_vals = 1};
	unsigned int i;

	unlink(path);
	header(&h, vms);
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	cr_assert(ne(int, access(path, F_OK), 0), "FILE before finish");
	for (i = 0; i < n; i++) {
		s.vm      = i % 2;
		s.cpu     = i % 2;
		s.ip      = 0xffffffff80000000ULL + i;
		s.tstamp  = i;
		s.vals[0] = UINT64_MAX - i;
		cr_assert(eq(int, rec_sample(&w, &s), 0));
	}
	cr_assert(eq(int, rec_note(&w, 1, "gone \"quoted\""), 0));
	cr_assert(eq(int, rec_finish(&w, 3, 42, "done"), 0));
}

struct seen {
	unsigned int n;
	uint64_t last_ip, last_val;
};

static int on_sample(void *opaque, const struct rec_sample *s)
{
	struct seen *x = opaque;

	x->n++;
	x->last_ip  = s->ip;
	x->last_val = s->vals[0];
	return 0;
}

Test(vmm_recfile, round_trip)
{
	struct rec_header h;
	struct seen x = {0};
	char err[256];

	write_file(1000);
	cr_assert(
		eq(int, rec_read(path, &h, on_sample, &x, err, sizeof(err)), 0),
		"%s", err);
	cr_assert(eq(u32, x.n, 1000));
	cr_assert(eq(u64, x.last_ip, 0xffffffff80000000ULL + 999));
	cr_assert(eq(u64, x.last_val, UINT64_MAX - 999));
	cr_assert(eq(u32, h.nr_vms, 2));
	cr_assert(eq(str, h.vms[1].name, "b"));
	cr_assert(eq(str, h.event, "hv_guest_cycles"));
	rec_header_free(&h);
}

/* Rewrite the file keeping (keep) bytes, then appending (tail). */
static void damage(long keep, const char *tail)
{
	char *buf = malloc(1 << 20);
	FILE *f   = fopen(path, "r");
	size_t n  = fread(buf, 1, 1 << 20, f);

	fclose(f);
	if (keep < 0)
		keep = (long)n + keep;
	f = fopen(path, "w");
	fwrite(buf, 1, (size_t)keep, f);
	fputs(tail, f);
	fclose(f);
	free(buf);
}

struct bad_case {
	int line;
	long keep;
	const char *tail, *msg;
};

#define ROW(...)                                                               \
	{                                                                      \
		.line = __LINE__, __VA_ARGS__                                  \
	}

Test(vmm_recfile, refuses_damaged_files)
{
	static const struct bad_case cases[] = {
		ROW(.keep = 0, .tail = "", .msg = "empty file"),
		ROW(.keep = 0, .tail = "{\"x\":1}\n", .msg = "no header"),
		ROW(.keep = -60, .tail = "", .msg = ""),
		ROW(.keep = -1, .tail = "\n{\"vm\":0}\n",
		    .msg = "after the end"),
		ROW(.keep = 0,
		    .tail = "{\"vpmu_record\":9,\"event\":\"e\",\"code\":1}\n",
		    .msg  = "version 9"),
	};
	struct rec_header h;
	char err[256];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(10);
		damage(cases[i].keep, cases[i].tail);
		cr_expect(ne(int,
			     rec_read(path, &h, NULL, NULL, err, sizeof(err)),
			     0),
			  "row at line %d accepted", cases[i].line);
		cr_expect(not(eq(ptr, strstr(err, cases[i].msg), NULL)),
			  "row at line %d: %s", cases[i].line, err);
	}
}

Test(vmm_recfile, truncated_and_miscounted)
{
	struct rec_header h;
	char err[256], line[160];
	FILE *f;

	write_file(10);
	/* Drop the end line: truncated. */
	damage(-(long)strlen("{\"end\":{\"samples\":10,\"lost\":3,"
			     "\"duration_ns\":42,\"reason\":\"done\"}}\n"),
	       "");
	cr_assert(ne(int, rec_read(path, &h, NULL, NULL, err, sizeof(err)), 0));
	cr_assert(not(eq(ptr, strstr(err, "truncated"), NULL)), "%s", err);
	/* An end line that does not match the samples. */
	f = fopen(path, "a");
	snprintf(line, sizeof(line), "{\"end\":{\"samples\":11}}\n");
	fputs(line, f);
	fclose(f);
	cr_assert(ne(int, rec_read(path, &h, NULL, NULL, err, sizeof(err)), 0));
	cr_assert(not(eq(ptr, strstr(err, "does not match"), NULL)), "%s", err);
	/* A sample naming a VM that is not in the header. */
	write_file(1);
	damage(0, "");
	write_file(0);
	damage(-(long)strlen("{\"end\":{\"samples\":0,\"lost\":3,"
			     "\"duration_ns\":42,\"reason\":\"done\"}}\n"),
	       "{\"vm\":5,\"cpu\":0,\"ip\":1,\"set\":0,\"t\":1,\"pmd\":[]}\n"
	       "{\"end\":{\"samples\":1}}\n");
	cr_assert(ne(int, rec_read(path, &h, NULL, NULL, err, sizeof(err)), 0));
	cr_assert(not(eq(ptr, strstr(err, "out of range"), NULL)), "%s", err);
}

struct weights {
	uint64_t missed[4], period[4], weight[4];
	const struct rec_header *h;
	unsigned int n;
};

static int on_weight(void *opaque, const struct rec_sample *s)
{
	struct weights *x = opaque;

	if (x->n < 4) {
		x->missed[x->n] = s->missed;
		x->period[x->n] = s->period;
		x->weight[x->n] = rec_weight(x->h, s);
	}
	x->n++;
	return 0;
}

/*
 * A sample's missed periods ("m") and own period ("p"), the
 * throttled/missed totals of the end line, round trip; a sample without
 * them (older files) weighs 1; report's weight is (1 + m) x p / period.
 */
Test(vmm_recfile, throttle_counts_round_trip)
{
	struct rec_sample s = {.nr_vals = 0};
	struct weights x    = {.n = 0};
	struct rec_vm vms[2];
	struct rec_header h, hr;
	struct rec_writer w;
	char err[256];

	header(&h, vms);
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	cr_assert(eq(int, rec_sample(&w, &s), 0)); /* plain */
	s.missed = 3;
	cr_assert(eq(int, rec_sample(&w, &s), 0));
	s.missed = 0;
	s.period = 4000; /* raised by the throttle: 4 header periods */
	cr_assert(eq(int, rec_sample(&w, &s), 0));
	s.missed = 1;
	s.period = 1000; /* the header's: not written */
	cr_assert(eq(int, rec_sample(&w, &s), 0));
	w.throttled = 17;
	w.missed    = 4;
	cr_assert(eq(int, rec_finish(&w, 0, 42, "done"), 0));
	x.h = &h;
	cr_assert(eq(int, rec_read(path, &hr, on_weight, &x, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(u32, x.n, 4));
	cr_assert(eq(u64, x.missed[0], 0));
	cr_assert(eq(u64, x.weight[0], 1));
	cr_assert(eq(u64, x.missed[1], 3));
	cr_assert(eq(u64, x.weight[1], 4));
	cr_assert(eq(u64, x.period[2], 4000));
	cr_assert(eq(u64, x.weight[2], 4));
	cr_assert(eq(u64, x.period[3], 0), "header's period is not repeated");
	cr_assert(eq(u64, x.weight[3], 2));
	cr_assert(eq(u64, hr.throttled, 17));
	cr_assert(eq(u64, hr.missed, 4));
	rec_header_free(&hr);
	/* A version-1 file without the keys: zeros, weight 1. */
	write_file(2);
	x.n = 0;
	cr_assert(eq(int, rec_read(path, &hr, on_weight, &x, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(u64, hr.throttled, 0));
	cr_assert(eq(u64, x.weight[0], 1));
	rec_header_free(&hr);
}

/*
 * "snapshot" notes say how often and how long each VM was
 * paused for `vpmu snapshot`; several notes for one VM add up, files
 * without them read as 0, and a note naming no VM is refused.
 */
Test(vmm_recfile, snapshot_pause_notes_round_trip)
{
	struct rec_sample s = {.nr_vals = 0};
	struct rec_vm vms[2];
	struct rec_header h, hr;
	struct rec_writer w;
	char err[256];

	header(&h, vms);
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	cr_assert(eq(int, rec_sample(&w, &s), 0));
	cr_assert(eq(int, rec_snap_note(&w, 1, 1, 5000000), 0));
	cr_assert(eq(int, rec_snap_note(&w, 1, 2, 7000000), 0));
	cr_assert(eq(int, rec_finish(&w, 0, 42, "done"), 0));
	cr_assert(eq(int, rec_read(path, &hr, NULL, NULL, err, sizeof(err)), 0),
		  "%s", err);
	cr_assert(eq(u64, hr.vms[0].snap_pauses, 0));
	cr_assert(eq(u64, hr.vms[1].snap_pauses, 3));
	cr_assert(eq(u64, hr.vms[1].snap_pause_ns, 12000000));
	rec_header_free(&hr);
	write_file(2); /* no notes: zeros */
	cr_assert(eq(int, rec_read(path, &hr, NULL, NULL, err, sizeof(err)), 0),
		  "%s", err);
	cr_assert(eq(u64, hr.vms[1].snap_pauses, 0));
	rec_header_free(&hr);
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	cr_assert(eq(int, rec_snap_note(&w, 2, 1, 1), 0)); /* no VM 2 */
	cr_assert(eq(int, rec_finish(&w, 0, 42, "done"), 0));
	cr_assert(eq(int, rec_read(path, &hr, NULL, NULL, err, sizeof(err)),
		     -EINVAL));
	cr_assert(not(eq(ptr, strstr(err, "snapshot note"), NULL)), "%s", err);
}
