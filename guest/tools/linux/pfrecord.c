// SPDX-License-Identifier: MIT
/*
 * pfrecord: sample a Linux program through the paravirtual perfmon2
 * interface (libpvpmu over pvpmu.ko) and print a flat profile by function.
 *
 *   pfrecord [-o FILE] [-c PERIOD | -F HZ] [-e EVENT] -- PROGRAM [ARGS...]
 *
 * A per-thread context (spec 3.1.7) with the default sampling format
 * (spec 3.6) is loaded on a child that waits on a pipe until monitoring is
 * started, then becomes PROGRAM. PMC0 counts EVENT and PMD0 overflows
 * every PERIOD events (written as -PERIOD, spec 3.4.1), with overflow
 * notification. The buffer is mapped read-only (pfm_smpl_buf()); each
 * buffer-full overflow message (read() after poll(), pfm_read_msg()) is
 * answered by parsing the buffer and PFM_RESTART. IPs are resolved
 * against the .symtab of PROGRAM's ELF file (a non-PIE executable; other
 * IPs are listed as [kernel] or [unknown]).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

#include "tool.h"

#define DEFAULT_EV     "hv_guest_cycles"
#define DEFAULT_PERIOD 1000000ULL
#define BUF_SIZE       65536
#define POLL_NS        100000000ULL /* 100 ms between child checks */
#define KERNEL_IP      0xffff800000000000ULL

static const char usage[] =
	"Usage: pfrecord [-o FILE] [-c PERIOD | -F HZ] [-e EVENT] -- PROGRAM "
	"[ARGS...]\n"
	"\n"
	"Run PROGRAM, sample it with the vpmu virtual PMU through the\n"
	"paravirtual perfmon2 interface (/dev/pvpmu, module pvpmu.ko), and\n"
	"print a flat profile by function (PROGRAM's ELF .symtab).\n"
	"\n"
	"  -e EVENT  sampling event (default " DEFAULT_EV "); `pfinfo`\n"
	"            lists them\n"
	"  -c PERIOD one sample every PERIOD events (default 1000000)\n"
	"  -F HZ     about HZ samples a second of guest cycles (PERIOD from\n"
	"            the cpu MHz of /proc/cpuinfo)\n"
	"  -o FILE   also write the raw samples, one line each:\n"
	"            ip pid tid cpu weight\n"
	"  -h        this help\n"
	"\n"
	"Exit status: PROGRAM's, or 1 when recording failed.\n";

struct func {
	pvpmu_u64 addr, size;
	const char *name;
	pvpmu_u64 n;
};

struct rec {
	int fd;
	FILE *raw;
	const void *buf;
	pvpmu_u64 size;
	pvpmu_u64 *ips, *weights;
	size_t nr, cap;
	pvpmu_u64 msgs;
	int ended; /* PFM_MSG_END read: the thread's last switch is done */
};

static int die(const char *what, int err)
{
	return tool_die("pfrecord", what, err);
}

/* No body: PMC0's reg_smpl_pmds is empty. */
static pvpmu_u64 no_body(void *opaque, pvpmu_u16 set, pvpmu_u16 pmd)
{
	(void)opaque;
	(void)set;
	(void)pmd;
	return 0;
}

static int keep(struct rec *r, const struct pvpmu_smpl *s)
{
	pvpmu_u64 *ips, *ws;

	if (r->nr == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		ips    = realloc(r->ips, r->cap * sizeof(*ips));
		if (ips)
			r->ips = ips;
		ws = ips ? realloc(r->weights, r->cap * sizeof(*ws)) : 0;
		if (!ws)
			return -PVPMU_ENOMEM;
		r->weights = ws;
	}
	r->ips[r->nr]     = s->entry.ip;
	r->weights[r->nr] = 1 + (pvpmu_u64)s->entry.nr_missed;
	r->nr++;
	if (r->raw)
		fprintf(r->raw, "0x%" PRIx64 " %d %d %u %u\n",
			(uint64_t)s->entry.ip, s->entry.pid, s->entry.tid,
			s->entry.cpu, 1U + s->entry.nr_missed);
	return 0;
}

/* Add the samples of the (stable) buffer. */
static int parse(struct rec *r)
{
	struct pvpmu_smpl_iter it;
	struct pvpmu_smpl s;
	int ret;

	ret = pvpmu_smpl_iter_init(&it, r->buf, r->size, no_body, 0);
	while (!ret && (ret = pvpmu_smpl_iter_next(&it, &s)) == 1)
		ret = keep(r, &s);
	return ret < 0 ? die("sample buffer", ret) : 0;
}

