// SPDX-License-Identifier: MIT
/*
 * test_report.c: `vpmu report` on record files written
 * here: the file is read once (a FIFO that can be read only once is
 * reported), an image path that is a FIFO is refused at once, a file cut
 * short by a killed writer is reported up to its last complete sample,
 * call chains give call graphs and full folded stacks, symbols and source
 * lines come from a built guest (op_chain.elf) with elfutils, a build-id
 * mismatch is warned, --image/--symfs/System.map pick other symbols.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <pvpmu/abi.h>

#include "elf_symbols.h"
#include "rec_profile.h"
#include "record_file.h"
#include "ops_cmd.h"
#include "profile.pb-c.h"

#define IMAGE  VPMU_BUILD_DIR "/guests/op_chain.elf"
#define SOURCE VPMU_SOURCE_DIR "/tests/kvm/guests/op_chain.c"

static char dir[] = "/tmp/vpmu-rep-XXXXXX";
static char path[128], out[160], errf[160];
static char *text, *errs; /* captured stdout and stderr of one report */

static void setup(void)
{
	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(path, sizeof(path), "%s/t.rec", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(errf, sizeof(errf), "%s/err", dir);
}

static void teardown(void)
{
	char cmd[200];

	free(text);
	free(errs);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert(eq(int, system(cmd), 0));
}

TestSuite(vmm_report, .init = setup, .fini = teardown);

static char *slurp(const char *p)
{
	FILE *f   = fopen(p, "r");
	char *buf = calloc(1, 1 << 20);

	cr_assert(not(eq(ptr, f, NULL)));
	cr_assert(
		lt(sz, fread(buf, 1, (1 << 20) - 1, f), (size_t)(1 << 20) - 1));
	fclose(f);
	return buf;
}

/* Run `vpmu report ARGS...` with stdout/stderr captured into text/errs. */
static int report(const char *a0, ...)
{
	char *argv[16];
	int argc = 0, o, e, so, se, ret;
	va_list ap;

	va_start(ap, a0);
	for (const char *a = a0; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	o  = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	e  = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(o, 1);
	dup2(e, 2);
	ret = ops_cmd_report(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(o);
	close(e);
	close(so);
	close(se);
	free(text);
	free(errs);
	text = slurp(out);
	errs = slurp(errf);
	return ret;
}

static void header(struct rec_header *h, struct rec_vm *vm, const char *image,
		   const char *build_id)
{
	memset(h, 0, sizeof(*h));
	memset(vm, 0, sizeof(*vm));
	snprintf(h->event, sizeof(h->event), "hv_guest_cycles");
	h->code      = PVPMU_EV_HV_GUEST_CYCLES;
	h->period    = 1000;
	h->nr_events = 1;
	snprintf(h->events[0], sizeof(h->events[0]), "hv_guest_cycles");
	snprintf(vm->uuid, sizeof(vm->uuid),
		 "11111111-2222-3333-4444-555555555555");
	snprintf(vm->name, sizeof(vm->name), "vmA");
	snprintf(vm->image, sizeof(vm->image), "%s", image);
	snprintf(vm->build_id, sizeof(vm->build_id), "%s", build_id);
	vm->nr_vcpus = 1;
	h->vms       = vm;
	h->nr_vms    = 1;
	h->callchain = true;
}

/* The address of function (name) in op_chain.elf, and its size. */
static uint64_t addr_of(const char *name, uint64_t *size)
{
	struct symtab t;
	uint64_t a = 0;
	size_t i;

	cr_assert(eq(int, symtab_load(&t, IMAGE), 0));
	for (i = 0; i < t.nr; i++) {
		if (!strcmp(t.syms[i].name, name)) {
			a = t.syms[i].addr;
			if (size)
				*size = t.syms[i].size;
		}
	}
	symtab_free(&t);
	cr_assert(ne(u64, a, 0), "%s not in %s", name, IMAGE);
	return a;
}

/* The line of op_chain.c after the tag OP_CHAIN_HOT_LINE. */
static int hot_line(void)
{
	char *src = slurp(SOURCE),
	     *p   = strstr(src, "/* OP_CHAIN_HOT_LINE is the next line. */");
	int line  = 2; /* the line after the tag */

	cr_assert(not(eq(ptr, p, NULL)));
	for (char *q = src; q < p; q++)
		line += *q == '\n';
	free(src);
	return line;
}

/* An address inside hot() whose source line is the hot loop's. */
static uint64_t hot_loop_ip(void)
{
	uint64_t size = 0, a = addr_of("hot", &size), ip;
	const char *file;
	struct symtab t;
	int line, want = hot_line();

	cr_assert(eq(int, symtab_load(&t, IMAGE), 0));
	for (ip = a; ip < a + size; ip++) {
		if (!symtab_srcline(&t, ip, &file, &line) && line == want)
			break;
	}
	cr_assert(lt(u64, ip, a + size), "no address of hot() is on line %d",
		  want);
	cr_assert(not(eq(ptr, strstr(file, "op_chain.c"), NULL)), "%s", file);
	symtab_free(&t);
	return ip;
}

static void write_samples(const struct rec_header *h, unsigned int n,
			  const struct rec_sample *s, bool finish)
{
	struct rec_writer w;
	unsigned int i;

	cr_assert(eq(int, rec_open(&w, path, h), 0));
	for (i = 0; i < n; i++)
		cr_assert(eq(int, rec_sample(&w, &s[i]), 0));
	if (finish) {
		cr_assert(eq(int, rec_finish(&w, 0, 1, "done"), 0));
		return;
	}
	/* A killed writer: what stdio flushed stays in FILE.tmp. */
	fflush(w.f);
	fclose(w.f);
	char tmp[160];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	cr_assert(eq(int, rename(tmp, path), 0));
}

/* 9 samples in hot() called by middle <- outer, 1 with no chain. */
static void chain_file(const char *build_id)
{
	struct rec_sample s[10];
	struct rec_header h;
	struct rec_vm vm;
	unsigned int i;

	header(&h, &vm, IMAGE, build_id);
	memset(s, 0, sizeof(s));
	for (i = 0; i < 10; i++) {
		s[i].ip = hot_loop_ip();
		if (i == 9)
			continue;
		s[i].nr_chain = 2;
		s[i].chain[0] = addr_of("middle", NULL) + 4;
		s[i].chain[1] = addr_of("outer", NULL) + 4;
	}
	write_samples(&h, 10, s, true);
}

Test(vmm_report, call_graph_and_folded_stacks)
{
	cr_assert(eq(int, report("-i", path, NULL), 1), "no file yet");
	chain_file("");
	cr_assert(eq(int, report("-i", path, "--stdio", NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "100.00%         10  hot"), NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "--90.00%-- hot <- middle <- outer"),
			 NULL)),
		  "%s", text);
	cr_expect(
		not(eq(ptr, strstr(text, "--10.00%-- hot (no callers)"), NULL)),
		"%s", text);
	cr_assert(eq(int, report("-g", "caller", path, NULL), 0));
	cr_expect(not(eq(ptr, strstr(text, "outer -> middle -> hot"), NULL)),
		  "%s", text);
	cr_assert(eq(int, report("--folded", path, NULL), 0));
	cr_expect(not(eq(ptr, strstr(text, "vmA;vcpu0;outer;middle;hot 9\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "vmA;vcpu0;hot 1\n"), NULL)), "%s",
		  text);
}

Test(vmm_report, srcline_names_the_hot_loop)
{
	char want[64];

	chain_file("");
	snprintf(want, sizeof(want), "hot op_chain.c:%d\n", hot_line());
	cr_assert(eq(int, report("--sort", "sym,srcline", path, NULL), 0), "%s",
		  errs);
	cr_expect(not(eq(ptr, strstr(text, want), NULL)), "%s", text);
	snprintf(want, sizeof(want), "  op_chain.c:%d\n", hot_line());
	cr_assert(
		eq(int, report("-s", "srcline", "-g", "none", path, NULL), 0));
	cr_expect(not(eq(ptr, strstr(text, want), NULL)), "%s", text);
	cr_assert(eq(int, report("-s", "cycles", path, NULL), 1));
	cr_expect(not(eq(ptr, strstr(errs, "unknown sort key 'cycles'"), NULL)),
		  "%s", errs);
	cr_assert(eq(int, report("-s", "sym,sym", path, NULL), 1));
	cr_expect(not(eq(ptr, strstr(errs, "given twice"), NULL)), "%s", errs);
}

Test(vmm_report, build_id_mismatch_is_warned)
{
	struct symtab t;
	char id[REC_BUILD_ID_HEX];

	cr_assert(eq(int, symtab_load(&t, IMAGE), 0));
	symtab_build_id_hex(&t, id, sizeof(id));
	symtab_free(&t);
	cr_assert(eq(sz, strlen(id), 40), "sha1 build-id: '%s'", id);
	chain_file(id);
	cr_assert(eq(int, report(path, NULL), 0));
	cr_expect(eq(ptr, strstr(errs, "build-id"), NULL), "%s", errs);
	chain_file("00112233445566778899aabbccddeeff00112233");
	cr_assert(eq(int, report(path, NULL), 0));
	cr_expect(not(eq(ptr, strstr(errs, "build-id"), NULL)), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "hot"), NULL)), "%s", text);
}

Test(vmm_report, image_and_symfs_and_system_map)
{
	struct rec_sample s = {.ip = 0xffffffff81000123ULL};
	struct rec_header h;
	struct rec_vm vm;
	char map[160], arg[200];
	FILE *f;

	/* A Linux guest: its vmlinux is not here, a System.map is. */
	header(&h, &vm, "/nonexistent/vmlinux", "");
	write_samples(&h, 1, &s, true);
	cr_assert(eq(int, report(path, NULL), 0));
	cr_expect(not(eq(ptr, strstr(errs, "no symbols"), NULL)), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "[unknown]"), NULL)), "%s", text);
	snprintf(map, sizeof(map), "%s/System.map", dir);
	f = fopen(map, "w");
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000100 T do_work\n"
	      "ffffffff81000200 t helper\n"
	      "ffffffff82000000 D some_data\n"
	      "garbage line\n",
	      f);
	fclose(f);
	snprintf(arg, sizeof(arg), "vmA=%s", map);
	cr_assert(eq(int, report("--image", arg, path, NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "do_work"), NULL)), "%s", text);
	/* --symfs DIR looks for DIR/<recorded path>. */
	snprintf(map, sizeof(map), "%s/nonexistent", dir);
	cr_assert(eq(int, mkdir(map, 0700), 0));
	snprintf(map, sizeof(map), "%s/nonexistent/vmlinux", dir);
	f = fopen(map, "w");
	fputs("ffffffff81000000 T start_kernel\n", f);
	fclose(f);
	cr_assert(eq(int, report("--symfs", dir, path, NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "start_kernel"), NULL)), "%s", text);
	cr_assert(eq(int, report("--image", "novalue", path, NULL), 1));
}

