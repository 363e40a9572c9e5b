/* SPDX-License-Identifier: MIT */
/*
 * vmm_core.h: the internal API of vmm/, the VMM core.
 *
 * A struct vmm_vm owns the KVM VM, guest RAM at GPA 0, the dispatch tables
 * (PIO ports, MSR ranges, hypercalls) and the serial console. Each struct
 * vmm_vcpu runs on its own thread (vmm_vm_run). Dispatch tables are per VM,
 * never global, so one process can hold several VMs (tests do).
 *
 * Every function returns 0 or -errno unless it says otherwise; nothing here
 * prints except the exit-time diagnostics (register dumps, --stats) and the
 * once-per-address report of unknown PIO/MMIO, which go to stderr.
 */
#ifndef VMM_H
#define VMM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <uuid/uuid.h>

#include "vm_config.h"

typedef uint64_t vmm_gpa_t;

struct vmm_vm;
struct vmm_vcpu;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Guest memory (mem.c) ------------------------------------------- */

/*
 * Return a host pointer to guest-physical range [gpa, gpa + len) if it lies
 * wholly inside guest RAM, else NULL. len 0 is allowed. Never faults.
 */
void *vmm_gpa_ptr(struct vmm_vm *vm, vmm_gpa_t gpa, uint64_t len);

/* Copy (len) bytes from guest (gpa) to (dst): 0 or -EFAULT. */
int vmm_guest_read(struct vmm_vm *vm, vmm_gpa_t gpa, void *dst, size_t len);

/* Copy (len) bytes from (src) to guest (gpa): 0 or -EFAULT. */
int vmm_guest_write(struct vmm_vm *vm, vmm_gpa_t gpa, const void *src,
		    size_t len);

/* ---- ELF loader (elf.c; pure, no KVM) ---------------------------------- */

/*
 * Validate the ELF64 x86-64 executable (file, file_size) and, only if every
 * check passes, copy its PT_LOAD segments into (mem, mem_size), which stands
 * for guest RAM at GPA 0, zero-filling p_memsz beyond p_filesz. Segments
 * must lie in [min_gpa, mem_size). Sets (*entry). On failure returns
 * -ENOEXEC (or -EINVAL/-ERANGE) with a message naming the problem in (err);
 * (mem) is left untouched.
 */
int vmm_elf_load(const void *file, size_t file_size, void *mem,
		 uint64_t mem_size, uint64_t min_gpa, uint64_t *entry,
		 char *err, size_t errlen);

/*
 * Read the file at (path) and load it as vmm_elf_load() does; messages are
 * prefixed with (path).
 */
int vmm_elf_load_file(const char *path, void *mem, uint64_t mem_size,
		      uint64_t min_gpa, uint64_t *entry, char *err,
		      size_t errlen);

/* ---- PIO dispatch (pio.c) --------------------------------------------- */

/*
 * A PIO handler. (data) holds (size) bytes: for writes, the value written;
 * for reads, the handler fills it. Return 0, or -errno to count a guest
 * error (the access completes anyway; reads then return all ones).
 */
typedef int (*vmm_pio_fn_t)(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
			    void *data, unsigned int size, void *opaque);

/*
 * Claim ports [port, port + count) for (fn). Returns -EBUSY if any port is
 * claimed, -ENOSPC when the table is full, -EINVAL for a bad range.
 * Must be called before vmm_vm_run().
 */
int vmm_pio_register(struct vmm_vm *vm, uint16_t port, unsigned int count,
		     vmm_pio_fn_t fn, void *opaque);

/* ---- MSR dispatch (msr.c) --------------------------------------------- */

struct vmm_msr_ops {
	/* Return 0 with (*val) set, or -EPERM for #GP. */
	int (*read)(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t *val,
		    void *opaque);
	/* Return 0, or -EPERM for #GP. */
	int (*write)(struct vmm_vcpu *vcpu, uint32_t msr, uint64_t val,
		     void *opaque);
};

/*
 * Trap MSRs [base, base + count) to userspace and serve them with (ops).
 * (ops) NULL only traps them: every access then gets #GP. A range may be
 * claimed by one handler; re-registering a trapped-only range with ops
 * replaces it. Returns -EBUSY on overlap with a claimed range, -ENOSPC
 * past KVM's range limit. The KVM MSR filter is rebuilt on each call.
 */
int vmm_msr_register(struct vmm_vm *vm, uint32_t base, uint32_t count,
		     const struct vmm_msr_ops *ops, void *opaque);

/* ---- Hypercalls (hypercall_doorbell.c)
 * ----------------------------------------- */

/*
 * A hypercall handler: (gpa) is the request block's guest-physical address
 * exactly as the guest passed it (not yet validated: use vmm_hc_read() and
 * vmm_hc_write()). Returns 0 or -PVPMU_E* (a negative enum pvpmu_status),
 * which the guest receives in RAX.
 */
typedef int (*vmm_hc_fn_t)(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *opaque);

/*
 * Register (fn) for hypercall (nr). Returns -EINVAL for nr 0 or out of
 * range, -EBUSY if taken. Must be called before vmm_vm_run().
 */
int vmm_hc_register(struct vmm_vm *vm, unsigned int nr, vmm_hc_fn_t fn,
		    void *opaque);

/*
 * Copy the request block at (gpa) into the host's struct (block) of (size)
 * bytes, whose first version is (min_size) bytes (its
 * PVPMU_HC_*_SIZE_VER1), under the size rule of pvpmu/abi.h §5.1: each
 * guest byte is fetched once, and (block) is only written on success.
 * Afterwards (block)'s size field holds the guest's size. Returns 0,
 * -PVPMU_EFAULT for a range outside RAM, or vmm_hc_block_fit()'s refusal.
 */
