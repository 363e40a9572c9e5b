// SPDX-License-Identifier: MIT
/*
 * vm.c: VM lifetime: /dev/kvm, the VM, guest RAM, vCPUs, built-in devices.
 */
#include "vmm_core_priv.h"

#include "vmm_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* Intel needs 3 pages for its real-mode TSS; put them in the 4 GiB hole. */
#define KVM_TSS_GPA 0xfffbd000ULL

__attribute__((format(printf, 4, 5))) static int
fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	if (ret && n < errlen)
		snprintf(err + n, errlen - n, ": %s", strerror(-ret));
	return ret;
}

static int exit_port(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		     void *data, unsigned int size, void *opaque)
{
	uint32_t status = 0;

	(void)port;
	(void)opaque;
	if (!is_write) {
		memset(data, 0, size);
		return 0;
	}
	memcpy(&status, data, size < 4 ? size : 4);
	vmm_vm_stop(vcpu->vm, status & 0xff);
	return 0;
}

static int null_port(struct vmm_vcpu *vcpu, uint16_t port, bool is_write,
		     void *data, unsigned int size, void *opaque)
{
	(void)vcpu;
	(void)port;
	(void)opaque;
	if (!is_write)
		memset(data, 0, size);
	return 0;
}

static int setup_devices(struct vmm_vm *vm)
{
	unsigned int i;
	int ret;

	ret = vmm_pio_register(vm, PVPMU_PORT_COM1, 8, vmm_uart_pio, &vm->uart);
	if (!ret)
		ret = vmm_pio_register(vm, PVPMU_PORT_EXIT, 1, exit_port, NULL);
	if (!ret)
		ret = vmm_pio_register(vm, PVPMU_PORT_NULL, 1, null_port, NULL);
	if (!ret)
		ret = vmm_hc_init(vm);
	for (i = 0; !ret && i < vm->nr_mods; i++) {
		if (vm->mods[i]->vm_devices)
			ret = vm->mods[i]->vm_devices(vm);
	}
	if (!ret)
		ret = vmm_msr_init(vm);
	return ret;
}

/*
 * What the configured image is decides the machine: a Linux guest gets
 * KVM's irqchip and PIT, which must exist before its vCPUs. An image that
 * cannot be read yet is left to vmm_vm_load() to report.
 */
static bool detect_image(struct vmm_vm *vm, const struct vmm_config *cfg)
{
	struct vmm_image_file f;
	char msg[8];
	bool known;

	vm->image_kind = VMM_IMAGE_ELF;
	if (!cfg->image[0] || vmm_image_map(cfg->image, &f, msg, sizeof(msg)))
		return false;
	known = !vmm_image_detect(f.data, f.size, &vm->image_kind, msg,
				  sizeof(msg));
	if (!known)
		vm->image_kind = VMM_IMAGE_ELF;
	vmm_image_unmap(&f);
	return known;
}

static int setup_linux(struct vmm_vm *vm, const struct vmm_config *cfg,
		       bool known, char *err, size_t errlen)
{
	int ret;

	if (vm->image_kind == VMM_IMAGE_ELF) {
		if (known && (cfg->initrd[0] || cfg->has_cmdline)) {
			fail(err, errlen, 0,
			     "%s: --initrd and --append are for Linux images; "
			     "this is a %s",
			     cfg->image, vmm_image_kind_name(vm->image_kind));
			return -EINVAL;
		}
		return 0;
	}
	snprintf(vm->initrd, sizeof(vm->initrd), "%s", cfg->initrd);
	snprintf(vm->cmdline, sizeof(vm->cmdline), "%s", cfg->cmdline);
	vm->has_cmdline = cfg->has_cmdline;
	ret             = vmm_irqchip_create(vm);
	if (ret)
		return fail(err, errlen, ret, "in-kernel irqchip and PIT");
	ret = vmm_linux_devices_init(vm);
	if (ret)
		return fail(err, errlen, ret, "legacy devices");
	return 0;
}

