/* SPDX-License-Identifier: MIT */
/*
 * vmm_machine.h: the layout of the KVM machine (struct vmm_vm, struct
 * vmm_vcpu) and the core services the modules above it (vmm/pv, vmm/ctl)
 * use on their vCPUs. Part of vmm_core's interface: the modules reach into
 * the machine for its fds, kvm_run, statistics and locks, and keep their
 * own state behind the opaque per-VM and per-vCPU pointers the core holds
 * for each registered module (struct vmm_module, vmm_core.h).
 */
#ifndef VMM_MACHINE_H
#define VMM_MACHINE_H

#include "vmm_core.h"

#include <limits.h>
#include <sys/types.h>

#include <pvpmu/abi.h>

#define VMM_PIO_MAX        32
#define VMM_MSR_RANGES_MAX 16 /* KVM_MSR_FILTER_MAX_RANGES */
#define VMM_MMIO_REPORTED  64

struct vmm_pio_range {
	uint16_t port;
	unsigned int count;
	vmm_pio_fn_t fn;
	void *opaque;
};

struct vmm_msr_range {
	uint32_t base, count;
	const struct vmm_msr_ops *ops; /* NULL: trapped, #GP */
	void *opaque;
};

struct vmm_hc_entry {
	vmm_hc_fn_t fn;
	void *opaque;
};

#define VMM_UART_RX_SIZE 256

/* 8250/16550 UART state (uart16550.c). */
struct vmm_uart {
	pthread_mutex_t lock;
	FILE *out;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	/* Interrupts (Linux guests): (irq) is called when the line changes. */
	void (*irq)(void *opaque, bool level);
	void *irq_opaque;
	bool irq_level, thre_pending;
	/* Received bytes (console input), a ring; dropped when full. */
	uint8_t rx[VMM_UART_RX_SIZE];
	unsigned int rx_head, rx_count;
	uint64_t rx_dropped;
	/* The console input thread (vmm_uart_start_input). */
	pthread_t input_thread;
	bool has_input_thread;
	int input_fd, stop_fd[2];
};

/*
 * Where the user-space part of a kick goes (`vpmu run --stats`).
 * Stamped with the TSC (no system call on any host, unlike a clock read
 * where the clock source has no vDSO), summed over kicks in cycles and
 * printed as means in us; diagnostics only, not part of a snapshot.
 */
struct vmm_kick_stats {
	uint64_t timer;    /* kicks by the vPMU deadline timer (SI_TIMER) */
	uint64_t early;    /* timer kicks before the run-time deadline */
	uint64_t outside;  /* signal taken outside KVM_RUN (immediate exit) */
	uint64_t rearms;   /* timer_settime calls on the kick path */
	uint64_t absorbed; /* timer signals between exits: re-armed, no kick */
	/* Cycles: signal handler -> KVM_RUN returned -> accounting -> shared
	 * page -> requests and next deadline -> timer re-armed -> KVM_RUN. */
	uint64_t exit, acct, shared, deadline, arm, entry;
	uint64_t t_done; /* TSC when the kick's accounting ended, 0 = none */
	uint64_t t_arm;  /* cycles timer_settime took before this entry */
	uint64_t kernel_charged; /* ns charged for the kernel's part */
	bool by_timer; /* the kick being handled includes our timer's */
};

struct vmm_vcpu {
	struct vmm_vm *vm;
	unsigned int index;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool has_thread;
	atomic_uint requests;
	bool halted;
	pid_t tid;
	struct vmm_vcpu_stats stats;
	/* Each module's per-vCPU state (vmm_vcpu_module_priv). */
	void *mod_priv[VMM_MODULES_MAX];
	struct vmm_kick_stats kick; /* vcpu_loop.c */
};

struct vmm_vm {
	int kvm_fd, vm_fd;
	/*
	 * What a kick costs a guest on this host (vmm_kick_probe), measured
	 * on the main thread before the vCPU threads start (so they read it
	 * plainly); kernel_ns 0 if the probe failed or did not run.
	 */
	struct vmm_kick_cost kick_cost;
	size_t run_size;
	void *mem;
	uint64_t mem_size;
	char name[VMM_NAME_MAX];
	uuid_t uuid;
	bool has_sync_regs;
	uint64_t entry;

	unsigned int nr_vcpus;
	struct vmm_vcpu *vcpus;

	struct vmm_pio_range pio[VMM_PIO_MAX];
	unsigned int nr_pio;
	struct vmm_msr_range msr[VMM_MSR_RANGES_MAX];
	unsigned int nr_msr;
	struct vmm_hc_entry hc[PVPMU_HC_MAX];
	struct vmm_uart uart;
	/* The modules registered on the VM, in call order, and their state. */
	const struct vmm_module *mods[VMM_MODULES_MAX];
	unsigned int nr_mods;
	void *mod_priv[VMM_MODULES_MAX];
	uint64_t tsc_khz; /* the vCPUs' TSC rate, 0 = unknown (--stats) */
	struct vmm_snapshot *snap;      /* vmm_snapshot.h */
	enum vmm_image_kind image_kind; /* of the configured image */
	bool irqchip;                   /* KVM's PIC, I/O APIC, LAPICs, PIT */
	bool sandbox;          /* vCPU and control threads seccomp-filtered */
	char initrd[PATH_MAX]; /* Linux: from the config */
	char cmdline[VMM_CMDLINE_MAX];
	bool has_cmdline;
	struct vmm_host host; /* probed once, at creation */
	/* Linux: the host's parameters added to the command line. */
	char cmdline_added[VMM_CMDLINE_MAX];
	/* Linux: the modules' devices' parameters (vmm_vm_add_linux_params). */
	char linux_params[VMM_CMDLINE_MAX];
	/* Why snapshots are refused (vmm_vm_refuse_snapshots), or NULL. */
	const char *snapshot_refusal;