/* Consume the queued messages: parse each full buffer, restart. */
static int drain(struct rec *r, pvpmu_u64 timeout_ns)
{
	pfm_msg_t msg;
	int ret;

	while ((ret = pfm_read_msg(r->fd, &msg, timeout_ns)) == 0) {
		timeout_ns = 0;
		r->msgs++;
		if (msg.msg_type == PFM_MSG_END)
			r->ended = 1;
		if (msg.msg_type != PFM_MSG_OVFL)
			continue;
		if (parse(r))
			return 1;
		/*
		 * EBUSY: the monitored thread exited after this notification
		 * and the context is unloaded (spec 3.3.6); nothing is left
		 * to restart, and PFM_MSG_END follows.
		 */
		ret = pfm_restart(r->fd);
		if (ret && ret != -PVPMU_EBUSY)
			return die("PFM_RESTART", ret);
	}
	if (ret == -PVPMU_EAGAIN || ret == -PVPMU_ETIMEDOUT)
		return 0;
	return die("read", ret);
}

static int setup(struct rec *r, const char *event, pvpmu_u64 period, pid_t pid)
{
	static const pvpmu_u8 uuid[16] = PFM_DEFAULT_SMPL_UUID;
	struct {
		pfarg_ctx_t ctx;
		pfm_default_smpl_arg_t arg;
	} c               = {.arg = {.buf_size = BUF_SIZE}};
	pfarg_pmc_t pmc   = {.reg_num = 0, .reg_flags = PFM_REGFL_OVFL_NOTIFY};
	pfarg_pmd_t pmd   = {.reg_num         = 0,
			     .reg_value       = -period,
			     .reg_short_reset = -period,
			     .reg_long_reset  = -period};
	pfarg_load_t load = {.load_pid = (pvpmu_u32)pid};
	int ret;

	memcpy(c.ctx.ctx_smpl_buf_id, uuid, sizeof(uuid));
	ret = pvpmu_event_encode(event, &pmc.reg_value, 0);
	if (ret) {
		fprintf(stderr, "pfrecord: event '%s': %s\n", event,
			pvpmu_strerror(ret));
		return 1;
	}
	ret = pfm_create_context(&c.ctx, &c.arg, sizeof(c.arg));
	if (ret)
		return die("PFM_CREATE_CONTEXT (is pvpmu.ko loaded?)", ret);
	r->fd = c.ctx.ctx_fd;
	ret   = pfm_write_pmcs(r->fd, &pmc, 1);
	if (ret)
		return die("PFM_WRITE_PMCS", ret);
	ret = pfm_write_pmds(r->fd, &pmd, 1);
	if (ret)
		return die("PFM_WRITE_PMDS", ret);
	ret = pfm_smpl_buf(r->fd, &r->buf, &r->size);
	if (ret)
		return die("sampling buffer", ret);
	ret = pfm_load_context(r->fd, &load);
	if (ret)
		return die("PFM_LOAD_CONTEXT", ret);
	ret = pfm_start(r->fd, 0);
	return ret ? die("PFM_START", ret) : 0;
}

/* PROGRAM's file: as given when it has a '/', else found in PATH. */
static char *find_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096], *dirs, *save = 0, *d;

	if (strchr(prog, '/'))
		return strdup(prog);
	dirs = strdup(path ? path : "/bin:/usr/bin");
	for (d = dirs ? strtok_r(dirs, ":", &save) : 0; d;
	     d = strtok_r(0, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", d, prog);
		if (access(buf, X_OK) == 0) {
			free(dirs);
			return strdup(buf);
		}
	}
	free(dirs);
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The STT_FUNC symbols of an ELF64 file's .symtab, sorted by address, in
 * (*out). Returns their number, 0 when there are none (stripped, not
 * ELF64); (*img) keeps the names.
 */
static size_t read_syms(const char *file, struct func **out, char **img)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	struct func *f = 0;
	size_t len = 0, n = 0, i, j;
	struct stat st;
	FILE *fp = fopen(file, "rb");
	char *p  = 0;

	if (fp && fstat(fileno(fp), &st) == 0 && st.st_size > 0 &&
	    (p = malloc((size_t)st.st_size)))
		len = fread(p, 1, (size_t)st.st_size, fp);
	if (fp)
		fclose(fp);
	*img = p;
	eh   = (const Elf64_Ehdr *)p;
	if (!p || len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff > len ||
	    eh->e_shentsize != sizeof(*sh) ||
	    (len - eh->e_shoff) / sizeof(*sh) < eh->e_shnum)
		return 0;
	sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	for (i = 0; i < eh->e_shnum && !f; i++) {
		const Elf64_Shdr *str = &sh[sh[i].sh_link % eh->e_shnum];
		const Elf64_Sym *sym = (const Elf64_Sym *)(p + sh[i].sh_offset);
		size_t nr            = sh[i].sh_size / sizeof(*sym);

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_offset > len ||
		    (len - sh[i].sh_offset) / sizeof(*sym) < nr ||
		    str->sh_offset > len || len - str->sh_offset < str->sh_size)
			continue;
		f = calloc(nr ? nr : 1, sizeof(*f));
		for (j = 0; f && j < nr; j++) {
			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC ||
			    !sym[j].st_value || sym[j].st_name >= str->sh_size)
				continue;
			f[n++] = (struct func){.addr = sym[j].st_value,
					       .size = sym[j].st_size,
					       .name = p + str->sh_offset +
						       sym[j].st_name};
		}
	}
	if (n)
		qsort(f, n, sizeof(*f), by_addr);
	*out = f;
	return n;
}

