/* SPDX-License-Identifier: MIT */
/*
 * vmm_core_priv.h: what the files of vmm/core share and nothing above
 * it uses (device models, dispatch, boot, the vCPU threads).
 */
#ifndef VMM_CORE_PRIV_H
#define VMM_CORE_PRIV_H

#include "vmm_machine.h"

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

/* vcpu_dump.c: print (vcpu)'s registers to stderr, prefixed by (why). */
void vmm_vcpu_dump(struct vmm_vcpu *vcpu, const char *why);

/* Report an unknown port or MMIO address once (stderr). */
void vmm_report_unknown_pio(struct vmm_vm *vm, uint16_t port, bool is_write);
void vmm_report_unknown_mmio(struct vmm_vm *vm, uint64_t addr, bool is_write);

/*
 * vm_run.c: (vcpu)'s thread sets its id, and waits until every vCPU
 * thread has (or the VM stops): the sandbox's perf_event_open rule names
 * them all, fixed when each thread enters it.
 */
void vmm_vcpu_set_tid(struct vmm_vcpu *vcpu);
void vmm_vm_wait_vcpu_tids(struct vmm_vm *vm);
void vmm_vm_wait_run_started(struct vmm_vm *vm);

/*
 * kick_probe.c: one phase of the kick probe, as run_phase measured it:
 * its wall time, the guest's time stood still, the kicks, the user space
 * between them, the guest loop's turns and the kicks' exits (timer due to
 * KVM_RUN's return), ns.
 */
struct vmm_probe_phase {
	uint64_t wall_ns, gap_ns, kicks, user_ns, turns, exit_ns;
};
/*
 * From a free and a kicked phase of one length, the guest time one kick
 * took, ns: its kernel part, read from the turns the kicked phase did not
 * make, plus its user space.
 */
double vmm_kick_probe_lost_ns(const struct vmm_probe_phase *free_run,
			      const struct vmm_probe_phase *kicked);

/* qsort() order of uint64_t figures of the kick probe and its history. */
int vmm_kick_cmp_u64(const void *a, const void *b);

/* A kick's kernel part per ns of its exit, fixed point: this is 1.0. */
#define VMM_KICK_RATIO_ONE 1000000ULL

/* kick_history.c: one probe of the host's history, and the newest kept. */
#define VMM_KICK_HISTORY_MAX 8
struct vmm_kick_probe_rec {
	int64_t time; /* Unix s */
	uint64_t kernel_ns, exit_ns;
};
/*
 * The probes of history file (text) from boot (boot_id) no older than a
 * day at (now), at most (max), the newest: their number, 0 for another
 * boot's, or -EINVAL for a text that is not a history of ours.
 */
int vmm_kick_history_parse(const char *text, const char *boot_id, int64_t now,
			   struct vmm_kick_probe_rec *recs, unsigned int max);
/*
 * The kernel part per ns of exit of (n) probes, the newest last
 * (VMM_KICK_RATIO_ONE is 1.0): the mean of those within a quarter of
 * their median, without the highest and lowest of them from 5 on; the
 * newest's when none is.
 */
uint64_t vmm_kick_history_ratio(const struct vmm_kick_probe_rec *recs,
				unsigned int n);

/* vm.c: call every module's image_set, vm_stopping hook. */
void vmm_modules_image_set(struct vmm_vm *vm, const char *path);
void vmm_modules_vm_stopping(struct vmm_vm *vm);

#endif /* VMM_CORE_PRIV_H */
