// SPDX-License-Identifier: MIT
/*
 * cmd_top.c: `vpmu top`, a live profile of the chosen VMs: the same host
 * sampling contexts as `vpmu record`, drained and summarised every second
 * (the hottest guest functions per VM in the last interval).
 */
#include "vpmu_commands.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_parse.h"
#include "ctl_client.h"
#include "elf_symbols.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct hit {
	int64_t sym;
	uint64_t n;
};

struct top_vm {
	struct symtab st;
	struct hit *hits; /* per symbol (index), last: unknown */
	uint64_t total;
};

struct top {
	struct ops_select sel; /* first: OPS_SELECT_ROWS */
	struct ops_session s;
	struct top_vm *vms;
	uint64_t freq, iterations, lines;
	double delay;
};

static void count(void *opaque, const struct ops_sample *smp)
{
	struct top *t       = opaque;
	struct top_vm *v    = &t->vms[smp->vm];
	const struct sym *s = symtab_find(&v->st, smp->ip);
	size_t i            = s ? (size_t)(s - v->st.syms) : v->st.nr;

	v->hits[i].n++;
	v->total++;
}

static int by_n(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

static void show_vm(struct top *t, unsigned int vm)
{
	struct top_vm *v = &t->vms[vm];
	size_t i, n = v->st.nr + 1;

	printf("\nVM %s (%s), %u vCPUs: %llu samples%s\n", t->s.vms[vm].e.name,
	       t->s.vms[vm].e.uuid, t->s.vms[vm].e.nr_vcpus,
	       (unsigned long long)v->total,
	       t->s.vms[vm].gone ? " (gone)" : "");
	for (i = 0; i < n; i++)
		v->hits[i].sym = (int64_t)i;
	qsort(v->hits, n, sizeof(*v->hits), by_n);
	for (i = 0; i < n && i < t->lines && v->hits[i].n; i++)
		printf("  %6.2f%% %8llu  %s\n",
		       100.0 * (double)v->hits[i].n / (double)v->total,
		       (unsigned long long)v->hits[i].n,
		       (size_t)v->hits[i].sym < v->st.nr
			       ? v->st.syms[v->hits[i].sym].name
			       : "[unknown]");
	memset(v->hits, 0, n * sizeof(*v->hits));
	v->total = 0;
}

static void refresh(struct top *t, unsigned int iter)
{
	uint64_t lost;
	unsigned int vm;

	for (vm = 0; vm < t->s.nr_vms; vm++) {
		if (!t->s.vms[vm].gone)
			ops_drain(&t->s, vm, count, t, &lost);
	}
	if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	printf("vpmu top: %s at %llu Hz, refresh %u, %u VM%s\n",
	       t->s.ev[0].name, (unsigned long long)t->freq, iter, t->s.nr_live,
	       t->s.nr_live == 1 ? "" : "s");
	for (vm = 0; vm < t->s.nr_vms; vm++)
		show_vm(t, vm);
	fflush(stdout);
}

static int add_events(const struct cli_cmd *cmd, void *ctx, const char *v)
{
	struct top *t = ctx;

	(void)cmd;
	return ops_parse_events(&t->s, v);
}

static const struct cli_opt top_opts[] = {
	OPS_SELECT_ROWS,
	CLI_FN('e', "event", "EVENT", add_events,
	       "sample on EVENT (hv_guest_cycles, the default,\n"
	       "or hv_run_ns)"),
	CLI_UINT('F', "freq", "HZ", struct top, freq, 1,
		 "samples per second of guest run time (1000)"),
	CLI_NUM('d', "delay", "SECONDS", struct top, delay, 1,
		"refresh every SECONDS (default 1)"),
	CLI_UINT('n', "iterations", "N", struct top, iterations, 1,
		 "stop after N refreshes (default: until Ctrl-C)"),
	CLI_UINT(0, "lines", "N", struct top, lines, 1,
		 "functions shown per VM (default 10)"),
	{0},
};

static const struct cli_cmd top_cmd = {
	.name    = "top",
	.summary = "live profile: the hottest guest functions of each VM",
	.opts    = top_opts,
	.help    = "  Samples every vCPU of the chosen VMs like 'vpmu record' "
		   "and shows,\n"
		   "  every refresh, the hottest guest functions of the last "
		   "interval.\n",
};

static int parse(int argc, char **argv, struct top *t)
{
	struct cli_rest rest;
	int r;

	t->freq  = 1000;
	t->lines = 10;
	t->delay = 1.0;
	r        = cli_parse(&top_cmd, t, argc, argv, &rest);
	if (r)
		return r;
	cli_rest_free(&rest);
	return t->s.nr_ev ? 0 : ops_parse_events(&t->s, "hv_guest_cycles");
}

static uint64_t period_of(struct top *t)
{
	uint64_t khz = t->s.vms[0].e.tsc_khz;

	if (!strcmp(t->s.ev[0].name, "hv_run_ns"))
		return 1000000000ULL / t->freq;
	if (!strcmp(t->s.ev[0].name, "hv_guest_cycles") && khz)
		return khz * 1000ULL / t->freq;
	fprintf(stderr, "vpmu top: sample on hv_run_ns or hv_guest_cycles\n");
	return 0;
}

static int setup(struct top *t)
{
	uint64_t period = period_of(t);
	unsigned int i;

	t->vms = calloc(t->s.nr_vms, sizeof(*t->vms));
	if (!t->vms || !period)
		return -EINVAL;
	for (i = 0; i < t->s.nr_vms; i++) {
		symtab_load(&t->vms[i].st, t->s.vms[i].e.image);
		t->vms[i].hits =
			calloc(t->vms[i].st.nr + 1, sizeof(struct hit));
		if (!t->vms[i].hits)
			return -ENOMEM;
	}
	return ops_start_sampling(&t->s, period, 256 << 10);
}

int vmm_cmd_top(int argc, char **argv)
{
	struct top t        = {.s.prog = "vpmu top"};
	struct sigaction sa = {.sa_handler = on_signal};
	unsigned int iter, i;
	uint64_t next;
	int ret;

	ret = parse(argc, argv, &t);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	if (ops_open(&t.s, &t.sel))
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret  = setup(&t) ? 1 : 0;
	next = vpmu_monotonic_ns();
	for (iter = 1; !ret && !stop_flag && t.s.nr_live; iter++) {
		next += (uint64_t)(t.delay * 1e9);
		while (!stop_flag && vpmu_monotonic_ns() < next) {
			ops_check_alive(&t.s);
			usleep(10000);
		}
		refresh(&t, iter);
		if (t.iterations && iter >= t.iterations)
			break;
	}
	for (i = 0; t.vms && i < t.s.nr_vms; i++) {
		symtab_free(&t.vms[i].st);
		free(t.vms[i].hits);
	}
	free(t.vms);
	ops_close(&t.s);
	return ret;
}
