// SPDX-License-Identifier: MIT
/*
 * linux_devices.c: what a Linux guest needs beyond the irqchip, and its
 * boot: the legacy ports Linux touches (i8042 status, CMOS, the POST delay
 * port), the keyboard-controller reset that `reboot=k` and `panic=-1` end
 * in, console interrupts, and loading kernel, initrd, command line and MP
 * table for vCPU 0. No PCI and no ACPI: Linux finds the vCPUs and the I/O
 * APIC in the MP table and logs "APIC: Switch to virtual wire mode".
 */
#include "vmm_core_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT_I8042_DATA 0x60
#define PORT_I8042_CMD  0x64
#define PORT_POST       0x80
#define PORT_DMA_PAGE   0x87 /* read by Linux at boot */
#define PORT_CMOS_INDEX 0x70
#define PORT_CMOS_DATA  0x71
#define I8042_RESET     0xfe /* pulse the CPU reset line */
#define COM1_IRQ        4

/* The default when neither --append nor <cmdline> says otherwise. */
static const char default_cmdline[] =
	"console=ttyS0 earlyprintk=ttyS0 panic=-1 reboot=k";

/* Ports whose reads are 0 and writes are ignored (no keyboard, no RTC). */
static int quiet_port(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		      void *data, unsigned int size, void *opaque)
{
	(void)opaque;
	if (!is_write) {
		memset(data, 0, size);
		return 0;
	}
	if (port == PORT_I8042_CMD && *(uint8_t *)data == I8042_RESET) {
		vmm_log(vcpu->vm, VMM_LOG_INFO,
			"the guest reset the machine (keyboard controller, "
			"port 0x64): reboot, or a panic with panic=-1");
		vmm_vm_stop(vcpu->vm, VMM_STATUS_RESET);
	}
	return 0;
}

static void uart_irq(void *opaque, bool level)
{
	vmm_irq_line(opaque, COM1_IRQ, level);
}

int vmm_linux_devices_init(struct vmm_vm *vm)
{
	static const uint16_t ports[] = {PORT_I8042_DATA, PORT_I8042_CMD,
					 PORT_POST,       PORT_DMA_PAGE,
					 PORT_CMOS_INDEX, PORT_CMOS_DATA};
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < ARRAY_SIZE(ports); i++)
		ret = vmm_pio_register(vm, ports[i], 1, quiet_port, NULL);
	vm->uart.irq        = uart_irq;
	vm->uart.irq_opaque = vm;
	return ret;
}

int vmm_vm_add_linux_params(struct vmm_vm *vm, const char *words)
{
	size_t at = strlen(vm->linux_params), n = strlen(words);

	if (at + !!at + n + 1 > sizeof(vm->linux_params))
		return -ENAMETOOLONG;
	if (at)
		vm->linux_params[at++] = ' ';
	memcpy(vm->linux_params + at, words, n + 1);
	return 0;
}

/*
 * The command line: as configured, else the default; either way with the
 * parameters this host needs that it does not already give (a PVM host's,
 * without which Linux dies at its first XSAVE), and those of the modules'
 * devices (a disk's virtio_mmio.device=).
 */
static int build_cmdline(struct vmm_vm *vm, char *buf, size_t len, char *err,
			 size_t errlen)
{
	const char *line = vm->has_cmdline ? vm->cmdline : default_cmdline;
	const char *host = vmm_host_linux_params(&vm->host);
	char needed[2 * VMM_CMDLINE_MAX];
	int ret;

	snprintf(needed, sizeof(needed), "%s%s%s", host,
		 host[0] && vm->linux_params[0] ? " " : "", vm->linux_params);
	ret = vmm_cmdline_merge(line, needed, buf, len, vm->cmdline_added,
				sizeof(vm->cmdline_added));
	if (ret)
		snprintf(err, errlen,
			 "the command line and the parameters this %s host "
			 "and the VM's devices need (%.200s) do not fit in "
			 "%zu bytes",
			 vmm_host_kind_name(vm->host.kind), needed, len - 1);
	return ret;
}

static int map_initrd(struct vmm_vm *vm, struct vmm_image_file *f, char *err,
		      size_t errlen)
{
	char msg[VMM_CONFIG_ERR_LEN];
	int ret;

	if (!vm->initrd[0])
		return 0;
	ret = vmm_image_map(vm->initrd, f, msg, sizeof(msg));
	if (ret)
		snprintf(err, errlen, "initrd %s", msg);
	return ret;
}

static int load_linux(struct vmm_vm *vm, const char *path,
		      const struct vmm_image_file *kernel,
		      const struct vmm_image_file *initrd,
		      struct vmm_linux_loaded *out, char *err, size_t errlen)
{
	char msg[VMM_CONFIG_ERR_LEN], *cmdline = NULL;
	struct vmm_linux_image img = {.kernel      = kernel->data,
				      .kernel_size = kernel->size,
				      .initrd      = initrd->data,
				      .initrd_size = initrd->size};
	int ret;

	ret = vmm_image_detect(kernel->data, kernel->size, &img.kind, msg,
			       sizeof(msg));
	if (!ret && img.kind != vm->image_kind) {
		snprintf(msg, sizeof(msg),
			 "is a %s, but the VM was created for a %s",
			 vmm_image_kind_name(img.kind),
			 vmm_image_kind_name(vm->image_kind));
		ret = -EINVAL;
	}
	cmdline = ret ? NULL : malloc(VMM_CMDLINE_MAX);
	if (!ret && !cmdline)
		ret = -ENOMEM;
	if (!ret)
		ret = build_cmdline(vm, cmdline, VMM_CMDLINE_MAX, msg,
				    sizeof(msg));
	if (!ret) {
		img.cmdline = cmdline;
		ret = vmm_linux_load(&img, vm->mem, vm->mem_size, out, msg,
				     sizeof(msg));
	}
	if (ret)
		snprintf(err, errlen, "%s: %s", path, msg);
	free(cmdline);
	return ret;
}

int vmm_linux_boot(struct vmm_vm *vm, const char *path, char *err,
		   size_t errlen)
{
	struct vmm_image_file kernel = {0}, initrd = {0};
	struct vmm_linux_loaded out;
	int ret;

	ret = vmm_image_map(path, &kernel, err, errlen);
	if (!ret)
		ret = map_initrd(vm, &initrd, err, errlen);
	if (!ret)
		ret = load_linux(vm, path, &kernel, &initrd, &out, err, errlen);
	if (!ret && vmm_mptable_write(vm->mem, vm->mem_size, vm->nr_vcpus))
		ret = -EINVAL, snprintf(err, errlen, "MP table: no room");
	vmm_image_unmap(&initrd);
	vmm_image_unmap(&kernel);
	if (ret)
		return ret;
	vm->entry = out.entry;
	vmm_modules_image_set(vm, path); /* vmlinux symbols for operators */
	/* vCPU 0 enters the kernel; the others wait for INIT/SIPI. */
	ret = vmm_boot_setup_vcpu(&vm->vcpus[0], out.entry, out.zero_page);
	if (ret)
		snprintf(err, errlen, "vcpu 0: long mode setup: %s",
			 strerror(-ret));
	if (!ret)
		vmm_uart_start_input(&vm->uart, STDIN_FILENO);
	return ret;
}
