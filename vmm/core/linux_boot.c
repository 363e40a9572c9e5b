// SPDX-License-Identifier: MIT
/*
 * linux_boot.c: the Linux x86-64 64-bit boot protocol (pure, no KVM).
 *
 * Source: the kernel's Documentation/x86/boot.rst ("64-bit Boot
 * Protocol", "Details of Header Fields") and zero-page.rst; the structures
 * are the kernel's own UAPI <asm/bootparam.h>.
 *
 * Guest-physical layout of a Linux guest (below 1 MiB, beside the long-mode
 * tables of longmode_boot.c at 0x1000-0x7fff):
 *
 *   0x10000        the zero page (struct boot_params)
 *   0x20000        the command line (at most VMM_CMDLINE_MAX bytes)
 *   0x9fc00        the MP table (mptable.c), e820-reserved up to 640 KiB
 *   0x100000       bzImage: its protected-mode kernel, entered at +0x200
 *   p_paddr        vmlinux: its PT_LOAD segments, entered at e_entry
 *   top of RAM     the initrd, page-aligned, below the kernel's
 *                  initrd_addr_max
 *
 * Everything is checked before the first byte is copied: a rejected image
 * leaves guest RAM untouched, and every failure says what does not fit.
 */
#include "vmm_core.h"

#include <asm/bootparam.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vpmu_common.h>

#define HDRS_MAGIC         0x53726448U /* "HdrS" */
#define BOOT_FLAG_MAGIC    0xaa55
#define BOOT_VERSION_MIN   0x020c /* xloadflags (XLF_KERNEL_64) */
#define BOOT_VERSION_OURS  0x020f /* what a vmlinux zero page claims */
#define LOADER_UNDEFINED   0xff   /* type_of_loader: 0 drops the initrd */
#define BZIMAGE_LOAD_GPA   0x100000ULL
#define BZIMAGE_ENTRY_64   0x200 /* 64-bit entry, from the load address */
#define SETUP_HEADER_START 0x1f1
#define SETUP_SECTS_OLD    4
#define SECTOR             512
#define VMLINUX_CMDLINE    2048          /* COMMAND_LINE_SIZE of x86 */
#define INITRD_ADDR_MAX    0x37ffffffULL /* boot.rst default before 2.03 */
#define PAGE_MASK_4K       (~0xfffULL)
#define E820_RAM           1
#define E820_RESERVED      2
#define BASE_MEM_END       VMM_MPTABLE_GPA /* 639 KiB: EBDA + MP table */
#define BIOS_AREA_END      0x100000ULL

_Static_assert(sizeof(struct boot_params) == 4096, "the zero page");
_Static_assert(VMM_LINUX_CMDLINE_GPA + VMM_CMDLINE_MAX <= VMM_MPTABLE_GPA,
	       "the command line fits below the MP table");

/* What the checks found; only then is anything copied. */
struct linux_plan {
	uint64_t load_gpa, load_size; /* bzImage protected-mode part */
	uint64_t kernel_end;          /* first byte above the kernel */
	uint64_t initrd_gpa;
	uint64_t cmdline_max;           /* bytes including the NUL */
	uint64_t initrd_max;            /* last byte an initrd may use */
	const struct setup_header *hdr; /* bzImage: its setup header */
	size_t hdr_len;
};

static const struct setup_header *bz_header(const void *file)
{
	return (const struct setup_header *)((const char *)file +
					     SETUP_HEADER_START);
}

static int plan_bzimage(const struct vmm_linux_image *img, uint64_t mem_size,
			struct linux_plan *p, char *err, size_t errlen)
{
	const struct setup_header *h = bz_header(img->kernel);
	const uint8_t *b             = img->kernel;
	uint64_t sects  = h->setup_sects ? h->setup_sects : SETUP_SECTS_OLD;
	uint64_t offset = (sects + 1) * SECTOR, need;

	if (h->version < BOOT_VERSION_MIN || !(h->xloadflags & XLF_KERNEL_64))
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"bzImage has no 64-bit entry point (boot protocol "
			"%u.%02u, xloadflags XLF_KERNEL_64 %s): a "
			"16/32-bit-only kernel; vpmu enters Linux in "
			"64-bit mode",
			h->version >> 8, h->version & 0xff,
			h->version < BOOT_VERSION_MIN ? "absent" : "clear");
	if (!(h->loadflags & LOADED_HIGH))
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"bzImage is a zImage (loadflags LOADED_HIGH clear)");
	if (offset >= img->kernel_size)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"bzImage is truncated: %llu setup sectors, %zu "
			"bytes in all",
			(unsigned long long)sects, img->kernel_size);
	p->load_gpa  = BZIMAGE_LOAD_GPA;
	p->load_size = img->kernel_size - offset;
	need = h->init_size > p->load_size ? h->init_size : p->load_size;
	p->kernel_end  = p->load_gpa + need;
	p->cmdline_max = h->cmdline_size + 1ULL;
	p->initrd_max =
		h->initrd_addr_max ? h->initrd_addr_max : INITRD_ADDR_MAX;
	p->hdr = h;
	/* The header runs from 0x1f1 to 0x202 + the jump's offset byte. */
	p->hdr_len = 0x202 + b[0x201] - SETUP_HEADER_START;
	if (p->hdr_len > sizeof(*h))
		p->hdr_len = sizeof(*h);
	(void)mem_size;
	return 0;
}

static int plan_vmlinux(const struct vmm_linux_image *img, struct linux_plan *p,
			char *err, size_t errlen)
{
	uint64_t end = 0;
	int ret;

	ret = vmm_elf_extent(img->kernel, img->kernel_size, &end, err, errlen);
	if (ret)
		return ret;
	p->kernel_end  = end;
	p->cmdline_max = VMLINUX_CMDLINE;
	p->initrd_max  = INITRD_ADDR_MAX;
	return 0;
}

