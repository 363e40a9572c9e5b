/* SPDX-License-Identifier: MIT */
/*
 * vmm_core_priv.h: struct layouts shared inside vmm/ only.
 */
#ifndef VMM_CORE_PRIV_H
#define VMM_CORE_PRIV_H

#include "vmm_core.h"

#include <pvpmu/abi.h>

#include "vm_pmu.h"

struct vmm_control;

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
	uint64_t timer;   /* kicks by the vPMU deadline timer (SI_TIMER) */
	uint64_t early;   /* timer kicks before the run-time deadline */
	uint64_t outside; /* signal taken outside KVM_RUN (immediate exit) */
	uint64_t rearms;  /* timer_settime calls on the kick path */
	/* Cycles: signal handler -> KVM_RUN returned -> accounting -> shared
	 * page -> requests and next deadline -> timer re-armed -> KVM_RUN. */
	uint64_t exit, acct, shared, deadline, arm, entry;
	uint64_t t_done; /* TSC when the kick's accounting ended, 0 = none */
	uint64_t t_arm;  /* cycles timer_settime took before this entry */
	uint64_t reentry_est; /* ns charged for the kernel's re-entries */
	bool by_timer;        /* the kick being handled includes our timer's */
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
	struct vmm_vcpu_pmu pmu;
	struct vmm_kick_stats kick; /* vcpu_loop.c */
};

struct vmm_vm {
	int kvm_fd, vm_fd;
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
	struct vmm_pmu pmu;
	struct vmm_control *ctl;   /* operator control socket (ctl_server.h) */
	struct vmm_snapshot *snap; /* vmm_snapshot.h */
	enum vmm_image_kind image_kind; /* of the configured image */
	bool irqchip;                   /* KVM's PIC, I/O APIC, LAPICs, PIT */
	bool sandbox;          /* vCPU and control threads seccomp-filtered */
	char initrd[PATH_MAX]; /* Linux: from the config */
	char cmdline[VMM_CMDLINE_MAX];
	bool has_cmdline;
	struct vmm_host host; /* probed once, at creation */
	/* Linux: the host's parameters added to the command line. */
	char cmdline_added[VMM_CMDLINE_MAX];

	/* Run state, under (lock). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int nr_halted;
	bool stopping;
	int status;

	/* Unknown PIO/MMIO reported once per address, under (lock). */
	uint8_t pio_reported[65536 / 8];
	uint64_t mmio_reported[VMM_MMIO_REPORTED];
	unsigned int nr_mmio_reported;
};

/* uart16550.c */
void vmm_uart_init(struct vmm_uart *uart, FILE *out);
void vmm_uart_destroy(struct vmm_uart *uart);
int vmm_uart_pio(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		 void *data, unsigned int size, void *opaque);

/*
 * uart16550.c: console input. Read (fd) on a thread of its own and feed the
 * receive buffer (raising the RX interrupt); stopped by vmm_uart_destroy().
 */
int vmm_uart_start_input(struct vmm_uart *uart, int fd);

/* irqchip.c: Linux guests' interrupt controllers, all in KVM. */
int vmm_irqchip_create(struct vmm_vm *vm);
/* Set ISA interrupt line (irq) to (level): 0, or -ENODEV without irqchip. */
int vmm_irq_line(struct vmm_vm *vm, unsigned int irq, bool level);
/* Deliver fixed (vector) to (vcpu)'s local APIC (any thread). */
int vmm_irq_vector(struct vmm_vcpu *vcpu, unsigned int vector);
/*
 * Raise the architectural PMI on (vcpu) as the guest's LVTPC says (vCPU
 * thread, outside KVM_RUN): 0 delivered, -EAGAIN masked (dropped),
 * -EINVAL a delivery mode other than fixed/NMI.
 */
int vmm_irq_lvtpc_pmi(struct vmm_vcpu *vcpu);

/* linux_devices.c: the legacy ports Linux touches, reset port 0x64. */
int vmm_linux_devices_init(struct vmm_vm *vm);
/* Load the configured Linux image: kernel, initrd, command line, MP table. */
int vmm_linux_boot(struct vmm_vm *vm, const char *path, char *err,
		   size_t errlen);

/* pvm_quirks.c: emulate what the host's instruction emulator refused. */
bool vmm_pvm_quirk_handled(struct vmm_vcpu *vcpu);
/* Kernel parameters a PVM host needs, merged unless already given. */
extern const char vmm_pvm_cmdline[];

/* pio_dispatch.c: dispatch a KVM_EXIT_IO. */
void vmm_pio_dispatch(struct vmm_vcpu *vcpu);

/*
 * msr_dispatch.c: install the KVM MSR filter; dispatch
 * KVM_EXIT_X86_RDMSR/WRMSR.
 */
int vmm_msr_init(struct vmm_vm *vm);
void vmm_msr_dispatch(struct vmm_vcpu *vcpu);

/* hypercall_doorbell.c: the doorbell ports and built-in calls. */
int vmm_hc_init(struct vmm_vm *vm);

/* cpuid_filter.c: set (vcpu)'s CPUID from KVM's supported list, filtered. */
int vmm_cpuid_setup(struct vmm_vcpu *vcpu, const struct kvm_cpuid2 *host);
/* Fetch KVM_GET_SUPPORTED_CPUID into a malloc'd list (*out). */
int vmm_cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out);

/*
 * longmode_boot.c: page tables/GDT in RAM; long-mode registers for a vCPU:
 * RIP = (entry), RSI = (rsi), RDI = the vCPU index; Linux's selectors
 * (__BOOT_CS 0x10, __BOOT_DS 0x18) when (vm->image_kind) is a Linux one.
 */
void vmm_boot_write_tables(struct vmm_vm *vm);
int vmm_boot_setup_vcpu(struct vmm_vcpu *vcpu, uint64_t entry, uint64_t rsi);

/* vcpu_loop.c */
void *vmm_vcpu_thread(void *arg);
int vmm_vcpu_signal_init(void);
/*
 * Did the calling thread take its deadline timer's kick signal
 * (si_code SI_TIMER, not a tgkill) since the last call? Cleared by the
 * call: the timer is one-shot, so only then is it armed again.
 */
bool vmm_vcpu_take_timer_kick(void);
/*
 * Mark (vcpu) as blocked (halted, or waiting for a message forever) and
 * back. The last vCPU to block ends the VM with status 0.
 */
void vmm_vcpu_block_begin(struct vmm_vcpu *vcpu);
void vmm_vcpu_block_end(struct vmm_vcpu *vcpu);

/* vcpu_dump.c: print (vcpu)'s registers to stderr, prefixed by (why). */
void vmm_vcpu_dump(struct vmm_vcpu *vcpu, const char *why);

/* Report an unknown port or MMIO address once (stderr). */
void vmm_report_unknown_pio(struct vmm_vm *vm, uint16_t port, bool is_write);
void vmm_report_unknown_mmio(struct vmm_vm *vm, uint64_t addr, bool is_write);

#endif /* VMM_CORE_PRIV_H */
