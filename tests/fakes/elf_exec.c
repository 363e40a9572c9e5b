// SPDX-License-Identifier: MIT
/*
 * elf_exec.c: the ELF header of hand-built test images (elf_exec.h).
 */
#include "elf_exec.h"

#include <string.h>

void elf_exec_header(Elf64_Ehdr *eh, uint64_t entry, uint64_t phoff,
		     uint16_t phnum)
{
	memset(eh, 0, sizeof(*eh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS]   = ELFCLASS64;
	eh->e_ident[EI_DATA]    = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type              = ET_EXEC;
	eh->e_machine           = EM_X86_64;
	eh->e_version           = EV_CURRENT;
	eh->e_entry             = entry;
	eh->e_phoff             = phoff;
	eh->e_ehsize            = sizeof(Elf64_Ehdr);
	eh->e_phentsize         = sizeof(Elf64_Phdr);
	eh->e_phnum             = phnum;
}
