// SPDX-License-Identifier: MIT
/*
 * count.c: the smallest Linux guest program on libpvpmu (sdk/README.md):
 * count this thread's VM exits and hypercalls around a loop.
 *
 *   cc count.c $(pkg-config --cflags --libs pvpmu) -o count
 */
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <pvpmu/pvpmu.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "count: %s: %s\n", what, pvpmu_strerror(err));
	return 1;
}

int main(void)
{
	pfarg_ctx_t ctx     = {0};
	pfarg_pmc_t pmc[2]  = {{.reg_num = 0}, {.reg_num = 1}};
	pfarg_pmd_t pmd[2]  = {{.reg_num = 0}, {.reg_num = 1}};
	pfarg_load_t load   = {.load_pid = (pvpmu_u32)getpid()};
	volatile uint64_t x = 0;
	uint64_t i;
	int ret, fd;

	ret = pfm_create_context(&ctx, NULL, 0);
	if (ret)
		return fail("PFM_CREATE_CONTEXT", ret);
	fd = ctx.ctx_fd; /* a file descriptor: close() destroys it */
	if ((ret = pvpmu_event_encode("hv_exits", &pmc[0].reg_value, NULL)) ||
	    (ret = pvpmu_event_encode("hv_run_ns", &pmc[1].reg_value, NULL)))
		return fail("event", ret);
	if ((ret = pfm_write_pmcs(fd, pmc, 2)) ||
	    (ret = pfm_write_pmds(fd, pmd, 2)) ||
	    (ret = pfm_load_context(fd, &load)) || (ret = pfm_start(fd, NULL)))
		return fail("programming", ret);
	for (i = 0; i < 100000000; i++)
		x += i;
	if ((ret = pfm_stop(fd)) || (ret = pfm_read_pmds(fd, pmd, 2)))
		return fail("reading", ret);
	printf("hv_exits %" PRIu64 ", hv_run_ns %" PRIu64 "\n",
	       (uint64_t)pmd[0].reg_value, (uint64_t)pmd[1].reg_value);
	pfm_close(fd);
	return 0;
}
