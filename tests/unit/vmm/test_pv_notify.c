// SPDX-License-Identifier: MIT
/*
 * test_pv_notify.c: which guest notifications raise the guest's
 * notification vector (vmm_pv.h, vmm_pv_notify_raises()). Spec 3.3.7 and
 * Table 3.2: PFM_FL_OVFL_NO_MSG suppresses the overflow message only; the
 * notification (here the vector) is still delivered.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "vmm_pv.h"

static struct vpmu_notify note(enum vpmu_owner owner, uint32_t type,
			       uint32_t flags)
{
	return (struct vpmu_notify){
		.owner = owner, .msg_type = type, .flags = flags};
}

Test(vmm_pv_notify, overflow_without_message_raises_the_vector)
{
	struct vpmu_notify n = note(VPMU_OWNER_GUEST, PFM_MSG_OVFL, 0);

	cr_assert(vmm_pv_notify_raises(&n), "3.3.7: OVFL_NO_MSG notifies");
	n = note(VPMU_OWNER_GUEST, PFM_MSG_OVFL, VPMU_NOTIFY_MSG);
	cr_assert(vmm_pv_notify_raises(&n));
	n = note(VPMU_OWNER_GUEST, PFM_MSG_OVFL, VPMU_NOTIFY_LOST);
	cr_assert(vmm_pv_notify_raises(&n), "queue full: still notified");
	n = note(VPMU_OWNER_GUEST, PFM_MSG_END, VPMU_NOTIFY_MSG);
	cr_assert(vmm_pv_notify_raises(&n));
}

Test(vmm_pv_notify, throttle_and_other_owners_do_not_raise_it)
{
	struct vpmu_notify n = note(VPMU_OWNER_GUEST, 0, VPMU_NOTIFY_THROTTLED);

	cr_assert(not(vmm_pv_notify_raises(&n)));
	n = note(VPMU_OWNER_HOST, PFM_MSG_OVFL, VPMU_NOTIFY_MSG);
	cr_assert(not(vmm_pv_notify_raises(&n)));
	n = note(VPMU_OWNER_ARCH, PFM_MSG_OVFL, 0);
	cr_assert(not(vmm_pv_notify_raises(&n)));
}