/* A recorded image path that is a FIFO. */
Test(vmm_report, fifo_image_is_refused_at_once, .timeout = 20)
{
	struct rec_sample s = {.ip = 0x100000};
	struct rec_header h;
	struct rec_vm vm;
	char fifo[160];

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert(eq(int, mkfifo(fifo, 0600), 0));
	header(&h, &vm, fifo, "");
	write_samples(&h, 1, &s, true);
	cr_assert(eq(int, report(path, NULL), 0));
	cr_expect(not(eq(ptr, strstr(errs, "not a regular file"), NULL)), "%s",
		  errs);
}

static void *feed(void *arg)
{
	char *data = arg;
	int fd     = open(path, O_WRONLY); /* waits for the reader */

	if (fd >= 0) {
		if (write(fd, data, strlen(data)) < 0)
			perror("write");
		close(fd);
	}
	return NULL;
}

/*
 * The record file is opened once. A FIFO yields its
 * content to one open only: a second open would wait forever.
 */
Test(vmm_report, record_file_is_read_once, .timeout = 20)
{
	pthread_t t;
	char *data;

	chain_file("");
	data = slurp(path);
	cr_assert(eq(int, unlink(path), 0));
	cr_assert(eq(int, mkfifo(path, 0600), 0));
	cr_assert(eq(int, pthread_create(&t, NULL, feed, data), 0));
	cr_assert(eq(int, report(path, NULL), 0), "%s", errs);
	pthread_join(t, NULL);
	cr_expect(not(eq(ptr, strstr(text, "hot"), NULL)), "%s", text);
	free(data);
}

