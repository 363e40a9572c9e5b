// SPDX-License-Identifier: MIT
/*
 * cmd_report.c: `vpmu report [-i FILE]`, a profile per VM and vCPU of a
 * record file (rec_profile.h loads it and resolves symbols), keyed by
 * function and/or source line, with call graphs when the record has call
 * chains (`vpmu record -g`), or folded stacks for flame graphs.
 */
#include "ops_cmd.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli_parse.h"
#include "rec_profile.h"
#include "pprof.h" /* --pprof */

#define ALL_VCPUS UINT32_MAX /* the per-VM total, after its vCPUs */

enum graph_mode { GRAPH_CALLEE, GRAPH_CALLER, GRAPH_NONE };

/* One sample's contribution to a (vm, cpu) group: row label and stack. */
struct entry {
	uint32_t vm, cpu;
	char *label; /* sort keys of the leaf */
	char *stack; /* callers, innermost first, ';'-separated ("" none) */
	uint64_t n;  /* periods */
	uint64_t samples; /* samples (-n) */
};

/* The keys of --sort, in the order given (perf's names). */
enum sort_key {
	KEY_COMM,
	KEY_PID,
	KEY_DSO,
	KEY_SYM,
	KEY_SRC,
	KEY_CPU,
	NR_KEYS
};

/*
 * Each key's name, column header and width (printf's: negative pads on
 * the right, 0 not at all); label_of() and print_columns() both pad so.
 */
static const struct {
	const char *name, *column;
	int width;
} sort_keys[NR_KEYS] = {
	[KEY_COMM] = {"comm", "COMMAND", -15},
	[KEY_PID]  = {"pid", "PID", 7},
	[KEY_DSO]  = {"dso", "SHARED OBJECT", -20},
	[KEY_SYM]  = {"sym", "FUNCTION", 0},
	[KEY_SRC]  = {"srcline", "SOURCE:LINE", 0},
	[KEY_CPU]  = {"cpu", "CPU", 3}, /* the vCPU, as perf's CPU */
};

struct report {
	struct rec_profile p;
	struct rec_sym_opts so;
	const char *file;
	bool folded, stdio, show_samples, children;
	enum sort_key keys[NR_KEYS];
	unsigned int nr_keys;
	enum graph_mode graph;
	double min_pct;
	const char *pprof; /* --pprof OUT: converted by ops/pprof */
	struct entry *e;
	size_t nr;
};

/* Columns are two spaces apart; a function and its line, one. */
static const char *sep_before(const struct report *r, unsigned int k)
{
	if (!k)
		return "";
	return r->keys[k] == KEY_SRC && r->keys[k - 1] == KEY_SYM ? " " : "  ";
}

static const char *sym_name(const struct rec_where *w)
{
	return w->sym ? w->sym->name : "[unknown]";
}

static void comm_text(const struct rec_where *w, char *buf, size_t len)
{
	if (w->comm)
		snprintf(buf, len, "%s", w->comm);
	else if (w->pid > 0)
		snprintf(buf, len, ":%d", (int)w->pid); /* as perf says it */
	else
		snprintf(buf, len, "[unknown]");
}

/* The columns of the sort keys, or the function alone (folded). */
static int label_of(struct report *r, const struct rec_psample *s,
		    bool sym_only, char **out)
{
	char col[NR_KEYS][PATH_MAX + 32], comm[32];
	const char *file = NULL, *slash;
	struct rec_where w;
	size_t len = 1, at = 0;
	unsigned int k;
	int line = 0;

	rec_profile_where(&r->p, s, s->ip, &w);
	if (sym_only)
		return asprintf(out, "%s", sym_name(&w));
	for (k = 0; k < r->nr_keys; k++) {
		switch (r->keys[k]) {
		case KEY_COMM:
			comm_text(&w, comm, sizeof(comm));
			snprintf(col[k], sizeof(col[k]), "%*s",
				 sort_keys[KEY_COMM].width, comm);
			break;
		case KEY_PID:
			snprintf(col[k], sizeof(col[k]), "%*d",
				 sort_keys[KEY_PID].width, (int)w.pid);
			break;
		case KEY_CPU:
			snprintf(col[k], sizeof(col[k]), "%*u",
				 sort_keys[KEY_CPU].width, s->cpu);
			break;
		case KEY_DSO:
			snprintf(col[k], sizeof(col[k]), "%*s",
				 sort_keys[KEY_DSO].width, w.dso);
			break;
		case KEY_SYM:
			snprintf(col[k], sizeof(col[k]), "%s", sym_name(&w));
			break;
		default:
			if (!w.st || symtab_srcline(w.st, w.addr, &file, &line))
				file = NULL;
			slash = file ? strrchr(file, '/') : NULL;
			if (slash)
				file = slash + 1;
			snprintf(col[k], sizeof(col[k]), "%s:%d",
				 file ? file : "??", file ? line : 0);
		}
		len += strlen(col[k]) + 2;
	}
	*out = malloc(len);
	if (!*out)
		return -1;
	for (k = 0; k < r->nr_keys; k++)
		at += (size_t)sprintf(*out + at, "%s%s", sep_before(r, k),
				      col[k]);
	(*out)[at] = '\0';
	return 0;
}

