// SPDX-License-Identifier: MIT
/*
 * test_linux_boot.c: image detection, the Linux 64-bit boot protocol (zero
 * page, e820, command line, initrd placement, refusals) and the MP table,
 * on images built in memory (boot.rst, zero-page.rst; MP spec 1.4).
 */
#include <asm/bootparam.h>
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf_exec.h"
#include "vmm_core.h"

#define MEM_SIZE     (64ULL << 20)
#define VMLINUX_GPA  0x1000000ULL /* CONFIG_PHYSICAL_START */
#define KERNEL_TEXT  4096
#define BZ_SETUP     4 /* setup sectors */
#define BZ_PM_SIZE   8192
#define BZ_SIZE      ((BZ_SETUP + 1) * 512 + BZ_PM_SIZE)
#define INITRD_SIZE  (3 * 4096 + 100)
#define DEFAULT_LINE "console=ttyS0 panic=-1"

static uint8_t *mem;
static char err[512];

static void setup(void)
{
	mem = calloc(1, MEM_SIZE);
	cr_assert(not(eq(ptr, mem, NULL)));
}

static void teardown(void)
{
	free(mem);
}

/* A vmlinux-like ELF: one PT_LOAD at 16 MiB and a PT_NOTE "Linux". */
struct vmlinux {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Nhdr nh;
	char name[8]; /* "Linux\0" padded to 4 */
	uint32_t desc;
	uint8_t text[KERNEL_TEXT];
};

static void make_vmlinux(struct vmlinux *v, const char *owner)
{
	memset(v, 0, sizeof(*v));
	elf_exec_header(&v->eh, VMLINUX_GPA, offsetof(struct vmlinux, ph), 2);
	v->ph[0]       = (Elf64_Phdr){.p_type   = PT_LOAD,
				      .p_flags  = PF_R | PF_X,
				      .p_offset = offsetof(struct vmlinux, text),
				      .p_vaddr  = 0xffffffff81000000ULL,
				      .p_paddr  = VMLINUX_GPA,
				      .p_filesz = KERNEL_TEXT,
				      .p_memsz  = KERNEL_TEXT + 8192};
	v->ph[1]       = (Elf64_Phdr){.p_type   = PT_NOTE,
				      .p_offset = offsetof(struct vmlinux, nh),
				      .p_filesz = sizeof(Elf64_Nhdr) + 8 + 4};
	v->nh.n_namesz = strlen(owner) + 1;
	v->nh.n_descsz = 4;
	v->nh.n_type   = 0x100;
	strcpy(v->name, owner);
	memset(v->text, 0xf4, sizeof(v->text));
}

/* A bzImage: setup sectors with the header, then the 64-bit kernel. */
static uint8_t *make_bzimage(uint16_t version, uint16_t xloadflags)
{
	uint8_t *b = calloc(1, BZ_SIZE);
	struct setup_header *h;

	cr_assert(not(eq(ptr, b, NULL)));
	h                     = (struct setup_header *)(b + 0x1f1);
	h->setup_sects        = BZ_SETUP;
	h->boot_flag          = 0xaa55;
	h->jump               = 0x66eb; /* jmp +0x66: header ends at 0x268 */
	b[0x201]              = 0x66;
	h->header             = 0x53726448;
	h->version            = version;
	h->loadflags          = LOADED_HIGH;
	h->initrd_addr_max    = 0x7fffffff;
	h->kernel_alignment   = 0x200000;
	h->relocatable_kernel = 1;
	h->xloadflags         = xloadflags;
	h->cmdline_size       = 2047;
	h->init_size          = 0x200000;
	memset(b + (BZ_SETUP + 1) * 512, 0xcc, BZ_PM_SIZE);
	return b;
}

static struct boot_params *zero_page(void)
{
	return (struct boot_params *)(mem + VMM_LINUX_ZERO_PAGE_GPA);
}

static bool mem_is_zero(void)
{
	uint64_t i;

	for (i = 0; i < MEM_SIZE; i++)
		if (mem[i])
			return false;
	return true;
}

