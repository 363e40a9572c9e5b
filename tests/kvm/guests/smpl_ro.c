// SPDX-License-Identifier: MIT
/*
 * smpl_ro.c: a context with the default sampling format gets a buffer the
 * guest can read in place (header version, size) but not write: the write
 * must raise a page fault in the guest (the kernel reports it and the VM
 * ends with 128 + 14), never harm the VMM.
 */
#include "kernel.h"
#include "pvpmu_hc.h"

static struct {
	struct pfarg_ctx ctx;
	struct pfm_default_smpl_arg arg;
} create;
static struct pvpmu_hc_pfm req;
static struct pvpmu_hc_smpl_info info;

void guest_main(unsigned int vcpu, const struct pvpmu_boot_info *bi)
{
	static const pvpmu_u8 uuid[16] = PFM_DEFAULT_SMPL_UUID;
	volatile struct pfm_default_smpl_hdr *hdr;
	long ret;
	int i;

	(void)bi;
	if (vcpu != 0)
		return;
	create.ctx.ctx_flags = PFM_FL_SYSTEM_WIDE;
	for (i = 0; i < 16; i++)
		create.ctx.ctx_smpl_buf_id[i] = uuid[i];
	create.arg.buf_size = 8192;
	req                 = (struct pvpmu_hc_pfm){.size     = sizeof(req),
						    .cmd      = PFM_CREATE_CONTEXT,
						    .nargs    = 1,
						    .arg_gpa  = virt_to_gpa(&create),
						    .arg_size = sizeof(create)};
	ret                 = pvpmu_hypercall(PVPMU_HC_PFM, virt_to_gpa(&req));
	info                = (struct pvpmu_hc_smpl_info){.size = sizeof(info),
							  .fd   = create.ctx.ctx_fd};
	if (ret || pvpmu_hypercall(PVPMU_HC_SMPL_INFO, virt_to_gpa(&info))) {
		kprintf("smpl_ro: create %ld, no buffer\n", ret);
		guest_exit(1);
	}
	hdr = (volatile struct pfm_default_smpl_hdr *)(uintptr_t)info.gpa;
	kprintf("smpl_ro: buffer at 0x%lx, %lu bytes, version 0x%x, "
		"hdr_buf_size %lu\n",
		(unsigned long)info.gpa, (unsigned long)info.buf_size,
		hdr->hdr_version, (unsigned long)hdr->hdr_buf_size);
	if (hdr->hdr_version != PFM_DEFAULT_SMPL_VERSION)
		guest_exit(1);
	kprintf("smpl_ro: writing the read-only buffer\n");
	hdr->hdr_count = 42;
	kprintf("smpl_ro: write was not stopped\n");
	guest_exit(2);
}
