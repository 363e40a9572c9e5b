// SPDX-License-Identifier: MIT
/*
 * cmd_top.c: `vpmu top`, a live profile of the chosen VMs: the same host
 * sampling contexts as `vpmu record`, drained and summarised every second
 * (the hottest guest functions per VM in the last interval, or since the
 * start once 'z' turned zeroing off). Keys mean what they mean in perf
 * top (d delay, e entries, z zeroing, h/? help, q quit); --stdio prints
 * plainly, without terminal control.
 */
#include "ops_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli_parse.h"
#include "pvpmu/abi.h"
#include "ctl_client.h"
#include "elf_symbols.h"
#include "guest_procs.h"

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

/* A row of a Linux guest's table: a process and a function. */
struct proc_hit {
	char label[160]; /* "comm  function" */
	uint64_t n;
};

#define PROC_ROWS_MAX 4096 /* rows per refresh; the rest: "[other]" */

struct top_vm {
	struct symtab st;
	struct hit *hits; /* per symbol (index), last: unknown */
	/* A guest that names its processes (pvpmu.ko): rows by process. */
	struct guest_procs procs;
	uint64_t task_gen;
	bool tasks_gone;
	size_t nr_samples;
	struct proc_hit *ph;
	size_t nr_ph;
	uint64_t total;   /* samples of this interval (the rate) */
	uint64_t shown;   /* samples the rows count: since zeroing */
	struct hit *view; /* hits sorted for display (hits stays by index) */
	uint64_t per_vcpu[VMM_CTL_SESSION_VCPUS]; /* samples per vCPU */
	struct ops_rate_win rate_base; /* counts at the last refresh */
};

/* Keys read from a terminal: raw (no echo, no line buffering). */
struct term {
	bool raw;
	struct termios saved;
};

struct top {
	struct ops_select sel; /* first: OPS_SELECT_ROWS */
	struct ops_session s;
	struct top_vm *vms;
	uint64_t freq, iterations, lines;
	double delay;
	uint64_t last_ns;  /* the last refresh (or the start of sampling) */
	bool by_name;      /* 's': sort by function name, not samples */
	bool per_vcpu;     /* 'v': samples of each vCPU too */
	bool accumulate;   /* 'z' toggles: no zeroing between refreshes */
	bool help;         /* 'h', '?' or an unmapped key: the keys' list */
	bool stdio;        /* --stdio: no screen clearing, no keys */
	bool print_hist;   /* 'P': the next refresh also to a file */
	FILE *out;         /* where a refresh is written (a memstream) */
	const char *symfs; /* a Linux guest's root on the host */
	struct term *tm;   /* the terminal keys come from (prompts) */
	int tfd;           /* the refresh timer ('d' re-arms it) */
};

/* The row of process and function (label), added if new. */
static struct proc_hit *proc_row(struct top_vm *v, const char *label)
{
	size_t i;

	for (i = 0; i < v->nr_ph; i++) {
		if (!strcmp(v->ph[i].label, label))
			return &v->ph[i];
	}
	if (v->nr_ph == PROC_ROWS_MAX)
		return &v->ph[PROC_ROWS_MAX]; /* "[other]" */
	snprintf(v->ph[v->nr_ph].label, sizeof(v->ph[0].label), "%s", label);
	v->ph[v->nr_ph].n = 0;
	return &v->ph[v->nr_ph++];
}

static void count(void *opaque, const struct ops_sample *smp)
{
	struct top *t       = opaque;
	struct top_vm *v    = &t->vms[smp->vm];
	const struct sym *s = symtab_find(&v->st, smp->ip);
	size_t i            = s ? (size_t)(s - v->st.syms) : v->st.nr;
	char label[sizeof(v->ph[0].label)], comm[32];
	struct rec_where w;

	if (v->procs.has_tasks) {
		guest_procs_where(&v->procs, 0, smp->pid, smp->tid, smp->ip,
				  v->nr_samples++, &v->st,
				  t->s.vms[smp->vm].e.image, &w);
		if (w.comm)
			snprintf(comm, sizeof(comm), "%s", w.comm);
		else
			snprintf(comm, sizeof(comm), ":%d", (int)w.pid);
		snprintf(label, sizeof(label), "%-15s  %s", comm,
			 w.sym ? w.sym->name : "[unknown]");
		proc_row(v, label)->n++;
		v->total++;
		v->shown++;
		if (smp->vcpu < VMM_CTL_SESSION_VCPUS)
			v->per_vcpu[smp->vcpu]++;
		return;
	}
	v->hits[i].n++;
	v->total++;
	v->shown++;
	if (smp->vcpu < VMM_CTL_SESSION_VCPUS)
		v->per_vcpu[smp->vcpu]++;
}