/*
 * The callers' function names, innermost first, joined by ';'. A return
 * address follows its call: the call itself is at (address - 1).
 */
static char *stack_of(struct report *r, const struct rec_psample *s)
{
	const uint64_t *c = rec_profile_chain(&r->p, s);
	size_t len = 1, at = 0;
	struct rec_where w;
	uint32_t i;
	char *buf;

	for (i = 0; i < s->nr_chain; i++) {
		rec_profile_where(&r->p, s, c[i] - 1, &w);
		len += strlen(sym_name(&w)) + 1;
	}
	buf = malloc(len);
	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < s->nr_chain; i++) {
		rec_profile_where(&r->p, s, c[i] - 1, &w);
		at += (size_t)sprintf(buf + at, "%s%s", i ? ";" : "",
				      sym_name(&w));
	}
	return buf;
}

/* The process a folded line starts with: "comm-pid" ("" without one). */
static char *process_of(struct report *r, const struct rec_psample *s)
{
	struct rec_where w;
	char comm[32];
	char *out;

	if (!r->p.procs.has_tasks)
		return strdup("");
	rec_profile_where(&r->p, s, s->ip, &w);
	comm_text(&w, comm, sizeof(comm));
	return asprintf(&out, "%s-%d;", comm, (int)w.pid) < 0 ? NULL : out;
}

/* Two entries per sample: its vCPU's and its VM's all-vCPU group. */
static int build(struct report *r, bool sym_only)
{
	size_t i;

	r->e = calloc(2 * r->p.nr + 1, sizeof(*r->e));
	if (!r->e)
		return -ENOMEM;
	for (i = 0; i < r->p.nr; i++) {
		const struct rec_psample *s = &r->p.smp[i];
		struct entry *a = &r->e[r->nr++], *b = &r->e[r->nr++];

		a->vm = b->vm = s->vm;
		a->cpu        = s->cpu;
		b->cpu        = ALL_VCPUS;
		a->n = b->n = s->weight; /* missed periods count */
		a->samples = b->samples = 1;
		if (label_of(r, s, sym_only, &a->label) < 0)
			return -ENOMEM;
		a->stack = stack_of(r, s);
		if (sym_only && a->stack) {
			/* Folded stacks begin with their process. */
			char *proc = process_of(r, s), *joined = NULL;

			if (!proc || asprintf(&joined, "%s%s%s", a->stack,
					      a->stack[0] && proc[0] ? ";" : "",
					      proc[0] ? proc : "") < 0)
				joined = NULL;
			if (joined && proc[0])
				joined[strlen(joined) - 1] = '\0'; /* its ';' */
			free(proc);
			free(a->stack);
			a->stack = joined;
		}
		b->label = strdup(a->label);
		b->stack = a->stack ? strdup(a->stack) : NULL;
		if (!a->stack || !b->label || !b->stack)
			return -ENOMEM;
	}
	return 0;
}

static int by_group(const struct entry *x, const struct entry *y)
{
	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = by_group(x, y);

	if (!c)
		c = strcmp(x->label, y->label);
	return c ? c : strcmp(x->stack, y->stack);
}

/* Merge equal (vm, cpu, label, stack) entries. */
static void merge(struct report *r)
{
	size_t i, out = 0;

	qsort(r->e, r->nr, sizeof(*r->e), by_key);
	for (i = 0; i < r->nr; i++) {
		if (out && !by_key(&r->e[out - 1], &r->e[i])) {
			r->e[out - 1].n += r->e[i].n;
			r->e[out - 1].samples += r->e[i].samples;
			free(r->e[i].label);
			free(r->e[i].stack);
		} else {
			r->e[out++] = r->e[i];
		}
	}
	r->nr = out;
}

