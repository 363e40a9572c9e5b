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
#ifndef VMM_CORE_H
#define VMM_CORE_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <uuid/uuid.h>

#include "vm_config.h"
#include "vpmu_common.h"

typedef uint64_t vmm_gpa_t;

struct vmm_vm;
struct vmm_vcpu;

/* ---- Guest memory (guest_mem.c) --------------------------------------- */

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

/* ---- ELF loader (elf_load.c; pure, no KVM) ---------------------------- */

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

/*
 * Check the ELF64 executable (file, file_size) as vmm_elf_load() does
 * (RAM bounds aside) and set (*end) to the first guest-physical byte above
 * its PT_LOAD segments. Returns 0 or -ENOEXEC with a message in (err).
 */
int vmm_elf_extent(const void *file, size_t file_size, uint64_t *end, char *err,
		   size_t errlen);

/* ---- Guest images (guest_image.c, linux_boot.c, mptable.c) ------------- */

enum vmm_image_kind {
	VMM_IMAGE_ELF = 1, /* vpmu's freestanding ELF (pvpmu/abi.h §1) */
	VMM_IMAGE_VMLINUX, /* Linux vmlinux, entered at its 64-bit e_entry */
	VMM_IMAGE_BZIMAGE, /* Linux bzImage, entered at its 64-bit entry */
};

/* "freestanding ELF", "Linux vmlinux", "Linux bzImage". */
const char *vmm_image_kind_name(enum vmm_image_kind kind);

/*
 * Tell what the image (file, size) is, from its headers only (pure).
 * Returns 0 and (*kind), or -ENOEXEC with a message in (err).
 */
int vmm_image_detect(const void *file, size_t size, enum vmm_image_kind *kind,
		     char *err, size_t errlen);

/* A read-only mapping of an image file (kernel, initrd). */
struct vmm_image_file {
	const void *data;
	size_t size;
};

/*
 * Map the regular, non-empty file (path) of at most 1 GiB read-only.
 * Returns 0, or -errno with a message naming (path) in (err).
 */
int vmm_image_map(const char *path, struct vmm_image_file *f, char *err,
		  size_t errlen);
void vmm_image_unmap(struct vmm_image_file *f);

/* Guest-physical layout of a Linux guest (linux_boot.c). */
#define VMM_LINUX_ZERO_PAGE_GPA 0x10000ULL
#define VMM_LINUX_CMDLINE_GPA   0x20000ULL
#define VMM_MPTABLE_GPA         0x9fc00ULL

struct vmm_linux_image {
	enum vmm_image_kind kind; /* VMM_IMAGE_VMLINUX or _BZIMAGE */
	const void *kernel;
	size_t kernel_size;
	const void *initrd; /* NULL: none */
	size_t initrd_size;
	const char *cmdline; /* the whole command line */
};

struct vmm_linux_loaded {
	uint64_t entry;      /* 64-bit entry point */
	uint64_t zero_page;  /* GPA of struct boot_params, for RSI */
	uint64_t kernel_end; /* first byte above the kernel */
	uint64_t initrd_gpa; /* 0 without an initrd */
};

/*
 * Load a Linux kernel through the 64-bit boot protocol into (mem,
 * mem_size), guest RAM at GPA 0 (pure): the kernel, the zero page (setup
 * header, e820 map, command line and initrd pointers), the command line
 * and the initrd at the top of RAM. Everything is checked first: a
 * 16/32-bit-only bzImage, a kernel larger than RAM, an initrd that does
 * not fit above the kernel and a command line over the kernel's limit are
 * refused with -ENOEXEC and a message in (err), RAM untouched.
 */
int vmm_linux_load(const struct vmm_linux_image *img, void *mem,
		   uint64_t mem_size, struct vmm_linux_loaded *out, char *err,
		   size_t errlen);

/*
 * Write an MP table for (nr_cpus) vCPUs and the in-kernel I/O APIC at
 * VMM_MPTABLE_GPA (pure). Returns 0, or -EINVAL when it does not fit or
 * (nr_cpus) is not 1..254. vmm_mptable_size() is the bytes it takes.
 */
int vmm_mptable_write(void *mem, uint64_t mem_size, unsigned int nr_cpus);
size_t vmm_mptable_size(unsigned int nr_cpus);