/* The error message (err) holds (text). */
#define ERR_HAS(text)                                                          \
	cr_assert(not(eq(ptr, strstr(err, text), NULL)), "%s", err)

/* A vmlinux image of (v), a valid one with a "Linux" note, DEFAULT_LINE. */
static struct vmm_linux_image vmlinux_image(struct vmlinux *v)
{
	make_vmlinux(v, "Linux");
	return (struct vmm_linux_image){.kind        = VMM_IMAGE_VMLINUX,
					.kernel      = v,
					.kernel_size = sizeof(*v),
					.cmdline     = DEFAULT_LINE};
}

TestSuite(image_detect);

Test(image_detect, elf_with_linux_note_is_vmlinux_else_freestanding)
{
	enum vmm_image_kind kind = 0;
	struct vmlinux v;

	make_vmlinux(&v, "Linux");
	cr_assert(eq(int,
		     vmm_image_detect(&v, sizeof(v), &kind, err, sizeof(err)),
		     0));
	cr_assert(eq(int, kind, VMM_IMAGE_VMLINUX));
	cr_assert(eq(str, (char *)vmm_image_kind_name(kind), "Linux vmlinux"));
	make_vmlinux(&v, "GNU");
	vmm_image_detect(&v, sizeof(v), &kind, err, sizeof(err));
	cr_assert(eq(int, kind, VMM_IMAGE_ELF));
}

Test(image_detect, hdrs_header_is_bzimage_and_garbage_is_refused)
{
	uint8_t *b                      = make_bzimage(0x020f, XLF_KERNEL_64);
	enum vmm_image_kind kind        = 0;
	static const uint8_t junk[1024] = {1, 2, 3};

	cr_assert(eq(int, vmm_image_detect(b, BZ_SIZE, &kind, err, sizeof(err)),
		     0));
	cr_assert(eq(int, kind, VMM_IMAGE_BZIMAGE));
	cr_assert(eq(
		int,
		vmm_image_detect(junk, sizeof(junk), &kind, err, sizeof(err)),
		-ENOEXEC));
	ERR_HAS("not a guest image");
	free(b);
}

Test(image_detect, truncated_note_is_not_followed_out_of_the_file)
{
	enum vmm_image_kind kind = 0;
	struct vmlinux v;

	make_vmlinux(&v, "Linux");
	v.nh.n_namesz = 0xfffffff0; /* runs past the segment */
	cr_assert(eq(int,
		     vmm_image_detect(&v, sizeof(v), &kind, err, sizeof(err)),
		     0));
	cr_assert(eq(int, kind, VMM_IMAGE_ELF));
}

TestSuite(linux_boot, .init = setup, .fini = teardown);

Test(linux_boot, vmlinux_loads_at_paddr_with_zero_page_and_e820)
{
	struct vmlinux v;
	struct vmm_linux_image img = vmlinux_image(&v);
	struct vmm_linux_loaded out;
	struct boot_params *bp;

	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   0),
		"%s", err);
	cr_assert(eq(u64, out.entry, VMLINUX_GPA));
	cr_assert(eq(u64, out.zero_page, VMM_LINUX_ZERO_PAGE_GPA));
	cr_assert(eq(u64, out.kernel_end, VMLINUX_GPA + KERNEL_TEXT + 8192));
	cr_assert(eq(u8, mem[VMLINUX_GPA], 0xf4));
	bp = zero_page();
	/* boot.rst: a loader without a setup header fills these itself. */
	cr_assert(eq(u16, bp->hdr.boot_flag, 0xaa55));
	cr_assert(eq(u32, bp->hdr.header, 0x53726448));
	cr_assert(eq(u8, bp->hdr.type_of_loader, 0xff));
	cr_assert(eq(u8, bp->hdr.loadflags & LOADED_HIGH, LOADED_HIGH));
	cr_assert(eq(u32, bp->hdr.cmd_line_ptr, VMM_LINUX_CMDLINE_GPA));
	cr_assert(eq(str, (char *)mem + VMM_LINUX_CMDLINE_GPA, DEFAULT_LINE));
	/* RAM below 639 KiB, the MP table reserved, RAM from 1 MiB. */
	cr_assert(eq(u8, bp->e820_entries, 3));
	cr_assert(eq(u64, bp->e820_table[0].addr, 0));
	cr_assert(eq(u64, bp->e820_table[0].size, VMM_MPTABLE_GPA));
	cr_assert(eq(u32, bp->e820_table[0].type, 1));
	cr_assert(eq(u32, bp->e820_table[1].type, 2));
	cr_assert(eq(u64, bp->e820_table[2].addr, 0x100000));
	cr_assert(eq(u64, bp->e820_table[2].size, MEM_SIZE - 0x100000));
	cr_assert(eq(u32, bp->hdr.ramdisk_image, 0));
}