struct row {
	size_t first, end; /* entries with this label */
	uint64_t n, samples;
};

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

static int stack_by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

/* One caller chain: "a <- b <- c" (callee) or "c -> b -> a" (caller). */
static void print_chain(const struct report *r, const struct entry *e,
			uint64_t row_n)
{
	char *copy = strdup(e->stack), *tok, *save = NULL,
	     *names[REC_CHAIN_MAX];
	unsigned int nr = 0, i;

	if (!copy)
		return;
	for (tok = strtok_r(copy, ";", &save); tok && nr < REC_CHAIN_MAX;
	     tok = strtok_r(NULL, ";", &save))
		names[nr++] = tok;
	printf("%20s--%.2f%%-- ", "", 100.0 * (double)e->n / (double)row_n);
	if (!nr)
		printf("%s (no callers)\n", e->label);
	else if (r->graph == GRAPH_CALLEE) {
		printf("%s", e->label);
		for (i = 0; i < nr; i++)
			printf(" <- %s", names[i]);
		putchar('\n');
	} else {
		for (i = nr; i-- > 0;)
			printf("%s -> ", names[i]);
		printf("%s\n", e->label);
	}
	free(copy);
}

/* The header of the key columns, padded as label_of() pads them. */
static void print_columns(const struct report *r)
{
	unsigned int k;

	for (k = 0; k < r->nr_keys; k++)
		printf("%s%*s", sep_before(r, k), sort_keys[r->keys[k]].width,
		       sort_keys[r->keys[k]].column);
	putchar('\n');
}

/* A group's header: two figures' columns, -n's, then the keys'. */
static void print_header(const struct report *r, const char *a, const char *b,
			 int b_width)
{
	printf("%8s %*s  ", a, b_width, b);
	if (r->show_samples)
		printf("%10s  ", "SAMPLES");
	print_columns(r);
}

/* The rows of group [first, end), most samples first, with graphs. */
static void print_group(const struct report *r, size_t first, size_t end,
			uint64_t total)
{
	struct row *rows = calloc(end - first, sizeof(*rows));
	size_t i, j, nr = 0;
	bool graph = r->p.h.callchain && r->graph != GRAPH_NONE &&
		     r->e[first].cpu == ALL_VCPUS;

	if (!rows)
		return;
	for (i = first; i < end; i = j) {
		rows[nr] = (struct row){.first = i};
		for (j = i; j < end && !strcmp(r->e[j].label, r->e[i].label);
		     j++) {
			rows[nr].n += r->e[j].n;
			rows[nr].samples += r->e[j].samples;
		}
		rows[nr++].end = j;
	}
	qsort(rows, nr, sizeof(*rows), by_count);
	print_header(r, "OVERHEAD", "PERIODS", 10);
	for (i = 0; i < nr; i++) {
		double pct = 100.0 * (double)rows[i].n / (double)total;

		if (pct < r->min_pct)
			continue;
		printf("%7.2f%% %10llu  ", pct, (unsigned long long)rows[i].n);
		if (r->show_samples)
			printf("%10llu  ", (unsigned long long)rows[i].samples);
		printf("%s\n", r->e[rows[i].first].label);
		if (!graph)
			continue;
		qsort(&r->e[rows[i].first], rows[i].end - rows[i].first,
		      sizeof(*r->e), stack_by_count);
		for (j = rows[i].first; j < rows[i].end; j++) {
			if (100.0 * (double)r->e[j].n / (double)total >=
			    r->min_pct)
				print_chain(r, &r->e[j], rows[i].n);
		}
	}
	free(rows);
}

/* --children: a function's periods as the leaf (self) and anywhere on
 * the stack (children: itself and what it called), as perf's columns. */
struct child {
	const char *name;
	uint64_t self, children, samples;
};

static int by_children(const void *a, const void *b)
{
	const struct child *x = a, *y = b;

	if (x->children != y->children)
		return x->children > y->children ? -1 : 1;
	return x->self > y->self ? -1 : x->self < y->self;
}

