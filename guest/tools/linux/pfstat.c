// SPDX-License-Identifier: MIT
/*
 * pfstat: count events of a Linux program through the paravirtual
 * perfmon2 interface (libpvpmu over pvpmu.ko).
 *
 *   pfstat [-e EVENT[,EVENT...]] [-v] -- PROGRAM [ARGS...]
 *
 * The program runs in a child that waits on a pipe until its per-thread
 * context is loaded and started (spec 3.1.7: the context follows the
 * thread across context switches and exec), so only the program is
 * counted. Counts are 64-bit (spec 3.2). The hv_* events also count the
 * driver's own PVPMU_SCHED_OUT hypercall at each switch-out of the thread;
 * pfstat prints that number (PVPMU_IOC_INFO.sched_outs).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

#include "tool.h"

#define MAX_EVENTS 8
#define DEFAULT_EV "hv_exits,hv_hypercalls,hv_run_ns"

static const char usage[] =
	"Usage: pfstat [-e EVENT[,EVENT...]] [-v] -- PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM and print the counts of EVENTs (default " DEFAULT_EV ")\n"
	"measured by the vpmu virtual PMU for its thread, through the\n"
	"paravirtual perfmon2 interface (/dev/pvpmu, module pvpmu.ko).\n"
	"\n"
	"  -e LIST   events: catalogue names with modifiers (name:u, :k,\n"
	"            umask=N) or raw codes rXXXX; `pfinfo` lists them\n"
	"  -v        also print the driver's own sched-out hypercalls\n"
	"  -h        this help\n"
	"\n"
	"Exit status: PROGRAM's, or 1 when measuring failed.\n";

struct ev {
	char name[64];
	pvpmu_u64 pmc;
	pvpmu_u64 value;
};

static int die(const char *what, int err)
{
	return tool_die("pfstat", what, err);
}

static int parse_events(char *list, struct ev *ev, unsigned int *nr)
{
	char *save = 0, *tok;
	int ret;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(0, ",", &save)) {
		if (*nr == MAX_EVENTS) {
			fprintf(stderr, "pfstat: at most %d events\n",
				MAX_EVENTS);
			return -1;
		}
		ret = pvpmu_event_encode(tok, &ev[*nr].pmc, 0);
		if (ret) {
			fprintf(stderr, "pfstat: event '%s': %s\n", tok,
				pvpmu_strerror(ret));
			return -1;
		}
		snprintf(ev[*nr].name, sizeof(ev[*nr].name), "%s", tok);
		(*nr)++;
	}
	return 0;
}

static int program(int fd, struct ev *ev, unsigned int nr, pid_t pid)
{
	pfarg_pmc_t pmc[MAX_EVENTS] = {0};
	pfarg_pmd_t pmd[MAX_EVENTS] = {0};
	pfarg_load_t load           = {.load_pid = (pvpmu_u32)pid};
	unsigned int i;
	int ret;

	for (i = 0; i < nr; i++) {
		pmc[i].reg_num   = (pvpmu_u16)i;
		pmc[i].reg_value = ev[i].pmc;
		pmd[i].reg_num   = (pvpmu_u16)i;
	}
	ret = pfm_write_pmcs(fd, pmc, (int)nr);
	if (ret)
		return die("PFM_WRITE_PMCS", ret);
	ret = pfm_write_pmds(fd, pmd, (int)nr);
	if (ret)
		return die("PFM_WRITE_PMDS", ret);
	ret = pfm_load_context(fd, &load);
	if (ret)
		return die("PFM_LOAD_CONTEXT", ret);
	ret = pfm_start(fd, 0);
	return ret ? die("PFM_START", ret) : 0;
}

/*
 * The thread's exit unloads the context at its last context switch (spec
 * 3.3.6), which can come after waitpid() returns: the parent may run
 * between the child's exit notification and that switch. Its
 * PFM_MSG_END says the counts are final; wait for it (2 s at most).
 */
static void wait_end(int fd)
{
	pfm_msg_t msg;

	while (pfm_read_msg(fd, &msg, 2000000000ULL) == 0)
		if (msg.msg_type == PFM_MSG_END)
			return;
	fputs("pfstat: no PFM_MSG_END from the program's exit within 2 s; "
	      "counts may miss its last switch-out\n",
	      stderr);
}

static int collect(int fd, struct ev *ev, unsigned int nr)
{
	pfarg_pmd_t pmd[MAX_EVENTS] = {0};
	unsigned int i;
	int ret;

	for (i = 0; i < nr; i++)
		pmd[i].reg_num = (pvpmu_u16)i;
	ret = pfm_read_pmds(fd, pmd, (int)nr);
	if (ret)
		return die("PFM_READ_PMDS", ret);
	for (i = 0; i < nr; i++)
		ev[i].value = pmd[i].reg_value;
	return 0;
}

static void report(char **argv, const struct ev *ev, unsigned int nr, int fd,
		   int verbose)
{
	struct pvpmu_ioc_info info = {.size = sizeof(info)};
	unsigned int i;

	printf("\n Performance counter stats for '%s", argv[0]);
	for (i = 1; argv[i]; i++)
		printf(" %s", argv[i]);
	printf("' (vpmu, perfmon2):\n\n");
	for (i = 0; i < nr; i++)
		printf(" %20" PRIu64 "      %s\n", ev[i].value, ev[i].name);
	if (verbose && ioctl(fd, PVPMU_IOC_INFO, &info) == 0)
		printf("\n %20" PRIu64
		       "      driver sched-out hypercalls (in hv_*)\n",
		       (uint64_t)info.sched_outs);
	printf("\n");
}

int main(int argc, char **argv)
{
	char evlist[512] = DEFAULT_EV;
	struct ev ev[MAX_EVENTS];
	pfarg_ctx_t ctx = {0};
	unsigned int nr = 0;
	int opt, verbose = 0, status = 0, ret;
	struct tool_child child;

	while ((opt = getopt(argc, argv, "+e:vh")) != -1) {
		switch (opt) {
		case 'e':
			snprintf(evlist, sizeof(evlist), "%s", optarg);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
		default:
			return tool_usage(usage, opt == 'h');
		}
	}
	if (optind >= argc)
		return tool_no_program("pfstat");
	memset(ev, 0, sizeof(ev));
	if (parse_events(evlist, ev, &nr))
		return 1;
	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return die("PFM_CREATE_CONTEXT (is pvpmu.ko loaded?)", ret);
	if (tool_spawn("pfstat", argv + optind, ctx.ctx_fd, &child))
		return 1;
	ret = program(ctx.ctx_fd, ev, nr, child.pid);
	if (tool_go("pfstat", child.go))
		ret = 1;
	if (waitpid(child.pid, &status, 0) < 0)
		return die("waitpid", -errno);
	if (!ret) {
		wait_end(ctx.ctx_fd);
		ret = collect(ctx.ctx_fd, ev, nr);
	}
	if (!ret)
		report(argv + optind, ev, nr, ctx.ctx_fd, verbose);
	pfm_close(ctx.ctx_fd);
	if (ret)
		return 1;
	return tool_exit_status(status);
}
