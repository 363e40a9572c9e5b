/* SPDX-License-Identifier: MIT */
/*
 * elf_symbols.h: guest symbols for `vpmu report` and `vpmu top`, read with
 * elfutils (libelf for the symbol tables and the GNU build-id, libdw for
 * source lines), or from a kallsyms-style text file (System.map,
 * /proc/kallsyms: "ADDRESS TYPE NAME" lines) for Linux guests.
 *
 * Files are opened only if they are regular files, without blocking (a
 * FIFO or a device named by a record file is refused, never waited on).
 */
#ifndef OPS_ELF_SYMBOLS_H
#define OPS_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#define SYMTAB_BUILD_ID_MAX 64 /* bytes; hex strings are twice that + 1 */

struct Elf;
struct Dwarf;

struct sym {
	uint64_t addr, size;
	const char *name; /* valid until symtab_free() */
};

#define SYMTAB_LOADS_MAX 16 /* PT_LOAD segments kept */

struct symtab {
	struct sym *syms; /* sorted by addr */
	size_t nr;
	char *strs;          /* names of a symbol-map file */
	struct Elf *elf;     /* libelf handle (names point into it) */
	struct Dwarf *dwarf; /* libdw handle, NULL without debug info */
	unsigned char build_id[SYMTAB_BUILD_ID_MAX];
	size_t build_id_len; /* 0: the image has no build-id note */
	struct {
		uint64_t offset, vaddr, filesz;
	} loads[SYMTAB_LOADS_MAX]; /* its PT_LOAD segments */
	unsigned int nr_loads;
};

/*
 * Load the function symbols (STT_FUNC of .symtab, or .dynsym when
 * stripped) and the build-id of the ELF file (path) into (*t). Returns 0,
 * or -errno / -ENOEXEC (not ELF) / -EINVAL (not a regular file) with (*t)
 * empty.
 */
int symtab_load(struct symtab *t, const char *path);

/*
 * Load a kallsyms-style map (System.map): text symbols (types t/T/w/W),
 * each ending where the next begins. Returns 0 or -errno / -ENOEXEC
 * (no line parses).
 */
int symtab_load_map(struct symtab *t, const char *path);

/*
 * The link-time address of byte (offset) of the file (a process maps
 * the file at page offsets: a sample's address - the mapping's start +
 * its offset), through the PT_LOAD segment holding it. 0 or -ENOENT.
 */
int symtab_vaddr_of(const struct symtab *t, uint64_t offset, uint64_t *vaddr);

/* The function containing (ip), or NULL. */
const struct sym *symtab_find(const struct symtab *t, uint64_t ip);

/*
 * The source file and line of (ip) from the DWARF line table. 0, or
 * -ENOENT (no debug info covers ip). (*file) is valid until symtab_free().
 */
int symtab_srcline(const struct symtab *t, uint64_t ip, const char **file,
		   int *line);

/*
 * One source frame of an address: a function (inlined or not), where it
 * is declared, and the position in it. Strings are valid until
 * symtab_free(); NULL or 0 when DWARF does not say.
 */
struct src_frame {
	const char *func;      /* its name */
	const char *decl_file; /* the file that defines it */
	int decl_line;
	const char *file; /* the position in it: innermost from the line */
	int line;         /* table, the others the call of the inner one */
};

#define SYMTAB_FRAMES_MAX 8 /* inlining depth kept, innermost first */

/*
 * The source frames of (ip) through the functions inlined there:
 * (f)[0] the innermost inlined function at the line table's position,
 * each next one the function it was inlined into at the call, the last
 * the out-of-line function holding them. Of more inlined frames than
 * (max) - 1, the outer ones are left out. Returns how many, 0 without
 * DWARF for ip.
 */
int symtab_src_frames(const struct symtab *t, uint64_t ip, struct src_frame *f,
		      int max);

/* The build-id of (t) as lower-case hex into (buf), "" when it has none. */
void symtab_build_id_hex(const struct symtab *t, char *buf, size_t len);

void symtab_free(struct symtab *t);

#endif /* OPS_ELF_SYMBOLS_H */