/* The row of (name) in (c) (of *nr), added if new. */
static struct child *child_of(struct child *c, size_t *nr, const char *name)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		if (!strcmp(c[i].name, name))
			return &c[i];
	c[*nr] = (struct child){.name = name};
	return &c[(*nr)++];
}

/*
 * Add entry (e) to (c): its leaf's self, and the children of every
 * function of its stack once, however often it recurs there. (names) is
 * scratch for the split stack (the entry's own copy).
 */
static void add_children(struct child *c, size_t *nr, const struct entry *e,
			 char *names)
{
	struct child *seen[REC_CHAIN_MAX + 1], *f;
	unsigned int nr_seen = 0, k;
	char *tok, *save = NULL;

	f = child_of(c, nr, e->label);
	f->self += e->n;
	f->children += e->n;
	f->samples += e->samples;
	seen[nr_seen++] = f;
	for (tok = strtok_r(names, ";", &save); tok && nr_seen <= REC_CHAIN_MAX;
	     tok = strtok_r(NULL, ";", &save)) {
		f = child_of(c, nr, tok);
		for (k = 0; k < nr_seen && seen[k] != f; k++)
			;
		if (k < nr_seen)
			continue; /* recursion: counted once */
		f->children += e->n;
		f->samples += e->samples; /* -n: samples with it on the stack */
		seen[nr_seen++] = f;
	}
}

/* --children: the rows of group [first, end) by children, then self. */
static void print_children(const struct report *r, size_t first, size_t end,
			   uint64_t total)
{
	size_t i, nr = 0, cap = (end - first) * (REC_CHAIN_MAX + 1);
	struct child *c = calloc(cap, sizeof(*c));
	char **copies   = calloc(end - first, sizeof(*copies));

	for (i = first; c && copies && i < end; i++) {
		copies[i - first] = strdup(r->e[i].stack);
		if (copies[i - first])
			add_children(c, &nr, &r->e[i], copies[i - first]);
	}
	qsort(c, nr, sizeof(*c), by_children);
	print_header(r, "CHILDREN", "SELF", 8);
	for (i = 0; i < nr; i++) {
		double pct = 100.0 * (double)c[i].children / (double)total;

		if (pct < r->min_pct)
			continue;
		printf("%7.2f%% %7.2f%%  ", pct,
		       100.0 * (double)c[i].self / (double)total);
		if (r->show_samples)
			printf("%10llu  ", (unsigned long long)c[i].samples);
		printf("%s\n", c[i].name);
	}
	for (i = 0; copies && i < end - first; i++)
		free(copies[i]);
	free(copies);
	free(c);
}

/* The VMs paused for `vpmu snapshot` while recorded. */
static void print_snap_notes(const struct rec_header *h)
{
	unsigned int i;

	for (i = 0; i < h->nr_vms; i++)
		if (h->vms[i].snap_pauses)
			printf("# VM '%s' paused %llu time(s) for snapshot, "
			       "%llu ms\n",
			       h->vms[i].name,
			       (unsigned long long)h->vms[i].snap_pauses,
			       (unsigned long long)(h->vms[i].snap_pause_ns /
						    1000000));
}

static void print_flat(const struct report *r)
{
	const struct rec_header *h = &r->p.h;
	size_t i                   = 0, j;
	uint64_t total;

	printf("# event %s, period %llu%s, %u VM(s)%s\n", h->event,
	       (unsigned long long)h->period, h->freq ? " (from -F)" : "",
	       h->nr_vms, h->callchain ? ", call chains" : "");
	if (h->truncated)
		printf("# incomplete file: %zu complete samples before the "
		       "cut\n",
		       r->p.nr);
	/* What the counts stand for, and what is not in them. */
	printf("# %zu samples; counts are periods (a sample counts 1 + the "
	       "periods it missed)\n# throttled %llu, missed %llu, lost "
	       "%llu\n",
	       r->p.nr, (unsigned long long)h->throttled,
	       (unsigned long long)h->missed, (unsigned long long)h->lost);
	print_snap_notes(h);
	while (i < r->nr) {
		const struct entry *g = &r->e[i];

		for (j = i, total = 0; j < r->nr && !by_group(&r->e[j], g); j++)
			total += r->e[j].n;
		if (g->cpu == ALL_VCPUS)
			printf("\n# VM %s (%s) all vCPUs: %llu periods\n",
			       h->vms[g->vm].name, h->vms[g->vm].uuid,
			       (unsigned long long)total);
		else
			printf("\n# VM %s (%s) vCPU %u: %llu periods, image "
			       "%s\n",
			       h->vms[g->vm].name, h->vms[g->vm].uuid, g->cpu,
			       (unsigned long long)total, h->vms[g->vm].image);
		if (r->children)
			print_children(r, i, j, total);
		else
			print_group(r, i, j, total);
		i = j;
	}
	if (!r->nr)
		printf("\n(no samples)\n");
}