static int by_n(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

static const struct top_vm *sort_vm; /* by_sym's symbols (qsort) */

static const char *sym_name(const struct top_vm *v, int64_t sym)
{
	return (size_t)sym < v->st.nr ? v->st.syms[sym].name : "[unknown]";
}

static int by_sym(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (!x->n != !y->n) /* functions with samples first */
		return x->n ? -1 : 1;
	return strcmp(sym_name(sort_vm, x->sym), sym_name(sort_vm, y->sym));
}

/*
 * The rate VM (vm) achieved in the last (wall_s) seconds next to
 * the requested one, and below 90 % why (sample_rate.c).
 */
static void show_rate(struct top *t, unsigned int vm, double wall_s)
{
	const struct ops_vm *ov = &t->s.vms[vm];
	struct top_vm *v        = &t->vms[vm];
	struct ops_rate_win win;
	struct ops_rate rate;

	ops_rate_window(ov, v->total, &v->rate_base, &win);
	ops_rate_judge(
		&win, wall_s,
		ops_rate_requested(t->freq, 0, t->s.ev[0].code, ov->e.tsc_khz),
		&rate);
	if (!ov->gone)
		ops_rate_print(t->out, "  rate: ", "  warning: ", &win, &rate);
}

static int proc_by_n(const void *a, const void *b)
{
	const struct proc_hit *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

static int proc_by_name(const void *a, const void *b)
{
	const struct proc_hit *x = a, *y = b;

	return strcmp(x->label, y->label);
}

/* A Linux guest's rows: its processes and their functions. */
static void show_procs(struct top *t, struct top_vm *v)
{
	size_t i;

	qsort(v->ph, v->nr_ph, sizeof(*v->ph),
	      t->by_name ? proc_by_name : proc_by_n);
	fprintf(t->out, "  %7s %8s  %-15s  %s\n", "SHARE", "SAMPLES", "COMMAND",
		"FUNCTION");
	for (i = 0; i < v->nr_ph && i < t->lines; i++)
		fprintf(t->out, "  %6.2f%% %8llu  %s\n",
			100.0 * (double)v->ph[i].n / (double)v->shown,
			(unsigned long long)v->ph[i].n, v->ph[i].label);
	if (v->ph[PROC_ROWS_MAX].n)
		fprintf(t->out, "  %6.2f%% %8llu  [other]\n",
			100.0 * (double)v->ph[PROC_ROWS_MAX].n /
				(double)v->shown,
			(unsigned long long)v->ph[PROC_ROWS_MAX].n);
	if (t->accumulate)
		return;
	v->nr_ph               = 0;
	v->ph[PROC_ROWS_MAX].n = 0;
}

static void show_vm(struct top *t, unsigned int vm, double wall_s)
{
	struct top_vm *v = &t->vms[vm];
	size_t i, n = v->st.nr + 1;
	unsigned int c;

	fprintf(t->out, "\nVM %s (%s), %u vCPUs: %llu samples%s\n",
		t->s.vms[vm].e.name, t->s.vms[vm].e.uuid,
		t->s.vms[vm].e.nr_vcpus, (unsigned long long)v->shown,
		t->s.vms[vm].gone ? " (gone)" : "");
	show_rate(t, vm, wall_s);
	v->total = 0;
	for (i = 0; i < n; i++)
		v->view[i] = (struct hit){.sym = (int64_t)i, .n = v->hits[i].n};
	sort_vm = v;
	qsort(v->view, n, sizeof(*v->view), t->by_name ? by_sym : by_n);
	for (c = 0; t->per_vcpu && c < t->s.vms[vm].e.nr_vcpus; c++)
		fprintf(t->out, "  vCPU %u: %llu samples\n", c,
			(unsigned long long)v->per_vcpu[c]);
	if (v->procs.has_tasks && v->shown)
		show_procs(t, v);
	for (i = 0;
	     !v->procs.has_tasks && i < n && i < t->lines && v->view[i].n; i++)
		fprintf(t->out, "  %6.2f%% %8llu  %s\n",
			100.0 * (double)v->view[i].n / (double)v->shown,
			(unsigned long long)v->view[i].n,
			sym_name(v, v->view[i].sym));
	if (t->accumulate)
		return; /* 'z': the next refresh adds to these */
	memset(v->hits, 0, n * sizeof(*v->hits));
	memset(v->per_vcpu, 0, sizeof(v->per_vcpu));
	v->shown = 0;
}

static int put_task(void *opaque, const struct rec_task *t)
{
	struct top_vm *v = opaque;

	return guest_procs_add(&v->procs, t, v->nr_samples);
}

/* VM (vm)'s new process records, then its samples. */
static void drain_vm(struct top *t, unsigned int vm)
{
	struct top_vm *v = &t->vms[vm];
	struct ops_task_stats st;
	uint64_t lost;

	if (t->s.vms[vm].gone)
		return;
	if (!v->tasks_gone && ops_guest_tasks(&t->s, vm, &v->task_gen, put_task,
					      v, &st) == -ENOSYS)
		v->tasks_gone = true;
	ops_drain(&t->s, vm, count, t, &lost);
}

/* The keys, as perf top's 'h' lists its own. */
static void show_keys(const struct top *t)
{
	fprintf(t->out,
		"  keys, as in perf top:\n"
		"    d  refresh delay (now %.3g s)\n"
		"    e  entries (lines) per VM (now %llu)\n"
		"    z  toggle zeroing between refreshes (now %s)\n"
		"    P  print the next refresh to vpmu-top.hist.N\n"
		"    h ?  this list (again: hide it)\n"
		"    q  quit\n"
		"  and vpmu's: s sort by samples or by name, v samples per "
		"vCPU\n",
		t->delay, (unsigned long long)t->lines,
		t->accumulate ? "off" : "on");
}

/*
 * 'P', as perf top's: the refresh just shown into the first free
 * vpmu-top.hist.N of the working directory (perf writes perf.hist.N).
 */
static void save_hist(const char *text, size_t len)
{
	char name[32];
	int fd = -1, n;

	for (n = 0; fd < 0 && n < 1000; n++) {
		snprintf(name, sizeof(name), "vpmu-top.hist.%d", n);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		printf("P: cannot write %s: %s\n", name,
		       fd < 0 ? strerror(errno) : "short write");
	else
		printf("P: written to %s\n", name);
	if (fd >= 0)
		close(fd);
}

static void refresh(struct top *t, unsigned int iter)
{
	char *text = NULL;
	size_t len = 0;
	uint64_t now;
	unsigned int vm;
	double wall_s;

	for (vm = 0; vm < t->s.nr_vms; vm++)
		drain_vm(t, vm);
	now        = vpmu_monotonic_ns();
	wall_s     = (double)(now - t->last_ns) / 1e9;
	t->last_ns = now;
	/* Into memory first: 'P' writes the very text shown to a file. */
	t->out = open_memstream(&text, &len);
	if (!t->out)
		t->out = stdout;
	if (t->stdio)
		fputs(iter > 1 ? "\n" : "", stdout); /* refreshes in a row */
	else if (isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	fprintf(t->out,
		"vpmu top: %s at %llu Hz, refresh %u, %u VM%s, sorted by %s, "
		"%llu entries, %s%s\n",
		t->s.ev[0].name, (unsigned long long)t->freq, iter,
		t->s.nr_live, t->s.nr_live == 1 ? "" : "s",
		t->by_name ? "name" : "samples", (unsigned long long)t->lines,
		t->accumulate ? "accumulating" : "zeroing",
		t->tm && t->tm->raw ? "  (q quit, h help)" : "");
	if (t->help)
		show_keys(t);
	for (vm = 0; vm < t->s.nr_vms; vm++)
		show_vm(t, vm, wall_s);
	if (t->out != stdout && !fclose(t->out)) {
		fwrite(text, 1, len, stdout);
		if (t->print_hist)
			save_hist(text, len);
	}
	t->print_hist = false;
	t->out        = stdout;
	free(text);
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
	       "or hv_run_ns; modifier :h accepted)"),
	CLI_UINT('F', "freq", "HZ", struct top, freq, 1,
		 "samples per second of guest run time (1000)"),
	CLI_NUM('d', "delay", "SECONDS", struct top, delay, 1,
		"refresh every SECONDS (default 1)"),
	CLI_UINT('n', "iterations", "N", struct top, iterations, 1,
		 "stop after N refreshes (default: until Ctrl-C)"),
	CLI_UINT(0, "lines", "N", struct top, lines, 1,
		 "functions shown per VM (default 10)"),
	CLI_FLAG(0, "stdio", struct top, stdio,
		 "print each refresh after the last, without\n"
		 "terminal control (no clearing, no keys)"),
	CLI_STR(0, "symfs", "DIR", struct top, symfs,
		"a Linux guest's programs under DIR (its root\n"
		"file system's tree on the host)"),
	{0},
};

static const struct cli_cmd top_cmd = {
	.name    = "top",
	.summary = "live profile: the hottest guest functions of each VM",
	.opts    = top_opts,
	.help    = "  Samples every vCPU of the chosen VMs like 'vpmu record' "
		   "and shows,\n"
		   "  every refresh, the hottest guest functions of the last "
		   "interval;\n"
		   "  for a Linux guest that names its processes (pvpmu.ko), "
		   "the\n"
		   "  hottest process and function pairs.\n"
		   "  Runs until -n refreshes, Ctrl-C or, on a terminal, the "
		   "key q.\n"
		   "  Keys, as in perf top: d asks for the refresh delay, e for "
		   "the\n"
		   "  entries per VM, z toggles zeroing between refreshes (off: "
		   "counts\n"
		   "  since then), P writes the next refresh to "
		   "vpmu-top.hist.N, h or ?\n"
		   "  (or any other key) lists the keys, q quits;\n"
		   "  and s sorts by samples or by name, v shows the samples of "
		   "each\n"
		   "  vCPU. --stdio prints every refresh below the last, with no "
		   "keys.\n"
		   "  Between refreshes it sleeps (no polling).\n",
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

	if (t->s.ev[0].code == PVPMU_EV_HV_RUN_NS)
		return 1000000000ULL / t->freq;
	if (t->s.ev[0].code == PVPMU_EV_HV_GUEST_CYCLES && khz)
		return khz * 1000ULL / t->freq;
	fprintf(stderr, "vpmu top: sample on hv_run_ns or hv_guest_cycles\n");
	return 0;
}

static int setup(struct top *t)
{
	uint64_t period = period_of(t);
	unsigned int i;
	int ret;

	t->vms = calloc(t->s.nr_vms, sizeof(*t->vms));
	if (!t->vms || !period)
		return -EINVAL;
	for (i = 0; i < t->s.nr_vms; i++) {
		symtab_load(&t->vms[i].st, t->s.vms[i].e.image);
		t->vms[i].hits =
			calloc(t->vms[i].st.nr + 1, sizeof(struct hit));
		t->vms[i].view =
			calloc(t->vms[i].st.nr + 1, sizeof(struct hit));
		t->vms[i].ph = calloc(PROC_ROWS_MAX + 1, sizeof(*t->vms[i].ph));
		t->vms[i].procs.symfs = t->symfs;
		if (!t->vms[i].hits || !t->vms[i].view || !t->vms[i].ph)
			return -ENOMEM;
	}
	ret = ops_start_sampling(&t->s, period, 256 << 10);
	/*
	 * A first drain right away: each vCPU's run time from here on is
	 * what the first refresh's rate is judged against (ops_thr.run0).
	 */
	for (i = 0; !ret && i < t->s.nr_vms; i++)
		drain_vm(t, i);
	t->last_ns = vpmu_monotonic_ns();
	return ret;
}

static void term_raw(struct term *tm)
{
	struct termios raw;

	tm->raw = isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &tm->saved);
	if (!tm->raw)
		return;
	raw = tm->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* ISIG: Ctrl-C works */
	raw.c_cc[VMIN]  = 1;
	raw.c_cc[VTIME] = 0;
	tm->raw         = !tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
}

static void term_restore(struct term *tm)
{
	if (tm->raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tm->saved);
	tm->raw = false;
}

/*
 * perf top's prompt: (what), then a line read with the terminal back in
 * its own mode (echo, editing). The number, or -1 if it is none.
 */
static double prompt(struct top *t, const char *what)
{
	char line[32], *end;
	ssize_t n;
	double v;

	/* TCSANOW: what was typed after the key is the answer's start. */
	if (t->tm->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->tm->saved);
	printf("\n%s: ", what);
	fflush(stdout);
	n = read(STDIN_FILENO, line, sizeof(line) - 1);
	term_raw(t->tm);
	line[n > 0 ? n : 0] = '\0';
	v                   = strtod(line, &end);
	return end != line && strspn(end, " \r\n") == strlen(end) ? v : -1;
}

/* 'd': refresh every SECONDS from now on (the timer re-armed). */
static void set_delay(struct top *t, double sec)
{
	uint64_t ns = (uint64_t)(sec * 1e9);
	struct itimerspec its;

	if (!(sec >= 0.01 && sec <= 3600))
		return; /* as perf's prompt: a bad answer changes nothing */
	t->delay        = sec;
	its.it_interval = (struct timespec){(time_t)(ns / 1000000000ULL),
					    (long)(ns % 1000000000ULL)};
	its.it_value    = its.it_interval;
	timerfd_settime(t->tfd, 0, &its, NULL);
}

/* One key, as perf top reads them: true to quit. */
static bool key(struct top *t, char c)
{
	double v;

	switch (c) {
	case 'q':
	case 'Q':
		return true;
	case 'd':
		set_delay(t, prompt(t, "Enter display delay (seconds)"));
		return false;
	case 'e':
		v = prompt(t, "Enter display entries (lines)");
		if (v >= 1 && v <= 100000)
			t->lines = (uint64_t)v;
		return false;
	case 'z':
		t->accumulate = !t->accumulate;
		return false;
	case 'P':
		t->print_hist = true;
		return false;
	case 's':
		t->by_name = !t->by_name;
		return false;
	case 'v':
		t->per_vcpu = !t->per_vcpu;
		return false;
	case 'h':
	case '?':
		t->help = !t->help;
		return false;
	default: /* perf shows its keys for any other */
		t->help = true;
		return false;
	}
}

/*
 * Sleep (ops_wait: signals unblocked only there) until the refresh timer
 * (a timerfd), a key, a signal or a VM's socket closing: no wake-up
 * between refreshes otherwise. 1: refresh; 0: quit.
 */
static int wait_refresh(struct top *t, struct ops_wait *w)
{
	uint64_t ticks;
	char c;

	for (;;) {
		if (stop_flag || !t->s.nr_live)
			return 0;
		if (!ops_wait(w, &t->s, UINT64_MAX))
			continue; /* a signal or a VM's end: checked above */
		if (w->p[1].revents & POLLIN) {
			if (read(STDIN_FILENO, &c, 1) == 1 && key(t, c))
				return 0;
			return 1; /* a key refreshes at once */
		}
		if (w->p[1].revents & (POLLHUP | POLLERR | POLLNVAL))
			w->p[1].fd = -1;
		if (w->p[0].revents & POLLIN) {
			if (read(w->p[0].fd, &ticks, sizeof(ticks)) < 0)
				ticks = 0;
			return 1;
		}
	}
}

int ops_cmd_top(int argc, char **argv)
{
	struct top t        = {.s.prog = "vpmu top", .out = stdout};
	struct sigaction sa = {.sa_handler = on_signal};
	struct itimerspec its;
	static const int sigs[] = {SIGINT, SIGTERM, 0};
	struct ops_wait w       = {0};
	struct term tm          = {0};
	unsigned int iter, i;
	uint64_t ns;
	int ret, tfd;

	ret = parse(argc, argv, &t);
	if (ret)
		return ret == CLI_HELP ? 0 : 1;
	if (ops_open(&t.s, &t.sel))
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = setup(&t) ? 1 : 0;
	ns  = (uint64_t)(t.delay * 1e9);
	its = (struct itimerspec){
		.it_interval = {(time_t)(ns / 1000000000ULL),
				(long)(ns % 1000000000ULL)},
		.it_value    = {(time_t)(ns / 1000000000ULL),
				(long)(ns % 1000000000ULL)},
	};
	tfd   = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	t.tfd = tfd;
	t.tm  = &tm;
	if (!ret && (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL))) {
		fprintf(stderr, "vpmu top: timerfd: %s\n", strerror(errno));
		ret = 1;
	}
	if (!ret && ops_wait_begin(&w, &t.s, 2, sigs)) {
		fprintf(stderr, "vpmu top: out of memory\n");
		ret = 1;
	}
	if (!ret) {
		w.p[0] = (struct pollfd){.fd = tfd, .events = POLLIN};
		if (!t.stdio)
			term_raw(&tm); /* keys only from a terminal */
		w.p[1] = (struct pollfd){.fd     = tm.raw ? STDIN_FILENO : -1,
					 .events = POLLIN};
	}
	for (iter = 1; !ret && wait_refresh(&t, &w); iter++) {
		refresh(&t, iter);
		if (t.iterations && iter >= t.iterations)
			break;
	}
	term_restore(&tm);
	if (w.p)
		ops_wait_end(&w);
	if (tfd >= 0)
		close(tfd);
	for (i = 0; t.vms && i < t.s.nr_vms; i++) {
		symtab_free(&t.vms[i].st);
		free(t.vms[i].hits);
		free(t.vms[i].view);
		free(t.vms[i].ph);
		guest_procs_free(&t.vms[i].procs);
	}
	free(t.vms);
	ops_close(&t.s);
	return ret;
}
