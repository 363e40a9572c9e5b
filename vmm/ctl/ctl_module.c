// SPDX-License-Identifier: MIT
/*
 * ctl_module.c: the control server as a module of the core (struct
 * vmm_module): its state is the core's per-VM pointer, its life follows
 * the VM's, and operators' pending reads complete from the vCPU loop's
 * accounting hook.
 */
#include "ctl_server.h"

#include <stdio.h>
#include <string.h>

static int ctl_vm_init(struct vmm_vm *vm, const struct vmm_config *cfg,
		       char *err, size_t errlen)
{
	int ret = vmm_control_init(vm, cfg); /* started by vmm_vm_run */

	if (ret)
		snprintf(err, errlen, "control: %s", strerror(-ret));
	return ret;
}

const struct vmm_module vmm_ctl_module = {
	.name      = "control server",
	.vm_init   = ctl_vm_init,
	.vm_free   = vmm_control_free, /* host contexts before the domain */
	.image_set = vmm_control_set_image, /* for operators' symbols */
	.run_start = vmm_control_start,
	.run_end   = vmm_control_stop, /* host contexts, socket, entry */
	.vcpu_accounted = vmm_control_vcpu_accounted,
};
