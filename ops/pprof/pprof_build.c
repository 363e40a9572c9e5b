// SPDX-License-Identifier: MIT
/*
 * pprof_build.c: a pprof profile (profile.proto, encoded by protobuf-c)
 * from guest samples (see pprof.h). One mapping per VM (its image),
 * one location per (VM, address), one function per (VM, symbol); samples
 * with the same stack on the same vCPU are merged and labelled with their
 * VM ("vm") and vCPU ("vcpu"). Stacks are leaf first (pprof_sample_stack:
 * the sampled address, then the callers' call sites), and every location
 * and function carries its source line and file where the image has DWARF
 * (elf_symbols.h), for live profiles and `report --pprof` alike.
 */
#include "pprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.pb-c.h"

/* Open addressing from a (k1, k2) key to a value; 0 keys are fine. */
struct hent {
	uint64_t k1, k2, v;
	bool used;
};

struct hmap {
	struct hent *e;
	size_t cap, nr;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

static struct hent *hfind(struct hmap *m, uint64_t k1, uint64_t k2)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = mix(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->e[i].used || (m->e[i].k1 == k1 && m->e[i].k2 == k2))
			return &m->e[i];
	}
}

static int hgrow(struct hmap *m)
{
	struct hmap n = {.cap = m->cap ? m->cap * 2 : 256};
	struct hent *slot;
	size_t i;

	n.e = calloc(n.cap, sizeof(*n.e));
	if (!n.e)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->e[i].used)
			continue;
		slot  = hfind(&n, m->e[i].k1, m->e[i].k2);
		*slot = m->e[i];
		n.nr++;
	}
	free(m->e);
	*m = n;
	return 0;
}

/* The entry for the key, inserted (unused v = 0) if new. */
static struct hent *hget(struct hmap *m, uint64_t k1, uint64_t k2)
{
	struct hent *e;

	if ((m->nr + 1) * 2 > m->cap && hgrow(m))
		return NULL;
	e = hfind(m, k1, k2);
	if (!e->used) {
		e->used = true;
		e->k1   = k1;
		e->k2   = k2;
		e->v    = 0;
		m->nr++;
	}
	return e;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

struct pb_vm {
	bool used;
	int64_t name, uuid, image; /* string indexes */
	const struct symtab *st;
};

/* A guest file other than the VM's image: a program or library. */
struct pb_dso {
	int64_t file, build_id; /* string indexes */
	const struct symtab *st;
};

struct pb_sample {
	unsigned int vm, vcpu, nr_locs;
	int32_t pid;  /* the guest process, 0: none */
	int64_t comm; /* its name (string index), 0: none */
	uint64_t locs[PPROF_FRAMES_MAX];
	int64_t values[PPROF_TYPES_MAX];
};

struct pb_loc {
	unsigned int vm, space; /* space: 0 the VM's image, k dsos[k - 1] */
	uint64_t addr;
	unsigned int nr_lines; /* innermost inlined function first */
	struct {
		uint64_t func; /* function id */
		int64_t line;  /* source line (DWARF), 0: unknown */
	} lines[SYMTAB_FRAMES_MAX];
};

struct pprof_builder {
	struct pprof_type types[PPROF_TYPES_MAX];
	unsigned int nr_types, period_type;
	int64_t period;

	char **strs;
	size_t nr_strs, cap_strs;
	struct hmap str_map; /* (hash, n-th with that hash) -> index + 1 */

	struct pb_vm *vms;
	unsigned int nr_vms;

	struct pb_dso *dsos;
	size_t nr_dsos, cap_dsos;

	struct pb_loc *locs;
	size_t nr_locs, cap_locs;
	struct hmap loc_map; /* (vm, addr) -> location id */

	struct {
		unsigned int vm, space;
		int64_t sym;        /* symbol index, -1: an inlined function */
		int64_t name;       /* an inlined function's name string */
		int64_t file;       /* source file string, -1: the image */
		int64_t start_line; /* line of its entry, 0: unknown */
	} * funcs;
	size_t nr_funcs, cap_funcs;
	/*
	 * (vm, symbol index) -> function id; inlined functions, which have
	 * no symbol: (vm with INLINED_KEY, name and file strings) -> id.
	 */
	struct hmap func_map;