static int plan_memory(const struct vmm_linux_image *img, uint64_t mem_size,
		       struct linux_plan *p, char *err, size_t errlen)
{
	uint64_t top = mem_size, len = strlen(img->cmdline) + 1;

	if (p->kernel_end > mem_size)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"the kernel needs guest RAM up to %llu MiB "
			"(0x%llx), the guest has %llu MiB: raise --mem",
			(unsigned long long)(p->kernel_end + (1 << 20) - 1) >>
				20,
			(unsigned long long)p->kernel_end,
			(unsigned long long)mem_size >> 20);
	if (len > p->cmdline_max || len > VMM_CMDLINE_MAX)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"the command line is %llu bytes; this kernel "
			"accepts at most %llu",
			(unsigned long long)len - 1,
			(unsigned long long)(p->cmdline_max < VMM_CMDLINE_MAX
						     ? p->cmdline_max
						     : VMM_CMDLINE_MAX) -
				1);
	if (!img->initrd)
		return 0;
	if (top > p->initrd_max + 1)
		top = p->initrd_max + 1;
	if (img->initrd_size > top ||
	    ((top - img->initrd_size) & PAGE_MASK_4K) < p->kernel_end)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"the initrd (%zu bytes) does not fit: guest RAM "
			"between the kernel's end (0x%llx) and 0x%llx "
			"holds %llu bytes; raise --mem",
			img->initrd_size, (unsigned long long)p->kernel_end,
			(unsigned long long)top,
			(unsigned long long)(top > p->kernel_end
						     ? top - p->kernel_end
						     : 0));
	p->initrd_gpa = (top - img->initrd_size) & PAGE_MASK_4K;
	return 0;
}

static void add_e820(struct boot_params *bp, uint64_t addr, uint64_t size,
		     uint32_t type)
{
	struct boot_e820_entry *e = &bp->e820_table[bp->e820_entries++];

	e->addr = addr;
	e->size = size;
	e->type = type;
}

static void write_zero_page(struct boot_params *bp,
			    const struct vmm_linux_image *img,
			    const struct linux_plan *p, uint64_t mem_size)
{
	struct setup_header *h = &bp->hdr;

	memset(bp, 0, sizeof(*bp));
	if (p->hdr) {
		memcpy(h, p->hdr, p->hdr_len);
	} else {
		h->boot_flag        = BOOT_FLAG_MAGIC;
		h->header           = HDRS_MAGIC;
		h->version          = BOOT_VERSION_OURS;
		h->kernel_alignment = 1U << 21;
		h->cmdline_size     = p->cmdline_max - 1;
	}
	h->type_of_loader = LOADER_UNDEFINED;
	h->loadflags |= LOADED_HIGH;
	h->cmd_line_ptr = VMM_LINUX_CMDLINE_GPA;
	if (img->initrd) {
		h->ramdisk_image = (uint32_t)p->initrd_gpa;
		h->ramdisk_size  = (uint32_t)img->initrd_size;
	}
	add_e820(bp, 0, BASE_MEM_END, E820_RAM);
	add_e820(bp, BASE_MEM_END, BIOS_AREA_END - BASE_MEM_END, E820_RESERVED);
	add_e820(bp, BIOS_AREA_END, mem_size - BIOS_AREA_END, E820_RAM);
}

static void copy_kernel(const struct vmm_linux_image *img,
			const struct linux_plan *p, void *mem,
			uint64_t mem_size, uint64_t *entry)
{
	char msg[8];

	if (img->kind == VMM_IMAGE_BZIMAGE) {
		memcpy((char *)mem + p->load_gpa,
		       (const char *)img->kernel + img->kernel_size -
			       p->load_size,
		       p->load_size);
		*entry = p->load_gpa + BZIMAGE_ENTRY_64;
		return;
	}
	/* Checked by vmm_elf_extent() already: cannot fail here. */
	vmm_elf_load(img->kernel, img->kernel_size, mem, mem_size, 0, entry,
		     msg, sizeof(msg));
}

int vmm_linux_load(const struct vmm_linux_image *img, void *mem,
		   uint64_t mem_size, struct vmm_linux_loaded *out, char *err,
		   size_t errlen)
{
	struct linux_plan p = {0};
	int ret;

	if (mem_size <= BIOS_AREA_END)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "guest RAM of %llu bytes is too small",
				 (unsigned long long)mem_size);
	if (img->kind == VMM_IMAGE_BZIMAGE)
		ret = plan_bzimage(img, mem_size, &p, err, errlen);
	else if (img->kind == VMM_IMAGE_VMLINUX)
		ret = plan_vmlinux(img, &p, err, errlen);
	else
		ret = vpmu_fail(err, errlen, -ENOEXEC, "not a Linux image");
	if (!ret)
		ret = plan_memory(img, mem_size, &p, err, errlen);
	if (ret)
		return ret;
	copy_kernel(img, &p, mem, mem_size, &out->entry);
	write_zero_page(
		(struct boot_params *)((char *)mem + VMM_LINUX_ZERO_PAGE_GPA),
		img, &p, mem_size);
	strcpy((char *)mem + VMM_LINUX_CMDLINE_GPA, img->cmdline);
	if (img->initrd)
		memcpy((char *)mem + p.initrd_gpa, img->initrd,
		       img->initrd_size);
	out->zero_page  = VMM_LINUX_ZERO_PAGE_GPA;
	out->kernel_end = p.kernel_end;
	out->initrd_gpa = img->initrd ? p.initrd_gpa : 0;
	return 0;
}