/*
 * Merge the space-separated kernel parameters (needed) into the command
 * line (line) the user wrote, into (out, len) (pure, linux_cmdline.c):
 * each word of (needed) whose name (up to '=') the line does not already
 * give is added after the line's parameters and before a "--" that starts
 * init's arguments; the user's words win. (added, added_len), if not NULL,
 * gets the words that were added. 0, or -ENAMETOOLONG if it does not fit.
 */
int vmm_cmdline_merge(const char *line, const char *needed, char *out,
		      size_t len, char *added, size_t added_len);

/* ---- The kind of KVM host (host_kind.c) -------------------------------- */

enum vmm_host_kind {
	VMM_HOST_UNKNOWN,
	VMM_HOST_VMX, /* hardware VT-x (kvm_intel) */
	VMM_HOST_SVM, /* hardware SVM (kvm_amd) */
	VMM_HOST_PVM, /* software virtualization (kvm_pvm) */
};

struct vmm_host {
	enum vmm_host_kind kind;
	bool nested; /* the host kernel is itself a guest */
	bool hw_pmu; /* the host has a hardware PMU (perf's "cpu" device) */
	/*
	 * "tsc" is among the host kernel's usable clocksources. Where it is
	 * not (unsynchronized or stopping TSCs: the nested rig's L1 under
	 * TCG), KVM moves each vCPU's TSC offset at every KVM_RUN, so no host
	 * TSC stamp tells the guest's TSC at entry.
	 */
	bool tsc_stable;
};

/*
 * What one kick (a timer signal ending KVM_RUN, then the next KVM_RUN)
 * costs a guest on this host, measured on a bare vCPU (kick_probe.c):
 * the guest's work it took (as time at the guest's own pace), the time
 * the guest stood still, the user space between KVM_RUN's return and the
 * next call, and the rest, the kernel's part no VMM can time itself; and
 * the part of a kick a VMM does see, from the timer's due time to
 * KVM_RUN's return, against which the kernel's part is scaled when the
 * host runs slower or faster than at the probe.
 */
struct vmm_kick_cost {
	uint64_t lost_ns;   /* guest work one kick took, ns */
	uint64_t gap_ns;    /* of which the guest stood still */
	uint64_t user_ns;   /* of which user space */
	uint64_t kernel_ns; /* lost_ns - user_ns: signal, exit, re-entry */
	uint64_t exit_ns;   /* timer due to KVM_RUN's return, as seen */
	/* The host's probes kernel_ns is the mean of (kick_history.c). */
	unsigned int nr_probes;
	/*
	 * The probe thread's share of a CPU while it ran, ppm: below
	 * VMM_KICK_QUIET_PPM it waited for one (a busy host), and what it
	 * measured is the host's contention as much as its kicks.
	 */
	uint32_t cpu_ppm;
};
#define VMM_KICK_QUIET_PPM 980000

/*
 * Measure it (about 100 ms; before the seccomp sandbox: it creates a VM
 * on (kvm_fd)). Uses SIGUSR2 on the calling thread. -errno if the probe
 * could not run or measured nothing.
 */
int vmm_kick_probe(int kvm_fd, struct vmm_kick_cost *cost);

/*
 * Add (cost), just probed, to the host's recent probes kept in (dir) (the
 * runtime directory), and make its kernel part the trimmed mean of their
 * kernel parts per ns of exit, times its own exit (nr_probes says of how
 * many). A probe whose thread waited for a CPU (cpu_ppm) is not added:
 * its kernel part and exit become the kept probes' mean, if any. *replaced:
 * a file there that was not a history of ours was replaced. (cost) is set
 * even when the file could not be written, which returns -errno.
 */
int vmm_kick_history_update(const char *dir, struct vmm_kick_cost *cost,
			    bool *replaced);

/* Probe this host (its /sys and CPUID). */
void vmm_host_probe(struct vmm_host *host);
/* The same from a sysfs tree at (sysfs_root), for tests. */
void vmm_host_probe_at(const char *sysfs_root, bool nested,
		       struct vmm_host *host);
