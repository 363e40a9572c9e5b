/* SPDX-License-Identifier: MIT */
/*
 * fake_vm.h: a struct vmm_vm without KVM for the fuzz targets: guest RAM
 * is plain memory, the KVM fds are -1 (every ioctl the handlers try fails
 * with EBADF, as a refusing host would), each vCPU has a kvm_run page of
 * its own with sync regs, and the PMU domain, the hypercall doorbell, the
 * perfmon2 hypercalls and the control server state are the real ones.
 * The VM is marked stopping, so a READ_MSG that would wait returns at once.
 * No vCPU thread runs: libvpmu accounts nothing unless the target does.
 *
 * Creating the control state costs page faults on a few MiB, so there is
 * one VM per process, brought back to its state at creation for every
 * input by fake_vm_fresh(): RAM zeroed, statistics and per-vCPU PMU state
 * cleared, the PMU domain rebuilt (so context handles start over and every
 * input sees the same handles), operator clients released.
 */
#ifndef VPMU_FUZZ_FAKE_VM_H
#define VPMU_FUZZ_FAKE_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "vmm_core_priv.h"
#include "vmm_pv.h"

#define FAKE_VM_MEM (2ULL << 20) /* VMM_MEM_MIN */

#define FAKE_VM_VCPUS 2

/*
 * The VM (FAKE_VM_VCPUS vCPUs, FAKE_VM_MEM of RAM) as at creation. RAM is
 * zeroed again only if (ram_written): the target may have written it
 * (a guest program). Its pages are dropped (MADV_DONTNEED), so an input
 * pays for the few it touches, not for storing 2 MiB; the control-socket
 * target never writes guest RAM and skips even that.
 */
struct vmm_vm *fake_vm_fresh(bool ram_written);

/*
 * Exit (vcpu) as `out (port), eax` with (value) would, through the VMM's
 * PIO dispatch; returns the status the guest would see in RAX.
 */
int64_t fake_vm_out32(struct vmm_vcpu *vcpu, uint16_t port, uint32_t value);

#endif /* VPMU_FUZZ_FAKE_VM_H */
