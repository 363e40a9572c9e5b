// SPDX-License-Identifier: MIT
/*
 * test_pprof.c: the pprof builder of vpmu serve (ops/pprof/pprof_build.c)
 * and its gzip framing: the output is one gzip member (RFC 1952 magic,
 * ISIZE trailer) whose content protobuf-c decodes back into the profile
 * that was built: string_table[0] "", sample types, merged samples with
 * their vm/vcpu labels, one location per address, functions named from
 * the symbols, addresses without a symbol left unnamed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "serve_priv.h"

static uint8_t *gunzip(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream z   = {0};
	size_t cap   = 1 << 20;
	uint8_t *out = malloc(cap);

	cr_assert(eq(int, inflateInit2(&z, 15 + 16), Z_OK));
	z.next_in   = (Bytef *)(uintptr_t)in;
	z.avail_in  = (uInt)len;
	z.next_out  = out;
	z.avail_out = (uInt)cap;
	cr_assert(eq(int, inflate(&z, Z_FINISH), Z_STREAM_END));
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

Test(serve_gzip, one_gzip_member_with_its_size)
{
	const char text[] = "vpmu vpmu vpmu vpmu vpmu";
	uint8_t *gz, *back;
	size_t len, n;

	cr_assert(eq(int, pprof_gzip(text, sizeof(text), &gz, &len), 0));
	cr_expect(eq(u8, gz[0], 0x1f));
	cr_expect(eq(u8, gz[1], 0x8b));
	cr_expect(eq(u8, gz[2], 8), "deflate");
	/* ISIZE: the input length mod 2^32, little endian, last. */
	cr_expect(eq(u32,
		     (uint32_t)gz[len - 4] | (uint32_t)gz[len - 3] << 8 |
			     (uint32_t)gz[len - 2] << 16 |
			     (uint32_t)gz[len - 1] << 24,
		     (uint32_t)sizeof(text)));
	back = gunzip(gz, len, &n);
	cr_expect(eq(sz, n, sizeof(text)));
	cr_expect(eq(int, memcmp(back, text, n), 0));
	free(gz);
	free(back);
}

static const char *str(const Perftools__Profiles__Profile *p, int64_t i)
{
	cr_assert(lt(i64, i, (int64_t)p->n_string_table));
	return p->string_table[i];
}

static const Perftools__Profiles__Location *
location(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_location; i++) {
		if (p->location[i]->id == id)
			return p->location[i];
	}
	cr_assert(false, "no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *
function(const Perftools__Profiles__Profile *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->n_function; i++) {
		if (p->function[i]->id == id)
			return p->function[i];
	}
	cr_assert(false, "no function %llu", (unsigned long long)id);
	return NULL;
}

static const char *func_name(const Perftools__Profiles__Profile *p,
			     uint64_t loc)
{
	const Perftools__Profiles__Location *l = location(p, loc);

	if (!l->n_line)
		return NULL;
	return str(p, function(p, l->line[0]->function_id)->name);
}

/*
 * Finish (b) (Profile.time_nanos (time_ns), (duration_ns)), free it and
 * decode its gzip'd output back with protobuf-c: the profile, for
 * perftools__profiles__profile__free_unpacked().
 */
static Perftools__Profiles__Profile *
finish_and_decode(struct pprof_builder *b, int64_t time_ns, int64_t duration_ns)
{
	Perftools__Profiles__Profile *p;
	uint8_t *gz, *raw;
	size_t len, n;

	cr_assert(eq(int, pprof_finish(b, time_ns, duration_ns, &gz, &len), 0));
	pprof_free(b);
	raw = gunzip(gz, len, &n);
	p   = perftools__profiles__profile__unpack(NULL, n, raw);
	cr_assert(not(eq(ptr, p, NULL)), "protobuf-c decodes it");
	free(raw);
	free(gz);
	return p;
}