/* "hardware VT-x", "hardware SVM", "PVM (software virtualization)"... */
const char *vmm_host_kind_name(enum vmm_host_kind kind);
/* KVM paravirtual features (1 << KVM_FEATURE_*) a guest must not see. */
uint32_t vmm_host_hidden_kvm_features(const struct vmm_host *host);
/* Kernel parameters a stock Linux needs on this host ("" for none). */
const char *vmm_host_linux_params(const struct vmm_host *host);
/* Lines naming the host kind and what it implies, each after (prefix). */
void vmm_host_describe(const struct vmm_host *host, const char *prefix,
		       FILE *out);

/* ---- PIO dispatch (pio_dispatch.c) ------------------------------------ */

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

/* ---- MSR dispatch (msr_dispatch.c) ------------------------------------ */

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

/* ---- Messages (vmm_log.c) -------------------------------------------- */

enum vmm_log_level { VMM_LOG_ERROR, VMM_LOG_WARN, VMM_LOG_INFO, VMM_LOG_DEBUG };

/*
 * Print "vpmu: NAME: message" on stderr as one line (no newline in (fmt)),
 * unless (level) is above VPMU_LOG (error, warn, info, debug; default
 * info). (vm) NULL prints "-" for the name.
 */
__attribute__((format(printf, 3, 4))) void vmm_log(const struct vmm_vm *vm,
						   enum vmm_log_level level,
						   const char *fmt, ...);

/* ---- Statistics (vcpu_stats.c) ---------------------------------------- */

#define VMM_EXIT_REASONS 64

struct vmm_vcpu_stats {
	uint64_t exits[VMM_EXIT_REASONS]; /* by KVM_EXIT_* reason */
	uint64_t nr_exits;                /* all exits (not kicks) */
	uint64_t run_ns;                  /* time inside KVM_RUN */
	uint64_t pio, mmio, msr_read, msr_write, hypercalls, halts;
	uint64_t halted_ns;    /* time blocked in HLT */
	uint64_t irqs;         /* interrupts injected */
	uint64_t steal_ns;     /* runnable, not running (host) */
	uint64_t cpu_ns;       /* the thread's CPU time when it ended */
	uint64_t kicks;        /* KVM_RUN interrupted by a kick */
	uint64_t guest_errors; /* bad hypercalls, #GP on MSRs */
	uint64_t quirks;       /* host-refused instructions finished (PVM) */
};

/*
 * CPU time the calling thread has received, ns (CLOCK_THREAD_CPUTIME_ID).
 * A system call: read only for an hv_cpu_ns event (vm_pmu.c; not after
 * every KVM_RUN), and into stats.cpu_ns when the vCPU thread ends.
 */
uint64_t vmm_thread_cpu_ns(void);
/*
 * CPU time (vcpu)'s thread has received, ns, read from any thread of the
 * VMM (an operator's read on the control thread): its kernel clock while
 * it runs, the figure it left when it ended.
 */
uint64_t vmm_vcpu_cpu_ns(const struct vmm_vcpu *vcpu);

/* Print every vCPU's statistics to (out). */
void vmm_stats_print(struct vmm_vm *vm, FILE *out);

/* ---- Modules (vm.c) ---------------------------------------------------
 *
 * The core knows the KVM machine only. What runs on top of it (the guest
 * PMU interfaces of vmm/pv, the control server of vmm/ctl) registers a
 * struct vmm_module on the VM, as Solo5's hvt modules register with hvt:
 * the core calls each hook at one fixed point of the VM's life or of the
 * vCPU loop, in registration order (vm_free in reverse), and keeps one
 * opaque per-VM and per-vCPU pointer per module (vmm_machine.h). Hooks
 * are plain calls through a function pointer on the vCPU thread: no
 * allocation, no lock added. Every hook may be NULL.
 */
#define VMM_MODULES_MAX 4

struct vmm_snapshot_hooks; /* vmm_snapshot.h */

struct vmm_module {
	const char *name;
	/* CPUID entries cpuid_add may append to a vCPU's list. */
	unsigned int cpuid_extra;