int vmm_hc_read(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, void *block, size_t size,
		size_t min_size);

/*
 * Copy the answer in (block), read by vmm_hc_read(), back to (gpa): the
 * bytes the guest knows (vmm_hc_block_answer_len()). 0 or -PVPMU_EFAULT.
 */
int vmm_hc_write(struct vmm_vcpu *vcpu, vmm_gpa_t gpa, const void *block,
		 size_t size);

/*
 * The size rule of pvpmu/abi.h §5.1 without guest memory
 * (hypercall_block.c). (raw) holds (raw_len) bytes copied from the guest;
 * its first u32 is the guest's size G. Fit them into (block), the host's
 * struct of (size) bytes with first version (min_size) bytes: copy
 * min(G, size) bytes and zero the rest of (block). Returns 0, or
 *   -PVPMU_EINVAL  G < min_size (0 included);
 *   -PVPMU_E2BIG   G > PVPMU_HC_BLOCK_MAX, or a byte beyond (size) is
 *                  not zero (a newer guest asks for something unknown);
 *   -PVPMU_EFAULT  raw_len < G (the caller did not copy the whole block).
 * (block) is left untouched on error.
 */
int vmm_hc_block_fit(void *block, size_t size, size_t min_size, const void *raw,
		     size_t raw_len);

/*
 * The bytes of (block) (the host's struct of (size) bytes, fitted by
 * vmm_hc_block_fit()) that go back to the guest: min(its size field, size).
 */
size_t vmm_hc_block_answer_len(const void *block, size_t size);

/* ---- Statistics (stats.c) --------------------------------------------- */

#define VMM_EXIT_REASONS 64

struct vmm_vcpu_stats {
	uint64_t exits[VMM_EXIT_REASONS]; /* by KVM_EXIT_* reason */
	uint64_t nr_exits;                /* all exits (not kicks) */
	uint64_t run_ns;                  /* time inside KVM_RUN */
	uint64_t pio, mmio, msr_read, msr_write, hypercalls, halts;
	uint64_t halted_ns;    /* time blocked in HLT */
	uint64_t irqs;         /* interrupts injected */
	uint64_t steal_ns;     /* runnable, not running (host) */
	uint64_t kicks;        /* KVM_RUN interrupted by a kick */
	uint64_t guest_errors; /* bad hypercalls, #GP on MSRs */
};

/* Print every vCPU's statistics to (out). */
void vmm_stats_print(struct vmm_vm *vm, FILE *out);

/* ---- VM and vCPUs (vm.c, vcpu_loop.c) --------------------------------------
 */

/* Requests a kick delivers (bits of vcpu->requests). */
#define VMM_REQ_STOP  (1U << 0)
#define VMM_REQ_TIMER (1U << 1)
#define VMM_REQ_IRQ   (1U << 2)

/* Kick the vCPU out of KVM_RUN promptly (any thread), posting (req). */
void vmm_vcpu_kick(struct vmm_vcpu *vcpu, unsigned int req);

/* Index (0 .. nr_vcpus-1) and owning VM of (vcpu). */
unsigned int vmm_vcpu_index(const struct vmm_vcpu *vcpu);
struct vmm_vm *vmm_vcpu_vm(const struct vmm_vcpu *vcpu);
struct vmm_vcpu_stats *vmm_vcpu_stats(struct vmm_vcpu *vcpu);

/* The KVM vCPU fd of (vcpu) (owned by the VM: do not close it). */
int vmm_vcpu_fd(const struct vmm_vcpu *vcpu);

/*
 * Create a VM from (cfg): open /dev/kvm, create the VM and (cfg->nr_vcpus)
 * vCPUs in 64-bit mode, map RAM, set CPUID, install the console, exit and
 * null ports, trap the PMU MSR ranges. The guest image is loaded by
 * vmm_vm_load(). (console) receives serial output (not closed by vmm).
 * Returns 0 and (*out), or -errno with a message in (err); on failure
 * nothing is left open.
 */
int vmm_vm_create(const struct vmm_config *cfg, FILE *console,
		  struct vmm_vm **out, char *err, size_t errlen);

/* Load the ELF image (path) into RAM and point every vCPU at its entry. */
int vmm_vm_load(struct vmm_vm *vm, const char *path, char *err, size_t errlen);

/*
 * Start one thread per vCPU and wait for the VM to end. Returns the VM's
 * exit status: 0 when every vCPU halted, the guest's value written to
 * PVPMU_PORT_EXIT, or VMM_STATUS_* on a fatal guest or KVM error.
 * Returns -errno if the threads could not be started.
 */
int vmm_vm_run(struct vmm_vm *vm);

#define VMM_STATUS_SHUTDOWN 250 /* triple fault */
#define VMM_STATUS_INTERNAL 251 /* KVM_EXIT_INTERNAL_ERROR, entry failure */
#define VMM_STATUS_STOPPED  252 /* stopped by the host (vmm_vm_stop) */

/* Stop the VM from any thread: every vCPU leaves KVM_RUN and ends. */
void vmm_vm_stop(struct vmm_vm *vm, int status);

/* Destroy (vm): closes every fd, unmaps RAM. NULL is allowed. */
void vmm_vm_destroy(struct vmm_vm *vm);

/* Accessors. */
unsigned int vmm_vm_nr_vcpus(const struct vmm_vm *vm);
struct vmm_vcpu *vmm_vm_vcpu(struct vmm_vm *vm, unsigned int index);
uint64_t vmm_vm_mem_size(const struct vmm_vm *vm);
const char *vmm_vm_name(const struct vmm_vm *vm);
void vmm_vm_uuid(const struct vmm_vm *vm, uuid_t out);

#endif /* VMM_H */
