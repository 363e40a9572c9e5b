// SPDX-License-Identifier: MIT
/*
 * test_pv.c: the VMM's perfmon2 hypercall layer with real guests: exact hv
 * counts through PVPMU_HC_PFM, the error answers, read_msg waits, and the
 * read-only mapping of sampling buffers.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "kvm_harness.h"

static struct vpmu_result res;

TestSuite(vmm_pv, .init = kvm_require, .timeout = 120);

/*
 * perfmon2 §3.1.2-3.1.6 through the hypercall path: N NOP hypercalls
 * between START and STOP count exactly N + 1 (the STOP call is counted at
 * its own exit, before the context stops); bad handles, arguments outside
 * RAM, unknown commands, empty queues and timeouts get their status.
 */
Test(vmm_pv, hypercalls_count_exactly_and_errors_are_answered)
{
	RUN("run", GUEST("pv_smoke"));
	cr_assert(eq(int, res.status, 0), "out: %s\nstderr: %s", res.out,
		  res.err);
	HAS(res.out, "pv_smoke: ok (hypercalls 101,");
}

/* The buffer reads in place; a guest write faults in the guest (#PF). */
Test(vmm_pv, sampling_buffer_is_read_only_in_the_guest)
{
	RUN("run", GUEST("smpl_ro"));
	HAS(res.out, "version 0x10001"); /* default format 1.1: nr_missed */
	HAS(res.out, "unhandled exception 14 (#PF)");
	HAS(res.out, "cr2 00000000c0000000");
	cr_assert(eq(ptr, strstr(res.out, "write was not stopped"), NULL));
	cr_assert(eq(int, res.status, 128 + 14), "stderr: %s", res.err);
}