	/* ---- VM life, main thread ---- */
	/*
	 * With the built-in devices, after the core's hypercalls and before
	 * the MSR filter is installed (claims ports, hypercalls, MSRs).
	 */
	int (*vm_devices)(struct vmm_vm *vm);
	/* Once the vCPUs exist; on failure a message in (err). */
	int (*vm_init)(struct vmm_vm *vm, const struct vmm_config *cfg,
		       char *err, size_t errlen);
	/* vmm_vm_destroy(); also after a failed or missing vm_init. */
	void (*vm_free)(struct vmm_vm *vm);
	/* The guest image (path) is loaded (its symbols). */
	void (*image_set)(struct vmm_vm *vm, const char *path);
	/*
	 * vmm_vm_run(): before any vCPU thread starts and before operators
	 * can connect, so that what it measures has the VMM to itself.
	 */
	void (*run_prepare)(struct vmm_vm *vm);
	/*
	 * vmm_vm_run(): every vCPU thread started, none yet in the guest:
	 * they enter it once every run_start has returned (failure only
	 * warns).
	 */
	int (*run_start)(struct vmm_vm *vm);
	/* vmm_vm_run(): every vCPU thread joined. */
	void (*run_end)(struct vmm_vm *vm);
	/* The VM is stopping (any thread): wake what waits on the guest. */
	void (*vm_stopping)(struct vmm_vm *vm);
	/* The snapshot's sections for the module's state (one module). */
	const struct vmm_snapshot_hooks *snapshot;

	/* ---- vCPU thread ---- */
	/* The thread starts (before the sandbox) and ends. */
	int (*vcpu_start)(struct vmm_vcpu *vcpu);
	void (*vcpu_end)(struct vmm_vcpu *vcpu);
	/* Before every KVM_RUN (deadlines, interrupt injection). */
	void (*before_run)(struct vmm_vcpu *vcpu);
	/*
	 * KVM_RUN returned at (t_ret) (CLOCK_MONOTONIC) after (run_ns) in
	 * it: an exit (after the exit statistics count it), or (kicked).
	 */
	void (*after_run)(struct vmm_vcpu *vcpu, uint64_t run_ns,
			  uint64_t t_ret, bool kicked);
	/* The exit or the kick that after_run accounted is handled. */
	void (*exit_done)(struct vmm_vcpu *vcpu);
	/* Paused for a snapshot between a kick and the next KVM_RUN. */
	void (*resumed)(struct vmm_vcpu *vcpu);
	/*
	 * Does an interrupt the module holds wake (vcpu) from HLT? Under
	 * vm->lock. (deliverable): for the test whether the VM may end,
	 * which also asks that the interrupt have somewhere to go.
	 */
	bool (*halt_wakes)(struct vmm_vcpu *vcpu, bool deliverable);
	/* Claim the KVM_EXIT_MMIO in vcpu->run: true if handled. */
	bool (*mmio)(struct vmm_vcpu *vcpu);
	/* Rewrite a CPUID entry of (vcpu), then append up to cpuid_extra. */
	void (*cpuid_entry)(struct vmm_vcpu *vcpu, struct kvm_cpuid_entry2 *e);
	void (*cpuid_add)(struct vmm_vcpu *vcpu, struct kvm_cpuid2 *c);
	/*
	 * (vcpu) was accounted (its counts are current), or it blocked with
	 * nothing left to account: vmm_vcpu_accounted().
	 */
	void (*vcpu_accounted)(struct vmm_vcpu *vcpu);
};

/*
 * Register (m) on (vm), after those already registered: 0, -EEXIST
 * when it is, -ENOSPC past VMM_MODULES_MAX. Its per-VM and per-vCPU
 * pointers start NULL (vmm_machine.h sets and reads them).
 */
int vmm_vm_add_module(struct vmm_vm *vm, const struct vmm_module *m);

/*
 * (vcpu) was accounted: call every module's vcpu_accounted hook. For the
 * module that accounts (on the vCPU thread), so that those above it see
 * the counts at the exact point they became current.
 */
void vmm_vcpu_accounted(struct vmm_vcpu *vcpu);

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

/* Is the calling thread (vcpu)'s own vCPU thread (in vmm_vcpu_thread)? */
bool vmm_vcpu_is_self(const struct vmm_vcpu *vcpu);

/*
 * Create a VM from (cfg): open /dev/kvm, create the VM and (cfg->nr_vcpus)
 * vCPUs in 64-bit mode, map RAM, set CPUID, install the console, exit and
 * null ports, and register the NULL-terminated (modules) (may be NULL),
 * whose hooks set up the rest. The guest image is loaded by
 * vmm_vm_load(). (console) receives serial output (not closed by vmm).
 * Returns 0 and (*out), or -errno with a message in (err); on failure
 * nothing is left open.
 */
