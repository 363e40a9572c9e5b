// SPDX-License-Identifier: MIT
/*
 * tool_linux.c: the tools' platform (tool.h) in Linux user space over
 * pvpmu.ko: stdio, clock_gettime, PROGRAM in a child process that waits
 * for its go byte, notifications read from the context's fd, the shared
 * page the module maps, symbols from PROGRAM's ELF file. Also the tool's
 * main(): the build names the tool's entry point in TOOL_MAIN.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

#define KERNEL_IP 0xffff800000000000ULL

const char tool_notify_how[] = "pfm_read_msg";

int tool_vprintf(enum tool_stream to, const char *fmt, va_list ap)
{
	return vfprintf(to == tool_err_out ? stderr : stdout, fmt, ap);
}

int tool_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return vsnprintf(buf, size, fmt, ap);
}

uint64_t tool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void tool_sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec  = (time_t)(ns / 1000000000ULL),
			      .tv_nsec = (long)(ns % 1000000000ULL)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

uint64_t tool_cpu_khz(void)
{
	FILE *fp = fopen("/proc/cpuinfo", "r");
	char line[256];
	double mhz = 0;

	while (fp && !mhz && fgets(line, sizeof(line), fp))
		if (sscanf(line, "cpu MHz : %lf", &mhz) != 1)
			mhz = 0;
	if (fp)
		fclose(fp);
	return mhz > 0 ? (uint64_t)(mhz * 1000) : 0;
}

void tool_target_self(struct tool_target *t)
{
	*t = (struct tool_target){.load_pid = (pvpmu_u32)getpid(), .go = -1};
}

/* The child: wait for the go byte, then become PROGRAM. */
static void child(const char *tool, int rd, char **argv)
{
	char c;

	if (read(rd, &c, 1) != 1)
		_exit(127);
	close(rd);
	execvp(argv[0], argv);
	fprintf(stderr, "%s: %s: %s\n", tool, argv[0], strerror(errno));
	_exit(127);
}

int tool_target_spawn(const char *tool, struct tool_target *t, int close_fd)
{
	int pfd[2];
	pid_t pid;

	if (pipe(pfd)) {
		tool_err(tool, "pipe", -errno);
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		tool_err(tool, "fork", -errno);
		goto out_pipe;
	}
	if (pid == 0) {
		close(pfd[1]);
		if (close_fd >= 0)
			close(close_fd);
		child(tool, pfd[0], t->argv);
	}
	close(pfd[0]);
	t->load_pid = (pvpmu_u32)pid;
	t->go       = pfd[1];
	return 0;

out_pipe:
	close(pfd[0]);
	close(pfd[1]);
	return 1;
}

int tool_target_go(const char *tool, struct tool_target *t)
{
	int ret = 0;

	if (t->go < 0)
		return 0;
	if (write(t->go, "g", 1) != 1) {
		tool_err(tool, "pipe", -errno);
		ret = 1;
	}
	close(t->go);
	t->go = -1;
	return ret;
}

int tool_target_wait(const char *tool, struct tool_target *t, int block)
{
	pid_t got;

	if (!t->argv)
		return 1;
	got = waitpid((pid_t)t->load_pid, &t->status, block ? 0 : WNOHANG);
	if (got < 0) {
		tool_err(tool, "waitpid", -errno);
		return -1;
	}
	return got == (pid_t)t->load_pid;
}

void tool_target_kill(struct tool_target *t)
{
	if (!t->argv)
		return;
	kill((pid_t)t->load_pid, SIGKILL);
	if (t->go >= 0)
		close(t->go);
	t->go = -1;
	waitpid((pid_t)t->load_pid, &t->status, 0);
}

int tool_target_exit_status(const struct tool_target *t)
{
	return WIFEXITED(t->status) ? WEXITSTATUS(t->status)
				    : 128 + WTERMSIG(t->status);
}

int tool_shared_open(const struct pvpmu_shared_page **page)
{
	*page = 0;
	return 0;
}

int tool_shared_publish(void)
{
	return 0;
}

void tool_shared_close(void)
{
}

int tool_pmd_live(int fd, unsigned int pmd, uint64_t *value)
{
	(void)fd;
	(void)pmd;
	(void)value;
	return 0;
}

int tool_notify_open(void)
{
	return 0;
}

uint64_t tool_notify_count(void)
{
	return 0;
}

void tool_notify_close(void)
{
}

static FILE *raw;

