/* SPDX-License-Identifier: MIT */
/*
 * vmm_handover.h: how `vpmu run` hands a VM to `vpmu-vmm`, the
 * lean program that runs it. `vpmu run` reads and validates the command
 * line and any libvirt XML (libxml2), then writes this record to a memfd
 * and execs vpmu-vmm (installed next to vpmu) as the same process, so the
 * running VM maps neither libvirt nor libxml2 nor the operator tools'
 * libraries. Both programs come from one build: a record of another size
 * or magic is refused.
 *
 *   vpmu-vmm --config-fd FD
 *
 * With restore set, vpmu-vmm continues that snapshot (checked again)
 * instead of loading cfg.image.
 */
#ifndef VMM_HANDOVER_H
#define VMM_HANDOVER_H

#include <limits.h>
#include <stdint.h>

#include "vm_config.h"

#define VMM_HANDOVER_MAGIC "vpmucfg1" /* 8 bytes, no NUL */
#define VMM_HANDOVER_PROG  "vpmu-vmm"
#define VMM_HANDOVER_ARG   "--config-fd"

struct vmm_handover {
	char magic[8];
	uint32_t size; /* sizeof(struct vmm_handover) */
	uint32_t reserved;
	struct vmm_config cfg;  /* validated by vpmu run, again by vpmu-vmm */
	char restore[PATH_MAX]; /* a snapshot to continue, or "" */
};

#endif /* VMM_HANDOVER_H */
