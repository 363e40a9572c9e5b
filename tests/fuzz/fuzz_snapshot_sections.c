// SPDX-License-Identifier: MIT
/*
 * fuzz_snapshot_sections.c: the VMM's readers of its own snapshot sections
 * (vmm/core/snapshot_restore.c, snapshot_vcpu.c and the PMU module's vCPU
 * glue in vmm/pv), past the container checks that fuzz_snapshot_file
 * covers. A container with valid checksums rarely comes out of random
 * bytes, so the input is a program of edits applied to a valid snapshot
 * of the fake VM (fake_vm.h): its VM section, one section per vCPU, the
 * devices section and memory (zero, made once). The edited file is written with
 * the snapshot writer (checksums right), then read as `vpmu run --restore`
 * reads it: vmm_snapshot_open() (the VM section's layout), then
 * vmm_snapshot_restore() on the fake VM (memory, each vCPU's layout; KVM
 * refuses the registers there, fds are -1), and each vCPU section that
 * passes vmm_snapshot_vcpu_check() goes on to the part after KVM's
 * (statistics, the notification vector, pending PMI, LVTPC and the
 * architectural model). Every refusal must carry a message.
 *
 * Program: op byte, then by op % 4:
 *   0 write   u8 section, u16 offset, u8 n, n bytes (clipped to the section)
 *   1 resize  u8 section, u16 length (up to the section's buffer)
 *   2 drop    u8 section (left out of the file)
 *   3 put32   u8 section, u16 offset, u32 value
 * Sections: 0 VM, 1 vCPU 0, 2 vCPU 1, 3 devices (u8 % 4).
 */
#include "fuzz_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_vm.h"
#include "snapshot_priv.h"
#include "vmm_snap.h"

#define NR_SECT   4
#define VCPU_MSRS 4 /* room for a few MSR entries after a vCPU's state */
#define SECT_MAX  (sizeof(struct snap_vcpu) + VCPU_MSRS * 16)

struct sect {
	uint32_t type, index;
	size_t len;
	bool dropped;
	_Alignas(16) uint8_t buf[SECT_MAX];
};

static struct sect sect[NR_SECT];
static void *mem_sect; /* the memory section of zeroed RAM, made once */
static size_t mem_len;
static int memfd = -1;
static char path[64];

/* The snapshot of a fake VM as snapshot_save.c would write it. */
static void baseline(struct vmm_vm *vm)
{
	const struct vmm_snapshot_hooks *h = vmm_snapshot_hooks(vm);
	struct snap_vm *v                  = (struct snap_vm *)sect[0].buf;
	unsigned int i;

	memset(sect, 0, sizeof(sect));
	sect[0].type  = VMM_SNAP_VM;
	sect[0].len   = sizeof(*v);
	v->version    = SNAP_VM_VERSION;
	v->image_kind = VMM_IMAGE_ELF;
	v->mem_size   = FAKE_VM_MEM;
	v->nr_vcpus   = FAKE_VM_VCPUS;
	snprintf(v->name, sizeof(v->name), "fuzz");
	snprintf(v->pmu_model, sizeof(v->pmu_model), "%s",
		 vmm_snapshot_model(vm));
	for (i = 0; i < FAKE_VM_VCPUS; i++) {
		struct snap_vcpu *c = (struct snap_vcpu *)sect[1 + i].buf;

		sect[1 + i].type  = VMM_SNAP_VCPU;
		sect[1 + i].index = i;
		sect[1 + i].len   = sizeof(*c);
		c->version        = SNAP_VCPU_VERSION;
		if (h && h->vcpu_save(&vm->vcpus[i], &c->pmu))
			c->flags |= SNAP_VCPU_ARCH;
		c->pmu.vector = 0x40;
	}
	sect[3].type = VMM_SNAP_DEVICES;
	sect[3].len  = sizeof(struct snap_devices);
}

static void edit(struct fuzz_in *in)
{
	unsigned int op = (unsigned int)fuzz_take(in, 1);
	struct sect *s  = &sect[fuzz_take(in, 1) % NR_SECT];
	size_t off, n;
	uint32_t v;

	switch (op % 4) {
	case 0:
		off = (size_t)fuzz_take(in, 2);
		n   = (size_t)fuzz_take(in, 1);
		while (n-- && in->left) {
			if (off < s->len)
				s->buf[off] = *in->p;
			off++;
			in->p++;
			in->left--;
		}
		break;
	case 1:
		s->len = (size_t)fuzz_take(in, 2) % (SECT_MAX + 1);
		break;
	case 2:
		s->dropped = true;
		break;
	default:
		off = (size_t)fuzz_take(in, 2);
		v   = (uint32_t)fuzz_take(in, 4);
		if (s->len >= sizeof(v) && off <= s->len - sizeof(v))
			memcpy(s->buf + off, &v, sizeof(v));
	}
}

