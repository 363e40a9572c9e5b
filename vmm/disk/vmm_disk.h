/* SPDX-License-Identifier: MIT */
/*
 * vmm_disk.h: a Linux guest's disks (`vpmu run --disk`, libvirt <disk>),
 * a module on the core. Each disk is a virtio-blk device of vmm/virtio on
 * the virtio-mmio transport: disk i has its register window at
 * VMM_DISK_MMIO_BASE + i * VMM_VIRTIO_MMIO_SIZE and ISA interrupt
 * vmm_disk_irq[i], declared to Linux on its command line
 * (virtio_mmio.device=4K@ADDR:IRQ), as Firecracker does: no PCI, no ACPI.
 * Without an initrd, the first disk is the root (root=/dev/vda) unless the
 * user's command line names another.
 *
 * The VMM opens every disk before the sandbox is entered; a vCPU thread
 * serves the requests it notifies (vmm_virtio.h). Snapshots of a VM with
 * disks are refused: the devices' state is not saved.
 */
#ifndef VMM_DISK_H
#define VMM_DISK_H

#include "vmm_core.h"

/* Above the sampling buffers' hole, below the I/O APIC. */
#define VMM_DISK_MMIO_BASE 0xf0000000ULL

/* ISA interrupts no legacy device of a vpmu Linux guest uses (COM1: 4). */
extern const unsigned int vmm_disk_irq[VMM_DISKS_MAX];

extern const struct vmm_module vmm_disk_module;

#endif /* VMM_DISK_H */