int vmm_vm_create(const struct vmm_config *cfg, FILE *console,
		  const struct vmm_module *const *modules, struct vmm_vm **out,
		  char *err, size_t errlen);

/*
 * Load the image (path) into RAM and point the vCPUs at its entry: a
 * freestanding ELF (every vCPU in long mode at its entry), or the Linux
 * kernel the VM was created for (vmm_vm_create() saw (cfg->image)), with
 * its initrd and command line; only vCPU 0 starts, the others wait for
 * Linux's INIT/SIPI in the in-kernel local APIC.
 */
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
#define VMM_STATUS_RESET    253 /* the guest reset the machine (port 0x64) */

/* Stop the VM from any thread: every vCPU leaves KVM_RUN and ends. */
void vmm_vm_stop(struct vmm_vm *vm, int status);

/* Destroy (vm): closes every fd, unmaps RAM. NULL is allowed. */
void vmm_vm_destroy(struct vmm_vm *vm);

/*
 * The vCPU threads' ids, at most (max), 0 for a vCPU without a running
 * thread: what the sandbox lets perf_event_open name besides the caller.
 * Complete once vmm_vm_run() starts the modules (run_start). Any thread;
 * returns the number of entries written.
 */
unsigned int vmm_vm_vcpu_tids(const struct vmm_vm *vm, pid_t *tids,
			      unsigned int max);

/* Accessors. */
unsigned int vmm_vm_nr_vcpus(const struct vmm_vm *vm);
struct vmm_vcpu *vmm_vm_vcpu(struct vmm_vm *vm, unsigned int index);
uint64_t vmm_vm_mem_size(const struct vmm_vm *vm);
const char *vmm_vm_name(const struct vmm_vm *vm);
enum vmm_image_kind vmm_vm_image_kind(const struct vmm_vm *vm);
/* The host the VM runs on (probed when it was created). */
const struct vmm_host *vmm_vm_host(const struct vmm_vm *vm);
/* Linux: the host's parameters added to the command line ("": none). */
const char *vmm_vm_linux_params_added(const struct vmm_vm *vm);
void vmm_vm_uuid(const struct vmm_vm *vm, uuid_t out);

/*
 * Guest-virtual reads for call chains (guest_walk.c). (m) is guest RAM as
 * [0, size) at host (base); every access is bounds-checked against it.
 * Translation is x86-64 4-level paging from (cr3) (4 KiB, 2 MiB and 1 GiB
 * pages); a non-canonical address, a non-present entry or one pointing
 * outside RAM is -EFAULT.
 */
struct vmm_gmem_view {
	const unsigned char *base;
	uint64_t size;
};

int vmm_gva_to_gpa(const struct vmm_gmem_view *m, uint64_t cr3, uint64_t va,
		   uint64_t *gpa);

/* Copy (len) bytes at guest-virtual (va), across pages: 0 or -EFAULT. */
int vmm_gva_read(const struct vmm_gmem_view *m, uint64_t cr3, uint64_t va,
		 void *dst, size_t len);

/*
 * Walk the frame-pointer chain from (rbp) (each frame: saved rbp, return
 * address) of a stack whose top is (rsp): store up to (max) return
 * addresses, innermost first, in (out) and return how many. The walk ends
 * at the first unreadable, misaligned, non-increasing or far-off frame.
 */
unsigned int vmm_fp_unwind(const struct vmm_gmem_view *m, uint64_t cr3,
			   uint64_t rbp, uint64_t rsp, uint64_t *out,
			   unsigned int max);

/*
 * The caller of a function that has pushed nothing yet, which the rbp
 * chain misses: a sample at a function's entry (before `push %rbp`), or in
 * a leaf built without a frame (GCC drops the frame of a leaf that never
 * moves rsp, even with -mno-omit-leaf-frame-pointer). Then [rsp] is the
 * return address. Taken only when verified: [rsp] = R follows a direct
 * call (e8 rel32) whose target T has T <= rip < T + 64 KiB, and T does not
 * begin with `push %rbp` unless rip == T. true with (*ret) = R.
 */
bool vmm_leaf_caller(const struct vmm_gmem_view *m, uint64_t cr3, uint64_t rip,
		     uint64_t rsp, uint64_t *ret);

#endif /* VMM_CORE_H */
