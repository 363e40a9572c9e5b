// SPDX-License-Identifier: MIT
/*
 * elf_load.c: loader for static ELF64 x86-64 guest images.
 *
 * Everything is validated before the first byte is copied, so a rejected
 * image leaves guest RAM untouched. Each failure names the problem and,
 * for segments, the program header index.
 */
#include "vmm_core.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vpmu_common.h>

static int check_header(const Elf64_Ehdr *eh, size_t file_size, char *err,
			size_t errlen)
{
	if (file_size < EI_NIDENT || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "not an ELF file (bad magic)");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "not a 64-bit ELF file (class %u)",
				 eh->e_ident[EI_CLASS]);
	if (file_size < sizeof(*eh))
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "truncated ELF header (%zu bytes)", file_size);
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "not a little-endian ELF file");
	if (eh->e_ident[EI_VERSION] != EV_CURRENT)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "unknown ELF version %u",
				 eh->e_ident[EI_VERSION]);
	if (eh->e_machine != EM_X86_64)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "machine %u is not x86-64", eh->e_machine);
	if (eh->e_type != ET_EXEC)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"ELF type %u is not a static executable (ET_EXEC)",
			eh->e_type);
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "program header size %u, expected %zu",
				 eh->e_phentsize, sizeof(Elf64_Phdr));
	if (eh->e_phnum == 0 || eh->e_phnum == PN_XNUM)
		return vpmu_fail(err, errlen, -ENOEXEC, "no program headers");
	if (eh->e_phoff > file_size ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) >
		    file_size - eh->e_phoff)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"truncated file: program headers end past %zu bytes",
			file_size);
	if (eh->e_phoff % 8)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "misaligned program headers");
	return 0;
}

static int check_segment(const Elf64_Phdr *ph, unsigned int i, size_t file_size,
			 uint64_t mem_size, uint64_t min_gpa, char *err,
			 size_t errlen)
{
	uint64_t end;

	if (ph->p_filesz > ph->p_memsz)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"segment %u: file size 0x%llx > memory size 0x%llx", i,
			(unsigned long long)ph->p_filesz,
			(unsigned long long)ph->p_memsz);
	if (ph->p_offset > file_size || ph->p_filesz > file_size - ph->p_offset)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"truncated file: segment %u needs bytes up to "
			"0x%llx, file has 0x%zx",
			i, (unsigned long long)(ph->p_offset + ph->p_filesz),
			file_size);
	if (__builtin_add_overflow(ph->p_paddr, ph->p_memsz, &end))
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "segment %u: address range overflows", i);
	if (ph->p_paddr < min_gpa || end > mem_size)
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"segment %u: [0x%llx, 0x%llx) is outside guest "
			"memory [0x%llx, 0x%llx)",
			i, (unsigned long long)ph->p_paddr,
			(unsigned long long)end, (unsigned long long)min_gpa,
			(unsigned long long)mem_size);
	return 0;
}

static bool overlaps(const Elf64_Phdr *a, const Elf64_Phdr *b)
{
	return a->p_memsz && b->p_memsz &&
	       a->p_paddr < b->p_paddr + b->p_memsz &&
	       b->p_paddr < a->p_paddr + a->p_memsz;
}

static bool entry_in_text(const Elf64_Phdr *ph, unsigned int n, uint64_t entry)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) &&
		    entry >= ph[i].p_paddr &&
		    entry - ph[i].p_paddr < ph[i].p_memsz)
			return true;
	}
	return false;
}

static int check_segments(const Elf64_Ehdr *eh, const Elf64_Phdr *ph,
			  size_t file_size, uint64_t mem_size, uint64_t min_gpa,
			  char *err, size_t errlen)
{
	unsigned int i, j, nr_load = 0;
	int ret;

	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_INTERP || ph[i].p_type == PT_DYNAMIC)
			return vpmu_fail(
				err, errlen, -ENOEXEC,
				"segment %u: dynamically linked images are "
				"not supported",
				i);
		if (ph[i].p_type != PT_LOAD)
			continue;
		nr_load++;
		ret = check_segment(&ph[i], i, file_size, mem_size, min_gpa,
				    err, errlen);
		if (ret)
			return ret;
		for (j = 0; j < i; j++) {
			if (ph[j].p_type == PT_LOAD && overlaps(&ph[i], &ph[j]))
				return vpmu_fail(
					err, errlen, -ENOEXEC,
					"segment %u overlaps segment %u", i, j);
		}
	}
	if (!nr_load)
		return vpmu_fail(err, errlen, -ENOEXEC,
				 "no loadable (PT_LOAD) segment");
	if (!entry_in_text(ph, eh->e_phnum, eh->e_entry))
		return vpmu_fail(
			err, errlen, -ENOEXEC,
			"entry point 0x%llx is not in an executable segment",
			(unsigned long long)eh->e_entry);
	return 0;
}

/* Every check on (file) before anything is copied; (*ph) its headers. */
static int check_image(const void *file, size_t file_size, uint64_t mem_size,
		       uint64_t min_gpa, const Elf64_Phdr **ph, char *err,
		       size_t errlen)
{
	const Elf64_Ehdr *eh = file;
	int ret;

	ret = check_header(eh, file_size, err, errlen);
	if (ret)
		return ret;
	*ph = (const Elf64_Phdr *)((const char *)file + eh->e_phoff);
	return check_segments(eh, *ph, file_size, mem_size, min_gpa, err,
			      errlen);
}

int vmm_elf_load(const void *file, size_t file_size, void *mem,
		 uint64_t mem_size, uint64_t min_gpa, uint64_t *entry,
		 char *err, size_t errlen)
{
	const Elf64_Ehdr *eh = file;
	const Elf64_Phdr *ph;
	unsigned int i;
	int ret;

	ret = check_image(file, file_size, mem_size, min_gpa, &ph, err, errlen);
	if (ret)
		return ret;

	for (i = 0; i < eh->e_phnum; i++) {
		char *dst;

		if (ph[i].p_type != PT_LOAD)
			continue; /* only PT_LOAD addresses were checked */
		dst = (char *)mem + ph[i].p_paddr;
		memcpy(dst, (const char *)file + ph[i].p_offset,
		       ph[i].p_filesz);
		memset(dst + ph[i].p_filesz, 0, ph[i].p_memsz - ph[i].p_filesz);
	}
	*entry = eh->e_entry;
	return 0;
}

int vmm_elf_extent(const void *file, size_t file_size, uint64_t *end, char *err,
		   size_t errlen)
{
	const Elf64_Ehdr *eh = file;
	const Elf64_Phdr *ph;
	unsigned int i;
	int ret;

	ret = check_image(file, file_size, UINT64_MAX, 0, &ph, err, errlen);
	if (ret)
		return ret;
	*end = 0;
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD &&
		    ph[i].p_paddr + ph[i].p_memsz > *end)
			*end = ph[i].p_paddr + ph[i].p_memsz;
	}
	return 0;
}

int vmm_elf_load_file(const char *path, void *mem, uint64_t mem_size,
		      uint64_t min_gpa, uint64_t *entry, char *err,
		      size_t errlen)
{
	char msg[VMM_CONFIG_ERR_LEN];
	struct vmm_image_file f;
	int ret;

	ret = vmm_image_map(path, &f, err, errlen);
	if (ret)
		return ret;
	ret = vmm_elf_load(f.data, f.size, mem, mem_size, min_gpa, entry, msg,
			   sizeof(msg));
	if (ret)
		snprintf(err, errlen, "%s: %s", path, msg);
	vmm_image_unmap(&f);
	return ret;
}
