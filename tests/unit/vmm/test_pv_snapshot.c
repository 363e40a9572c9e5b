// SPDX-License-Identifier: MIT
/*
 * test_pv_snapshot.c: a snapshot file is input. The PMU part of a vCPU's
 * state (struct vmm_snap_vcpu_pmu) is restored only if it holds what the
 * guest could have set live: a notification vector PVPMU_HC_SET_VECTOR
 * allows (0 or 32..255), a pending PMI the VMM posts, a 0/1 flag, an
 * LVTPC with writable bits only. Each mutation is refused with a message.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "pv_fake_vm.h"
#include "pv_priv.h"

static struct vmm_vm vm;
static struct vmm_vcpu vcpu;
static struct vmm_snap_vcpu_pmu saved;
static bool has_arch;
static char err[256];

static void setup(void)
{
	pv_fake_vm(&vm, &vcpu);
	memset(&saved, 0, sizeof(saved));
	has_arch     = vmm_pv_snapshot_hooks.vcpu_save(&vcpu, &saved);
	saved.vector = 0x40;
}

static void teardown(void)
{
	vmm_pv_detach(&vm);
}

TestSuite(vmm_pv_snapshot, .init = setup, .fini = teardown);

static int restore(const struct vmm_snap_vcpu_pmu *sv)
{
	err[0] = '\0';
	return vmm_pv_snapshot_hooks.vcpu_restore(&vcpu, sv, has_arch, err,
						  sizeof(err));
}

/* (sv) is refused with a message containing (what). */
static void refused(const struct vmm_snap_vcpu_pmu *sv, const char *what)
{
	cr_expect(eq(int, restore(sv), -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, what), NULL)), "'%s' not in '%s'",
		  what, err);
}

Test(vmm_pv_snapshot, saved_state_restores)
{
	cr_assert(eq(int, restore(&saved), 0), "%s", err);
	cr_expect(eq(u32, vmm_pv_vcpu(&vcpu)->vector, 0x40));
}

Test(vmm_pv_snapshot, vector_the_hypercall_refuses_is_refused)
{
	struct vmm_snap_vcpu_pmu sv = saved;
	const uint32_t bad[]        = {1, 2, 14, 31, 256, 0xffffffff};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sv.vector = bad[i];
		cr_expect(not(vmm_pv_vector_ok(bad[i])));
		refused(&sv, "notification vector");
	}
	cr_expect(eq(u32, vmm_pv_vcpu(&vcpu)->vector, 0),
		  "nothing was installed");
	sv.vector = 32;
	cr_expect(eq(int, restore(&sv), 0), "%s", err);
	sv.vector = 0;
	cr_expect(eq(int, restore(&sv), 0), "%s", err);
}

Test(vmm_pv_snapshot, pmi_flag_and_lvtpc_out_of_range_are_refused)
{
	struct vmm_snap_vcpu_pmu sv = saved;

	sv.pmi = 5;
	refused(&sv, "pending PMI");
	sv.pmi = 0x300;
	refused(&sv, "pending PMI");
	sv.pmi         = VMM_PV_PMI_NMI;
	sv.irq_pending = 2;
	refused(&sv, "interrupt-pending flag");
	sv.irq_pending = 1;
	sv.lvtpc       = 1U << 12; /* delivery status: read-only */
	refused(&sv, "LVTPC");
}