/* A record client killed mid-run: report what is complete, say so. */
Test(vmm_report, truncated_file_reports_complete_samples)
{
	struct rec_sample s[5];
	struct rec_header h;
	struct rec_vm vm;
	struct stat st;
	unsigned int i;

	header(&h, &vm, IMAGE, "");
	memset(s, 0, sizeof(s));
	for (i = 0; i < 5; i++)
		s[i].ip = hot_loop_ip();
	write_samples(&h, 5, s, false);
	cr_assert(eq(int, report(path, NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr, strstr(errs, "incomplete"), NULL)), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "5  hot"), NULL)), "%s", text);
	/* Cut in the middle of the last sample line. */
	cr_assert(eq(int, stat(path, &st), 0));
	cr_assert(eq(int, truncate(path, st.st_size - 7), 0));
	cr_assert(eq(int, report(path, NULL), 0), "%s", errs);
	cr_expect(eq(ptr, strstr(errs, "not a JSON object"), NULL), "%s", errs);
	cr_expect(not(eq(ptr, strstr(errs, "last line dropped"), NULL)), "%s",
		  errs);
	cr_expect(not(eq(ptr, strstr(text, "4  hot"), NULL)), "%s", text);
	/* Cut inside the header: nothing to report, one clear line. */
	cr_assert(eq(int, truncate(path, 20), 0));
	cr_assert(eq(int, report(path, NULL), 1));
	cr_expect(not(eq(ptr, strstr(errs, "incomplete"), NULL)), "%s", errs);
}