int tool_raw_open(const char *path)
{
	raw = fopen(path, "w");
	return raw ? 0 : -errno;
}

void tool_raw_sample(const struct pfm_default_smpl_entry *e)
{
	if (raw)
		fprintf(raw, "0x%llx %d %d %u %u\n", (unsigned long long)e->ip,
			e->pid, e->tid, e->cpu, 1U + e->nr_missed);
}

int tool_raw_close(void)
{
	int ret = 0;

	if (raw && fclose(raw))
		ret = -errno;
	raw = 0;
	return ret;
}

/* PROGRAM's STT_FUNC symbols, sorted, and the file image holding names. */
static struct pvpmu_sym *syms;
static size_t nr_syms;
static char *img, *file;

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
	const struct pvpmu_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The whole file (path) in memory; (*len) its size. NULL if unreadable. */
static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	struct stat st;
	char *p = 0;

	*len = 0;
	if (fp && fstat(fileno(fp), &st) == 0 && st.st_size > 0 &&
	    (p = malloc((size_t)st.st_size)))
		*len = fread(p, 1, (size_t)st.st_size, fp);
	if (fp)
		fclose(fp);
	return p;
}

/*
 * The STT_FUNC symbols of an ELF64 file's .symtab (a non-PIE executable:
 * their addresses are the IPs), sorted by address. Their number, 0 when
 * there are none (stripped, not ELF64).
 */
static size_t read_syms(const char *p, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	const Elf64_Shdr *sh;
	size_t n = 0, i, j;

	if (!p || len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff > len ||
	    eh->e_shentsize != sizeof(*sh) ||
	    (len - eh->e_shoff) / sizeof(*sh) < eh->e_shnum)
		return 0;
	sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	for (i = 0; i < eh->e_shnum && !syms; i++) {
		const Elf64_Shdr *str = &sh[sh[i].sh_link % eh->e_shnum];
		const Elf64_Sym *sym = (const Elf64_Sym *)(p + sh[i].sh_offset);
		size_t nr            = sh[i].sh_size / sizeof(*sym);

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_offset > len ||
		    (len - sh[i].sh_offset) / sizeof(*sym) < nr ||
		    str->sh_offset > len || len - str->sh_offset < str->sh_size)
			continue;
		syms = calloc(nr ? nr : 1, sizeof(*syms));
		for (j = 0; syms && j < nr; j++) {
			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC ||
			    !sym[j].st_value || sym[j].st_name >= str->sh_size)
				continue;
			syms[n++] = (struct pvpmu_sym){
				.addr = sym[j].st_value,
				.size = sym[j].st_size,
				.name = p + str->sh_offset + sym[j].st_name};
		}
	}
	if (n)
		qsort(syms, n, sizeof(*syms), by_addr);
	return n;
}

int tool_syms_load(const struct tool_target *t, const char **name)
{
	size_t len;

	tool_syms_unload();
	file  = t->argv ? find_program(t->argv[0]) : 0;
	*name = file ? file : "(not found)";
	if (!file)
		return 0;
	img     = slurp(file, &len);
	nr_syms = read_syms(img, len);
	return (int)nr_syms;
}

static const struct pvpmu_sym kernel_sym = {.name = "[kernel]"};

const struct pvpmu_sym *tool_syms_lookup(uint64_t ip)
{
	const struct pvpmu_sym *s;

	if (ip >= KERNEL_IP)
		return &kernel_sym;
	s = pvpmu_sym_lookup(syms, (unsigned int)nr_syms, ip);
	return s;
}

void tool_syms_unload(void)
{
	free(syms);
	free(img);
	free(file);
	syms    = 0;
	img     = 0;
	file    = 0;
	nr_syms = 0;
}

int tool_show_platform(const char *tool)
{
	(void)tool;
	return 0;
}

int64_t tool_driver_hypercalls(int fd)
{
	struct pvpmu_ioc_info info = {.size = sizeof(info)};

	if (ioctl(fd, PVPMU_IOC_INFO, &info))
		return -1;
	return (int64_t)info.sched_outs;
}

/* Linux ring 3 makes no hypercalls of its own: there is no workload. */
uint64_t tool_mixed(unsigned int rounds, uint64_t spin, unsigned int calls)
{
	(void)rounds;
	(void)spin;
	(void)calls;
	return 0;
}

int main(int argc, char **argv)
{
	return TOOL_MAIN(argc, argv);
}