Test(linux_boot, bzimage_copies_its_header_and_enters_at_0x200)
{
	uint8_t *b                 = make_bzimage(0x020f, XLF_KERNEL_64);
	struct vmm_linux_image img = {.kind        = VMM_IMAGE_BZIMAGE,
				      .kernel      = b,
				      .kernel_size = BZ_SIZE,
				      .cmdline     = DEFAULT_LINE};
	struct vmm_linux_loaded out;
	struct boot_params *bp = zero_page();

	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   0),
		"%s", err);
	cr_assert(eq(u64, out.entry, 0x100000 + 0x200));
	cr_assert(eq(u8, mem[0x100000], 0xcc));
	cr_assert(eq(u8, mem[0x100000 + BZ_PM_SIZE], 0));
	cr_assert(eq(u64, out.kernel_end, 0x100000 + 0x200000)); /* init_size */
	cr_assert(eq(u16, bp->hdr.version, 0x020f));
	cr_assert(eq(u32, bp->hdr.init_size, 0x200000));
	cr_assert(eq(u32, bp->hdr.kernel_alignment, 0x200000));
	cr_assert(eq(u8, bp->hdr.type_of_loader, 0xff));
	free(b);
}

Test(linux_boot, initrd_goes_page_aligned_to_the_top_of_ram)
{
	struct vmlinux v;
	struct vmm_linux_image img = vmlinux_image(&v);
	static uint8_t initrd[INITRD_SIZE];
	struct vmm_linux_loaded out;

	memset(initrd, 0x5a, sizeof(initrd));
	img.initrd      = initrd;
	img.initrd_size = sizeof(initrd);
	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   0),
		"%s", err);
	cr_assert(eq(u64, out.initrd_gpa & 0xfff, 0));
	cr_assert(le(u64, out.initrd_gpa + INITRD_SIZE, MEM_SIZE));
	cr_assert(lt(u64, MEM_SIZE - 4096, out.initrd_gpa + INITRD_SIZE));
	cr_assert(eq(u32, zero_page()->hdr.ramdisk_image, out.initrd_gpa));
	cr_assert(eq(u32, zero_page()->hdr.ramdisk_size, INITRD_SIZE));
	cr_assert(eq(u8, mem[out.initrd_gpa + INITRD_SIZE - 1], 0x5a));
}

Test(linux_boot, bzimage_without_64_bit_entry_is_refused_untouched)
{
	uint8_t *old               = make_bzimage(0x020b, 0);
	uint8_t *b32               = make_bzimage(0x020f, 0);
	struct vmm_linux_image img = {.kind        = VMM_IMAGE_BZIMAGE,
				      .kernel_size = BZ_SIZE,
				      .cmdline     = DEFAULT_LINE};
	struct vmm_linux_loaded out;

	img.kernel = old;
	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   -ENOEXEC));
	ERR_HAS("16/32-bit-only");
	img.kernel = b32;
	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   -ENOEXEC));
	ERR_HAS("XLF_KERNEL_64 clear");
	cr_assert(mem_is_zero(), "RAM was written");
	free(old);
	free(b32);
}

Test(linux_boot, kernel_larger_than_ram_is_refused_untouched)
{
	struct vmlinux v;
	struct vmm_linux_image img = vmlinux_image(&v);
	struct vmm_linux_loaded out;

	cr_assert(eq(
		int,
		vmm_linux_load(&img, mem, 16ULL << 20, &out, err, sizeof(err)),
		-ENOEXEC));
	ERR_HAS("the kernel needs guest RAM up to 17 MiB");
	ERR_HAS("raise --mem");
	cr_assert(mem_is_zero(), "RAM was written");
}

