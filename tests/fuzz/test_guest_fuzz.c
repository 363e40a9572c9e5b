// SPDX-License-Identifier: MIT
/*
 * test_guest_fuzz.c: a hostile guest (guest/guest_fuzz.c: random
 * hypercalls, request blocks and arguments at and across the boundaries
 * of RAM and of the sampling-buffer mappings, random PMU MSR accesses)
 * against `vpmu run` on each PMU model. The VMM must survive (no
 * sanitizer report: the sanitizer build's VMM aborts on the first one),
 * the guest must finish its calls and exit 0, and the VMM's count of
 * rejected guest input (`--stats`: guest errors) must have grown by at
 * least the hypercalls the guest saw refused.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvm_harness.h"

static struct vpmu_result res;

/* Sum of "N guest errors" over every vCPU line of the statistics. */
static unsigned long long guest_errors(const char *err)
{
	unsigned long long sum = 0, n;
	const char *p          = err;

	while ((p = strstr(p, "hypercalls, ")) != NULL) {
		p += strlen("hypercalls, ");
		if (sscanf(p, "%llu guest errors", &n) == 1)
			sum += n;
	}
	return sum;
}

static void run_seed(const char *pmu, const char *name, unsigned int seed)
{
	unsigned long long hc = 0, refused = 0, msr = 0, gp = 0, s = 0;
	char want[64];
	const char *line;

	setenv("VPMU_LOG", "error", 1); /* keep stderr to the statistics */
	RUN_FOR(600, "run", GUEST("guest_fuzz"), "--name", name, "--pmu", pmu,
		"--stats");
	STATUS(0);
	snprintf(want, sizeof(want), "guest_fuzz: seed %u:", seed);
	HAS(res.out, want);
	line = strstr(res.out, want);
	cr_assert(eq(int,
		     sscanf(line,
			    "guest_fuzz: seed %llu: %llu hypercalls (%llu "
			    "refused), %llu MSR accesses (%llu #GP)",
			    &s, &hc, &refused, &msr, &gp),
		     5),
		  "%s", line);
	cr_assert(eq(u64, hc + msr, 20000), "every call made: %s", line);
	cr_assert(lt(u64, 0, refused), "%s", line);
	HAS(res.err, "guest errors");
	cr_expect(ge(u64, guest_errors(res.err), refused),
		  "the VMM counted %llu rejected inputs, the guest saw %llu "
		  "hypercalls refused\n%s",
		  guest_errors(res.err), refused, res.err);
	cr_log_info("%s %s: %llu hypercalls (%llu refused), %llu MSR "
		    "accesses (%llu #GP), %llu guest errors counted",
		    pmu, name, hc, refused, msr, gp, guest_errors(res.err));
}

Test(guest_fuzz, vmm_survives_intel_v2, .timeout = 900)
{
	kvm_require();
	run_seed("intel-v2", "gfuzz-1-20000", 1);
	run_seed("intel-v2", "gfuzz-2-20000", 2);
}

Test(guest_fuzz, vmm_survives_amd_v2, .timeout = 900)
{
	kvm_require();
	run_seed("amd-v2", "gfuzz-3-20000", 3);
}

Test(guest_fuzz, vmm_survives_no_pmu_model, .timeout = 900)
{
	kvm_require();
	run_seed("none", "gfuzz-4-20000", 4);
}