/* VM;vcpuN;outer;...;leaf count (stack is innermost first). */
static void print_folded(const struct report *r)
{
	size_t i;
	char *p;

	for (i = 0; i < r->nr; i++) {
		const struct entry *e = &r->e[i];

		if (e->cpu == ALL_VCPUS)
			continue;
		printf("%s;vcpu%u;", r->p.h.vms[e->vm].name, e->cpu);
		while ((p = strrchr(e->stack, ';'))) {
			printf("%s;", p + 1);
			*p = '\0';
		}
		if (e->stack[0])
			printf("%s;", e->stack);
		printf("%s %llu\n", e->label, (unsigned long long)e->n);
	}
}

/* --sort KEYS: perf's keys, in the order given, each at most once. */
static int set_sort(const struct cli_cmd *cmd, void *ctx, const char *arg)
{
	struct report *r = ctx;
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned int k, j;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	r->nr_keys = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NR_KEYS; k++) {
			if (!strcmp(tok, sort_keys[k].name))
				break;
		}
		for (j = 0; k < NR_KEYS && j < r->nr_keys; j++) {
			if (r->keys[j] == (enum sort_key)k)
				break;
		}
		if (k == NR_KEYS)
			ret = cli_error(cmd,
					"unknown sort key '%s' (keys: comm, "
					"pid, dso, sym, srcline, cpu)",
					tok);
		else if (j < r->nr_keys)
			ret = cli_error(cmd, "sort key '%s' given twice", tok);
		else
			r->keys[r->nr_keys++] = (enum sort_key)k;
	}
	free(copy);
	if (!ret && !r->nr_keys)
		ret = cli_error(cmd, "--sort needs a key (comm, pid, dso, "
				     "sym, srcline, cpu)");
	return ret;
}

static int set_graph(const struct cli_cmd *cmd, void *ctx, const char *arg)
{
	static const char *const modes[] = {"callee", "caller", "none"};
	struct report *r                 = ctx;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (!strcmp(arg, modes[i])) {
			r->graph = (enum graph_mode)i;
			return 0;
		}
	}
	return cli_error(cmd, "-g takes callee, caller or none, not '%s'", arg);
}

static int set_image(const struct cli_cmd *cmd, void *ctx, const char *arg)
{
	struct report *r = ctx;
	const char *eq   = strchr(arg, '=');
	size_t len       = eq ? (size_t)(eq - arg) : 0;

	if (!eq || !len || !eq[1] || len >= sizeof(r->so.images[0].vm) ||
	    r->so.nr_images >= REC_IMAGES_MAX)
		return cli_error(cmd, "--image takes VM=PATH (at most %d)",
				 REC_IMAGES_MAX);
	memcpy(r->so.images[r->so.nr_images].vm, arg, len);
	r->so.images[r->so.nr_images].vm[len] = '\0';
	r->so.images[r->so.nr_images++].path  = eq + 1;
	return 0;
}