	/* Run state, under (lock). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int nr_halted;
	/* vCPU threads that have set their (tid) this run (the sandbox). */
	unsigned int nr_tids;
	/*
	 * The modules' run_start is done (e.g. the registry entry written):
	 * no vCPU runs guest code before, so a guest's first output never
	 * comes before the operators can find its VM.
	 */
	bool run_started;
	bool stopping;
	int status;

	/* Unknown PIO/MMIO reported once per address, under (lock). */
	uint8_t pio_reported[65536 / 8];
	uint64_t mmio_reported[VMM_MMIO_REPORTED];
	unsigned int nr_mmio_reported;
};

/*
 * The state module (m) keeps for (vm) or (vcpu), NULL when (m) is not
 * registered on the VM or has set none. A scan of at most
 * VMM_MODULES_MAX pointers, no lock: the modules are fixed once the VM
 * runs.
 */
static inline int vmm_module_slot(const struct vmm_vm *vm,
				  const struct vmm_module *m)
{
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i] == m)
			return (int)i;
	}
	return -1;
}

static inline void *vmm_vm_module_priv(const struct vmm_vm *vm,
				       const struct vmm_module *m)
{
	int s = vmm_module_slot(vm, m);

	return s < 0 ? NULL : vm->mod_priv[s];
}

/* Set (m)'s per-VM state; (m) must be registered on (vm). */
static inline void vmm_vm_set_module_priv(struct vmm_vm *vm,
					  const struct vmm_module *m,
					  void *priv)
{
	int s = vmm_module_slot(vm, m);

	if (s >= 0)
		vm->mod_priv[s] = priv;
}

static inline void vmm_vcpu_set_module_priv(struct vmm_vcpu *vcpu,
					    const struct vmm_module *m,
					    void *priv)
{
	int s = vmm_module_slot(vcpu->vm, m);

	if (s >= 0)
		vcpu->mod_priv[s] = priv;
}

static inline void *vmm_vcpu_module_priv(const struct vmm_vcpu *vcpu,
					 const struct vmm_module *m)
{
	int s = vmm_module_slot(vcpu->vm, m);

	return s < 0 ? NULL : vcpu->mod_priv[s];
}

/* irqchip.c: deliver fixed (vector) to (vcpu)'s local APIC (any thread). */
int vmm_irq_vector(struct vmm_vcpu *vcpu, unsigned int vector);
/*
 * irqchip.c: set ISA interrupt line (irq) of a Linux guest's I/O APIC and
 * PIC to (level) (any thread): 0, or -ENODEV without the irqchip.
 */
int vmm_irq_line(struct vmm_vm *vm, unsigned int irq, bool level);
/*
 * linux_devices.c: add kernel parameters (words, space-separated) a
 * module's devices need to a Linux guest's command line, from vm_init;
 * like the host's, each is added unless the user's line names it. 0, or
 * -ENAMETOOLONG.
 */
int vmm_vm_add_linux_params(struct vmm_vm *vm, const char *words);
/*
 * vm.c: refuse every snapshot of (vm), saying (why) (a static string):
 * for a module whose devices' state a snapshot would not hold.
 */
void vmm_vm_refuse_snapshots(struct vmm_vm *vm, const char *why);
/*
 * Raise the architectural PMI on (vcpu) as the guest's LVTPC says (vCPU
 * thread, outside KVM_RUN): 0 delivered, -EAGAIN masked (dropped),
 * -EINVAL a delivery mode other than fixed/NMI.
 */
int vmm_irq_lvtpc_pmi(struct vmm_vcpu *vcpu);

/* cpuid_filter.c: set (vcpu)'s CPUID from KVM's supported list, filtered. */
int vmm_cpuid_setup(struct vmm_vcpu *vcpu, const struct kvm_cpuid2 *host);
/* Fetch KVM_GET_SUPPORTED_CPUID into a malloc'd list (*out). */
int vmm_cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out);

/*
 * vcpu_loop.c: did the calling thread take its deadline timer's kick
 * signal (si_code SI_TIMER, not a tgkill) since the last call? Cleared by
 * the call: the timer is one-shot, so only then is it armed again.
 */
bool vmm_vcpu_take_timer_kick(void);
/*
 * vcpu_loop.c, on (vcpu)'s thread between two KVM_RUNs: if the only kick
 * signal since the last KVM_RUN was the deadline timer's, cancel the
 * immediate exit it set and return true (the timer is no longer armed).
 * A timer due while the VMM handles an exit has nothing to interrupt: the
 * exit's accounting already served every deadline the run time reached.
 */
bool vmm_vcpu_absorb_timer_kick(struct vmm_vcpu *vcpu);
/*
 * Mark (vcpu) as blocked (halted, or waiting for a message forever) and
 * back. The last vCPU to block ends the VM with status 0.
 */
void vmm_vcpu_block_begin(struct vmm_vcpu *vcpu);
void vmm_vcpu_block_end(struct vmm_vcpu *vcpu);

#endif /* VMM_MACHINE_H */