static int create_vcpu(struct vmm_vm *vm, unsigned int i,
		       const struct kvm_cpuid2 *cpuid)
{
	struct vmm_vcpu *vcpu = &vm->vcpus[i];
	int ret;

	vcpu->vm    = vm;
	vcpu->index = i;
	vcpu->fd    = ioctl(vm->vm_fd, KVM_CREATE_VCPU, i);
	if (vcpu->fd < 0)
		return -errno;
	vcpu->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		ret       = -errno;
		vcpu->run = NULL;
		return ret;
	}
	if (vm->has_sync_regs)
		vcpu->run->kvm_valid_regs = KVM_SYNC_X86_REGS;
	/* CPUID before EFER: some hosts #GP a guest EFER.SCE write otherwise.
	 */
	return vmm_cpuid_setup(vcpu, cpuid);
}

static int create_vcpus(struct vmm_vm *vm, char *err, size_t errlen)
{
	struct kvm_cpuid2 *cpuid;
	unsigned int i;
	int ret;

	int khz;

	ret = vmm_cpuid_get_supported(vm->kvm_fd, &cpuid);
	if (ret)
		return fail(err, errlen, ret, "KVM_GET_SUPPORTED_CPUID");
	for (i = 0; i < vm->nr_vcpus; i++) {
		ret = create_vcpu(vm, i, cpuid);
		if (ret) {
			fail(err, errlen, ret, "vcpu %u: create", i);
			break;
		}
	}
	free(cpuid);
	if (!ret) { /* the rate --stats converts the kick path's cycles at */
		khz         = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);
		vm->tsc_khz = khz > 0 ? (uint64_t)khz : 0;
	}
	return ret;
}

/*
 * The PMU is vpmu's: where KVM offers it, switch its in-kernel vPMU off
 * before any vCPU exists, so RDPMC and any MSR outside vpmu's trapped
 * ranges cannot reach KVM's idle counters (KVM_CAP_PMU_CAPABILITY, Linux
 * 6.0+; absent on some hosts, where KVM without a host PMU has none).
 */
static void disable_kvm_pmu(struct vmm_vm *vm)
{
	struct kvm_enable_cap cap = {.cap     = KVM_CAP_PMU_CAPABILITY,
				     .args[0] = KVM_PMU_CAP_DISABLE};
	int caps =
		ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_PMU_CAPABILITY);

	if (caps > 0 && (caps & KVM_PMU_CAP_DISABLE))
		ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap);
}

static int open_kvm(struct vmm_vm *vm, char *err, size_t errlen)
{
	int ret;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return fail(err, errlen, -errno, "/dev/kvm");
	if (ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION)
		return fail(err, errlen, -EINVAL, "/dev/kvm: unknown API");
	ret = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret < 0)
		return fail(err, errlen, -errno, "KVM_GET_VCPU_MMAP_SIZE");
	vm->run_size = ret;
	vm->has_sync_regs =
		(ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS) &
		 KVM_SYNC_X86_REGS) != 0;
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return fail(err, errlen, -errno, "KVM_CREATE_VM");
	/* Intel only; harmless elsewhere, so failure is not fatal. */
	ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_GPA);
	disable_kvm_pmu(vm);
	return 0;
}

static int map_ram(struct vmm_vm *vm, char *err, size_t errlen)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = vm->mem_size};

	vm->mem = mmap(NULL, vm->mem_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		return fail(err, errlen, -errno, "guest RAM (%llu bytes)",
			    (unsigned long long)vm->mem_size);
	}
	region.userspace_addr = (uintptr_t)vm->mem;
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return fail(err, errlen, -errno, "KVM_SET_USER_MEMORY_REGION");
	return 0;
}