static struct func *lookup(struct func *f, size_t n, pvpmu_u64 ip)
{
	size_t lo = 0, hi = n, mid;

	if (!n || ip < f[0].addr)
		return 0;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (f[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return ip - f[lo].addr < (f[lo].size ? f[lo].size : 1) ? &f[lo] : 0;
}

static int by_count(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->n > y->n ? -1 : x->n < y->n;
}

static void report(struct rec *r, const char *prog, pvpmu_u64 period,
		   const char *event)
{
	char *img = 0, *file = find_program(prog);
	struct func *f       = 0, *rows,
		    other[2] = {{.name = "[kernel]"}, {.name = "[unknown]"}};
	size_t n             = file ? read_syms(file, &f, &img) : 0, i;
	pvpmu_u64 total      = 0;
	struct func *hit;

	for (i = 0; i < r->nr; i++) {
		hit = lookup(f, n, r->ips[i]);
		if (!hit)
			hit = r->ips[i] >= KERNEL_IP ? &other[0] : &other[1];
		hit->n += r->weights[i];
		total += r->weights[i];
	}
	printf("\n pfrecord: %zu samples (%" PRIu64 " periods) of %s every "
	       "%" PRIu64 " events, %" PRIu64 " overflow messages, %zu "
	       "functions in %s\n\n",
	       r->nr, (uint64_t)total, event, (uint64_t)period,
	       (uint64_t)r->msgs, n, file ? file : "(not found)");
	printf(" %10s %8s  %s\n", "samples", "percent", "function");
	rows = calloc(n + 2, sizeof(*rows));
	if (rows) {
		if (n)
			memcpy(rows, f, n * sizeof(*rows));
		rows[n]     = other[0];
		rows[n + 1] = other[1];
		qsort(rows, n + 2, sizeof(*rows), by_count);
	}
	for (i = 0; rows && i < n + 2 && rows[i].n; i++)
		printf(" %10" PRIu64 " %7.2f%%  %s\n", (uint64_t)rows[i].n,
		       100.0 * (double)rows[i].n / (double)total, rows[i].name);
	printf("\n");
	free(rows);
	free(f);
	free(img);
	free(file);
}

static pvpmu_u64 period_for_hz(unsigned long hz)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[256];
	double mhz = 0;

	while (fp && !mhz && fgets(line, sizeof(line), fp))
		if (sscanf(line, "cpu MHz : %lf", &mhz) != 1)
			mhz = 0;
	if (fp)
		fclose(fp);
	return mhz > 0 && hz ? (pvpmu_u64)(mhz * 1e6 / (double)hz) : 0;
}

static int parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v    = strtoull(s, &end, 0);
	return errno || end == s || *end || !*v || *s == '-' ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *event = DEFAULT_EV, *out = 0;
	unsigned long long period = DEFAULT_PERIOD, hz = 0;
	struct rec r = {.fd = -1};
	int opt, status = 0, ret, done = 0, tries;
	struct tool_child child;

	while ((opt = getopt(argc, argv, "+o:c:F:e:h")) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'c':
		case 'F':
			if (parse_u64(optarg, opt == 'c' ? &period : &hz)) {
				fprintf(stderr,
					"pfrecord: -%c: not a positive "
					"number: %s\n",
					opt, optarg);
				return 1;
			}
			break;
		case 'e':
			event = optarg;
			break;
		case 'h':
		default:
			return tool_usage(usage, opt == 'h');
		}
	}
	if (optind >= argc)
		return tool_no_program("pfrecord");
	if (hz && !(period = period_for_hz((unsigned long)hz))) {
		fputs("pfrecord: -F: no cpu MHz in /proc/cpuinfo (use -c)\n",
		      stderr);
		return 1;
	}
	if (out && !(r.raw = fopen(out, "w"))) {
		fprintf(stderr, "pfrecord: %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (tool_spawn("pfrecord", argv + optind, -1, &child))
		return 1;
	ret = setup(&r, event, period, child.pid);
	if (ret) {
		kill(child.pid, SIGKILL);
		close(child.go);
	} else {
		ret = tool_go("pfrecord", child.go);
	}
	while (!ret && !done) {
		ret = drain(&r, POLL_NS);
		if (waitpid(child.pid, &status, WNOHANG) == child.pid)
			done = 1;
	}
	if (!done && waitpid(child.pid, &status, 0) < 0)
		return die("waitpid", -errno);
	/*
	 * Unloaded at the thread's last switch, which may follow waitpid()
	 * (spec 3.3.6): the last messages up to PFM_MSG_END (2 s at most),
	 * then the partial buffer.
	 */
	for (tries = 0; !ret && !r.ended && tries < 20; tries++)
		ret = drain(&r, POLL_NS);
	if (!ret)
		ret = parse(&r);
	if (!ret)
		report(&r, argv[optind], period, event);
	if (r.raw && fclose(r.raw) && !ret)
		ret = die(out, -errno);
	if (r.fd >= 0)
		pfm_close(r.fd);
	free(r.ips);
	free(r.weights);
	if (ret)
		return 1;
	return tool_exit_status(status);
}
