// SPDX-License-Identifier: MIT
/*
 * test_sandbox.c: the seccomp sandbox around a real VMM. Every
 * other kvm test already runs sandboxed (it is the default); here the test
 * hook (VPMU_TEST_SANDBOX_VIOLATE) makes a vCPU thread, or the control
 * thread, call what its allow-list forbids once set up: the VMM must end
 * with VMM_STATUS_SANDBOX (159) and say why; --no-sandbox must run the
 * same guest to its end.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvm_harness.h"

#define STATUS_SANDBOX 159 /* vmm/sandbox/vmm_sandbox.h */

static struct vpmu_result res;

TestSuite(vmm_sandbox, .init = kvm_require, .timeout = 120);

Test(vmm_sandbox, hello_runs_sandboxed)
{
	RUN("run", GUEST("hello"));
	STATUS(0);
	HAS(res.out, "hello from vcpu 0");
}

Test(vmm_sandbox, forbidden_call_on_a_vcpu_thread_ends_the_vmm)
{
	setenv("VPMU_TEST_SANDBOX_VIOLATE", "vcpu", 1);
	RUN("run", GUEST("smp"), "--vcpus", "2");
	STATUS(STATUS_SANDBOX);
	HAS(res.err, "vpmu: sandbox: forbidden system call");
	HAS(res.err, "on the vcpu thread");
}

Test(vmm_sandbox, forbidden_call_on_the_control_thread_ends_the_vmm)
{
	setenv("VPMU_TEST_SANDBOX_VIOLATE", "control", 1);
	RUN("run", GUEST("hello"));
	STATUS(STATUS_SANDBOX);
	HAS(res.err, "on the control thread");
}

Test(vmm_sandbox, no_sandbox_runs_the_same_guest)
{
	setenv("VPMU_TEST_SANDBOX_VIOLATE", "vcpu", 1);
	RUN("run", GUEST("hello"), "--no-sandbox");
	STATUS(0);
	HAS(res.out, "hello from vcpu 0");
}