static void set_identity(struct vmm_vm *vm, const struct vmm_config *cfg)
{
	if (cfg->has_uuid)
		uuid_copy(vm->uuid, cfg->uuid);
	else
		uuid_generate(vm->uuid);
	if (cfg->name[0]) {
		snprintf(vm->name, sizeof(vm->name), "%s", cfg->name);
	} else {
		char text[37];

		uuid_unparse_lower(vm->uuid, text);
		snprintf(vm->name, sizeof(vm->name), "vm-%.8s", text);
	}
}

void vmm_vm_refuse_snapshots(struct vmm_vm *vm, const char *why)
{
	vm->snapshot_refusal = why;
}

int vmm_vm_add_module(struct vmm_vm *vm, const struct vmm_module *m)
{
	if (vmm_module_slot(vm, m) >= 0)
		return -EEXIST;
	if (vm->nr_mods == VMM_MODULES_MAX)
		return -ENOSPC;
	vm->mods[vm->nr_mods++] = m;
	return 0;
}

void vmm_vcpu_accounted(struct vmm_vcpu *vcpu)
{
	const struct vmm_vm *vm = vcpu->vm;
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->vcpu_accounted)
			vm->mods[i]->vcpu_accounted(vcpu);
	}
}

void vmm_modules_image_set(struct vmm_vm *vm, const char *path)
{
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->image_set)
			vm->mods[i]->image_set(vm, path);
	}
}

void vmm_modules_vm_stopping(struct vmm_vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->nr_mods; i++) {
		if (vm->mods[i]->vm_stopping)
			vm->mods[i]->vm_stopping(vm);
	}
}

int vmm_vm_create(const struct vmm_config *cfg, FILE *console,
		  const struct vmm_module *const *modules, struct vmm_vm **out,
		  char *err, size_t errlen)
{
	struct vmm_vm *vm;
	unsigned int i;
	bool known;
	int ret;

	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return fail(err, errlen, -ENOMEM, "vm");
	vm->kvm_fd = vm->vm_fd = -1;
	vmm_host_probe(&vm->host);
	vm->mem_size = cfg->mem_size;
	vm->nr_vcpus = cfg->nr_vcpus;
	vm->sandbox  = !cfg->no_sandbox;
	pthread_mutex_init(&vm->lock, NULL);
	pthread_cond_init(&vm->cond, NULL);
	vmm_uart_init(&vm->uart, console);
	set_identity(vm, cfg);
	vm->vcpus = calloc(vm->nr_vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		ret = fail(err, errlen, -ENOMEM, "vcpus");
		goto out_destroy;
	}
	for (i = 0; i < vm->nr_vcpus;
	     i++) { /* modules see them from the start */
		vm->vcpus[i].vm    = vm;
		vm->vcpus[i].index = i;
		vm->vcpus[i].fd    = -1;
	}
	for (i = 0; modules && modules[i]; i++) {
		ret = vmm_vm_add_module(vm, modules[i]);
		if (ret) {
			fail(err, errlen, ret, "module %s", modules[i]->name);
			goto out_destroy;
		}
	}
	known = detect_image(vm, cfg);
	ret   = open_kvm(vm, err, errlen);
	if (!ret)
		ret = map_ram(vm, err, errlen);
	if (!ret)
		ret = setup_linux(vm, cfg, known, err, errlen);
	if (!ret) {
		ret = setup_devices(vm);
		if (ret)
			fail(err, errlen, ret, "devices");
	}
	if (!ret)
		ret = create_vcpus(vm, err, errlen);
	for (i = 0; !ret && i < vm->nr_mods; i++) {
		if (vm->mods[i]->vm_init)
			ret = vm->mods[i]->vm_init(vm, cfg, err, errlen);
	}
	if (ret)
		goto out_destroy;
	vmm_boot_write_tables(vm);
	*out = vm;
	return 0;

out_destroy:
	vmm_vm_destroy(vm);
	return ret;
}

