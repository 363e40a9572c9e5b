// SPDX-License-Identifier: MIT
/*
 * test_elf.c: the ELF64 guest loader against well-formed and malformed
 * images built in memory, plus the real guest images of the build.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <criterion/parameterized.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_exec.h"
#include "vmm_core.h"

#define MEM_SIZE (4ULL << 20)
#define LOAD_GPA 0x100000ULL
#define TEXT_LEN 64
#define DATA_LEN 32

/* An image with two PT_LOAD segments: text (RX) then data (RW, +bss). */
struct image {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	uint8_t text[TEXT_LEN];
	uint8_t data[DATA_LEN];
};

static void make_image(struct image *im)
{
	memset(im, 0, sizeof(*im));
	elf_exec_header(&im->eh, LOAD_GPA + 4, offsetof(struct image, ph), 2);
	im->ph[0] = (Elf64_Phdr){.p_type   = PT_LOAD,
				 .p_flags  = PF_R | PF_X,
				 .p_offset = offsetof(struct image, text),
				 .p_vaddr  = LOAD_GPA,
				 .p_paddr  = LOAD_GPA,
				 .p_filesz = TEXT_LEN,
				 .p_memsz  = TEXT_LEN,
				 .p_align  = 4096};
	im->ph[1] = (Elf64_Phdr){.p_type   = PT_LOAD,
				 .p_flags  = PF_R | PF_W,
				 .p_offset = offsetof(struct image, data),
				 .p_vaddr  = LOAD_GPA + 0x1000,
				 .p_paddr  = LOAD_GPA + 0x1000,
				 .p_filesz = DATA_LEN,
				 .p_memsz  = DATA_LEN + 100,
				 .p_align  = 4096};
	memset(im->text, 0x90, TEXT_LEN);
	memset(im->data, 0xab, DATA_LEN);
}

static uint8_t *mem;

static void setup(void)
{
	mem = malloc(MEM_SIZE);
	cr_assert(not(eq(ptr, mem, NULL)));
	memset(mem, 0x5a, MEM_SIZE);
}

static void teardown(void)
{
	free(mem);
}

TestSuite(vmm_elf, .init = setup, .fini = teardown);