/* Default input vpmu.rec in the current directory; one file only. */
Test(vmm_report, default_input_file)
{
	char cwd[256];

	chain_file("");
	cr_assert(not(eq(ptr, getcwd(cwd, sizeof(cwd)), NULL)));
	cr_assert(eq(int, chdir(dir), 0));
	cr_assert(eq(int, rename(path, "vpmu.rec"), 0));
	cr_expect(eq(int, report(NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "hot"), NULL)), "%s", text);
	cr_expect(eq(int, report("a.rec", "b.rec", NULL), 1));
	cr_assert(eq(int, chdir(cwd), 0));
}

/*
 * A sample that carries missed periods ("m") or a raised
 * period ("p") counts for the periods it stands for, and the header says
 * what was throttled.
 */
Test(vmm_report, weights_count_missed_periods)
{
	struct rec_sample s[3];
	struct rec_header h;
	struct rec_vm vm;
	unsigned int i;

	header(&h, &vm, IMAGE, "");
	memset(s, 0, sizeof(s));
	for (i = 0; i < 3; i++)
		s[i].ip = hot_loop_ip();
	s[1].missed = 3;               /* 4 periods */
	s[2].period = 2 * h.period;    /* 2 periods */
	write_samples(&h, 3, s, true); /* 1 + 4 + 2 */
	cr_assert(eq(int, report(path, NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr, strstr(text, "7  hot"), NULL)), "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "# 3 samples; counts are periods"),
			 NULL)),
		  "%s", text);
}

static uint8_t *slurp_gunzip(const char *file, size_t *out_len)
{
	uint8_t *in = (uint8_t *)slurp(file), *buf = malloc(1 << 20);
	z_stream z = {0};
	struct stat st;

	cr_assert(eq(int, stat(file, &st), 0));
	cr_assert(eq(int, inflateInit2(&z, 15 + 16), Z_OK));
	z.next_in   = in;
	z.avail_in  = (uInt)st.st_size;
	z.next_out  = buf;
	z.avail_out = 1 << 20;
	cr_assert(eq(int, inflate(&z, Z_FINISH), Z_STREAM_END));
	*out_len = z.total_out;
	inflateEnd(&z);
	free(in);
	return buf;
}