	struct pb_sample *smp;
	size_t nr_smp, cap_smp;
	struct hmap smp_map; /* (stack hash, n) -> sample index + 1 */
	uint64_t nr_added;
};

static int grow(void **arr, size_t *cap, size_t nr, size_t size)
{
	size_t ncap;
	void *n;

	if (nr < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	n    = realloc(*arr, ncap * size);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* Index of (s), valid UTF-8, in the string table, added if new. */
static int64_t intern_valid(struct pprof_builder *b, const char *s)
{
	uint64_t h = str_hash(s), n;
	struct hent *e;

	for (n = 0;; n++) {
		e = hget(&b->str_map, h, n);
		if (!e)
			return -1;
		if (!e->v)
			break;
		if (!strcmp(b->strs[e->v - 1], s))
			return (int64_t)(e->v - 1);
	}
	if (grow((void **)&b->strs, &b->cap_strs, b->nr_strs,
		 sizeof(*b->strs)) ||
	    !(b->strs[b->nr_strs] = strdup(s))) {
		e->used = false; /* leave no half entry */
		b->str_map.nr--;
		return -1;
	}
	e->v = ++b->nr_strs;
	return (int64_t)b->nr_strs - 1;
}

/*
 * Index of (s) in the string table, added if new; -1 on ENOMEM. A
 * profile's strings are protobuf strings, which must be UTF-8 (Go's and
 * Parca's decoders refuse the whole profile otherwise), and names come
 * from guests and files (symbols, process names, image paths): a byte
 * that is not UTF-8 becomes U+FFFD, as in the metrics' labels.
 */
static int64_t intern(struct pprof_builder *b, const char *s)
{
	size_t len = strlen(s), n;
	char *clean;
	int64_t id;

	if (vmm_ctl_utf8_check(s, len) == len)
		return intern_valid(b, s);
	clean = vmm_ctl_utf8_clean(s, len, &n);
	if (!clean)
		return -1;
	id = intern_valid(b, clean);
	free(clean);
	return id;
}

const char *pprof_unit_of(const char *event)
{
	size_t n = strlen(event);

	if (n > 3 && !strcmp(event + n - 3, "_ns"))
		return "nanoseconds";
	if (!strcmp(event, "task-clock"))
		return "nanoseconds";
	if (n > 6 && !strcmp(event + n - 6, "cycles"))
		return "cycles";
	return "count";
}

int pprof_new(struct pprof_builder **out, const struct pprof_type *types,
	      unsigned int nr_types, unsigned int period_type, int64_t period)
{
	struct pprof_builder *b;

	if (!nr_types || nr_types > PPROF_TYPES_MAX || period_type >= nr_types)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	memcpy(b->types, types, nr_types * sizeof(*types));
	b->nr_types    = nr_types;
	b->period_type = period_type;
	b->period      = period;
	if (intern(b, "") != 0) { /* string_table[0] must be "" */
		pprof_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

int pprof_add_vm(struct pprof_builder *b, unsigned int vm, const char *name,
		 const char *uuid, const char *image, const struct symtab *st)
{
	struct pb_vm *n;

	if (vm >= b->nr_vms) {
		n = realloc(b->vms, (vm + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + b->nr_vms, 0, (vm + 1 - b->nr_vms) * sizeof(*n));
		b->vms    = n;
		b->nr_vms = vm + 1;
	}
	b->vms[vm].used  = true;
	b->vms[vm].name  = intern(b, name);
	b->vms[vm].uuid  = intern(b, uuid);
	b->vms[vm].image = intern(b, image);
	b->vms[vm].st    = st;
	if (b->vms[vm].name < 0 || b->vms[vm].uuid < 0 || b->vms[vm].image < 0)
		return -ENOMEM;
	return 0;
}

int pprof_add_dso(struct pprof_builder *b, const char *path,
		  const struct symtab *st)
{
	char id[SYMTAB_BUILD_ID_MAX * 2 + 1] = "";
	struct pb_dso *d;

	if (grow((void **)&b->dsos, &b->cap_dsos, b->nr_dsos, sizeof(*b->dsos)))
		return -ENOMEM;
	if (st)
		symtab_build_id_hex(st, id, sizeof(id));
	d           = &b->dsos[b->nr_dsos];
	d->st       = st;
	d->file     = intern(b, path);
	d->build_id = intern(b, id);
	if (d->file < 0 || d->build_id < 0)
		return -ENOMEM;
	return (int)++b->nr_dsos;
}

/* The symbols and the file name of address space (space) of VM (vm). */
static const struct symtab *space_st(const struct pprof_builder *b,
				     unsigned int vm, unsigned int space)
{
	return space ? b->dsos[space - 1].st : b->vms[vm].st;
}

static int64_t space_file(const struct pprof_builder *b, unsigned int vm,
			  unsigned int space)
{
	return space ? b->dsos[space - 1].file : b->vms[vm].image;
}

static uint64_t space_key(unsigned int vm, unsigned int space)
{
	return (uint64_t)vm | (uint64_t)space << 32;
}

#define INLINED_KEY (1ULL << 63)

/* A new function entry for key (k1, k2); its id, 0 on ENOMEM. */
static uint64_t func_new(struct pprof_builder *b, uint64_t k1, uint64_t k2,
			 unsigned int vm, unsigned int space, int64_t sym,
			 int64_t name, const char *file, int64_t line)
{
	struct hent *e = hget(&b->func_map, k1, k2);

	if (!e)
		return 0;
	if (e->v)
		return e->v;
	if (grow((void **)&b->funcs, &b->cap_funcs, b->nr_funcs,
		 sizeof(*b->funcs)))
		return 0;
	b->funcs[b->nr_funcs].vm         = vm;
	b->funcs[b->nr_funcs].space      = space;
	b->funcs[b->nr_funcs].sym        = sym;
	b->funcs[b->nr_funcs].name       = name;
	b->funcs[b->nr_funcs].file       = file ? intern(b, file) : -1;
	b->funcs[b->nr_funcs].start_line = line;
	if (file && b->funcs[b->nr_funcs].file < 0)
		return 0;
	e->v = ++b->nr_funcs;
	return e->v;
}

/*
 * Function id of symbol (sym) of (vm, space); 0 on ENOMEM. Its file and
 * line are where DWARF declares the function (the line table at its
 * entry may name a function inlined there, another file), else the line
 * table's at its entry.
 */
static uint64_t func_id(struct pprof_builder *b, unsigned int vm,
			unsigned int space, int64_t sym)
{
	const struct symtab *st = space_st(b, vm, space);
	struct hent *e =
		hget(&b->func_map, space_key(vm, space), (uint64_t)sym);
	struct src_frame f[SYMTAB_FRAMES_MAX];
	const char *file = NULL;
	int line         = 0, n;

	if (e && e->v)
		return e->v;
	n = symtab_src_frames(st, st->syms[sym].addr, f, SYMTAB_FRAMES_MAX);
	if (n && f[n - 1].decl_file) {
		file = f[n - 1].decl_file;
		line = f[n - 1].decl_line;
	} else if (symtab_srcline(st, st->syms[sym].addr, &file, &line)) {
		file = NULL;
		line = 0;
	}
	return func_new(b, space_key(vm, space), (uint64_t)sym, vm, space, sym,
			-1, file, line);
}

/* Function id of inlined function (f) in (vm, space); 0 on ENOMEM. */
static uint64_t inlined_id(struct pprof_builder *b, unsigned int vm,
			   unsigned int space, const struct src_frame *f)
{
	int64_t name = intern(b, f->func ? f->func : "[inlined]");
	int64_t file = intern(b, f->decl_file ? f->decl_file : "");

	if (name < 0 || file < 0)
		return 0;
	return func_new(b, space_key(vm, space) | INLINED_KEY,
			(uint64_t)name << 32 | (uint64_t)file, vm, space, -1,
			name, f->decl_file, f->decl_line);
}

/*
 * The lines of location (l) in symbol (sym): one per function inlined
 * at its address, innermost first, then the symbol's own function
 * (pprof's Location.line order). 0 or -ENOMEM.
 */
static int loc_lines(struct pprof_builder *b, struct pb_loc *l,
		     const struct symtab *st, int64_t sym)
{
	struct src_frame f[SYMTAB_FRAMES_MAX];
	const char *file;
	int n, k, line;

	n = symtab_src_frames(st, l->addr, f, SYMTAB_FRAMES_MAX);
	for (k = 0; k + 1 < n; k++) {
		l->lines[k].func = inlined_id(b, l->vm, l->space, &f[k]);
		l->lines[k].line = f[k].line;
		if (!l->lines[k].func)
			return -ENOMEM;
	}
	l->lines[k].func = func_id(b, l->vm, l->space, sym);
	if (!l->lines[k].func)
		return -ENOMEM;
	if (n)
		l->lines[k].line = f[k].line;
	else if (!symtab_srcline(st, l->addr, &file, &line))
		l->lines[k].line = line;
	l->nr_lines = (unsigned int)k + 1;
	return 0;
}

/* Location id of (vm, space, addr); 0 on ENOMEM. */
static uint64_t loc_id(struct pprof_builder *b, unsigned int vm,
		       unsigned int space, uint64_t addr)
{
	const struct symtab *st = space_st(b, vm, space);
	const struct sym *sym;
	struct hent *e = hget(&b->loc_map, space_key(vm, space), addr);
	struct pb_loc *l;

	if (!e)
		return 0;
	if (e->v)
		return e->v;
	if (grow((void **)&b->locs, &b->cap_locs, b->nr_locs, sizeof(*b->locs)))
		return 0;
	l = &b->locs[b->nr_locs];
	memset(l, 0, sizeof(*l));
	l->vm    = vm;
	l->space = space;
	l->addr  = addr;
	sym      = st ? symtab_find(st, addr) : NULL;
	if (sym && loc_lines(b, l, st, sym - st->syms))
		return 0;
	e->v = ++b->nr_locs;
	return e->v;
}

void pprof_sample_stack(struct pprof_sample *s, uint64_t ip,
			const uint64_t *callers, unsigned int nr)
{
	unsigned int k;

	s->ips[0] = ip;
	s->nr_ips = 1;
	/* A return address follows its call: the call is at ret - 1. */
	for (k = 0; k < nr && s->nr_ips < PPROF_FRAMES_MAX; k++)
		s->ips[s->nr_ips++] = callers[k] - 1;
}

int pprof_add(struct pprof_builder *b, const struct pprof_sample *s)
{
	struct pb_sample key = {.vm = s->vm, .vcpu = s->vcpu, .pid = s->pid};
	uint64_t h           = mix(s->vm, s->vcpu), n;
	struct pb_sample *t;
	struct hent *e;
	unsigned int i;

	if (s->vm >= b->nr_vms || !b->vms[s->vm].used || !s->nr_ips ||
	    s->nr_ips > PPROF_FRAMES_MAX)
		return -EINVAL;
	if (s->pid > 0 && s->comm) {
		key.comm = intern(b, s->comm);
		if (key.comm < 0)
			return -ENOMEM;
	}
	h = mix(h, mix((uint64_t)(uint32_t)key.pid, (uint64_t)key.comm));
	key.nr_locs = s->nr_ips;
	for (i = 0; i < s->nr_ips; i++) {
		if (s->space[i] > b->nr_dsos)
			return -EINVAL;
		key.locs[i] = loc_id(b, s->vm, s->space[i], s->ips[i]);
		if (!key.locs[i])
			return -ENOMEM;
		h = mix(h, key.locs[i]);
	}
	for (n = 0;; n++) {
		e = hget(&b->smp_map, h, n);
		if (!e)
			return -ENOMEM;
		if (!e->v)
			break;
		t = &b->smp[e->v - 1];
		if (t->vm == key.vm && t->vcpu == key.vcpu &&
		    t->pid == key.pid && t->comm == key.comm &&
		    t->nr_locs == key.nr_locs &&
		    !memcmp(t->locs, key.locs, key.nr_locs * sizeof(uint64_t)))
			goto merge;
	}
	if (grow((void **)&b->smp, &b->cap_smp, b->nr_smp, sizeof(*b->smp))) {
		e->used = false;
		b->smp_map.nr--;
		return -ENOMEM;
	}
	b->smp[b->nr_smp] = key;
	e->v              = ++b->nr_smp;
	t                 = &b->smp[b->nr_smp - 1];
merge:
	for (i = 0; i < b->nr_types; i++)
		t->values[i] += s->values[i];
	b->nr_added++;
	return 0;
}

uint64_t pprof_nr_samples(const struct pprof_builder *b)
{
	return b->nr_added;
}

/* Everything the Profile message points to, freed in one place. */
struct pb_out {
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType *vt, period_type;
	Perftools__Profiles__ValueType **vtp;
	Perftools__Profiles__Sample *smp, **smpp;
	Perftools__Profiles__Label *lbl, **lblp;
	Perftools__Profiles__Mapping *map, **mapp;
	Perftools__Profiles__Location *loc, **locp;
	Perftools__Profiles__Line *line, **linep;
	Perftools__Profiles__Function *fn, **fnp;
	uint64_t *loc_ids;
	int64_t *values;
};

static void out_free(struct pb_out *o)
{
	free(o->vt);
	free(o->vtp);
	free(o->smp);
	free(o->smpp);
	free(o->lbl);
	free(o->lblp);
	free(o->map);
	free(o->mapp);
	free(o->loc);
	free(o->locp);
	free(o->line);
	free(o->linep);
	free(o->fn);
	free(o->fnp);
	free(o->loc_ids);
	free(o->values);
}

static int fill_types(struct pprof_builder *b, struct pb_out *o)
{
	unsigned int i;

	o->vt  = calloc(b->nr_types, sizeof(*o->vt));
	o->vtp = calloc(b->nr_types, sizeof(*o->vtp));
	if (!o->vt || !o->vtp)
		return -ENOMEM;
	for (i = 0; i < b->nr_types; i++) {
		perftools__profiles__value_type__init(&o->vt[i]);
		o->vt[i].type = intern(b, b->types[i].type);
		o->vt[i].unit = intern(b, b->types[i].unit);
		if (o->vt[i].type < 0 || o->vt[i].unit < 0)
			return -ENOMEM;
		o->vtp[i] = &o->vt[i];
	}
	perftools__profiles__value_type__init(&o->period_type);
	o->period_type           = *o->vtp[b->period_type];
	o->p.n_sample_type       = b->nr_types;
	o->p.sample_type         = o->vtp;
	o->p.period_type         = &o->period_type;
	o->p.period              = b->period;
	o->p.default_sample_type = o->vt[b->period_type].type;
	return 0;
}

/* Label (key, str) of sample (s), the (*nl)-th of the profile's. */
static void add_label(struct pb_out *o, size_t *nl,
		      Perftools__Profiles__Sample *s, int64_t key, int64_t str)
{
	perftools__profiles__label__init(&o->lbl[*nl]);
	o->lbl[*nl].key = key;
	o->lbl[*nl].str = str;
	o->lblp[*nl]    = &o->lbl[*nl];
	(*nl)++;
	s->n_label++;
}

static int fill_samples(struct pprof_builder *b, struct pb_out *o)
{
	int64_t k_vm = intern(b, "vm"), k_vcpu = intern(b, "vcpu");
	int64_t k_comm = intern(b, "comm"), k_pid = intern(b, "pid");
	size_t i, nloc = 0, nl = 0;
	char num[16];
	int64_t str;

	o->smp     = calloc(b->nr_smp + 1, sizeof(*o->smp));
	o->smpp    = calloc(b->nr_smp + 1, sizeof(*o->smpp));
	o->lbl     = calloc(4 * b->nr_smp + 1, sizeof(*o->lbl));
	o->lblp    = calloc(4 * b->nr_smp + 1, sizeof(*o->lblp));
	o->loc_ids = calloc(b->nr_smp * PPROF_FRAMES_MAX + 1, sizeof(uint64_t));
	o->values  = calloc(b->nr_smp * b->nr_types + 1, sizeof(int64_t));
	if (!o->smp || !o->smpp || !o->lbl || !o->lblp || !o->loc_ids ||
	    !o->values || k_vm < 0 || k_vcpu < 0 || k_comm < 0 || k_pid < 0)
		return -ENOMEM;
	for (i = 0; i < b->nr_smp; i++) {
		Perftools__Profiles__Sample *s = &o->smp[i];
		const struct pb_sample *t      = &b->smp[i];

		perftools__profiles__sample__init(s);
		memcpy(&o->loc_ids[nloc], t->locs,
		       t->nr_locs * sizeof(uint64_t));
		s->location_id   = &o->loc_ids[nloc];
		s->n_location_id = t->nr_locs;
		nloc += t->nr_locs;
		memcpy(&o->values[i * b->nr_types], t->values,
		       b->nr_types * sizeof(int64_t));
		s->value   = &o->values[i * b->nr_types];
		s->n_value = b->nr_types;
		s->label   = &o->lblp[nl];
		s->n_label = 0;
		/*
		 * Strings: go tool pprof drops a numeric label of value 0
		 * (vCPU 0), and -tagfocus vcpu=0 matches a string exactly.
		 */
		add_label(o, &nl, s, k_vm, b->vms[t->vm].name);
		snprintf(num, sizeof(num), "%u", t->vcpu);
		str = intern(b, num);
		if (str < 0)
			return -ENOMEM;
		add_label(o, &nl, s, k_vcpu, str);
		if (t->pid > 0) {
			snprintf(num, sizeof(num), "%d", (int)t->pid);
			str = intern(b, num);
			if (str < 0)
				return -ENOMEM;
			add_label(o, &nl, s, k_pid, str);
			if (t->comm)
				add_label(o, &nl, s, k_comm, t->comm);
		}
		o->smpp[i] = s;
	}
	o->p.sample   = o->smpp;
	o->p.n_sample = b->nr_smp;
	return 0;
}

static int fill_mappings(struct pprof_builder *b, struct pb_out *o)
{
	unsigned int i, n = 0;

	o->map  = calloc(b->nr_vms + b->nr_dsos + 1, sizeof(*o->map));
	o->mapp = calloc(b->nr_vms + b->nr_dsos + 1, sizeof(*o->mapp));
	if (!o->map || !o->mapp)
		return -ENOMEM;
	for (i = 0; i < b->nr_vms; i++) {
		if (!b->vms[i].used)
			continue;
		perftools__profiles__mapping__init(&o->map[n]);
		o->map[n].id            = i + 1;
		o->map[n].memory_start  = 0;
		o->map[n].memory_limit  = UINT64_MAX;
		o->map[n].filename      = b->vms[i].image;
		o->map[n].has_functions = b->vms[i].st && b->vms[i].st->nr;
		o->mapp[n]              = &o->map[n];
		n++;
	}
	/* Then one per guest file, with its build-id, after every VM's. */
	for (i = 0; i < b->nr_dsos; i++) {
		perftools__profiles__mapping__init(&o->map[n]);
		o->map[n].id            = b->nr_vms + i + 1;
		o->map[n].memory_start  = 0;
		o->map[n].memory_limit  = UINT64_MAX;
		o->map[n].filename      = b->dsos[i].file;
		o->map[n].build_id      = b->dsos[i].build_id;
		o->map[n].has_functions = b->dsos[i].st && b->dsos[i].st->nr;
		o->mapp[n]              = &o->map[n];
		n++;
	}
	o->p.mapping   = o->mapp;
	o->p.n_mapping = n;
	return 0;
}

static int fill_locations(struct pprof_builder *b, struct pb_out *o)
{
	Perftools__Profiles__Line *l;
	unsigned int k;
	size_t i;

	o->loc  = calloc(b->nr_locs + 1, sizeof(*o->loc));
	o->locp = calloc(b->nr_locs + 1, sizeof(*o->locp));
	o->line = calloc(b->nr_locs * SYMTAB_FRAMES_MAX + 1, sizeof(*o->line));
	o->linep =
		calloc(b->nr_locs * SYMTAB_FRAMES_MAX + 1, sizeof(*o->linep));
	if (!o->loc || !o->locp || !o->line || !o->linep)
		return -ENOMEM;
	for (i = 0; i < b->nr_locs; i++) {
		perftools__profiles__location__init(&o->loc[i]);
		o->loc[i].id         = i + 1;
		o->loc[i].mapping_id = b->locs[i].space
					       ? b->nr_vms + b->locs[i].space
					       : b->locs[i].vm + 1;
		o->loc[i].address    = b->locs[i].addr;
		o->loc[i].line       = &o->linep[i * SYMTAB_FRAMES_MAX];
		o->loc[i].n_line     = b->locs[i].nr_lines;
		for (k = 0; k < b->locs[i].nr_lines; k++) {
			l = &o->line[i * SYMTAB_FRAMES_MAX + k];
			perftools__profiles__line__init(l);
			l->function_id = b->locs[i].lines[k].func;
			l->line        = b->locs[i].lines[k].line;
			o->linep[i * SYMTAB_FRAMES_MAX + k] = l;
		}
		o->locp[i] = &o->loc[i];
	}
	o->p.location   = o->locp;
	o->p.n_location = b->nr_locs;
	return 0;
}

static int fill_functions(struct pprof_builder *b, struct pb_out *o)
{
	const struct symtab *st;
	size_t i;

	o->fn  = calloc(b->nr_funcs + 1, sizeof(*o->fn));
	o->fnp = calloc(b->nr_funcs + 1, sizeof(*o->fnp));
	if (!o->fn || !o->fnp)
		return -ENOMEM;
	for (i = 0; i < b->nr_funcs; i++) {
		st = space_st(b, b->funcs[i].vm, b->funcs[i].space);
		perftools__profiles__function__init(&o->fn[i]);
		o->fn[i].id = i + 1;
		o->fn[i].name =
			b->funcs[i].sym >= 0
				? intern(b, st->syms[b->funcs[i].sym].name)
				: b->funcs[i].name;
		o->fn[i].system_name = o->fn[i].name;
		o->fn[i].filename    = b->funcs[i].file >= 0
					       ? b->funcs[i].file
					       : space_file(b, b->funcs[i].vm,
							    b->funcs[i].space);
		o->fn[i].start_line  = b->funcs[i].start_line;
		if (o->fn[i].name < 0)
			return -ENOMEM;
		o->fnp[i] = &o->fn[i];
	}
	o->p.function   = o->fnp;
	o->p.n_function = b->nr_funcs;
	return 0;
}

int pprof_finish(struct pprof_builder *b, int64_t time_ns, int64_t duration_ns,
		 uint8_t **out, size_t *len)
{
	struct pb_out o = {0};
	uint8_t *raw    = NULL;
	size_t n;
	int ret;

	perftools__profiles__profile__init(&o.p);
	ret = fill_types(b, &o);
	if (!ret)
		ret = fill_samples(b, &o);
	if (!ret)
		ret = fill_mappings(b, &o);
	if (!ret)
		ret = fill_locations(b, &o);
	if (!ret)
		ret = fill_functions(b, &o);
	if (ret)
		goto out_free;
	/* Interned last: every string is in the table now. */
	o.p.string_table   = b->strs;
	o.p.n_string_table = b->nr_strs;
	o.p.time_nanos     = time_ns;
	o.p.duration_nanos = duration_ns;
	n   = perftools__profiles__profile__get_packed_size(&o.p);
	raw = malloc(n ? n : 1);
	if (!raw) {
		ret = -ENOMEM;
		goto out_free;
	}
	perftools__profiles__profile__pack(&o.p, raw);
	ret = pprof_gzip(raw, n, out, len);
out_free:
	free(raw);
	out_free(&o);
	return ret;
}

void pprof_free(struct pprof_builder *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nr_strs; i++)
		free(b->strs[i]);
	free(b->strs);
	free(b->str_map.e);
	free(b->vms);
	free(b->dsos);
	free(b->locs);
	free(b->loc_map.e);
	free(b->funcs);
	free(b->func_map.e);
	free(b->smp);
	free(b->smp_map.e);
	free(b);
}