Test(vmm_elf, loads_segments_and_zero_fills_bss)
{
	struct image im;
	char err[256]  = "";
	uint64_t entry = 0;

	make_image(&im);
	cr_assert(eq(int,
		     vmm_elf_load(&im, sizeof(im), mem, MEM_SIZE, LOAD_GPA,
				  &entry, err, sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(eq(u64, entry, LOAD_GPA + 4));
	cr_assert(eq(u8, mem[LOAD_GPA], 0x90));
	cr_assert(eq(u8, mem[LOAD_GPA + TEXT_LEN - 1], 0x90));
	cr_assert(eq(u8, mem[LOAD_GPA + TEXT_LEN], 0x5a)); /* untouched */
	cr_assert(eq(u8, mem[LOAD_GPA + 0x1000], 0xab));
	cr_assert(eq(u8, mem[LOAD_GPA + 0x1000 + DATA_LEN], 0));
	cr_assert(eq(u8, mem[LOAD_GPA + 0x1000 + DATA_LEN + 99], 0));
	cr_assert(eq(u8, mem[LOAD_GPA + 0x1000 + DATA_LEN + 100], 0x5a));
}

/*
 * One malformation per row; the message must name the problem. Rows hold
 * no pointers: Criterion runs each parameter in a fresh process.
 */
enum bad_kind {
	MAL_BAD_MAGIC,
	MAL_CLASS32,
	MAL_BIG_ENDIAN,
	MAL_ARM64,
	MAL_SHARED_OBJ,
	MAL_NO_PHDRS,
	MAL_PHDRS_PAST_END,
	MAL_TRUNCATED_HEADER,
	MAL_TRUNCATED_SEGMENT,
	MAL_FILESZ_GT_MEMSZ,
	MAL_BELOW_MIN,
	MAL_PAST_RAM,
	MAL_WRAPS,
	MAL_OVERLAP,
	MAL_DYNAMIC,
	MAL_ENTRY_OUTSIDE,
	MAL_NO_LOAD,
	MAL_BAD_PHENTSIZE,
};

struct bad_case {
	int line;
	enum bad_kind kind;
	char expect[48];
};

static void mutate(struct image *im, size_t *size, enum bad_kind kind)
{
	switch (kind) {
	case MAL_BAD_MAGIC:
		im->eh.e_ident[1] = 'X';
		break;
	case MAL_CLASS32:
		im->eh.e_ident[EI_CLASS] = ELFCLASS32;
		break;
	case MAL_BIG_ENDIAN:
		im->eh.e_ident[EI_DATA] = ELFDATA2MSB;
		break;
	case MAL_ARM64:
		im->eh.e_machine = EM_AARCH64;
		break;
	case MAL_SHARED_OBJ:
		im->eh.e_type = ET_DYN;
		break;
	case MAL_NO_PHDRS:
		im->eh.e_phnum = 0;
		break;
	case MAL_PHDRS_PAST_END:
		im->eh.e_phoff = sizeof(*im) - 8;
		break;
	case MAL_TRUNCATED_HEADER:
		*size = 40;
		break;
	case MAL_TRUNCATED_SEGMENT:
		*size = offsetof(struct image, data) + 4;
		break;
	case MAL_FILESZ_GT_MEMSZ:
		im->ph[1].p_memsz = DATA_LEN - 1;
		break;
	case MAL_BELOW_MIN:
		im->ph[0].p_paddr = 0x1000;
		break;
	case MAL_PAST_RAM:
		im->ph[1].p_paddr = MEM_SIZE - 16;
		break;
	case MAL_WRAPS:
		im->ph[1].p_paddr = ~0ULL - 8;
		break;
	case MAL_OVERLAP:
		im->ph[1].p_paddr = LOAD_GPA + 8;
		break;
	case MAL_DYNAMIC:
		im->ph[1].p_type = PT_INTERP;
		break;
	case MAL_ENTRY_OUTSIDE:
		im->eh.e_entry = LOAD_GPA + 0x1000;
		break;
	case MAL_NO_LOAD:
		im->ph[0].p_type = PT_NOTE;
		im->ph[1].p_type = PT_NOTE;
		break;
	case MAL_BAD_PHENTSIZE:
		im->eh.e_phentsize = 32;
		break;
	}
}

#define ROW(k, text)                                                           \
	{                                                                      \
		.line = __LINE__, .kind = k, .expect = text                    \
	}

ParameterizedTestParameters(vmm_elf, rejects_malformed)
{
	static struct bad_case cases[] = {
		ROW(MAL_BAD_MAGIC, "bad magic"),
		ROW(MAL_CLASS32, "not a 64-bit"),
		ROW(MAL_BIG_ENDIAN, "little-endian"),
		ROW(MAL_ARM64, "not x86-64"),
		ROW(MAL_SHARED_OBJ, "not a static executable"),
		ROW(MAL_NO_PHDRS, "no program headers"),
		ROW(MAL_PHDRS_PAST_END, "truncated file"),
		ROW(MAL_TRUNCATED_HEADER, "truncated ELF header"),
		ROW(MAL_TRUNCATED_SEGMENT, "truncated file: segment 1"),
		ROW(MAL_FILESZ_GT_MEMSZ, "segment 1: file size"),
		ROW(MAL_BELOW_MIN, "segment 0: [0x1000"),
		ROW(MAL_PAST_RAM, "outside guest memory"),
		ROW(MAL_WRAPS, "overflows"),
		ROW(MAL_OVERLAP, "segment 1 overlaps segment 0"),
		ROW(MAL_DYNAMIC, "dynamically linked"),
		ROW(MAL_ENTRY_OUTSIDE, "entry point"),
		ROW(MAL_NO_LOAD, "no loadable"),
		ROW(MAL_BAD_PHENTSIZE, "program header size"),
	};
	return cr_make_param_array(struct bad_case, cases,
				   sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_case *tc, vmm_elf, rejects_malformed)
{
	struct image im;
	size_t size    = sizeof(im);
	char err[256]  = "";
	uint64_t entry = 0;
	size_t i;
	int ret;

	make_image(&im);
	mutate(&im, &size, tc->kind);
	ret = vmm_elf_load(&im, size, mem, MEM_SIZE, LOAD_GPA, &entry, err,
			   sizeof(err));
	cr_assert(eq(int, ret, -ENOEXEC), "row at line %d", tc->line);
	cr_assert(not(eq(ptr, strstr(err, tc->expect), NULL)),
		  "row at line %d: message '%s' lacks '%s'", tc->line, err,
		  tc->expect);
	/* Nothing half-written: RAM is untouched on failure. */
	for (i = 0; i < MEM_SIZE; i += 4096)
		cr_assert(eq(u8, mem[i], 0x5a), "row at line %d", tc->line);
}

Test(vmm_elf, missing_file_names_path)
{
	char err[256] = "";
	uint64_t entry;

	cr_assert(eq(int,
		     vmm_elf_load_file("/nonexistent/guest.elf", mem, MEM_SIZE,
				       LOAD_GPA, &entry, err, sizeof(err)),
		     -ENOENT));
	cr_assert(not(eq(ptr, strstr(err, "/nonexistent/guest.elf"), NULL)));
}

/* A FIFO is refused at once: opening it must not wait for a writer. */
Test(vmm_elf, a_fifo_is_refused_at_once, .timeout = 10)
{
	char dir[] = "/tmp/vpmu_test_XXXXXX", fifo[64], err[256] = "";
	uint64_t entry;

	cr_assert(not(eq(ptr, mkdtemp(dir), NULL)));
	snprintf(fifo, sizeof(fifo), "%s/guest.elf", dir);
	cr_assert(eq(int, mkfifo(fifo, 0600), 0));
	cr_expect(eq(int,
		     vmm_elf_load_file(fifo, mem, MEM_SIZE, LOAD_GPA, &entry,
				       err, sizeof(err)),
		     -EINVAL));
	cr_expect(not(eq(ptr, strstr(err, "guest.elf: not a regular file"),
			 NULL)),
		  "%s", err);
	unlink(fifo);
	rmdir(dir);
}

Test(vmm_elf, rejects_non_elf_file)
{
	char err[256] = "";
	uint64_t entry;

	cr_assert(eq(int,
		     vmm_elf_load_file(VPMU_SOURCE_DIR "/CMakeLists.txt", mem,
				       MEM_SIZE, LOAD_GPA, &entry, err,
				       sizeof(err)),
		     -ENOEXEC));
	cr_assert(not(eq(ptr, strstr(err, "bad magic"), NULL)), "%s", err);
}

Test(vmm_elf, loads_built_guest_image)
{
	char err[256]  = "";
	uint64_t entry = 0;

	cr_assert(eq(int,
		     vmm_elf_load_file(VPMU_BUILD_DIR "/guests/hello.elf", mem,
				       MEM_SIZE, LOAD_GPA, &entry, err,
				       sizeof(err)),
		     0),
		  "%s", err);
	cr_assert(ge(u64, entry, LOAD_GPA));
}
