// SPDX-License-Identifier: MIT
/*
 * pffast: the exit-free read on Linux (libpvpmu over pvpmu.ko). A
 * self-monitoring context counts guest cycles, run time and hypercalls
 * while the program spins; pvpmu_read_fast() answers from the shared page
 * the module maps (no ioctl, no exit), pfm_read_pmds() by ioctl and
 * hypercall. Prints what each read costs, both measured in the same run,
 * and checks that once stopped both reads give the same values.
 *
 *   pffast [-h]
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

#define NR       3
#define FAST_N   10000
#define SLOW_N   200
#define SPIN_NS  50000000ULL /* between live reads */
#define NR_STEPS 3

static const char usage[] =
	"Usage: pffast [-h]\n"
	"\n"
	"Count hv_guest_cycles, hv_run_ns and hv_hypercalls for this program\n"
	"and read them while it runs from the shared page pvpmu.ko maps (no\n"
	"exit) and with pfm_read_pmds() (ioctl + hypercall); print the cost\n"
	"of each read and their ratio, then check that both agree once the\n"
	"context is stopped.\n"
	"\n"
	"Exit status: 0, 1 when the PMU cannot be reached or the reads\n"
	"disagree, 2 on a bad option.\n";

static const char *const ev[NR] = {"hv_guest_cycles", "hv_run_ns",
				   "hv_hypercalls"};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
	uint64_t t0 = now_ns();

	while (now_ns() - t0 < ns)
		;
}

static void prep(pfarg_pmd_t *p)
{
	unsigned int i;

	for (i = 0; i < NR; i++)
		p[i] = (pfarg_pmd_t){.reg_num = (pvpmu_u16)i};
}

static int die(const char *what, int err)
{
	fprintf(stderr, "pffast: %s: %s%s\n", what, pvpmu_strerror(err),
		err == -PVPMU_ENOENT ? " (is pvpmu.ko loaded?)" : "");
	return 1;
}

static int setup(int *fd)
{
	pfarg_ctx_t ctx = {0};
	pfarg_load_t ld = {.load_pid = (pvpmu_u32)getpid()};
	pfarg_pmc_t pmc[NR];
	unsigned int i;
	int ret;

	ret = pfm_create_context(&ctx, 0, 0);
	if (ret)
		return die("PFM_CREATE_CONTEXT", ret);
	*fd = ctx.ctx_fd;
	for (i = 0; !ret && i < NR; i++) {
		pmc[i] = (pfarg_pmc_t){.reg_num = (pvpmu_u16)i};
		ret    = pvpmu_event_encode(ev[i], &pmc[i].reg_value, 0);
	}
	if (!ret)
		ret = pfm_write_pmcs(*fd, pmc, NR);
	if (!ret)
		ret = pfm_load_context(*fd, &ld);
	if (!ret)
		ret = pfm_start(*fd, 0);
	if (ret) {
		pfm_close(*fd);
		return die("setup", ret);
	}
	return 0;
}

static int live_reads(int fd)
{
	pfarg_pmd_t f[NR];
	unsigned int i;
	int ret;

	for (i = 0; i < NR_STEPS; i++) {
		spin(SPIN_NS);
		prep(f);
		ret = pvpmu_read_fast(0, fd, f, NR);
		if (ret)
			return die("live fast read", ret);
		printf("pffast: live, no exit: %" PRIu64 " cycles, %" PRIu64
		       " ns, %" PRIu64 " hypercalls\n",
		       (uint64_t)f[0].reg_value, (uint64_t)f[1].reg_value,
		       (uint64_t)f[2].reg_value);
	}
	return 0;
}

/* The cost of each read, measured here, and their ratio. */
static void costs(int fd)
{
	pfarg_pmd_t f[NR], r[NR];
	uint64_t t0, fast, slow;
	unsigned int i;

	t0 = now_ns();
	for (i = 0; i < FAST_N; i++)
		pvpmu_read_fast(0, fd, f, NR);
	fast = now_ns() - t0;
	t0   = now_ns();
	for (i = 0; i < SLOW_N; i++)
		pfm_read_pmds(fd, r, NR);
	slow = now_ns() - t0;
	printf("pffast: a read of %u PMDs: %.1f ns from the shared page, "
	       "%.1f ns by pfm_read_pmds(): %.1fx\n",
	       NR, (double)fast / FAST_N, (double)slow / SLOW_N,
	       fast ? ((double)slow / SLOW_N) / ((double)fast / FAST_N) : 0.0);
}

/* Stopped: both reads give the same values. */
static int agree(int fd)
{
	pfarg_pmd_t f[NR], r[NR];
	unsigned int i, bad = 0;
	int ret;

	ret = pfm_stop(fd);
	if (ret)
		return die("PFM_STOP", ret);
	prep(r);
	prep(f);
	ret = pfm_read_pmds(fd, r, NR);
	if (!ret)
		ret = pvpmu_read_fast(0, fd, f, NR);
	if (ret)
		return die("reads after stop", ret);
	for (i = 0; i < NR; i++)
		bad += f[i].reg_value != r[i].reg_value;
	printf("pffast: stopped: fast read %s pfm_read_pmds (%" PRIu64
	       " cycles, %" PRIu64 " hypercalls)\n",
	       bad ? "DISAGREES with" : "equals", (uint64_t)r[0].reg_value,
	       (uint64_t)r[2].reg_value);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int fd = -1, ret;

	if (argc == 2 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 1) {
		fputs(usage, stderr);
		return 2;
	}
	if (setup(&fd))
		return 1;
	ret = live_reads(fd);
	if (!ret) {
		costs(fd);
		ret = agree(fd);
	}
	pfm_close(fd);
	return ret;
}
