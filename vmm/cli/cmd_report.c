// SPDX-License-Identifier: MIT
/*
 * cmd_report.c: `vpmu report FILE`, a flat profile per VM and vCPU of a
 * record file, with guest IPs resolved to functions of the image each VM
 * booted (its path is in the file's header), or folded stacks for flame
 * graphs ("VM;vcpuN;function count" lines).
 */
#include "vpmu_commands.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli_parse.h"
#include "record_file.h"
#include "elf_symbols.h"

#define ALL_VCPUS UINT32_MAX /* the per-VM total, after its vCPUs */

struct key {
	uint32_t vm, cpu;
	int64_t sym; /* index in the VM's symtab, -1 unknown */
	uint64_t n;  /* samples, after merging */
};

struct report {
	bool folded; /* first: options (the parser's ctx is the report) */
	double min_pct;
	struct rec_header h;
	struct symtab *st;
	unsigned int nr_st;
	struct key *keys;
	size_t nr, cap;
};

static int add(void *opaque, const struct rec_sample *s)
{
	struct report *r = opaque;
	const struct sym *sym;
	struct key *nk;

	if (r->nr + 2 > r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		nk     = realloc(r->keys, r->cap * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		r->keys = nk;
	}
	sym              = symtab_find(&r->st[s->vm], s->ip);
	r->keys[r->nr++] = (struct key){
		.vm  = s->vm,
		.cpu = s->cpu,
		.sym = sym ? sym - r->st[s->vm].syms : -1,
		.n   = 1,
	};
	/* Counted once more in its VM's all-vCPU profile. */
	r->keys[r->nr]     = r->keys[r->nr - 1];
	r->keys[r->nr].cpu = ALL_VCPUS;
	r->nr++;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->sym < y->sym ? -1 : x->sym > y->sym;
}

static int by_count(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->vm != y->vm || x->cpu != y->cpu)
		return by_key(a, b);
	return x->n > y->n ? -1 : x->n < y->n;
}

/* Sort, merge equal keys, order each (vm, cpu) by count. */
static void merge(struct report *r)
{
	size_t i, out = 0;

	if (!r->nr)
		return;
	qsort(r->keys, r->nr, sizeof(*r->keys), by_key);
	for (i = 0; i < r->nr; i++) {
		if (out && !by_key(&r->keys[out - 1], &r->keys[i]))
			r->keys[out - 1].n++;
		else
			r->keys[out++] = r->keys[i];
	}
	r->nr = out;
	qsort(r->keys, r->nr, sizeof(*r->keys), by_count);
}

static const char *name_of(const struct report *r, const struct key *k)
{
	return k->sym < 0 ? "[unknown]" : r->st[k->vm].syms[k->sym].name;
}

static void print_flat(const struct report *r)
{
	size_t i = 0, j;
	uint64_t total;

	printf("# event %s, period %llu%s, %u VM(s)\n", r->h.event,
	       (unsigned long long)r->h.period, r->h.freq ? " (from -F)" : "",
	       r->h.nr_vms);
	while (i < r->nr) {
		const struct key *g = &r->keys[i];

		for (j = i, total = 0; j < r->nr && r->keys[j].vm == g->vm &&
				       r->keys[j].cpu == g->cpu;
		     j++)
			total += r->keys[j].n;
		if (g->cpu == ALL_VCPUS)
			printf("\n# VM %s (%s) all vCPUs: %llu samples\n",
			       r->h.vms[g->vm].name, r->h.vms[g->vm].uuid,
			       (unsigned long long)total);
		else
			printf("\n# VM %s (%s) vCPU %u: %llu samples, image "
			       "%s\n",
			       r->h.vms[g->vm].name, r->h.vms[g->vm].uuid,
			       g->cpu, (unsigned long long)total,
			       r->h.vms[g->vm].image);
		printf("%8s %10s  %s\n", "OVERHEAD", "SAMPLES", "FUNCTION");
		for (; i < j; i++) {
			double pct =
				100.0 * (double)r->keys[i].n / (double)total;

			if (pct >= r->min_pct)
				printf("%7.2f%% %10llu  %s\n", pct,
				       (unsigned long long)r->keys[i].n,
				       name_of(r, &r->keys[i]));
		}
	}
	if (!r->nr)
		printf("\n(no samples)\n");
}

static void print_folded(const struct report *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++) {
		if (r->keys[i].cpu != ALL_VCPUS)
			printf("%s;vcpu%u;%s %llu\n",
			       r->h.vms[r->keys[i].vm].name, r->keys[i].cpu,
			       name_of(r, &r->keys[i]),
			       (unsigned long long)r->keys[i].n);
	}
}

/* Symbols of every VM's image; a missing image is one warning. */
static int load_symbols(struct report *r)
{
	unsigned int i;
	int ret;

	r->st = calloc(r->h.nr_vms, sizeof(*r->st));
	if (!r->st)
		return -ENOMEM;
	r->nr_st = r->h.nr_vms;
	for (i = 0; i < r->h.nr_vms; i++) {
		ret = symtab_load(&r->st[i], r->h.vms[i].image);
		if (ret)
			fprintf(stderr,
				"vpmu report: VM %s: no symbols from %s (%s): "
				"IPs show as [unknown]\n",
				r->h.vms[i].name, r->h.vms[i].image,
				strerror(-ret));
	}
	return 0;
}

static const struct cli_opt report_opts[] = {
	CLI_FLAG(0, "folded", struct report, folded,
		 "'VM;vcpuN;function count' lines for flame graphs"),
	CLI_NUM(0, "min-pct", "P", struct report, min_pct, 0,
		"hide functions below P percent (default 0)"),
	{0},
};

static const struct cli_cmd report_cmd = {
	.name     = "report",
	.args     = "FILE",
	.summary  = "flat profile of a record file per VM and vCPU",
	.opts     = report_opts,
	.operands = 1,
	.help = "  Samples, share and guest function of the record FILE (from "
		"'vpmu\n"
		"  record'), per VM and vCPU, then for all vCPUs of each VM; "
		"functions\n"
		"  from the .symtab of the image the VM booted ([unknown] when "
		"no\n"
		"  symbol covers the IP).\n",
};

static int parse(int argc, char **argv, struct report *r, const char **file)
{
	struct cli_rest rest;
	int ret;

	ret = cli_parse(&report_cmd, r, argc, argv, &rest);
	if (ret)
		return ret;
	*file = rest.argc ? rest.argv[0] : NULL;
	cli_rest_free(&rest);
	if (*file)
		return 0;
	return cli_error(&report_cmd, "which record file?");
}

int vmm_cmd_report(int argc, char **argv)
{
	struct report r  = {0};
	const char *file = NULL;
	char err[512];
	unsigned int i;
	int ret;

	ret = parse(argc, argv, &r, &file);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	/* Header first (for the images), then the samples. */
	ret = rec_read(file, &r.h, NULL, NULL, err, sizeof(err));
	if (!ret) {
		ret = load_symbols(&r);
		rec_header_free(&r.h);
	}
	if (!ret)
		ret = rec_read(file, &r.h, add, &r, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vpmu report: %s\n", err);
		ret = 1;
	} else {
		merge(&r);
		if (r.folded)
			print_folded(&r);
		else
			print_flat(&r);
	}
	for (i = 0; i < r.nr_st; i++)
		symtab_free(&r.st[i]);
	free(r.st);
	free(r.keys);
	rec_header_free(&r.h);
	return ret;
}
