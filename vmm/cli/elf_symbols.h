/* SPDX-License-Identifier: MIT */
/*
 * elf_symbols.h: function symbols of a guest ELF64 image (.symtab), for
 * `vpmu report` and `vpmu top`. Every offset read from the file is
 * bounds-checked; a file without symbols gives an empty table.
 */
#ifndef VMM_SYMTAB_H
#define VMM_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t addr, size;
	const char *name; /* points into symtab.strs */
};

struct symtab {
	struct sym *syms; /* sorted by addr */
	size_t nr;
	char *strs;
};

/*
 * Load the STT_FUNC symbols of the ELF64 file (path) into (*t).
 * Returns 0, or -errno / -ENOEXEC (not ELF64) with (*t) empty.
 */
int symtab_load(struct symtab *t, const char *path);

/* The function containing (ip), or NULL. */
const struct sym *symtab_find(const struct symtab *t, uint64_t ip);

void symtab_free(struct symtab *t);

#endif /* VMM_SYMTAB_H */