static void write_boot_info(struct vmm_vm *vm)
{
	struct pvpmu_boot_info *bi =
		vmm_gpa_ptr(vm, PVPMU_BOOT_INFO_GPA, sizeof(*bi));
	int khz;

	memset(bi, 0, sizeof(*bi));
	bi->magic    = PVPMU_BOOT_MAGIC;
	bi->abi      = PVPMU_ABI_VERSION;
	bi->nr_vcpus = vm->nr_vcpus;
	bi->mem_size = vm->mem_size;
	khz          = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ, 0);
	bi->tsc_khz  = khz > 0 ? (uint64_t)khz : 0;
	memcpy(bi->uuid, vm->uuid, sizeof(bi->uuid));
	snprintf((char *)bi->name, sizeof(bi->name), "%s", vm->name);
}

int vmm_vm_load(struct vmm_vm *vm, const char *path, char *err, size_t errlen)
{
	unsigned int i;
	int ret;

	if (vm->image_kind != VMM_IMAGE_ELF)
		return vmm_linux_boot(vm, path, err, errlen);
	ret = vmm_elf_load_file(path, vm->mem, vm->mem_size,
				PVPMU_BOOT_IMAGE_MIN, &vm->entry, err, errlen);
	if (ret)
		return ret;
	vmm_modules_image_set(vm, path); /* e.g. for operators' symbols */
	write_boot_info(vm);
	for (i = 0; i < vm->nr_vcpus; i++) {
		ret = vmm_boot_setup_vcpu(&vm->vcpus[i], vm->entry,
					  PVPMU_BOOT_INFO_GPA);
		if (ret)
			return fail(err, errlen, ret,
				    "vcpu %u: long mode setup", i);
	}
	/*
	 * Console input from a pipe or file (tests' go signals, user_read());
	 * a terminal stays as it is: these guests are not interactive.
	 */
	if (!isatty(STDIN_FILENO))
		vmm_uart_start_input(&vm->uart, STDIN_FILENO);
	return 0;
}

void vmm_vm_destroy(struct vmm_vm *vm)
{
	unsigned int i;

	if (!vm)
		return;
	/* In reverse: a module may use the ones registered before it. */
	for (i = vm->nr_mods; i-- > 0;) {
		if (vm->mods[i]->vm_free)
			vm->mods[i]->vm_free(vm);
	}
	vmm_snapshot_free(vm);
	for (i = 0; vm->vcpus && i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].run)
			munmap(vm->vcpus[i].run, vm->run_size);
		if (vm->vcpus[i].fd >= 0)
			close(vm->vcpus[i].fd);
	}
	free(vm->vcpus);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->mem)
		munmap(vm->mem, vm->mem_size);
	vmm_uart_destroy(&vm->uart);
	pthread_cond_destroy(&vm->cond);
	pthread_mutex_destroy(&vm->lock);
	free(vm);
}

unsigned int vmm_vm_nr_vcpus(const struct vmm_vm *vm)
{
	return vm->nr_vcpus;
}

struct vmm_vcpu *vmm_vm_vcpu(struct vmm_vm *vm, unsigned int index)
{
	return index < vm->nr_vcpus ? &vm->vcpus[index] : NULL;
}

uint64_t vmm_vm_mem_size(const struct vmm_vm *vm)
{
	return vm->mem_size;
}

const char *vmm_vm_name(const struct vmm_vm *vm)
{
	return vm->name;
}

void vmm_vm_uuid(const struct vmm_vm *vm, uuid_t out)
{
	uuid_copy(out, vm->uuid);
}

enum vmm_image_kind vmm_vm_image_kind(const struct vmm_vm *vm)
{
	return vm->image_kind;
}

const struct vmm_host *vmm_vm_host(const struct vmm_vm *vm)
{
	return &vm->host;
}

const char *vmm_vm_linux_params_added(const struct vmm_vm *vm)
{
	return vm->cmdline_added;
}