/*
 * report --pprof weights each sample as report counts it: the sampled
 * event's total is report's total of periods times the period (1 + 4 +
 * 2 here), and each sample type appears once.
 */
Test(vmm_report, pprof_totals_are_reports_periods)
{
	char pb[160];
	struct rec_sample s[3];
	Perftools__Profiles__Profile *p;
	struct rec_header h;
	struct rec_vm vm;
	int64_t total = 0;
	unsigned int i, j, ev = 0;
	uint8_t *raw;
	size_t len;

	header(&h, &vm, IMAGE, "");
	memset(s, 0, sizeof(s));
	for (i = 0; i < 3; i++)
		s[i].ip = hot_loop_ip();
	s[1].missed = 3;
	s[2].period = 2 * h.period;
	write_samples(&h, 3, s, true);
	cr_assert(eq(int, report(path, NULL), 0), "%s", errs);
	cr_assert(not(eq(ptr, strstr(text, "7  hot"), NULL)), "%s", text);
	snprintf(pb, sizeof(pb), "%s/p.pb.gz", dir);
	cr_assert(eq(int, report("--pprof", pb, path, NULL), 0), "%s", errs);
	raw = slurp_gunzip(pb, &len);
	p   = perftools__profiles__profile__unpack(NULL, len, raw);
	cr_assert(not(eq(ptr, p, NULL)));
	for (i = 0; i < p->n_sample_type; i++) {
		const char *t = p->string_table[p->sample_type[i]->type];

		for (j = 0; j < i; j++)
			cr_expect(not(eq(str, (char *)t,
					 p->string_table[p->sample_type[j]
								 ->type])),
				  "sample type %s twice", t);
		if (!strcmp(t, "hv_guest_cycles"))
			ev = i;
	}
	cr_assert(lt(u32, 0, ev));
	for (i = 0; i < p->n_sample; i++)
		total += p->sample[i]->value[ev];
	cr_expect(eq(i64, total, 7 * (int64_t)h.period));
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
}

/* An address inside hot() whose line is another file's (inlined). */
static uint64_t inlined_ip(char *file_out, size_t len)
{
	uint64_t size = 0, a = addr_of("hot", &size), ip;
	const char *file = "";
	struct symtab t;
	int line;

	cr_assert(eq(int, symtab_load(&t, IMAGE), 0));
	for (ip = a; ip < a + size; ip++) {
		if (!symtab_srcline(&t, ip, &file, &line) &&
		    !strstr(file, "op_chain.c"))
			break;
	}
	cr_assert(lt(u64, ip, a + size), "nothing inlined into hot()");
	snprintf(file_out, len, "%s", file);
	symtab_free(&t);
	return ip;
}

