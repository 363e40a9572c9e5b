/* SPDX-License-Identifier: MIT */
/*
 * elf_exec.h: the ELF header of the test images the loader tests and the
 * fuzz seed generator build by hand (not a fake of anything: the valid
 * header every such image starts from).
 */
#ifndef VPMU_TEST_ELF_EXEC_H
#define VPMU_TEST_ELF_EXEC_H

#include <elf.h>

/*
 * Fill (eh) as a little-endian ELF64 x86-64 executable (ET_EXEC) entering
 * at (entry), with (phnum) program headers at file offset (phoff); every
 * other field 0.
 */
void elf_exec_header(Elf64_Ehdr *eh, uint64_t entry, uint64_t phoff,
		     uint16_t phnum);

#endif /* VPMU_TEST_ELF_EXEC_H */