Test(linux_boot, initrd_that_does_not_fit_is_refused_untouched)
{
	struct vmlinux v;
	struct vmm_linux_image img = vmlinux_image(&v);
	struct vmm_linux_loaded out;

	img.initrd      = mem; /* any bytes: never read */
	img.initrd_size = MEM_SIZE - VMLINUX_GPA;
	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   -ENOEXEC));
	ERR_HAS("the initrd");
	ERR_HAS("does not fit");
	cr_assert(mem_is_zero(), "RAM was written");
}

Test(linux_boot, command_line_over_the_kernels_limit_is_refused)
{
	uint8_t *b                 = make_bzimage(0x020f, XLF_KERNEL_64);
	struct vmm_linux_image img = {
		.kind = VMM_IMAGE_BZIMAGE, .kernel = b, .kernel_size = BZ_SIZE};
	struct vmm_linux_loaded out;
	char line[300];

	((struct setup_header *)(b + 0x1f1))->cmdline_size = 255;
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	img.cmdline            = line;
	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   -ENOEXEC));
	ERR_HAS("command line is 299 bytes");
	ERR_HAS("at most 255");
	cr_assert(mem_is_zero(), "RAM was written");
	line[255] = '\0'; /* exactly the limit */
	cr_assert(
		eq(int,
		   vmm_linux_load(&img, mem, MEM_SIZE, &out, err, sizeof(err)),
		   0),
		"%s", err);
	free(b);
}

TestSuite(mptable, .init = setup, .fini = teardown);

static uint8_t sum(const uint8_t *p, size_t len)
{
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

Test(mptable, floating_pointer_and_table_checksum_and_list_every_cpu)
{
	const uint8_t *f = mem + VMM_MPTABLE_GPA, *t, *e;
	uint32_t table;
	uint16_t len, count, i, cpus = 0, bsp = 0, ioapics = 0, irqs = 0;

	cr_assert(eq(int, vmm_mptable_write(mem, MEM_SIZE, 4), 0));
	cr_assert(eq(int, memcmp(f, "_MP_", 4), 0));
	cr_assert(eq(u8, sum(f, 16), 0));
	memcpy(&table, f + 4, 4);
	t = mem + table;
	cr_assert(eq(int, memcmp(t, "PCMP", 4), 0));
	memcpy(&len, t + 4, 2);
	memcpy(&count, t + 34, 2);
	cr_assert(eq(u8, sum(t, len), 0));
	cr_assert(le(u64, table + len - VMM_MPTABLE_GPA, vmm_mptable_size(4)));
	for (i = 0, e = t + 44; i < count; i++) {
		if (e[0] == 0) { /* processor: APIC id = index, 0 is BSP */
			cr_assert(eq(u8, e[1], cpus));
			cr_assert(eq(u8, e[3] & 1, 1));
			bsp += (e[3] & 2) != 0;
			cpus++;
			e += 20;
			continue;
		}
		ioapics += e[0] == 2;
		irqs += e[0] == 3;
		if (e[0] == 2)
			cr_assert(eq(u8, e[1], 4)); /* id after the CPUs */
		e += 8;
	}
	cr_assert(eq(u16, cpus, 4));
	cr_assert(eq(u16, bsp, 1));
	cr_assert(eq(u16, ioapics, 1));
	cr_assert(eq(u16, irqs, 16));
	cr_assert(eq(ptr, (void *)e, (void *)(t + len)));
}

Test(mptable, too_many_cpus_or_too_little_ram_is_refused)
{
	cr_assert(eq(int, vmm_mptable_write(mem, MEM_SIZE, 0), -EINVAL));
	cr_assert(eq(int, vmm_mptable_write(mem, MEM_SIZE, 255), -EINVAL));
	cr_assert(eq(int, vmm_mptable_write(mem, VMM_MPTABLE_GPA + 64, 1),
		     -EINVAL));
}