Test(serve_pprof, decodes_back_to_what_was_built)
{
	struct sym syms[2] = {{0x1000, 0x100, "hot"}, {0x2000, 0x100, "cold"}};
	struct symtab st   = {.syms = syms, .nr = 2};
	const struct pprof_type t[] = {{"samples", "count"},
				       {"hv_run_ns", "nanoseconds"},
				       {"hv_exits", "count"}};
	struct pprof_sample s       = {.nr_ips = 1};
	Perftools__Profiles__Profile *p;
	struct pprof_builder *b;
	size_t i;
	uint64_t hot_samples = 0;
	int k;

	cr_assert(eq(int, pprof_new(&b, t, 3, 1, 1000000), 0));
	cr_assert(eq(int, pprof_add_vm(b, 0, "alpha", "u-a", "/img", &st), 0));
	cr_assert(eq(int, pprof_add_vm(b, 1, "beta", "u-b", "/img", NULL), 0));
	for (k = 0; k < 9; k++) { /* 9 hot samples on alpha vCPU 1 */
		s.vm        = 0;
		s.vcpu      = 1;
		s.ips[0]    = 0x1010 + (uint64_t)(k % 3); /* 3 addresses */
		s.values[0] = 1;
		s.values[1] = 1000000;
		s.values[2] = 2;
		cr_assert(eq(int, pprof_add(b, &s), 0));
	}
	s.ips[0] = 0x2004; /* one cold one */
	cr_assert(eq(int, pprof_add(b, &s), 0));
	s.vm     = 1; /* beta: no symbols */
	s.vcpu   = 0;
	s.ips[0] = 0x1010;
	cr_assert(eq(int, pprof_add(b, &s), 0));
	s.vm = 7; /* no such VM */
	cr_expect(eq(int, pprof_add(b, &s), -EINVAL));
	cr_expect(eq(u64, pprof_nr_samples(b), 11));
	p = finish_and_decode(b, 123, 456);
	cr_expect(eq(str, p->string_table[0], ""));
	cr_assert(eq(sz, p->n_sample_type, 3));
	cr_expect(
		eq(str, (char *)str(p, p->sample_type[1]->type), "hv_run_ns"));
	cr_expect(eq(str, (char *)str(p, p->sample_type[1]->unit),
		     "nanoseconds"));
	cr_expect(eq(str, (char *)str(p, p->default_sample_type), "hv_run_ns"));
	cr_expect(eq(i64, p->period, 1000000));
	cr_expect(eq(i64, p->time_nanos, 123));
	cr_expect(eq(i64, p->duration_nanos, 456));
	/* alpha: 3 hot addresses + 1 cold; beta: 1 -> 5 merged samples. */
	cr_expect(eq(sz, p->n_sample, 5));
	cr_expect(eq(sz, p->n_location, 5));
	cr_expect(eq(sz, p->n_function, 2));
	cr_expect(eq(sz, p->n_mapping, 2));
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *x = p->sample[i];
		const char *fn;

		cr_assert(eq(sz, x->n_location_id, 1));
		cr_assert(eq(sz, x->n_value, 3));
		cr_assert(eq(sz, x->n_label, 2));
		cr_expect(eq(str, (char *)str(p, x->label[0]->key), "vm"));
		cr_expect(eq(str, (char *)str(p, x->label[1]->key), "vcpu"));
		fn = func_name(p, x->location_id[0]);
		if (!strcmp(str(p, x->label[0]->str), "beta")) {
			cr_expect(eq(ptr, (void *)fn, NULL),
				  "no symbols: address only");
			cr_expect(
				eq(str, (char *)str(p, x->label[1]->str), "0"),
				"vCPU 0 is a label too");
			continue;
		}
		cr_expect(eq(str, (char *)str(p, x->label[1]->str), "1"));
		cr_assert(not(eq(ptr, (void *)fn, NULL)));
		if (!strcmp(fn, "hot")) {
			hot_samples += (uint64_t)x->value[0];
			cr_expect(eq(i64, x->value[1], 3 * 1000000));
			cr_expect(eq(i64, x->value[2], 3 * 2));
		} else {
			cr_expect(eq(str, (char *)fn, "cold"));
			cr_expect(eq(i64, x->value[0], 1));
		}
	}
	cr_expect(eq(u64, hot_samples, 9));
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/*
 * Names from guests and files that are not UTF-8 (a symbol, a process
 * name, a VM's name and image path) reach the profile as valid UTF-8,
 * each bad byte as U+FFFD: protobuf strings must be UTF-8.
 */