static const struct cli_opt report_opts[] = {
	CLI_STR('i', "input", "FILE", struct report, file,
		"the record file (default vpmu.rec; - reads stdin)"),
	CLI_FLAG(0, "stdio", struct report, stdio,
		 "plain text output (the only one; for perf users)"),
	CLI_FN('s', "sort", "KEYS", set_sort,
	       "columns, in order, from: comm (the guest\n"
	       "process), pid, dso (the file: a program or library,\n"
	       "[kernel.kallsyms], or the image), sym (function,\n"
	       "the default), srcline (source file:line), cpu\n"
	       "(the vCPU); e.g. comm,dso,sym"),
	CLI_FLAG('n', "show-nr-samples", struct report, show_samples,
		 "a SAMPLES column: the samples of each row (PERIODS\n"
		 "counts the periods they stand for)"),
	CLI_FLAG(0, "children", struct report, children,
		 "CHILDREN and SELF columns (perf report --children):\n"
		 "periods of a function anywhere on the call chains\n"
		 "and as the leaf; needs -s sym (the default)"),
	CLI_FN('g', "call-graph", "MODE", set_graph,
	       "with call chains: callee (the default: each\n"
	       "function's callers, innermost first), caller\n"
	       "(outermost first) or none"),
	CLI_FLAG(0, "folded", struct report, folded,
		 "'VM;vcpuN;outer;...;leaf count' lines for flame\n"
		 "graphs (full stacks with call chains)"),
	CLI_NUM(0, "min-pct", "P", struct report, min_pct, 0,
		"hide rows below P percent (default 0)"),
	CLI_NUM(0, "percent-limit", "P", struct report, min_pct, 0,
		"same as --min-pct (perf's name)"),
	CLI_STR(0, "symfs", "DIR", struct report, so.symfs,
		"look for images and the guest's programs under\n"
		"DIR (DIR/PATH; for a Linux guest, its root file\n"
		"system's tree on the host)"),
	CLI_FN(0, "image", "VM=PATH", set_image,
	       "symbols of VM (name, uuid or index) from PATH:\n"
	       "an ELF image, or a System.map for Linux guests\n"
	       "(repeatable)"),
	CLI_STR(0, "pprof", "OUT", struct report, pprof,
		"write a gzipped pprof profile to OUT instead (go tool pprof)"),
	{0},
};

static const struct cli_cmd report_cmd = {
	.name     = "report",
	.args     = "[FILE]",
	.summary  = "profile and call graphs of a record file",
	.opts     = report_opts,
	.operands = 1,
	.help     = "  The profile of the record FILE (from 'vpmu record'; "
		    "default\n"
		    "  vpmu.rec) per VM and vCPU, then for all vCPUs of each VM:\n"
		    "  share, samples and the key of the samples' IPs. Symbols "
		    "and\n"
		    "  source lines come from the image each VM booted (its path "
		    "and\n"
		    "  build-id are in the file; a different build-id is warned\n"
		    "  about). A file cut short (its recording was killed) is\n"
		    "  reported up to its last complete sample, with a warning.\n",
};

static int parse(int argc, char **argv, struct report *r)
{
	struct cli_rest rest;
	int ret;

	ret = cli_parse(&report_cmd, r, argc, argv, &rest);
	if (ret)
		return ret;
	if (rest.argc && r->file)
		ret = cli_error(&report_cmd, "one record file, please");
	else if (rest.argc)
		r->file = rest.argv[0];
	cli_rest_free(&rest);
	if (!r->file)
		r->file = "vpmu.rec"; /* what `vpmu record` writes */
	/* The call chains hold functions only: so must the rows. */
	if (!ret && r->children && (r->nr_keys != 1 || r->keys[0] != KEY_SYM))
		ret = cli_error(&report_cmd,
				"--children sorts by function only (-s sym)");
	return ret;
}

static void report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		free(r->e[i].label);
		free(r->e[i].stack);
	}
	free(r->e);
	rec_profile_free(&r->p);
}

int ops_cmd_report(int argc, char **argv)
{
	struct report r = {.keys = {KEY_SYM}, .nr_keys = 1};
	char err[512];
	int ret;

	ret = parse(argc, argv, &r);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	if (r.pprof)
		return pprof_from_record(r.file, r.pprof, r.so.symfs);
	ret = rec_profile_load(&r.p, r.file, &r.so, stderr, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vpmu report: %s\n", err);
		return 1;
	}
	/* Folded stacks name functions; the flat rows name the sort keys. */
	ret = build(&r, r.folded);
	if (ret) {
		fprintf(stderr, "vpmu report: out of memory\n");
		report_free(&r);
		return 1;
	}
	merge(&r);
	if (r.p.procs.dso_misses && !r.folded)
		fprintf(stderr,
			"vpmu report: %u guest file(s) without symbols%s\n",
			r.p.procs.dso_misses,
			r.so.symfs ? " under --symfs"
				   : ": give --symfs DIR, the guest's root "
				     "on the host");
	if (r.folded)
		print_folded(&r);
	else
		print_flat(&r);
	ret = fflush(stdout) ? 1 : 0;
	report_free(&r);
	return ret;
}