/* The edited snapshot as a file; its path. */
static const char *write_file(const struct vmm_vm *vm)
{
	static char vendor[13]; /* CPUID, a VM exit on a PVM host: once */
	struct vmm_snap_hdr hdr = {0};
	struct vmm_snap_writer w;
	unsigned int i;

	if (ftruncate(memfd, 0) || lseek(memfd, 0, SEEK_SET))
		abort();
	if (!vendor[0])
		vmm_snapshot_host_vendor(vendor);
	snprintf(hdr.vendor, sizeof(hdr.vendor), "%s", vendor);
	snprintf(hdr.pmu_model, sizeof(hdr.pmu_model), "%s",
		 vmm_snapshot_model(vm));
	hdr.mem_size = FAKE_VM_MEM;
	hdr.nr_vcpus = FAKE_VM_VCPUS;
	if (vmm_snap_write_begin(&w, memfd, &hdr))
		abort();
	for (i = 0; i < NR_SECT; i++)
		if (!sect[i].dropped)
			vmm_snap_write_sect(&w, sect[i].type, sect[i].index,
					    sect[i].buf, sect[i].len);
	vmm_snap_write_sect(&w, VMM_SNAP_MEMORY, 0, mem_sect, mem_len);
	if (vmm_snap_write_end(&w))
		abort();
	return path;
}

static void need_message(int ret, const char *err)
{
	if (ret && !err[0])
		abort(); /* every refusal names its reason */
}

/* What KVM's refusal cut short: a vCPU section's checks and glue. */
static void vcpu_glue(struct vmm_vcpu *vcpu, const struct vmm_snap_section *s)
{
	struct snap_vcpu *sv = vmm_snapshot_section_copy(s);
	char err[256]        = "";
	int ret;

	if (!sv)
		abort();
	ret = vmm_snapshot_vcpu_check(vcpu, sv, s->length, err, sizeof(err));
	if (!ret)
		ret = vmm_snapshot_vcpu_restore_glue(vcpu, sv, err,
						     sizeof(err));
	if (!ret)
		ret = vmm_snapshot_vcpu_restore_arch(vcpu, sv, err,
						     sizeof(err));
	need_message(ret, err);
	free(sv);
}

/*
 * The memory section never changes (RAM stays zero: the restore drops it
 * with MADV_DONTNEED): written and read back once, not for every input.
 */
static void make_mem_sect(void)
{
	struct vmm_snap_hdr hdr = {.mem_size = FAKE_VM_MEM, .nr_vcpus = 1};
	const struct vmm_snap_section *m;
	struct vmm_snap_writer w;
	struct vmm_snap snap;
	char err[256];
	void *zero = calloc(1, FAKE_VM_MEM);

	if (!zero || vmm_snap_write_begin(&w, memfd, &hdr) ||
	    vmm_snap_write_sect(&w, VMM_SNAP_VM, 0, "", 0) ||
	    vmm_snap_write_sect(&w, VMM_SNAP_VCPU, 0, "", 0) ||
	    vmm_snap_write_memory(&w, zero, FAKE_VM_MEM, NULL) ||
	    vmm_snap_write_end(&w) ||
	    vmm_snap_open(path, NULL, &snap, err, sizeof(err)))
		abort();
	m        = vmm_snap_find(&snap, VMM_SNAP_MEMORY, 0);
	mem_len  = m->length;
	mem_sect = malloc(mem_len);
	if (!mem_sect)
		abort();
	memcpy(mem_sect, m->data, mem_len);
	vmm_snap_close(&snap);
	free(zero);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	memfd = memfd_create("vpmu-fuzz-snap", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	make_mem_sect();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {.p = data, .left = size};
	struct vmm_vm *vm = fake_vm_fresh(false);
	struct vmm_snapshot_dims dims;
	struct vmm_snap snap;
	char err[256] = "";
	unsigned int i;
	int ret;

	vm->image_kind = VMM_IMAGE_ELF;
	baseline(vm);
	while (in.left)
		edit(&in);
	ret = vmm_snapshot_open(write_file(vm), "auto", &snap, &dims, err,
				sizeof(err));
	need_message(ret, err);
	if (ret)
		return 0;
	err[0] = '\0';
	need_message(vmm_snapshot_restore(vm, &snap, err, sizeof(err)), err);
	for (i = 0; i < FAKE_VM_VCPUS; i++)
		vcpu_glue(&vm->vcpus[i],
			  vmm_snap_find(&snap, VMM_SNAP_VCPU, i));
	vmm_snap_close(&snap);
	return 0;
}