Test(serve_pprof, every_string_is_utf8)
{
	struct sym syms[1]          = {{0x1000, 0x100, "h\xffot"}};
	struct symtab st            = {.syms = syms, .nr = 1};
	const struct pprof_type t[] = {{"samples", "count"}};
	struct pprof_sample s       = {.nr_ips = 1, .pid = 7};
	Perftools__Profiles__Profile *p;
	struct pprof_builder *b;
	bool named = false;
	size_t i;

	cr_assert(eq(int, pprof_new(&b, t, 1, 0, 1), 0));
	cr_assert(eq(int, pprof_add_vm(b, 0, "vm\xc3(", "u", "/img\x80/k", &st),
		     0));
	s.comm      = "a\xe2\x82"
		      "b";
	s.ips[0]    = 0x1010;
	s.values[0] = 1;
	cr_assert(eq(int, pprof_add(b, &s), 0));
	p = finish_and_decode(b, 1, 1);
	for (i = 0; i < p->n_string_table; i++) {
		const char *x = p->string_table[i];

		cr_expect(eq(sz, vmm_ctl_utf8_check(x, strlen(x)), strlen(x)),
			  "string %zu is not UTF-8", i);
		named |= !strcmp(x, "h\xef\xbf\xbdot");
	}
	cr_expect(named, "the symbol keeps its valid bytes");
	perftools__profiles__profile__free_unpacked(p, NULL);
}

