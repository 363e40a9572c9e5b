// SPDX-License-Identifier: MIT
/*
 * fuzz_boot_image.c: the guest-image loaders on any file (vmm/core:
 * guest_image.c, elf_load.c, linux_boot.c): vmm_image_detect() tells the
 * kind from the headers, then the freestanding ELF is checked and loaded
 * (vmm_elf_extent, vmm_elf_load) or the Linux vmlinux / bzImage is loaded
 * through the 64-bit boot protocol (vmm_linux_load) with an initrd and a
 * command line whose presence and length follow the input's size. Into
 * 32 MiB of RAM (a vmlinux loads at 16 MiB). Every refusal carries a
 * message; nothing is written outside RAM.
 */
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vmm_core.h"

#define MEM_SIZE (32ULL << 20)

static uint8_t *mem;
static uint8_t initrd[4096 + 100];
static char cmdline[VMM_CMDLINE_MAX + 64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		abort();
	memset(initrd, 0x5a, sizeof(initrd));
	return 0;
}

static void load_linux(enum vmm_image_kind kind, const uint8_t *data,
		       size_t size, char *err, size_t errlen)
{
	struct vmm_linux_image img = {
		.kind        = kind,
		.kernel      = data,
		.kernel_size = size,
	};
	struct vmm_linux_loaded out;
	size_t line = size % sizeof(cmdline);

	if (size & 1) {
		img.initrd      = initrd;
		img.initrd_size = sizeof(initrd);
	}
	memset(cmdline, 'x', line);
	cmdline[line] = '\0';
	img.cmdline   = cmdline;
	if (vmm_linux_load(&img, mem, MEM_SIZE, &out, err, errlen) && !err[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum vmm_image_kind kind;
	uint64_t end, entry;
	char err[512] = "";

	if (!mem)
		LLVMFuzzerInitialize(NULL, NULL);
	if (vmm_image_detect(data, size, &kind, err, sizeof(err))) {
		if (!err[0])
			abort();
		return 0;
	}
	err[0] = '\0';
	if (kind != VMM_IMAGE_ELF) {
		load_linux(kind, data, size, err, sizeof(err));
		return 0;
	}
	if (vmm_elf_extent(data, size, &end, err, sizeof(err)) == 0)
		vmm_elf_load(data, size, mem, MEM_SIZE, 1ULL << 20, &entry, err,
			     sizeof(err));
	else if (!err[0])
		abort();
	return 0;
}