static const Perftools__Profiles__Function *
pb_func(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	cr_assert(false, "no function %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Location *
pb_loc_at(const Perftools__Profiles__Profile *p, uint64_t addr)
{
	size_t i;

	for (i = 0; i < p->n_location; i++)
		if (p->location[i]->address == addr)
			return p->location[i];
	cr_assert(false, "no location at %#llx", (unsigned long long)addr);
	return NULL;
}

/* The file of line (k) of location (l)'s function. */
static const char *pb_line_file(const Perftools__Profiles__Profile *p,
				const Perftools__Profiles__Location *l,
				size_t k)
{
	return p->string_table[pb_func(p, l->line[k]->function_id)->filename];
}

/*
 * report --pprof gives source lines through inlined functions (op_chain
 * is built -O2, rdtsc() from a header inlined into hot()): the function
 * hot() is in op_chain.c (not the header inlined at its entry), the hot
 * loop's line is op_chain.c's, and an address in the inlined code has a
 * line of the inlined function in its header, then hot()'s in op_chain.c.
 */
Test(vmm_report, pprof_lines_go_through_inlined_functions)
{
	char pb[160], inl_file[PATH_MAX];
	const Perftools__Profiles__Location *l;
	struct rec_sample s[2];
	Perftools__Profiles__Profile *p;
	struct rec_header h;
	struct rec_vm vm;
	uint8_t *raw;
	size_t len, n;

	header(&h, &vm, IMAGE, "");
	memset(s, 0, sizeof(s));
	s[0].ip = hot_loop_ip();
	s[1].ip = inlined_ip(inl_file, sizeof(inl_file));
	write_samples(&h, 2, s, true);
	snprintf(pb, sizeof(pb), "%s/p.pb.gz", dir);
	cr_assert(eq(int, report("--pprof", pb, path, NULL), 0), "%s", errs);
	raw = slurp_gunzip(pb, &len);
	p   = perftools__profiles__profile__unpack(NULL, len, raw);
	cr_assert(not(eq(ptr, p, NULL)));
	l = pb_loc_at(p, s[0].ip);
	n = l->n_line;
	cr_assert(lt(sz, 0, n));
	cr_expect(eq(
		str,
		(char *)p->string_table[pb_func(p, l->line[n - 1]->function_id)
						->name],
		"hot"));
	cr_expect(not(eq(ptr, strstr(pb_line_file(p, l, n - 1), "op_chain.c"),
			 NULL)),
		  "hot() in %s", pb_line_file(p, l, n - 1));
	cr_expect(eq(i64, l->line[n - 1]->line, hot_line()));
	l = pb_loc_at(p, s[1].ip);
	n = l->n_line;
	cr_assert(le(sz, 2, n), "%zu lines at the inlined code", n);
	cr_expect(eq(str, (char *)pb_line_file(p, l, 0), inl_file));
	cr_expect(not(eq(ptr, strstr(pb_line_file(p, l, n - 1), "op_chain.c"),
			 NULL)),
		  "the caller in %s", pb_line_file(p, l, n - 1));
	cr_log_info("inlined at %#llx: %s:%lld in %s, called at line %lld",
		    (unsigned long long)s[1].ip, pb_line_file(p, l, 0),
		    (long long)l->line[0]->line,
		    p->string_table[pb_func(p, l->line[0]->function_id)->name],
		    (long long)l->line[n - 1]->line);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
}

/* The report says a VM was paused for a snapshot. */
Test(vmm_report, snapshot_pause_note_is_printed)
{
	struct rec_sample s;
	struct rec_header h;
	struct rec_writer w;
	struct rec_vm vm;

	header(&h, &vm, IMAGE, "");
	memset(&s, 0, sizeof(s));
	s.ip = hot_loop_ip();
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	cr_assert(eq(int, rec_sample(&w, &s), 0));
	cr_assert(eq(int, rec_snap_note(&w, 0, 1, 123456789), 0));
	cr_assert(eq(int, rec_finish(&w, 0, 1, "done"), 0));
	cr_assert(eq(int, report(path, NULL), 0), "%s", errs);
	cr_expect(not(eq(ptr,
			 strstr(text, "# VM 'vmA' paused 1 time(s) for "
				      "snapshot, 123 ms"),
			 NULL)),
		  "%s", text);
}

/*
 * A Linux guest's samples name their process: the "comm" and "mmap"
 * notes say which program process 7 runs and where its file is mapped;
 * `--sort comm,pid,dso,sym` then shows the program's function under its
 * name, found in the file under --symfs at the mapping's offset; a
 * process without a name shows as ":PID" (as perf says it), a user
 * address no mapping covers as [unknown], and the end line's refusal
 * counts read back. Without --symfs the program's symbols are not
 * guessed from the host's files, and the report says how to get them.
 */
Test(vmm_report, samples_name_the_guest_process_and_its_program)
{
	uint64_t hot = addr_of("hot", NULL), off, vaddr;
	struct rec_header h, back;
	struct rec_writer w;
	struct rec_vm vm;
	struct symtab t;
	char symfs[PATH_MAX], *slash;
	unsigned int i;

	/* The file offset of hot(), through its PT_LOAD segment. */
	cr_assert(eq(int, symtab_load(&t, IMAGE), 0));
	for (i = 0; i < t.nr_loads; i++) {
		if (hot >= t.loads[i].vaddr &&
		    hot - t.loads[i].vaddr < t.loads[i].filesz)
			break;
	}
	cr_assert(lt(u32, i, t.nr_loads));
	off = hot - t.loads[i].vaddr + t.loads[i].offset;
	cr_assert(eq(int, symtab_vaddr_of(&t, off, &vaddr), 0));
	cr_assert(eq(u64, vaddr, hot));
	symtab_free(&t);

	header(&h, &vm, "/no/such/kernel", "");
	h.callchain = false;
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	const struct rec_task notes[] = {
		{.op   = PVPMU_TASK_COMM,
		 .pid  = 7,
		 .tid  = 7,
		 .exec = true,
		 .comm = "prog-a"},
		{.op    = PVPMU_TASK_MMAP,
		 .pid   = 7,
		 .start = 0x10000000,
		 .len   = 0x100000,
		 .pgoff = off & ~4095ULL,
		 .path  = "/op_chain.elf"},
	};
	for (i = 0; i < 2; i++)
		cr_assert(eq(int, rec_task_note(&w, &notes[i]), 0));
	for (i = 0; i < 5; i++) {
		struct rec_sample s = {.pid = i < 3 ? 7 : 8,
				       .tid = i < 3 ? 7 : 8,
				       .ip  = i < 3 ? 0x10000000 + (off & 4095)
						    : 0x123000};

		cr_assert(eq(int, rec_sample(&w, &s), 0));
	}
	w.tasks_refused = 3;
	w.tasks_dropped = 4;
	cr_assert(eq(int, rec_finish(&w, 0, 1, "done"), 0));

	snprintf(symfs, sizeof(symfs), "%s", IMAGE);
	slash  = strrchr(symfs, '/');
	*slash = '\0';
	cr_assert(eq(int,
		     report("--sort", "comm,pid,dso,sym", "--symfs", symfs,
			    path, NULL),
		     0),
		  "%s", errs);
	cr_expect(not(eq(ptr,
			 strstr(text, "prog-a                 7  "
				      "op_chain.elf          hot\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr,
			 strstr(text, ":8                     8  "
				      "[unknown]             [unknown]\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr,
			 strstr(text, "COMMAND              PID  "
				      "SHARED OBJECT         FUNCTION"),
			 NULL)),
		  "%s", text);
	/* Without --symfs: the name and the file, no guessed symbols. */
	cr_assert(eq(int, report("-s", "comm,dso,sym", path, NULL), 0));
	cr_expect(not(eq(ptr,
			 strstr(text, "prog-a           op_chain.elf          "
				      "[unknown]\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr, strstr(errs, "give --symfs DIR"), NULL)), "%s",
		  errs);
	cr_assert(eq(int,
		     rec_read(path, &back, NULL, NULL, symfs, sizeof(symfs)),
		     0),
		  "%s", symfs);
	cr_expect(eq(u64, back.tasks_refused, 3));
	cr_expect(eq(u64, back.tasks_dropped, 4));
	rec_header_free(&back);
}

/*
 * A process that exec()s another program at the same addresses (static
 * programs all load at one address): samples before the exec note are in
 * the old program under the old name, samples after it in the new one;
 * a thread named on its own keeps its name, another thread of the process
 * gets the process's.
 */
Test(vmm_report, an_exec_changes_the_program_and_name_from_its_note_on)
{
	const struct rec_task notes[] = {
		{.op = PVPMU_TASK_COMM, .pid = 9, .tid = 9, .comm = "first"},
		{.op    = PVPMU_TASK_MMAP,
		 .pid   = 9,
		 .start = 0x400000,
		 .len   = 0x10000,
		 .path  = "/bin/first"},
		{.op = PVPMU_TASK_COMM, .pid = 9, .tid = 10, .comm = "worker"},
		{.op   = PVPMU_TASK_COMM,
		 .pid  = 9,
		 .tid  = 9,
		 .exec = true,
		 .comm = "second"},
		{.op    = PVPMU_TASK_MMAP,
		 .pid   = 9,
		 .start = 0x400000,
		 .len   = 0x10000,
		 .path  = "/usr/bin/second"},
	};
	struct rec_sample s = {.pid = 9, .tid = 9, .ip = 0x401000};
	struct rec_header h;
	struct rec_writer w;
	struct rec_profile p;
	struct rec_where at;
	struct rec_vm vm;
	char err[256];
	unsigned int i;

	header(&h, &vm, "/no/such/kernel", "");
	h.callchain = false;
	cr_assert(eq(int, rec_open(&w, path, &h), 0));
	for (i = 0; i < 3; i++)
		cr_assert(eq(int, rec_task_note(&w, &notes[i]), 0));
	cr_assert(eq(int, rec_sample(&w, &s), 0)); /* 0: before the exec */
	s.tid = 10;
	cr_assert(eq(int, rec_sample(&w, &s), 0)); /* 1: the worker */
	for (i = 3; i < 5; i++)
		cr_assert(eq(int, rec_task_note(&w, &notes[i]), 0));
	s.tid = 9;
	cr_assert(eq(int, rec_sample(&w, &s), 0)); /* 2: after it */
	cr_assert(eq(int, rec_finish(&w, 0, 1, "done"), 0));
	cr_assert(eq(int,
		     rec_profile_load(&p, path, NULL, NULL, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(sz, p.nr, 3));
	rec_profile_where(&p, &p.smp[0], p.smp[0].ip, &at);
	cr_expect(eq(str, (char *)at.comm, "first"));
	cr_expect(eq(str, (char *)at.dso, "first"));
	rec_profile_where(&p, &p.smp[1], p.smp[1].ip, &at);
	cr_expect(eq(str, (char *)at.comm, "worker"));
	cr_expect(eq(str, (char *)at.dso, "first"));
	rec_profile_where(&p, &p.smp[2], p.smp[2].ip, &at);
	cr_expect(eq(str, (char *)at.comm, "second"));
	cr_expect(eq(str, (char *)at.dso, "second"));
	/* An address of the kernel's half: the image (no symbols here). */
	rec_profile_where(&p, &p.smp[2], 0xffffffff81000000ULL, &at);
	cr_expect(eq(str, (char *)at.dso, "[kernel.kallsyms]"));
	rec_profile_free(&p);
}

/*
 * perf report's habits: -s ...,cpu (the vCPU), -n (a SAMPLES column),
 * --children (CHILDREN and SELF: hot is the leaf of every sample, middle
 * and outer call it in 9 of 10) and --percent-limit.
 */
Test(vmm_report, perf_columns_children_and_percent_limit)
{
	chain_file("");
	cr_assert(eq(int,
		     report("-s", "comm,dso,sym,pid,cpu", "-n", "-g", "none",
			    path, NULL),
		     0),
		  "%s", errs);
	cr_expect(not(eq(ptr,
			 strstr(text, "OVERHEAD    PERIODS     SAMPLES  "
				      "COMMAND          SHARED OBJECT"),
			 NULL)),
		  "%s", text);
	cr_expect(
		not(eq(ptr, strstr(text, "  FUNCTION      PID  CPU\n"), NULL)),
		"%s", text);
	cr_expect(not(eq(ptr, strstr(text, "  hot        0    0\n"), NULL)),
		  "%s", text);
	cr_assert(eq(int, report("--children", "-n", path, NULL), 0), "%s",
		  errs);
	cr_expect(not(eq(ptr,
			 strstr(text, "CHILDREN     SELF     SAMPLES  "
				      "FUNCTION\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr,
			 strstr(text, " 100.00%  100.00%          10  hot\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr,
			 strstr(text, "  90.00%    0.00%           9  "
				      "middle\n"),
			 NULL)),
		  "%s", text);
	cr_expect(not(eq(ptr,
			 strstr(text, "  90.00%    0.00%           9  "
				      "outer\n"),
			 NULL)),
		  "%s", text);
	cr_assert(eq(int,
		     report("--children", "--percent-limit", "95", path, NULL),
		     0));
	cr_expect(eq(ptr, strstr(text, "middle"), NULL), "%s", text);
	cr_expect(not(eq(ptr, strstr(text, "hot"), NULL)), "%s", text);
	cr_assert(eq(int, report("--children", "-s", "dso", path, NULL), 1));
	cr_expect(not(eq(ptr, strstr(errs, "--children sorts by function"),
			 NULL)),
		  "%s", errs);
}