Test(serve_pprof, chains_are_kept_leaf_first)
{
	struct sym syms[3]          = {{0x1000, 0x10, "outer"},
				       {0x1010, 0x10, "middle"},
				       {0x1020, 0x10, "leaf"}};
	struct symtab st            = {.syms = syms, .nr = 3};
	const struct pprof_type t[] = {{"samples", "count"}};
	struct pprof_sample s       = {
		      .nr_ips = 3, .ips = {0x1024, 0x1014, 0x1004}, .values = {1}};
	Perftools__Profiles__Profile *p;
	struct pprof_builder *b;

	cr_assert(eq(int, pprof_new(&b, t, 1, 0, 1), 0));
	cr_assert(eq(int, pprof_add_vm(b, 0, "vm", "u", "/img", &st), 0));
	cr_assert(eq(int, pprof_add(b, &s), 0));
	cr_assert(eq(int, pprof_add(b, &s), 0));
	p = finish_and_decode(b, 0, 0);
	cr_assert(eq(sz, p->n_sample, 1));
	cr_expect(eq(i64, p->sample[0]->value[0], 2));
	cr_assert(eq(sz, p->sample[0]->n_location_id, 3));
	cr_expect(eq(str, (char *)func_name(p, p->sample[0]->location_id[0]),
		     "leaf"));
	cr_expect(eq(str, (char *)func_name(p, p->sample[0]->location_id[2]),
		     "outer"));
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* Two functions of this program, each on one line that the test knows. */
// clang-format off
static __attribute__((noinline, noclone, used)) int pprof_probe_leaf(int x) { return x * 3 + 1; } static const int leaf_line = __LINE__;
static __attribute__((noinline, noclone, used)) int pprof_probe_caller(int x) { return pprof_probe_leaf(x) + 2; } static const int caller_line = __LINE__;
// clang-format on

static uint64_t sym_addr(const struct symtab *st, const char *name)
{
	size_t i;

	for (i = 0; i < st->nr; i++) {
		if (!strcmp(st->syms[i].name, name))
			return st->syms[i].addr;
	}
	cr_assert(false, "no symbol %s", name);
	return 0;
}

/*
 * The stack of a sample is the sampled address, then its
 * callers' call sites (return address - 1), as live profiles and `report
 * --pprof` build it (pprof_sample_stack); every location carries the
 * source line and every function its source file and first line, from
 * the image's DWARF (here this test program's own).
 */
Test(serve_pprof, stacks_carry_source_lines_and_files)
{
	const struct pprof_type t[] = {{"samples", "count"}};
	struct pprof_sample s       = {.values = {1}};
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Function *f;
	Perftools__Profiles__Profile *p;
	struct pprof_builder *b;
	uint64_t leaf, caller, ret;
	char self[PATH_MAX];
	struct symtab st;
	ssize_t sl;

	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	cr_assert(lt(sz, 0, (size_t)(sl > 0 ? sl : 0)));
	self[sl] = '\0';
	cr_assert(eq(int, symtab_load(&st, self), 0));
	cr_assert(not(eq(ptr, (void *)st.dwarf, NULL)), "built with -g");
	leaf   = sym_addr(&st, "pprof_probe_leaf");
	caller = sym_addr(&st, "pprof_probe_caller");
	ret    = caller + 5; /* a return address inside the caller */
	pprof_sample_stack(&s, leaf, &ret, 1);
	cr_assert(eq(u32, s.nr_ips, 2));
	cr_expect(eq(u64, s.ips[0], leaf));
	cr_expect(eq(u64, s.ips[1], ret - 1), "the call site, not the return");

	cr_assert(eq(int, pprof_new(&b, t, 1, 0, 1), 0));
	cr_assert(eq(int, pprof_add_vm(b, 0, "vm", "u", self, &st), 0));
	cr_assert(eq(int, pprof_add(b, &s), 0));
	p = finish_and_decode(b, 0, 0);
	cr_assert(eq(sz, p->n_sample, 1));
	cr_assert(eq(sz, p->sample[0]->n_location_id, 2));
	l = location(p, p->sample[0]->location_id[0]);
	cr_assert(eq(sz, l->n_line, 1));
	cr_expect(eq(i64, l->line[0]->line, leaf_line));
	f = function(p, l->line[0]->function_id);
	cr_expect(eq(str, (char *)str(p, f->name), "pprof_probe_leaf"));
	cr_expect(
		not(eq(ptr, strstr(str(p, f->filename), "test_pprof.c"), NULL)),
		"source file %s", str(p, f->filename));
	cr_expect(eq(i64, f->start_line, leaf_line));
	l = location(p, p->sample[0]->location_id[1]);
	cr_assert(eq(sz, l->n_line, 1));
	cr_expect(eq(i64, l->line[0]->line, caller_line));
	f = function(p, l->line[0]->function_id);
	cr_expect(eq(str, (char *)str(p, f->name), "pprof_probe_caller"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	symtab_free(&st);
}

/* A chain deeper than a pprof stack holds is cut at PPROF_FRAMES_MAX. */
Test(serve_pprof, long_chains_are_cut_at_the_frame_limit)
{
	uint64_t callers[PPROF_FRAMES_MAX + 8];
	struct pprof_sample s = {0};
	unsigned int i;

	for (i = 0; i < PPROF_FRAMES_MAX + 8; i++)
		callers[i] = 0x2000 + 16 * i;
	pprof_sample_stack(&s, 0x1000, callers, PPROF_FRAMES_MAX + 8);
	cr_assert(eq(u32, s.nr_ips, PPROF_FRAMES_MAX));
	cr_expect(eq(u64, s.ips[PPROF_FRAMES_MAX - 1],
		     callers[PPROF_FRAMES_MAX - 2] - 1));
}
