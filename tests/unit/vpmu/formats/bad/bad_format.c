// SPDX-License-Identifier: MIT
/*
 * bad_format.c: malformed run-time sampling formats for the loader tests
 * (spec §3.5.8: the registration checks the required fields and refuses a
 * UUID that is already registered). One source, one object per BAD_*:
 *   BAD_VERSION   descriptor of another format ABI version
 *   BAD_DUP_UUID  the default format's UUID (§3.6.1)
 *   BAD_NO_HANDLER no handler (§3.5.8: required)
 *   BAD_NO_SYMBOL  no descriptor at all
 *   BAD_GOOD      a valid format (its UUID is free) for the happy path
 */
#include <vpmu/vpmu_format.h>

#include <pvpmu/abi.h>

__attribute__((unused)) static int handler(struct vpmu_smpl_buf *buf,
					   const struct vpmu_smpl_ovfl_arg *arg,
					   uint32_t *ctrl)
{
	(void)buf;
	(void)arg;
	*ctrl = VPMU_SMPL_CTRL_RESET_OVFL_PMDS;
	return 0;
}

#define GOOD_UUID                                                              \
	{                                                                      \
		0x9f, 0x31, 0x0a, 0x55, 0x6b, 0x12, 0x4c, 0x80, 0x8d, 0x2e,    \
			0x41, 0x90, 0x77, 0x3b, 0xc6, 0x02                     \
	}

#if defined(BAD_VERSION)
__attribute__((visibility("default")))
const struct vpmu_format_desc vpmu_format_descriptor = {
	.abi_version = VPMU_FORMAT_ABI_VERSION + 98,
	.desc_size   = sizeof(struct vpmu_format_desc),
	.fmt         = {.name       = "bad-version",
			.uuid       = GOOD_UUID,
			.msgq_depth = 1,
			.handler    = handler},
};
#elif defined(BAD_DUP_UUID)
VPMU_FORMAT_EXPORT(.name = "dup-uuid", .uuid = PFM_DEFAULT_SMPL_UUID,
		   .msgq_depth = 1, .handler = handler);
#elif defined(BAD_NO_HANDLER)
VPMU_FORMAT_EXPORT(.name = "no-handler", .uuid = GOOD_UUID, .msgq_depth = 1);
#elif defined(BAD_NO_SYMBOL)
__attribute__((visibility("default"))) int not_a_vpmu_format = 1;
#elif defined(BAD_GOOD)
VPMU_FORMAT_EXPORT(.name = "good-test", .uuid = GOOD_UUID, .msgq_depth = 1,
		   .handler = handler);
#else
#error "define one BAD_* variant"
#endif
